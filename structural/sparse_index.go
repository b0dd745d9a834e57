package structural

import (
	"slices"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/internal/par"
)

// A SparseIndex is the structure of a sparse page kept as it is stored:
// per layer its validity positions, per list layer its non-empty positions
// and the running sum of their counts. Memory and loading time follow the
// stored positions, not the page's slots; a window of rows is expanded to
// per-layer structure (LayerData) on demand, and the rank of a leaf slot
// among the stored values is a binary search. ReadSparseIndex reads and
// checks it; ReadSparse is its expansion over the whole page.
type SparseIndex struct {
	layers    []indexLayer
	top       int // top-level slots
	scale     int // page elements per top-level slot (structural FSL dimensions)
	leafSlots int

	// The leaf slots that store no value (a null slot, or one under a null
	// struct or fixed-size-list slot) as merged ranges [lo, hi) packed
	// lo<<32|hi in order, with the dead slots before each range. Built by
	// IndexMaterialized.
	dead       []uint64
	deadBefore []uint64
	alive      int
	indexed    bool
}

// indexLayer is one layer of a SparseIndex.
type indexLayer struct {
	layer Layer // the layer kind of the expanded structure
	slots int
	dim   int // fixed-size-list layers

	valid posList // validity positions (all valid: none, naming nulls)
	nulls bool    // the positions name the null slots (else the valid ones)

	ne  posList  // list layers: non-empty positions
	cum []uint32 // list layers: child slots before each non-empty position, len ne.n+1
}

// posList is a strictly increasing position set: explicit positions, or an
// arithmetic progression (never materialized) when p is nil.
type posList struct {
	n           int
	start, step int
	p           []uint32
}

func (s *posList) at(i int) int {
	if s.p != nil {
		return int(s.p[i])
	}
	return s.start + i*s.step
}

// below is the number of positions less than x.
func (s *posList) below(x int) int {
	if s.p != nil {
		i, _ := slices.BinarySearch(s.p, uint32(min(x, 1<<32-1)))
		return i
	}
	if s.n == 0 || x <= s.start {
		return 0
	}
	if s.step == 0 {
		return min(1, s.n)
	}
	return min(s.n, (x-s.start+s.step-1)/s.step)
}

// belowFrom is below(x) for x at least the x of an earlier call that
// returned h: it gallops from h, so a rising sequence of calls costs the
// log of each step rather than of the set.
func (s *posList) belowFrom(x, h int) int {
	if s.p == nil || h > len(s.p) || h > 0 && int(s.p[h-1]) >= x {
		return s.below(x) // not rising: searched afresh
	}
	lo, hi, step := h, h, 1
	for hi < len(s.p) && int(s.p[hi]) < x {
		lo = hi + 1
		hi += step
		step *= 2
	}
	i, _ := slices.BinarySearch(s.p[lo:min(hi, len(s.p))], uint32(min(x, 1<<32-1)))
	return lo + i
}

// bytes is the memory the set holds.
func (s *posList) bytes() uint64 { return 4 * uint64(len(s.p)) }

// Rows is the number of top-level slots of the page.
func (x *SparseIndex) Rows() int { return x.top }

// Scale is the number of page elements per top-level slot: the product of
// the structural fixed-size-list dimensions (1 without them).
func (x *SparseIndex) Scale() int { return x.scale }

// LeafSlots is the number of leaf slots of the page.
func (x *SparseIndex) LeafSlots() int { return x.leafSlots }

// Bytes is the memory the index holds.
func (x *SparseIndex) Bytes() uint64 {
	n := 16 * uint64(len(x.dead))
	for i := range x.layers {
		l := &x.layers[i]
		n += l.valid.bytes() + l.ne.bytes() + 4*uint64(len(l.cum))
	}
	return n
}

// LeafRange returns the leaf slots [s0, s1) under top-level slots [lo, hi).
func (x *SparseIndex) LeafRange(lo, hi int) (int, int) { return x.Cursor().LeafRange(lo, hi) }

