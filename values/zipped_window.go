package values

import (
	"encoding/binary"
	"fmt"
)

// ZippedCounts walks the records of a range of a zipped data buffer that
// starts at a row boundary and returns its number of entries, visible
// entries and row starts, so that the range can be parsed on its own.
// width is the value bytes of fixed-width records; 0 selects
// variable-width records with offBits-bit (32 or 64) length prefixes. The
// range must be consumed exactly.
func ZippedCounts(data []byte, l ZipLevels, width, offBits int) (items, visible, rows int, err error) {
	d, err := newZipDec(l)
	if err != nil {
		return 0, 0, 0, err
	}
	ob := offBits / 8
	if width < 0 || width == 0 && ob != 4 && ob != 8 {
		return 0, 0, 0, fmt.Errorf("zipped records of width %d, %d-bit prefixes: %w", width, offBits, ErrCorrupt)
	}
	pos := 0
	for pos < len(data) {
		if len(data)-pos < d.cw {
			return 0, 0, 0, fmt.Errorf("zipped entry %d truncated at %d of %d bytes: %w", items, pos, len(data), ErrCorrupt)
		}
		rep, def, ok := d.word(data[pos:])
		if !ok {
			return 0, 0, 0, fmt.Errorf("zipped entry %d: control word at %d exceeds %d bits: %w", items, pos, d.total, ErrCorrupt)
		}
		row, vis, err := d.classify(items, rep, def)
		if err != nil {
			return 0, 0, 0, err
		}
		pos += d.cw
		items++
		if row {
			rows++
		}
		if !vis {
			continue
		}
		visible++
		switch {
		case width > 0:
			if len(data)-pos < width {
				return 0, 0, 0, fmt.Errorf("zipped entry %d: value at %d overruns %d bytes: %w", items-1, pos, len(data), ErrCorrupt)
			}
			pos += width
		case def == 0:
			if len(data)-pos < ob {
				return 0, 0, 0, fmt.Errorf("zipped entry %d: length prefix at %d overruns %d bytes: %w", items-1, pos, len(data), ErrCorrupt)
			}
			var n uint64
			if ob == 4 {
				n = uint64(binary.LittleEndian.Uint32(data[pos:]))
			} else {
				n = binary.LittleEndian.Uint64(data[pos:])
			}
			pos += ob
			if n > uint64(len(data)-pos) {
				return 0, 0, 0, fmt.Errorf("zipped entry %d: value of %d bytes at %d overruns %d bytes: %w", items-1, n, pos, len(data), ErrCorrupt)
			}
			pos += int(n)
		}
	}
	return items, visible, rows, nil
}
