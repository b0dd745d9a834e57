package stats

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"
)

// WindowSize is the number of values per entry of FixedStats.WindowWidths
// and LevelStats.WindowWidths (windows are aligned at value 0; the last one
// may be short).
const WindowSize = 1024

// FixedStats describes n fixed-width values stored little-endian.
//
// Bits ∈ {8, 16, 32, 64} get every field; other widths get only N, Nulls,
// Bits and Bytes. Fields defined "over non-null values" are zero when every
// value is null.
type FixedStats struct {
	N, Nulls   int
	Bits       int
	Bytes      int    // raw bytes: ceil(N*Bits/8)
	MinU, MaxU uint64 // over non-null values, as unsigned
	MinS, MaxS int64  // over non-null values, as signed (sign-extended from Bits)
	// BitWidth is the bit length of the OR of all values (nulls included, as
	// stored; like Lance's BitWidth stat it treats values as unsigned).
	BitWidth int
	// WindowWidths[i] is the bit length of the OR of values
	// [i*WindowSize, (i+1)*WindowSize), all values as stored. nil when N == 0.
	WindowWidths []int
	// Runs counts maximal runs of equal adjacent values, all values as
	// stored ([1,1,2,2,2,3] -> 3; 0 when N == 0).
	Runs int
	// Distinct estimates the number of distinct non-null values: exact for
	// 8- and 16-bit values, for sorted pages and for up to 256 distinct
	// values; otherwise a HyperLogLog estimate (about 1.6% standard error).
	// 0 for wider values of an unsorted page measured by FixedOnly.
	Distinct uint64
	// Constant: at least one non-null value, and every non-null value equal.
	Constant bool
	// Sorted: non-null values are non-decreasing as unsigned (true when fewer
	// than two are non-null).
	Sorted bool
	// Step is the common adjacent difference when Nulls == 0, N >= 2 and
	// v[i+1]-v[i] is the same positive value for every i; else 0.
	Step uint64
	// DeltaWidth is the bit length of the largest adjacent difference when
	// Sorted and Nulls == 0, else 0.
	DeltaWidth int
}

// VarStats describes n variable-width values.
type VarStats struct {
	N, Nulls       int
	Bytes          int    // value bytes: offsets[n]-offsets[0]
	MaxLen, MinLen int    // over non-null values (0 when all are null)
	Distinct       uint64 // distinct non-null values: exact up to 256, then HyperLogLog
	Constant       bool   // at least one non-null value, and every non-null value equal
	OffsetWidth    int    // bit length of offsets[n]-offsets[0]
}

// LevelStats describes a page's repetition or definition levels.
type LevelStats struct {
	N            int
	Max          uint16
	BitWidth     int   // bit length of Max
	Runs         int   // maximal runs of equal adjacent levels
	WindowWidths []int // bit length of the max of each WindowSize levels (last may be short)
}

type word interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// scratch is the per-call working memory, pooled so a pass allocates only
// its WindowWidths slice.
type scratch struct {
	hll    HLL
	small  smallSet             // exact distinct set for 32/64-bit values, until it overflows into hll
	set16  [1 << 16 / 64]uint64 // exact distinct set for 16-bit values
	used16 bool
	buf    [WindowSize]uint64 // aligned copy of a window when data is misaligned or the host big-endian
}

const (
	smallBits  = 9
	smallSlots = 1 << smallBits
	smallMax   = smallSlots / 2
)

// smallSet holds up to smallMax distinct values exactly, in an
// open-addressing table keyed by the value itself (Fibonacci hashing), so
// low-cardinality pages pay one multiply and one probe per value instead of
// a full hash. A slot holds value+1 (0 = empty); the value 2^64-1, whose key
// would be 0, has its own flag.
type smallSet struct {
	tab     [smallSlots]uint64
	n       int
	top     bool // 2^64-1 seen
	spilled bool // overflowed: every value seen is in scratch.hll instead
}

const fib = 0x9e3779b97f4a7c15 // 2^64 / golden ratio

// add inserts key (value+1) and returns the count of keys held, given cnt,
// the count before.
func (s *smallSet) add(key uint64, cnt int) int {
	if key == 0 {
		s.top = true
		return cnt
	}
	j := key * fib >> (64 - smallBits)
	for {
		switch s.tab[j] {
		case key:
			return cnt
		case 0:
			s.tab[j] = key
			return cnt + 1
		}
		j = (j + 1) & (smallSlots - 1)
	}
}