// A Cursor answers LeafRange and Ordinal for arguments that rise from call
// to call (a take's sorted rows), each search resuming where the previous
// one ended; arguments that do not rise are searched afresh.
type Cursor struct {
	x    *SparseIndex
	ne   []int // per list layer: the non-empty positions below the last slot mapped
	dead int   // the first dead range ending after the last slot ranked
}

// Cursor returns a cursor over the index (IndexMaterialized must have been
// called for Ordinal).
func (x *SparseIndex) Cursor() *Cursor { return &Cursor{x: x, ne: make([]int, len(x.layers))} }

// LeafRange is SparseIndex.LeafRange.
func (c *Cursor) LeafRange(lo, hi int) (int, int) { return c.down(0, lo, hi) }

// down maps slots [lo, hi) of layer from to the leaf slots under them.
func (c *Cursor) down(from, lo, hi int) (int, int) {
	for i := from; i < len(c.x.layers); i++ {
		l := &c.x.layers[i]
		switch {
		case l.cum != nil:
			a := l.ne.belowFrom(lo, c.ne[i])
			c.ne[i] = l.ne.belowFrom(hi, a)
			lo, hi = int(l.cum[a]), int(l.cum[c.ne[i]])
		case l.dim > 0:
			lo, hi = lo*l.dim, hi*l.dim
		}
	}
	return lo, hi
}

// Ordinal is SparseIndex.Ordinal.
func (c *Cursor) Ordinal(s int) int {
	x := c.x
	i := c.dead
	if i > len(x.dead) || i > 0 && int(x.dead[i-1]&(1<<32-1)) > s {
		i = 0 // not rising
	}
	for step := 1; i < len(x.dead) && int(x.dead[i]&(1<<32-1)) <= s; step *= 2 {
		if j := i + step; j < len(x.dead) && int(x.dead[j]&(1<<32-1)) <= s {
			i = j + 1
			continue
		}
		i += x.firstDeadEnding(s, i, min(i+step, len(x.dead)))
		break
	}
	c.dead = i
	return x.ordinalAt(s, i)
}

// Window expands the structure of top-level slots [lo, hi), 0 ≤ lo ≤ hi ≤
// Rows(): per layer, outer first, its validity (nil only when the page's
// layer has no null), list offsets from 0 and fixed-size-list dimension;
// and the leaf slots [s0, s1) the window covers. The work is the window's
// slots plus a search per layer.
func (x *SparseIndex) Window(lo, hi int) ([]LayerData, int, int) {
	lds, leaf := x.Windows([][2]int{{lo, hi}})
	return lds, leaf[0][0], leaf[0][1]
}

// Windows expands the structure of top-level windows (each [lo, hi) inside
// Rows(), in rising order, not overlapping) into one structure, the
// windows' slots one after another per layer (list offsets running on),
// and returns the leaf slots of each window. Searches resume where the
// previous window's ended, so k windows cost their slots plus k short
// gallops per layer.
func (x *SparseIndex) Windows(wins [][2]int) ([]LayerData, [][2]int) {
	cur := slices.Clone(wins)
	out := make([]LayerData, len(x.layers))
	for i := range x.layers {
		l := &x.layers[i]
		total := 0
		for _, w := range cur {
			total += w[1] - w[0]
		}
		o := LayerData{Layer: l.layer, Len: total, Dim: l.dim}
		nullable := l.layer == NullableItem || l.layer == NullableList
		if nullable {
			o.Valid = make([]bool, total)
		}
		if l.cum != nil {
			o.Offsets = make([]int32, total+1)
		}
		if len(cur) == 1 && cur[0][1]-cur[0][0] >= 2*par.MinValues {
			cur[0] = l.windowInPieces(o, cur[0][0], cur[0][1])
			out[i] = o
			continue
		}
		at, vh, nh := 0, 0, 0 // output slot, validity and non-empty hints
		run := int32(0)       // child slots before the window
		for k, w := range cur {
			lo, hi := w[0], w[1]
			if nullable {
				vh = fillValidityFrom(o.Valid[at:at+hi-lo], &l.valid, l.nulls, lo, vh)
			}
			switch {
			case l.cum != nil:
				j := l.ne.belowFrom(lo, nh)
				base := l.cum[j]
				j = l.listOffsets(o.Offsets[at+1:at+1+hi-lo], lo, j, run-int32(base))
				run += int32(l.cum[j] - base)
				nh = j
				cur[k] = [2]int{int(base), int(l.cum[j])}
			case l.dim > 0:
				cur[k] = [2]int{lo * l.dim, hi * l.dim}
			}
			at += hi - lo
		}
		out[i] = o
	}
	return out, cur
}

