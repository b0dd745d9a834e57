package stats

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/internal/par"
)

// Fixed measures n fixed-width values of the given bit width stored
// little-endian in data, in one pass. nulls is nil (no nulls) or has length
// n, true marking a null slot (its stored bits still count where a field
// says "as stored"). It panics if data is shorter than n values or nulls has
// the wrong length.
//
// The pass walks the page in windows of WindowSize values; each window is
// read from memory once and then scanned by a few tight loops while it sits
// in L1: OR/min/max/runs; adjacent deltas, only while the page is still
// sorted; signed min/max, only for windows with the top bit set somewhere;
// distinct values. 8- and 16-bit values are counted exactly in a bitset;
// wider ones in an exact small set and past 256 distinct values in a
// HyperLogLog, and not at all while the page is sorted (a sorted page's
// distinct count is its run count; the first descent makes the pass catch
// up on the windows before it). A page of 2·par.MinValues values or more
// is measured in pieces on the cores (fixedPass), with the same result.
func Fixed(data []byte, bits, n int, nulls []bool) FixedStats {
	return fixed(data, bits, n, nulls, true, 0, nil)
}

// FixedUpTo is Fixed for a caller that asks of the distinct count of 32-
// and 64-bit values only whether it exceeds most: their count stops once
// its estimate passes twice most, and Distinct is then that estimate, of
// the values counted so far. The page's own estimate is at least as large
// (a sketch's dense estimate grows with every register a value raises),
// so it exceeds most too, however the page was cut into pieces. Counting
// stops only past the sketch's exact range; most == 0 never stops it.
func FixedUpTo(data []byte, bits, n int, nulls []bool, most uint64) FixedStats {
	return fixed(data, bits, n, nulls, true, most, nil)
}

// FixedOnly is Fixed without the distinct count of 32- and 64-bit values
// (left 0 unless the page is sorted), for pages whose choices do not use it:
// it is most of the pass's work on such values.
func FixedOnly(data []byte, bits, n int, nulls []bool) FixedStats {
	return fixed(data, bits, n, nulls, false, 0, nil)
}

// fixed is Fixed, FixedUpTo (most > 0) or FixedOnly; cuts, when not nil,
// are the pieces to measure (window boundaries, tests), else they follow
// the page's size.
func fixed(data []byte, bits, n int, nulls []bool, distinct bool, most uint64, cuts []int) FixedStats {
	s := FixedStats{N: n, Bits: bits, Bytes: (n*bits + 7) / 8, Sorted: true}
	if nulls != nil {
		if len(nulls) != n {
			panic(fmt.Sprintf("stats.Fixed: %d nulls for %d values", len(nulls), n))
		}
		s.Nulls = bitmap.CountTrue(nulls)
		if s.Nulls == 0 {
			nulls = nil
		}
	}
	switch bits {
	case 8:
		fixedPass[uint8](data, n, nulls, &s, distinct, most, cuts)
	case 16:
		fixedPass[uint16](data, n, nulls, &s, distinct, most, cuts)
	case 32:
		fixedPass[uint32](data, n, nulls, &s, distinct, most, cuts)
	case 64:
		fixedPass[uint64](data, n, nulls, &s, distinct, most, cuts)
	default:
		s.Sorted = false
	}
	return s
}

// acc holds the running state of a fixed-width pass between windows.
type acc[T word] struct {
	minU, maxU T // unsigned min/max of non-null values
	minF, maxF T // min/max of v^signBit over non-null values: signed order as unsigned
	or         T
	prev       T // previous value as stored (runs)
	runs       int
	signed     bool // the last window had values with the top bit set
	sorted     bool // non-null values so far are non-decreasing
	prevS      T    // previous (non-null) value for the sortedness loop
	dOr, dAnd  T    // OR and AND of adjacent differences (no nulls, while sorted)
	ups        int  // nulls path, while sorted: non-null values greater than the previous non-null one (the first counts if > 0)
	last       T    // last value fed to the distinct counter
}

