package values

import (
	"errors"
	"testing"
)

func TestZippedCounts(t *testing.T) {
	// Rows 0-4 of the variable example of the spec: (rep<<3)|def words,
	// 32-bit length prefixes; and a fixed-width page with a 1-bit def word.
	variable := []byte{
		0x08, 1, 0, 0, 0, 'x', 0x00, 1, 0, 0, 0, 'y',
		0x0C, 0x0A, 0x0B, 0x09,
		0x00, 1, 0, 0, 0, 'z',
	}
	vl := ZipLevels{BitsRep: 1, BitsDef: 3, MaxRep: 1, MaxVisibleDef: 1}
	fixed := []byte{0x00, 10, 0, 0, 0, 0x01, 0, 0, 0, 0, 0x00, 30, 0, 0, 0}
	fl := ZipLevels{BitsDef: 1}
	for _, c := range []struct {
		name                 string
		data                 []byte
		l                    ZipLevels
		width, offBits       int
		items, visible, rows int
		corrupt              bool
	}{
		{"variable page", variable, vl, 0, 32, 7, 4, 5, false},
		{"variable rows 2-3", variable[12:14], vl, 0, 32, 2, 0, 2, false},
		{"variable truncated", variable[:10], vl, 0, 32, 0, 0, 0, true},
		{"fixed", fixed, fl, 4, 0, 3, 3, 3, false},
		{"fixed truncated", fixed[:12], fl, 4, 0, 0, 0, 0, true},
		{"word past its bits", []byte{0xFF, 0, 0, 0, 0}, fl, 4, 0, 0, 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			i, v, r, err := ZippedCounts(c.data, c.l, c.width, c.offBits)
			if c.corrupt {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("err %v, want ErrCorrupt", err)
				}
				return
			}
			if err != nil || i != c.items || v != c.visible || r != c.rows {
				t.Fatalf("got %d items %d visible %d rows (%v), want %d %d %d", i, v, r, err, c.items, c.visible, c.rows)
			}
		})
	}
}