// windowInPieces is one layer of Windows for a single large window [lo,
// hi): its validity and list offsets are written in pieces side by side,
// each piece searching its own start. It returns the window's child slots.
func (l *indexLayer) windowInPieces(o LayerData, lo, hi int) [2]int {
	base := 0 // child slots before the window
	if l.cum != nil {
		base = int(l.cum[l.ne.belowFrom(lo, 0)])
	}
	par.EachPiece(par.Pieces(hi-lo, par.MinValues), func(_, a, b int) error {
		if o.Valid != nil {
			fillValidityFrom(o.Valid[a:b], &l.valid, l.nulls, lo+a, 0)
		}
		if l.cum != nil {
			l.listOffsets(o.Offsets[1+a:1+b], lo+a, l.ne.belowFrom(lo+a, 0), -int32(base))
		}
		return nil
	})
	switch {
	case l.cum != nil:
		return [2]int{base, int(l.cum[l.ne.belowFrom(hi, 0)])}
	case l.dim > 0:
		return [2]int{lo * l.dim, hi * l.dim}
	}
	return [2]int{lo, hi}
}

// listOffsets writes, for list slots [lo, lo+len(dst)), the child slots
// through each slot plus delta into dst; j is the count of non-empty
// positions below lo. It returns the count below lo+len(dst).
func (l *indexLayer) listOffsets(dst []int32, lo, j int, delta int32) int {
	hi := lo + len(dst)
	next := hi
	if j < l.ne.n {
		next = l.ne.at(j)
	}
	for s := lo; s < hi; s++ {
		if s == next {
			j++
			next = hi
			if j < l.ne.n {
				next = l.ne.at(j)
			}
		}
		dst[s-lo] = int32(l.cum[j]) + delta
	}
	return j
}

// fillValidityFrom writes the validity of slots [lo, lo+len(dst)) into
// dst, which holds false, its search resumed from hint h (a position index
// of an earlier, lower window; 0 for none); it returns the hint for a
// later, higher window.
func fillValidityFrom(dst []bool, v *posList, nulls bool, lo, h int) int {
	hi := lo + len(dst)
	if nulls {
		bitmap.FillTrue(dst)
	}
	j := v.belowFrom(lo, h)
	for ; j < v.n; j++ {
		p := v.at(j)
		if p >= hi {
			break
		}
		dst[p-lo] = !nulls
	}
	return j
}