func (s *smallSet) count() uint64 { return uint64(s.n + b2i(s.top)) }

// spill moves the set's values into h (which then holds more than
// hllSparseMax hashes and so is dense).
func (s *smallSet) spill(h *HLL) {
	for _, k := range s.tab {
		if k != 0 {
			h.AddHash(Hash64(k - 1))
		}
	}
	if s.top {
		h.AddHash(Hash64(^uint64(0)))
	}
	if !h.dense {
		h.densify()
	}
	s.spilled = true
}

func (s *smallSet) reset() {
	if s.n > 0 {
		clear(s.tab[:])
	}
	s.n, s.top, s.spilled = 0, false, false
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) {
	s.hll.Reset()
	s.small.reset()
	if s.used16 {
		clear(s.set16[:])
		s.used16 = false
	}
	scratchPool.Put(s)
}

var hostLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// countNulls counts the true entries, eight at a time (a bool is one byte
// holding 0 or 1, so a multiply sums eight of them).
func countNulls(nulls []bool) int {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(nulls))), len(nulls))
	c := 0
	for len(b) >= 8 {
		c += int(binary.LittleEndian.Uint64(b) * 0x0101010101010101 >> 56)
		b = b[8:]
	}
	for _, x := range b {
		c += int(x)
	}
	return c
}

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
// up on the windows before it).
func Fixed(data []byte, bits, n int, nulls []bool) FixedStats {
	return fixed(data, bits, n, nulls, true)
}

// FixedOnly is Fixed without the distinct count of 32- and 64-bit values
// (left 0 unless the page is sorted), for pages whose choices do not use it:
// it is most of the pass's work on such values.
func FixedOnly(data []byte, bits, n int, nulls []bool) FixedStats {
	return fixed(data, bits, n, nulls, false)
}