// fixedPass measures the page. A large page is measured in pieces side by
// side, cut at window boundaries, each piece as if it were a page of its
// own; the pieces' measures are then joined in order (fixedPart.join) and
// their distinct sets merged, which gives exactly what one pass over the
// page gives: the result does not depend on how many cores ran it (but a
// distinct count that stopped past its bound, FixedUpTo: every piece
// counts up to where it stops).
func fixedPass[T word](data []byte, n int, nulls []bool, s *FixedStats, distinct bool, most uint64, cuts []int) {
	size := int(unsafe.Sizeof(T(0)))
	if len(data) < n*size {
		panic(fmt.Sprintf("stats.Fixed: %d bytes for %d %d-bit values", len(data), n, size*8))
	}
	if n == 0 {
		return
	}
	s.WindowWidths = make([]int, (n+WindowSize-1)/WindowSize)
	if cuts == nil && n >= 2*par.MinValues {
		cuts = windowCuts(n, par.MinValues)
	}
	if len(cuts) <= 2 {
		var p fixedPart[T]
		p.sc = getScratch()
		defer putScratch(p.sc)
		p.measure(data, nulls, 0, n, s.WindowWidths, distinct, most)
		p.finish(s, nulls != nil, n)
		return
	}
	fixedPieces[T](data, n, nulls, s, distinct, most, cuts)
}

// windowCuts is par.Pieces with the cuts moved down to window boundaries.
func windowCuts(n, least int) []int {
	cuts := par.Pieces(n, least)
	for j := 1; j < len(cuts)-1; j++ {
		cuts[j] -= cuts[j] % WindowSize
	}
	return cuts
}

// fixedPieces measures the pieces cuts delimit (at window boundaries) side
// by side and joins them.
func fixedPieces[T word](data []byte, n int, nulls []bool, s *FixedStats, distinct bool, most uint64, cuts []int) {
	parts := make([]fixedPart[T], len(cuts)-1)
	for j := range parts {
		parts[j].sc = getScratch()
		defer putScratch(parts[j].sc)
	}
	widths := s.WindowWidths // (s itself stays out of the closure, off the heap)
	par.EachPiece(cuts, func(j, lo, hi int) error {
		parts[j].measure(data, nulls, lo, hi, widths, distinct, most)
		return nil
	})
	all := parts[0]
	for j := 1; j < len(parts); j++ {
		all.join(&parts[j], nulls != nil)
	}
	size := int(unsafe.Sizeof(T(0)))
	stopped := slices.ContainsFunc(parts, func(p fixedPart[T]) bool { return p.stopped })
	if size > 2 && distinct && !all.a.sorted && !stopped {
		// A piece that stayed sorted left its values out of the distinct
		// count (a sorted page counts its runs); the page is not sorted,
		// so they count now (unless a piece already counted past most).
		var late []int
		for j := range parts {
			if parts[j].a.sorted {
				late = append(late, j)
			}
		}
		par.Each(len(late), func(i int) error {
			p := &parts[late[i]]
			p.feed(data, nulls, cuts[late[i]], cuts[late[i]+1])
			return nil
		})
	}
	for j := 1; j < len(parts); j++ {
		mergeDistinct(parts[0].sc, parts[j].sc)
		for k := range all.set8 {
			all.set8[k] |= parts[j].set8[k]
		}
	}
	all.sc = parts[0].sc
	all.finish(s, nulls != nil, n)
}

// fixedPart is the measure of one piece of a page (the whole page when it
// is not cut): the pass's state at the piece's end, and what joining it
// to the pieces before it needs.
type fixedPart[T word] struct {
	a       acc[T]
	first   T    // the piece's first value as stored
	firstNN T    // its first non-null value, when hasNN
	hasNN   bool // it has a non-null value
	set8    [4]uint64
	sc      *scratch
	stopped bool // its distinct count stopped past twice most (FixedUpTo)
}

// view returns values [w, w+k) of data, in place when data is aligned on
// a little-endian host, else decoded into the scratch window buffer.
func view[T word](data []byte, sc *scratch, w, k int) []T {
	size := int(unsafe.Sizeof(T(0)))
	if hostLE && uintptr(unsafe.Pointer(unsafe.SliceData(data)))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(data[w*size:]))), k)
	}
	dst := unsafe.Slice((*T)(unsafe.Pointer(&sc.buf[0])), k)
	decodeLE(dst, data[w*size:(w+k)*size])
	return dst
}

