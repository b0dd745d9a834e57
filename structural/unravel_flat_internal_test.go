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

// TestUnravelChainMatchesWalk checks the one-pass path for structs and at
// most one list against the general walk, on random paths, layers and
// level streams (mostly well formed, some damaged).
func TestUnravelChainMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	checked, errs := 0, 0
	for iter := 0; iter < 20000; iter++ {
		L := 2 + r.IntN(3)
		path := make([]Step, L)
		layers := make([]Layer, L) // inner-most first
		listAt := -1
		if r.IntN(3) > 0 {
			listAt = r.IntN(L - 1)
		}
		for d := range L {
			j := L - 1 - d
			switch {
			case d == L-1:
				path[d] = Step{Kind: StepLeaf}
				layers[j] = []Layer{AllValidItem, NullableItem}[r.IntN(2)]
			case d == listAt:
				path[d] = Step{Kind: StepList}
				layers[j] = []Layer{AllValidList, NullableList, EmptyableList, NullAndEmptyList}[r.IntN(4)]
			default:
				path[d] = Step{Kind: StepStruct}
				layers[j] = []Layer{AllValidItem, NullableItem}[r.IntN(2)]
			}
		}
		maxDef := 0
		for _, l := range layers {
			switch l {
			case NullableItem, NullableList, EmptyableList:
				maxDef++
			case NullAndEmptyList:
				maxDef += 2
			}
		}
		n := r.IntN(30)
		var rep, def []uint16
		if listAt >= 0 {
			rep = make([]uint16, n)
		}
		if maxDef > 0 {
			def = make([]uint16, n)
		}
		for i := range n {
			if rep != nil {
				if i == 0 || r.IntN(3) == 0 {
					rep[i] = 1
				}
				if r.IntN(40) == 0 {
					rep[i] = uint16(r.IntN(3))
				}
			}
			if def != nil {
				if r.IntN(3) == 0 {
					def[i] = uint16(r.IntN(maxDef + 1))
				}
				if r.IntN(60) == 0 {
					def[i] = uint16(maxDef + 1)
				}
			}
		}
		// Counts from the walk, sometimes off by one.
		flatUnravel = false
		rows, vis := 0, 0
		for i := range n {
			if rep == nil || rep[i] == 1 {
				rows++
			}
		}
		vis = n
		if r.IntN(2) == 0 {
			// The walk's own visible count, found by trying.
			for v := 0; v <= n; v++ {
				if _, err := UnravelPath(layers, path, rep, def, rows, v); err == nil {
					vis = v
					break
				}
			}
		}
		if r.IntN(15) == 0 {
			rows++
		}
		walk, werr := UnravelPath(layers, path, rep, def, rows, vis)
		flatUnravel = true
		fast, ferr := UnravelPath(layers, path, rep, def, rows, vis)
		if (ferr != nil) != (werr != nil) {
			t.Fatalf("path %v layers %v rep %v def %v rows %d vis %d: fast %v, walk %v", path, layers, rep, def, rows, vis, ferr, werr)
		}
		if ferr != nil {
			if !errors.Is(ferr, ErrCorruptLevels) {
				t.Fatalf("fast path error %v does not wrap ErrCorruptLevels", ferr)
			}
			errs++
			continue
		}
		checked++
		if !reflect.DeepEqual(fast, walk) {
			t.Fatalf("path %v layers %v rep %v def %v: fast %+v, walk %+v", path, layers, rep, def, fast, walk)
		}
	}
	t.Logf("%d well-formed and %d damaged cases", checked, errs)
	if checked < 2000 || errs < 1000 {
		t.Fatalf("%d well-formed and %d damaged cases: too few of one", checked, errs)
	}
}
