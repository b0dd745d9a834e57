package structural

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// sliceLayers is the reference cut of whole-page layers to top-level slots
// [lo, hi): validity sliced, offsets rebased; and the leaf slots covered.
func sliceLayers(all []LayerData, lo, hi int) ([]LayerData, int, int) {
	out := make([]LayerData, len(all))
	for i, ld := range all {
		w := LayerData{Layer: ld.Layer, Len: hi - lo, Dim: ld.Dim}
		if ld.Valid != nil {
			w.Valid = ld.Valid[lo:hi]
		}
		switch {
		case ld.Offsets != nil:
			w.Offsets = make([]int32, hi-lo+1)
			for k := range w.Offsets {
				w.Offsets[k] = ld.Offsets[lo+k] - ld.Offsets[lo]
			}
			lo, hi = int(ld.Offsets[lo]), int(ld.Offsets[hi])
		case ld.Dim > 0:
			lo, hi = lo*ld.Dim, hi*ld.Dim
		}
		out[i] = w
	}
	return out, lo, hi
}

// TestSparseIndex: on random structures, every window the index expands
// equals the built layers cut to it, and the stored-value ordinals and
// alive slots equal those of MaterializedMask, whatever the sets' forms
// (explicit, progressions, either polarity).
func TestSparseIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 400; i++ {
		c := randomSparse(t, rng, i, 2500)
		path, rows, lds, s, bufs := c.path, c.rows, c.lds, c.s, c.bufs
		x, err := ReadSparseIndex(s, bufs, rowsOf(path, rows), path, totalBytes(bufs))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if x.Rows() != rows || x.Scale()*rows != int(rowsOf(path, rows)) {
			t.Fatalf("case %d: %d rows of scale %d, want %d rows", i, x.Rows(), x.Scale(), rows)
		}
		alive := MaterializedMask(lds)
		if x.LeafSlots() != len(alive) {
			t.Fatalf("case %d: %d leaf slots, want %d", i, x.LeafSlots(), len(alive))
		}
		n := 0
		ord := make([]int, len(alive)+1)
		for s, a := range alive {
			if a {
				n++
			}
			ord[s+1] = n
		}
		if got := x.IndexMaterialized(); got != n {
			t.Fatalf("case %d: %d materialized, want %d", i, got, n)
		}
		for s := range ord {
			if got := x.Ordinal(s); got != ord[s] {
				t.Fatalf("case %d: ordinal of leaf slot %d is %d, want %d", i, s, got, ord[s])
			}
		}
		// A cursor over rising slots (steps of any size), then falling ones.
		cur := x.Cursor()
		for s := 0; s < len(ord); s += 1 + rng.IntN(1+rng.IntN(64)) {
			if got := cur.Ordinal(s); got != ord[s] {
				t.Fatalf("case %d: cursor ordinal of leaf slot %d is %d, want %d", i, s, got, ord[s])
			}
		}
		for s := len(ord) - 1; s >= 0; s -= 1 + rng.IntN(50) {
			if got := cur.Ordinal(s); got != ord[s] {
				t.Fatalf("case %d: cursor ordinal of leaf slot %d (falling) is %d, want %d", i, s, got, ord[s])
			}
		}
		// Alive through a cursor over rising (then one falling) windows.
		cur = x.Cursor()
		for lo := 0; lo <= len(alive); lo += 1 + rng.IntN(40) {
			s0, s1 := lo, min(len(alive), lo+rng.IntN(30))
			if rng.IntN(20) == 0 {
				s0 = rng.IntN(s1 + 1) // falling
			}
			got := make([]bool, s1-s0)
			cur.Alive(got, s0)
			if !slices.Equal(got, alive[s0:s1]) {
				t.Fatalf("case %d: cursor Alive of slots [%d, %d) is %v, want %v", i, s0, s1, got, alive[s0:s1])
			}
			if got := cur.Ordinal(s0); got != ord[s0] {
				t.Fatalf("case %d: cursor ordinal of leaf slot %d after Alive is %d, want %d", i, s0, got, ord[s0])
			}
		}
		cur = x.Cursor()
		for lo := 0; lo <= rows; lo += 1 + rng.IntN(30) {
			hi := lo + rng.IntN(min(rows-lo, 4)+1)
			_, w0, w1 := sliceLayers(lds, lo, hi)
			if l0, l1 := cur.LeafRange(lo, hi); l0 != w0 || l1 != w1 {
				t.Fatalf("case %d: cursor LeafRange(%d, %d) = [%d, %d), want [%d, %d)", i, lo, hi, l0, l1, w0, w1)
			}
		}
		for k := 0; k < 20; k++ {
			lo := rng.IntN(rows + 1)
			hi := lo + rng.IntN(rows-lo+1)
			got, s0, s1 := x.Window(lo, hi)
			want, w0, w1 := sliceLayers(lds, lo, hi)
			if s0 != w0 || s1 != w1 {
				t.Fatalf("case %d window [%d, %d): leaf slots [%d, %d), want [%d, %d)", i, lo, hi, s0, s1, w0, w1)
			}
			if l0, l1 := x.LeafRange(lo, hi); l0 != w0 || l1 != w1 {
				t.Fatalf("case %d: LeafRange(%d, %d) = [%d, %d), want [%d, %d)", i, lo, hi, l0, l1, w0, w1)
			}
			for d := range want {
				w, g := want[d], got[d]
				if w.Len != g.Len || w.Dim != g.Dim || !slices.Equal(w.Offsets, g.Offsets) || !sameValid(w.Valid, g.Valid, w.Len) {
					t.Fatalf("case %d window [%d, %d) layer %d: %+v, want %+v", i, lo, hi, d, g, w)
				}
				if (g.Valid == nil) != (g.Layer == AllValidItem || g.Layer == AllValidList) {
					t.Fatalf("case %d layer %d: layer %v with validity %v", i, d, g.Layer, g.Valid != nil)
				}
			}
			a := make([]bool, s1-s0)
			x.Alive(a, s0)
			if !slices.Equal(a, alive[s0:s1]) {
				t.Fatalf("case %d: alive slots [%d, %d) differ", i, s0, s1)
			}
		}
		// Rising windows (some empty, some adjacent) joined.
		var wins [][2]int
		for at := 0; at < rows; {
			lo := at + rng.IntN(min(rows-at, 40)+1)
			hi := lo + rng.IntN(min(rows-lo, 5)+1)
			wins = append(wins, [2]int{lo, hi})
			at = hi
			if rng.IntN(4) == 0 {
				at += rng.IntN(200)
			}
		}
		got, leaf := x.Windows(wins)
		want := joinRef(lds, wins)
		for d := range want {
			w, g := want[d], got[d]
			if w.Len != g.Len || w.Dim != g.Dim || !slices.Equal(w.Offsets, g.Offsets) || !sameValid(w.Valid, g.Valid, w.Len) {
				t.Fatalf("case %d: %d windows joined, layer %d: %+v, want %+v", i, len(wins), d, g, w)
			}
		}
		for k, w := range wins {
			if _, s0, s1 := sliceLayers(lds, w[0], w[1]); leaf[k] != [2]int{s0, s1} {
				t.Fatalf("case %d window %d: leaf slots %v, want [%d, %d)", i, k, leaf[k], s0, s1)
			}
		}
	}
}

