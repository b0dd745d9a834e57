package writer

import "testing"

// TestHolds: a page's coded values go back to the pool only when none of
// its buffers lies in their memory, wherever in it (not only at its start)
// and however the buffer is sliced.
func TestHolds(t *testing.T) {
	coded := make([]byte, 100, 200)
	other := make([]byte, 50)
	cases := []struct {
		name string
		enc  encoded
		want bool
	}{
		{"none", encoded{}, false},
		{"other buffers", encoded{bufs: [][]byte{other, nil, {}}}, false},
		{"the values", encoded{bufs: [][]byte{other, coded}}, true},
		{"inside", encoded{bufs: [][]byte{coded[40:60]}}, true},
		{"past the length", encoded{bufs: [][]byte{coded[:200][150:160]}}, true},
		{"empty at its end", encoded{bufs: [][]byte{coded[:200][200:]}}, false},
		{"a part", encoded{parts: [][]byte{other, coded[10:20]}}, true},
	}
	for _, c := range cases {
		if got := holds(c.enc, coded); got != c.want {
			t.Errorf("%s: holds %v, want %v", c.name, got, c.want)
		}
	}
	if holds(encoded{bufs: [][]byte{other}}, nil) {
		t.Error("nothing coded: held")
	}
}