// measure runs the pass over values [lo, hi), lo a multiple of
// WindowSize, filling their entries of widths. nulls is nil when the page
// has no null.
func (p *fixedPart[T]) measure(data []byte, nulls []bool, lo, hi int, widths []int, distinct bool, most uint64) {
	sc := p.sc
	nullsAt := func(w, k int) []bool {
		if nulls == nil {
			return nil
		}
		return nulls[w : w+k]
	}
	first := view[T](data, sc, lo, 1)[0]
	p.first = first
	a := acc[T]{
		minU: ^T(0), minF: ^T(0),
		prev: first, runs: 1,
		sorted: true, dAnd: ^T(0),
		last: ^first,
	}
	if nulls == nil {
		a.prevS = first
		p.firstNN, p.hasNN = first, true
	} else if i := slices.Index(nulls[lo:hi], false); i >= 0 {
		p.firstNN, p.hasNN = view[T](data, sc, lo+i, 1)[0], true
	}
	fed := lo // wide types: values [lo, fed) went to the distinct counter
	for w := lo; w < hi; w += WindowSize {
		k := min(WindowSize, hi-w)
		vals := view[T](data, sc, w, k)
		wnulls := nullsAt(w, k)
		wn := bitmap.CountTrue(wnulls)
		runs0 := a.runs
		var wor T
		switch {
		case wn == 0:
			wnulls = nil
			wor = a.windowNoNulls(vals, w == lo && nulls == nil, nulls != nil)
		case wn == k:
			wor, a.prev, a.runs = scanRuns(vals, a.prev, a.runs)
		default:
			wor = a.windowNulls(vals, wnulls)
		}
		a.or |= wor
		widths[w/WindowSize] = bits.Len64(uint64(wor))
		if wn == k {
			continue // nothing for the distinct count
		}
		switch v := any(vals).(type) {
		case []uint8:
			distinct8(v, wnulls, &p.set8)
		case []uint16:
			sc.used16 = true
			distinct16(v, wnulls, &sc.set16)
		default:
			if a.sorted || !distinct {
				break
			}
			for fed < w { // the first descent: catch up on the sorted windows before it
				distinctWide(view[T](data, sc, fed, WindowSize), nullsAt(fed, WindowSize), a.runs*4 <= w-lo+k, &a.last, sc)
				fed += WindowSize
			}
			vals = view[T](data, sc, w, k) // a catch-up may have reused the window buffer
			distinctWide(vals, wnulls, (a.runs-runs0)*4 <= k, &a.last, sc)
			fed = w + k
			if most > 0 && (w-lo)/WindowSize%stopCheckWindows == stopCheckWindows-1 && sc.hll.dense && sc.hll.Estimate() > 2*most {
				distinct, p.stopped = false, true
			}
		}
	}
	p.a = a
}

// stopCheckWindows is how often (in windows) a count that may stop past a
// bound compares its estimate with it (an estimate reads the sketch's 4096
// registers: about what hashing 2,000 values costs).
const stopCheckWindows = 8

// feed gives the distinct counter of a piece that stayed sorted (and so
// fed it nothing) its values [lo, hi).
func (p *fixedPart[T]) feed(data []byte, nulls []bool, lo, hi int) {
	for w := lo; w < hi; w += WindowSize {
		k := min(WindowSize, hi-w)
		var wnulls []bool
		if nulls != nil {
			wnulls = nulls[w : w+k]
		}
		distinctWide(view[T](data, p.sc, w, k), wnulls, p.a.runs*4 <= hi-lo, &p.a.last, p.sc)
	}
}

// join folds in the measure of the piece that follows p's values
// (withNulls: the page has nulls, so sortedness is tracked by strict
// increases of its non-null values rather than by adjacent differences).
func (p *fixedPart[T]) join(q *fixedPart[T], withNulls bool) {
	a, b := &p.a, &q.a
	a.or |= b.or
	a.minU, a.maxU = min(a.minU, b.minU), max(a.maxU, b.maxU)
	a.minF, a.maxF = min(a.minF, b.minF), max(a.maxF, b.maxF)
	a.runs += b.runs - b2i(q.first == a.prev) // q's first run continues p's last
	a.prev = b.prev
	switch {
	case !a.sorted:
	case !b.sorted:
		a.sorted = false
	case !withNulls:
		// p.a.prevS is p's last value: the difference across the cut.
		if q.first < a.prevS {
			a.sorted = false
			break
		}
		d := q.first - a.prevS
		a.dOr |= d | b.dOr
		a.dAnd &= d & b.dAnd
		a.prevS = b.prevS
	case q.hasNN:
		// q counted its first non-null value as an increase over 0; it
		// is one over p's last non-null value (0 when none) if larger.
		if q.firstNN < a.prevS {
			a.sorted = false
			break
		}
		a.ups += b.ups - b2i(q.firstNN > 0) + b2i(q.firstNN > a.prevS)
		a.prevS = b.prevS
	}
}