// joinRef is the reference join of windows cut by sliceLayers: validity
// appended, offsets running on.
func joinRef(lds []LayerData, wins [][2]int) []LayerData {
	out := make([]LayerData, len(lds))
	for d, ld := range lds {
		out[d] = LayerData{Layer: ld.Layer, Dim: ld.Dim}
		if ld.Valid != nil {
			out[d].Valid = []bool{}
		}
		if ld.Offsets != nil {
			out[d].Offsets = []int32{0}
		}
	}
	for _, w := range wins {
		cut, _, _ := sliceLayers(lds, w[0], w[1])
		for d, c := range cut {
			o := &out[d]
			o.Len += c.Len
			if o.Valid != nil {
				o.Valid = append(o.Valid, c.Valid...)
			}
			if o.Offsets != nil {
				base := o.Offsets[len(o.Offsets)-1]
				for _, v := range c.Offsets[1:] {
					o.Offsets = append(o.Offsets, base+v)
				}
			}
		}
	}
	return out
}

// TestNullAmong: the first non-empty position a validity set makes null is
// found whatever the sets' forms, against a slot-by-slot reference.
func TestNullAmong(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2))
	explicit := func(xs []int) posList {
		p := make([]uint32, len(xs))
		for i, x := range xs {
			p[i] = uint32(x)
		}
		return posList{n: len(xs), p: p}
	}
	for i := 0; i < 2000; i++ {
		slots := 1 + rng.IntN(300)
		var ne, v []int
		for s := range slots {
			if rng.IntN(3) == 0 {
				ne = append(ne, s)
			}
			if rng.IntN(4+i%7) == 0 {
				v = append(v, s)
			}
		}
		nulls := i%2 == 0
		want, wantOK := 0, true
		for _, p := range ne {
			if slices.Contains(v, p) == nulls {
				want, wantOK = p, false
				break
			}
		}
		vs := explicit(v)
		if i%5 == 0 && len(v) > 0 {
			vs = posList{n: 1, start: v[0]} // a constant
			want, wantOK = 0, true
			for _, p := range ne {
				if (p == v[0]) == nulls {
					want, wantOK = p, false
					break
				}
			}
		}
		ps := explicit(ne)
		got, ok := nullAmong(&ps, &vs, nulls, slots)
		if ok != wantOK || (!ok && got != want) {
			t.Fatalf("case %d: nullAmong = %d, %v; want %d, %v", i, got, ok, want, wantOK)
		}
	}
}