// IndexMaterialized prepares Ordinal and Alive (the leaf slots a sparse
// page stores values for: valid, and under valid struct and fixed-size-list
// slots; a null list has no children) and returns how many there are. It is
// not safe to call concurrently with other methods; call it once, before
// sharing the index.
func (x *SparseIndex) IndexMaterialized() int {
	if x.indexed {
		return x.alive
	}
	// Each layer that kills slots maps its null runs down to the leaves,
	// the layers side by side (a null list has no children; an all-valid
	// layer kills none).
	var killing []int
	for i := range x.layers {
		if l := &x.layers[i]; l.cum == nil && l.layer == NullableItem {
			killing = append(killing, i)
		}
	}
	deads := make([][]uint64, len(killing))
	run := par.InTurn
	if x.leafSlots >= 2*par.MinValues {
		run = par.Each
	}
	_ = run(len(killing), func(k int) error {
		i := killing[k]
		l := &x.layers[i]
		cur := x.Cursor() // the runs rise: each list layer's search resumes
		forNullRuns(&l.valid, l.nulls, l.slots, func(a, b int) {
			if a, b = cur.down(i, a, b); a < b {
				deads[k] = append(deads[k], uint64(a)<<32|uint64(b))
			}
		})
		return nil
	})
	var dead []uint64
	layersKilling := 0
	for _, d := range deads {
		dead = append(dead, d...)
		layersKilling += b2i(len(d) > 0)
	}
	if layersKilling > 1 {
		slices.Sort(dead) // (each layer's ranges rise on their own)
	}
	// Merge overlapping and touching ranges.
	merged := dead[:0]
	for _, r := range dead {
		if k := len(merged); k > 0 && r>>32 <= merged[k-1]&(1<<32-1) {
			if r&(1<<32-1) > merged[k-1]&(1<<32-1) {
				merged[k-1] = merged[k-1]&^(1<<32-1) | r&(1<<32-1)
			}
			continue
		}
		merged = append(merged, r)
	}
	x.dead = merged
	x.deadBefore = make([]uint64, len(merged)+1)
	for k, r := range merged {
		x.deadBefore[k+1] = x.deadBefore[k] + (r & (1<<32 - 1)) - r>>32
	}
	x.alive = x.leafSlots - int(x.deadBefore[len(merged)])
	x.indexed = true
	return x.alive
}

// forNullRuns calls f for each maximal run [a, b) of null slots of a
// validity set over slots [0, slots).
func forNullRuns(v *posList, nulls bool, slots int, f func(a, b int)) {
	if nulls {
		for j := 0; j < v.n; {
			a := v.at(j)
			b := a + 1
			for j++; j < v.n && v.at(j) == b; j++ {
				b++
			}
			f(a, b)
		}
		return
	}
	prev := 0
	for j := 0; j < v.n; j++ {
		p := v.at(j)
		if p > prev {
			f(prev, p)
		}
		prev = p + 1
	}
	if prev < slots {
		f(prev, slots)
	}
}

// firstDeadEnding is the index, counted from lo, of the first dead range
// in [lo, hi) ending after s (hi - lo when none does).
func (x *SparseIndex) firstDeadEnding(s, lo, hi int) int {
	i, _ := slices.BinarySearchFunc(x.dead[lo:hi], s, func(r uint64, s int) int {
		if int(r&(1<<32-1)) <= s {
			return -1
		}
		return 1
	})
	return i
}

// Ordinal is the number of stored values before leaf slot s (its value's
// ordinal when the slot stores one), 0 ≤ s ≤ LeafSlots(). IndexMaterialized
// must have been called.
func (x *SparseIndex) Ordinal(s int) int {
	return x.ordinalAt(s, x.firstDeadEnding(s, 0, len(x.dead)))
}

// ordinalAt is Ordinal given i, the first dead range ending after s.
func (x *SparseIndex) ordinalAt(s, i int) int {
	dead := int(x.deadBefore[i])
	if i < len(x.dead) {
		if lo := int(x.dead[i] >> 32); lo < s {
			dead += s - lo
		}
	}
	return s - dead
}

// Alive marks in dst (len s1-s0) which of leaf slots [s0, s1) store a
// value. IndexMaterialized must have been called.
func (x *SparseIndex) Alive(dst []bool, s0 int) {
	x.aliveFrom(dst, s0, x.firstDeadEnding(s0, 0, len(x.dead)))
}

// Alive is SparseIndex.Alive, its search started where the cursor stands
// (quick when slots rise from call to call); it leaves the cursor at s0.
func (c *Cursor) Alive(dst []bool, s0 int) {
	c.Ordinal(s0)
	c.x.aliveFrom(dst, s0, c.dead)
}

// aliveFrom is Alive given i, the first dead range ending after s0.
func (x *SparseIndex) aliveFrom(dst []bool, s0, i int) {
	s1 := s0 + len(dst)
	bitmap.FillTrue(dst)
	for ; i < len(x.dead); i++ {
		lo, hi := int(x.dead[i]>>32), int(x.dead[i]&(1<<32-1))
		if lo >= s1 {
			break
		}
		clear(dst[max(lo, s0)-s0 : min(hi, s1)-s0])
	}
}