func fixed(data []byte, bits, n int, nulls []bool, distinct bool) FixedStats {
	s := FixedStats{N: n, Bits: bits, Bytes: (n*bits + 7) / 8, Sorted: true}
	if nulls != nil {
		if len(nulls) != n {
			panic(fmt.Sprintf("stats.Fixed: %d nulls for %d values", len(nulls), n))
		}
		s.Nulls = countNulls(nulls)
		if s.Nulls == 0 {
			nulls = nil
		}
	}
	switch bits {
	case 8:
		fixedPass[uint8](data, n, nulls, &s, distinct)
	case 16:
		fixedPass[uint16](data, n, nulls, &s, distinct)
	case 32:
		fixedPass[uint32](data, n, nulls, &s, distinct)
	case 64:
		fixedPass[uint64](data, n, nulls, &s, distinct)
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

func fixedPass[T word](data []byte, n int, nulls []bool, s *FixedStats, distinct bool) {
	size := int(unsafe.Sizeof(T(0)))
	if len(data) < n*size {
		panic(fmt.Sprintf("stats.Fixed: %d bytes for %d %d-bit values", len(data), n, size*8))
	}
	if n == 0 {
		return
	}
	sc := getScratch()
	defer putScratch(sc)

	direct := hostLE && uintptr(unsafe.Pointer(unsafe.SliceData(data)))%uintptr(size) == 0
	var all []T
	if direct {
		all = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(data))), n)
	}
	view := func(w, k int) []T {
		if direct {
			return all[w : w+k]
		}
		dst := unsafe.Slice((*T)(unsafe.Pointer(&sc.buf[0])), k)
		decodeLE(dst, data[w*size:(w+k)*size])
		return dst
	}
	nullsAt := func(w, k int) []bool {
		if nulls == nil {
			return nil
		}
		return nulls[w : w+k]
	}

	s.WindowWidths = make([]int, (n+WindowSize-1)/WindowSize)
	var set8 [4]uint64
	first := view(0, 1)[0]
	a := acc[T]{
		minU: ^T(0), minF: ^T(0),
		prev: first, runs: 1,
		sorted: true, dAnd: ^T(0),
		last: ^first,
	}
	if nulls == nil {
		a.prevS = first
	}
	fed := 0 // wide types: values [0, fed) went to the distinct counter
	for w := 0; w < n; w += WindowSize {
		k := min(WindowSize, n-w)
		vals := view(w, k)
		wnulls := nullsAt(w, k)
		wn := countNulls(wnulls)
		runs0 := a.runs
		var wor T
		switch {
		case wn == 0:
			wnulls = nil
			wor = a.windowNoNulls(vals, w == 0 && nulls == nil, nulls != nil)
		case wn == k:
			wor, a.prev, a.runs = scanRuns(vals, a.prev, a.runs)
		default:
			wor = a.windowNulls(vals, wnulls)
		}
		a.or |= wor
		s.WindowWidths[w/WindowSize] = bits.Len64(uint64(wor))
		if wn == k {
			continue // nothing for the distinct count
		}
		switch v := any(vals).(type) {
		case []uint8:
			distinct8(v, wnulls, &set8)
		case []uint16:
			sc.used16 = true
			distinct16(v, wnulls, &sc.set16)
		default:
			if a.sorted || !distinct {
				break
			}
			for fed < w { // the first descent: catch up on the sorted windows before it
				distinctWide(view(fed, WindowSize), nullsAt(fed, WindowSize), a.runs*4 <= w+k, &a.last, sc)
				fed += WindowSize
			}
			vals = view(w, k) // a catch-up may have reused the window buffer
			distinctWide(vals, wnulls, (a.runs-runs0)*4 <= k, &a.last, sc)
			fed = w + k
		}
	}

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
	if nulls == nil && s.Sorted {
		s.DeltaWidth = bits.Len64(uint64(a.dOr))
		if n >= 2 && a.dOr == a.dAnd && a.dOr != 0 {
			s.Step = uint64(a.dOr)
		}
	}
	switch {
	case size == 1:
		s.Distinct = uint64(popcount(set8[:]))
	case size == 2:
		s.Distinct = uint64(popcount(sc.set16[:]))
	case a.sorted && nulls == nil:
		s.Distinct = uint64(a.runs)
	case a.sorted:
		s.Distinct = uint64(a.ups + b2i(nn > 0 && a.minU == 0))
	case !distinct:
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

// Levels measures a page's repetition or definition levels. Levels often
// come in long runs: after a window whose runs averaged 32 levels or more,
// the next window is scanned four levels at a time, each group compared
// with the previous level as one 64-bit word and skipped when equal.
func Levels(levels []uint16) LevelStats {
	n := len(levels)
	s := LevelStats{N: n}
	if n == 0 {
		return s
	}
	s.WindowWidths = make([]int, (n+WindowSize-1)/WindowSize)
	prev := levels[0]
	runs := 1
	longRuns := true
	var mx uint16
	for w := range s.WindowWidths {
		win := levels[w*WindowSize : min(n, (w+1)*WindowSize)]
		runs0 := runs
		var wmax uint16
		if longRuns {
			wmax, prev, runs = levelsSkipping(win, prev, runs)
		} else {
			wmax, prev, runs = levelsScan(win, prev, runs)
		}
		longRuns = (runs-runs0)*32 <= len(win)
		mx = max(mx, wmax)
		s.WindowWidths[w] = bits.Len16(wmax)
	}
	s.Max = mx
	s.BitWidth = bits.Len16(mx)
	s.Runs = runs
	return s
}

//go:noinline
func levelsScan(win []uint16, prev uint16, runs int) (wmax, last uint16, runsOut int) {
	for _, v := range win {
		wmax = max(wmax, v)
		runs += b2i(v != prev)
		prev = v
	}
	return wmax, prev, runs
}

func levelsSkipping(win []uint16, prev uint16, runs int) (wmax, last uint16, runsOut int) {
	// Skipped groups repeat either a level already folded into wmax or,
	// before the window's first change, win[0].
	wmax = win[0]
	rep := [4]uint16{prev, prev, prev, prev}
	for len(win) >= 4 {
		c := [4]uint16(win)
		win = win[4:]
		if c == rep {
			continue
		}
		for _, v := range c {
			wmax = max(wmax, v)
			runs += b2i(v != prev)
			prev = v
		}
		rep = [4]uint16{prev, prev, prev, prev}
	}
	tmax, prev, runs := levelsScan(win, prev, runs)
	return max(wmax, tmax), prev, runs
}