// TestSparseIndexLargeWindows: a window of 128Ki top-level slots or more is
// expanded in pieces side by side; on four cores it equals the layers cut
// to it, for every path of the random structures (several pieces per
// layer, cuts landing inside runs of nulls and of children), and so does
// the page's whole window; the stored-value ordinals, whose dead ranges are
// found layer by layer side by side, are MaterializedMask's. BuildSparse,
// on these sizes, encodes the sets side by side too.
func TestSparseIndexLargeWindows(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(21, 22))
	for i := 1; i < 1+len(sparseTestPaths); i++ {
		c := randomSparse(t, rng, i, 1)
		c.rows = 300_000 + rng.IntN(200_000)
		c.lds = randomLayers(rng, c.path, c.rows)
		var err error
		if c.s, c.bufs, err = BuildSparse(c.lds, c.path); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		x, err := ReadSparseIndex(c.s, c.bufs, rowsOf(c.path, c.rows), c.path, totalBytes(c.bufs))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		// The stored-value ordinals (the layers' dead ranges are found
		// side by side on a page this large) against MaterializedMask.
		alive := MaterializedMask(c.lds)
		n := 0
		ord := make([]int, len(alive)+1)
		for s, a := range alive {
			n += b2i(a)
			ord[s+1] = n
		}
		if got := x.IndexMaterialized(); got != n {
			t.Fatalf("case %d: %d materialized, want %d", i, got, n)
		}
		for s := 0; s < len(ord); s += 1 + rng.IntN(2000) {
			if got := x.Ordinal(s); got != ord[s] {
				t.Fatalf("case %d: ordinal of leaf slot %d is %d, want %d", i, s, got, ord[s])
			}
		}
		for _, w := range [][2]int{{0, c.rows}, {1, c.rows - 1}, {12345, 12345 + 2<<16 + 777}} {
			got, s0, s1 := x.Window(w[0], w[1])
			want, w0, w1 := sliceLayers(c.lds, w[0], w[1])
			if s0 != w0 || s1 != w1 {
				t.Fatalf("case %d window %v: leaf slots [%d, %d), want [%d, %d)", i, w, s0, s1, w0, w1)
			}
			for d := range want {
				wl, g := want[d], got[d]
				if wl.Len != g.Len || wl.Dim != g.Dim || !slices.Equal(wl.Offsets, g.Offsets) || !sameValid(wl.Valid, g.Valid, wl.Len) {
					t.Fatalf("case %d window %v layer %d differs", i, w, d)
				}
			}
		}
	}
}