// mergeDistinct adds the distinct values src holds (its small set, or its
// sketch once spilled) to dst, as if dst had seen them one by one: dst's
// set spills into its sketch when it passes smallMax keys, as it would in
// one pass; sketches merge by register.
func mergeDistinct(dst, src *scratch) {
	if src.used16 {
		dst.used16 = true
		for k, x := range src.set16 {
			dst.set16[k] |= x
		}
	}
	d, s := &dst.small, &src.small
	if s.spilled {
		if !d.spilled {
			d.spill(&dst.hll)
		}
		dst.hll.Merge(&src.hll)
		return
	}
	add := func(key uint64) {
		if d.spilled {
			dst.hll.AddHash(Hash64(key - 1))
			return
		}
		if d.n = d.add(key, d.n); d.n > smallMax {
			d.spill(&dst.hll)
		}
	}
	for _, k := range s.tab {
		if k != 0 {
			add(k)
		}
	}
	if s.top {
		add(0)
	}
}

// finish writes the measures of the joined pass to s (withNulls: the page
// has nulls; n: its values).
func (p *fixedPart[T]) finish(s *FixedStats, withNulls bool, n int) {
	a, sc := &p.a, p.sc
	size := int(unsafe.Sizeof(T(0)))
	s.Runs = a.runs
	s.BitWidth = bits.Len64(uint64(a.or))
	nn := n - s.Nulls
	if nn > 0 {
		shift := 64 - uint(size*8)
		s.MinU, s.MaxU = uint64(a.minU), uint64(a.maxU)
		s.MinS = int64(uint64(a.minF^signBit[T]())<<shift) >> shift
		s.MaxS = int64(uint64(a.maxF^signBit[T]())<<shift) >> shift
		s.Constant = a.minU == a.maxU
	}
	s.Sorted = a.sorted
	if !withNulls && s.Sorted {
		s.DeltaWidth = bits.Len64(uint64(a.dOr))
		if n >= 2 && a.dOr == a.dAnd && a.dOr != 0 {
			s.Step = uint64(a.dOr)
		}
	}
	switch {
	case size == 1:
		s.Distinct = uint64(popcount(p.set8[:]))
	case size == 2:
		s.Distinct = uint64(popcount(sc.set16[:]))
	case a.sorted && !withNulls:
		s.Distinct = uint64(a.runs)
	case a.sorted:
		s.Distinct = uint64(a.ups + b2i(nn > 0 && a.minU == 0))
	case sc.small.spilled:
		s.Distinct = sc.hll.Estimate()
	default:
		s.Distinct = sc.small.count()
	}
}

func signBit[T word]() T { return ^(^T(0) >> 1) }

func popcount(set []uint64) int {
	c := 0
	for _, x := range set {
		c += bits.OnesCount64(x)
	}
	return c
}

// windowNoNulls folds one window of non-null values into a and returns the
// OR of the window. first says vals[0] is the page's first value (already
// in a.prev and a.prevS); ups says the page has nulls elsewhere, so
// sortedness is tracked through a.ups rather than the deltas. The loops live
// in small functions of their own so that each keeps all its state in
// registers.
func (a *acc[T]) windowNoNulls(vals []T, first, ups bool) T {
	sign := signBit[T]()
	var wor, wmin, wmax T
	if a.signed { // negatives likely: signed min/max in the same loop
		wor, wmin, wmax, a.minF, a.maxF, a.prev, a.runs = scanUS(vals, a.minF, a.maxF, a.prev, a.runs)
	} else {
		wor, wmin, wmax, a.prev, a.runs = scanU(vals, a.prev, a.runs)
		if wor&sign == 0 { // no negative values: signed order is unsigned order
			a.minF, a.maxF = min(a.minF, wmin^sign), max(a.maxF, wmax^sign)
		} else {
			a.minF, a.maxF = scanS(vals, a.minF, a.maxF)
		}
	}
	a.signed = wor&sign != 0
	a.minU, a.maxU = min(a.minU, wmin), max(a.maxU, wmax)
	switch {
	case !a.sorted:
	case ups:
		a.prevS, a.ups, a.sorted = scanSortedUps(vals, a.prevS, a.ups)
	default:
		if first {
			vals = vals[1:]
		}
		a.prevS, a.dOr, a.dAnd, a.sorted = scanSorted(vals, a.prevS, a.dOr, a.dAnd)
	}
	return wor
}

