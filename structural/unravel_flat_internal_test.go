package structural

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestUnravelFlatMatchesWalk checks the one-layer fast path against the
// general walk on random definition levels, valid and not (levels past the
// layer's maximum, counts that disagree).
func TestUnravelFlatMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	path := []Step{{Kind: StepLeaf}}
	for iter := 0; iter < 2000; iter++ {
		layer := NullableItem
		if r.IntN(4) == 0 {
			layer = AllValidItem
		}
		n := r.IntN(40)
		def := make([]uint16, n)
		for i := range def {
			switch x := r.IntN(100); {
			case x < 3:
				def[i] = 2
			case x < 30:
				def[i] = 1
			}
		}
		rows, vis := n, n
		if r.IntN(10) == 0 {
			rows++
		}
		if r.IntN(10) == 0 {
			vis--
		}
		fast, ferr := UnravelPath([]Layer{layer}, path, nil, def, rows, vis)
		flatUnravel = false
		walk, werr := UnravelPath([]Layer{layer}, path, nil, def, rows, vis)
		flatUnravel = true
		if (ferr != nil) != (werr != nil) {
			t.Fatalf("levels %v (%v, rows %d, visible %d): fast %v, walk %v", def, layer, rows, vis, ferr, werr)
		}
		if ferr != nil {
			if !errors.Is(ferr, ErrCorruptLevels) {
				t.Fatalf("fast path error %v does not wrap ErrCorruptLevels", ferr)
			}
			continue
		}
		if !reflect.DeepEqual(fast, walk) {
			t.Fatalf("levels %v (%v): fast %+v, walk %+v", def, layer, fast, walk)
		}
	}
}