// scanRuns returns the OR of vals and continues the run count (a window of
// nulls only).
//
//go:noinline
func scanRuns[T word](vals []T, prev T, runs int) (wor, last T, runsOut int) {
	for _, v := range vals {
		wor |= v
		runs += b2i(v != prev)
		prev = v
	}
	return wor, prev, runs
}

// scanSortedUps checks that vals continue non-decreasing from prev and
// counts the strict increases.
//
//go:noinline
func scanSortedUps[T word](vals []T, prev T, ups int) (last T, upsOut int, ok bool) {
	for _, v := range vals {
		if v < prev {
			return prev, ups, false
		}
		ups += b2i(v > prev)
		prev = v
	}
	return prev, ups, true
}

// scanU returns the OR, min and max of vals and continues the run count.
//
//go:noinline
func scanU[T word](vals []T, prev T, runs int) (wor, wmin, wmax, last T, runsOut int) {
	wmin = ^T(0)
	for _, v := range vals {
		wor |= v
		wmin = min(wmin, v)
		wmax = max(wmax, v)
		runs += b2i(v != prev)
		prev = v
	}
	return wor, wmin, wmax, prev, runs
}

// scanUS is scanU that also folds vals into the signed (sign-flipped)
// min/max.
//
//go:noinline
func scanUS[T word](vals []T, minF, maxF, prev T, runs int) (wor, wmin, wmax, minFOut, maxFOut, last T, runsOut int) {
	sign := signBit[T]()
	wmin = ^T(0)
	for _, v := range vals {
		wor |= v
		wmin = min(wmin, v)
		wmax = max(wmax, v)
		f := v ^ sign
		minF = min(minF, f)
		maxF = max(maxF, f)
		runs += b2i(v != prev)
		prev = v
	}
	return wor, wmin, wmax, minF, maxF, prev, runs
}

//go:noinline
func scanS[T word](vals []T, minF, maxF T) (T, T) {
	sign := signBit[T]()
	for _, v := range vals {
		f := v ^ sign
		minF = min(minF, f)
		maxF = max(maxF, f)
	}
	return minF, maxF
}

// scanSorted continues the adjacent-difference OR/AND from prev; ok is false
// at the first descent (the other results are then meaningless).
//
//go:noinline
func scanSorted[T word](vals []T, prev, dOr, dAnd T) (last, dOrOut, dAndOut T, ok bool) {
	for _, v := range vals {
		if v < prev {
			return prev, dOr, dAnd, false
		}
		d := v - prev
		dOr |= d
		dAnd &= d
		prev = v
	}
	return prev, dOr, dAnd, true
}

// windowNulls is windowNoNulls for a window with some nulls (nulls[i]
// marks vals[i] null). Nulls take part in the OR and the runs but not in
// min/max or sortedness.
func (a *acc[T]) windowNulls(vals []T, nulls []bool) T {
	wor, wmin, wmax, prev, runs := scanMasked(vals, nulls, a.prev, a.runs)
	a.prev, a.runs = prev, runs
	a.minU, a.maxU = min(a.minU, wmin), max(a.maxU, wmax)
	if a.sorted {
		a.prevS, a.ups, a.sorted = scanSortedMasked(vals, nulls, a.prevS, a.ups)
	}
	sign := signBit[T]()
	if wor&sign == 0 {
		a.minF, a.maxF = min(a.minF, wmin^sign), max(a.maxF, wmax^sign)
	} else {
		a.minF, a.maxF = scanSMasked(vals, nulls, a.minF, a.maxF)
	}
	return wor
}

// The masked loops are branch-free in the null flags: m is all ones for a
// valid value and zero for a null, so a null becomes the identity of each
// min and max.

//go:noinline
func scanMasked[T word](vals []T, nulls []bool, prev T, runs int) (wor, wmin, wmax, last T, runsOut int) {
	nulls = nulls[:len(vals)]
	wmin = ^T(0)
	for i, v := range vals {
		wor |= v
		runs += b2i(v != prev)
		prev = v
		m := T(b2i(nulls[i])) - 1
		wmin = min(wmin, v|^m)
		wmax = max(wmax, v&m)
	}
	return wor, wmin, wmax, prev, runs
}

//go:noinline
func scanSortedMasked[T word](vals []T, nulls []bool, prev T, ups int) (last T, upsOut int, ok bool) {
	nulls = nulls[:len(vals)]
	desc := 0
	for i, v := range vals {
		m := T(b2i(nulls[i])) - 1
		desc |= b2i(v|^m < prev) // a null compares as the maximum: never a descent
		ups += b2i(v&m > prev)   // and as zero: never an increase
		prev = v&m | prev&^m
	}
	return prev, ups, desc == 0
}

//go:noinline
func scanSMasked[T word](vals []T, nulls []bool, minF, maxF T) (T, T) {
	nulls = nulls[:len(vals)]
	sign := signBit[T]()
	for i, v := range vals {
		m := T(b2i(nulls[i])) - 1
		f := v ^ sign
		minF = min(minF, f|^m)
		maxF = max(maxF, f&m)
	}
	return minF, maxF
}

func distinct8(vals []uint8, nulls []bool, set *[4]uint64) {
	if nulls == nil {
		for _, v := range vals {
			set[v>>6&3] |= 1 << (v & 63)
		}
		return
	}
	nulls = nulls[:len(vals)]
	for i, v := range vals {
		if !nulls[i] {
			set[v>>6&3] |= 1 << (v & 63)
		}
	}
}

func distinct16(vals []uint16, nulls []bool, set *[1 << 16 / 64]uint64) {
	if nulls == nil {
		for _, v := range vals {
			set[v>>6] |= 1 << (v & 63)
		}
		return
	}
	nulls = nulls[:len(vals)]
	for i, v := range vals {
		if !nulls[i] {
			set[v>>6] |= 1 << (v & 63)
		}
	}
}

// hashKeys holds Hash64's constants for the HLL loop, which reads them from
// memory instead of rematerializing four 64-bit immediates per value.
var hashKeys = [4]uint64{hk0, hk1, hk2, hk3}

// distinctWide feeds the non-null values of vals to the exact small set
// and, once that overflows, to the HLL. With dedupe (the window has long
// runs) a value equal to the one fed just before (*last) is skipped; without
// it every value is fed, which avoids mispredicted branches on short runs.
func distinctWide[T word](vals []T, nulls []bool, dedupe bool, last *T, sc *scratch) {
	if nulls != nil {
		nulls = nulls[:len(vals)]
	}
	i := 0
	if set := &sc.small; !set.spilled {
		tab, cnt := &set.tab, set.n
		if nulls == nil && !dedupe {
			for i < len(vals) && cnt <= smallMax {
				key := uint64(vals[i]) + 1
				i++
				if tab[key*fib>>(64-smallBits)] == key && key != 0 {
					continue // seen: one multiply, one load
				}
				cnt = set.add(key, cnt)
			}
			if len(vals) > 0 {
				*last = vals[i-1]
			}
		} else {
			l := *last
			for i < len(vals) && cnt <= smallMax {
				v := vals[i]
				i++
				if dedupe && v == l || nulls != nil && nulls[i-1] {
					continue
				}
				l = v
				cnt = set.add(uint64(v)+1, cnt)
			}
			*last = l
		}
		set.n = cnt
		if cnt <= smallMax {
			return
		}
		set.spill(&sc.hll)
	}
	reg, k := &sc.hll.reg, &hashKeys
	vals = vals[i:]
	switch {
	case nulls == nil && !dedupe:
		for _, v := range vals {
			hi, lo := bits.Mul64(uint64(v)^k[0], k[1])
			hi, lo = bits.Mul64(hi^k[2], lo^k[3])
			j, r := hllSlot(hi ^ lo)
			if r > reg[j] {
				reg[j] = r
			}
		}
		if len(vals) > 0 {
			*last = vals[len(vals)-1]
		}
	default:
		l := *last
		if nulls != nil {
			nulls = nulls[i:]
		}
		for i, v := range vals {
			if dedupe && v == l || nulls != nil && nulls[i] {
				continue
			}
			l = v
			j, r := hllSlot(Hash64(uint64(v)))
			if r > reg[j] {
				reg[j] = r
			}
		}
		*last = l
	}
}

// decodeLE fills dst from little-endian src (len(src) == len(dst)*size).
func decodeLE[T word](dst []T, src []byte) {
	size := int(unsafe.Sizeof(T(0)))
	switch size {
	case 1:
		for i := range dst {
			dst[i] = T(src[i])
		}
	case 2:
		for i := range dst {
			dst[i] = T(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case 4:
		for i := range dst {
			dst[i] = T(binary.LittleEndian.Uint32(src[4*i:]))
		}
	default:
		for i := range dst {
			dst[i] = T(binary.LittleEndian.Uint64(src[8*i:]))
		}
	}
}
