package stats

import (
	"encoding/binary"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
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
	// 0 for wider values of an unsorted page measured by FixedOnly; past
	// twice its bound under FixedUpTo, a lower estimate that stopped there.
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

var scratchPool = sync.Pool{New: func() any {
	s := new(scratch)
	// Its tables are probed before they are written (bulk.FaultIn).
	bulk.FaultIn(unsafe.Slice((*byte)(unsafe.Pointer(s)), unsafe.Sizeof(*s)))
	return s
}}

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

// Levels measures a page's repetition or definition levels. Levels often
// come in long runs: after a window whose runs averaged 32 levels or more,
// the next window is scanned four levels at a time, each group compared
// with the previous level as one 64-bit word and skipped when equal. A
// stream of 2·par.MinValues levels or more is measured in pieces side by
// side (cut at window boundaries), with the same result.
func Levels(levels []uint16) LevelStats {
	n := len(levels)
	s := LevelStats{N: n}
	if n == 0 {
		return s
	}
	s.WindowWidths = make([]int, (n+WindowSize-1)/WindowSize)
	var mx uint16
	if n < 2*par.MinValues {
		mx, s.Runs = levelsPiece(levels, 0, n, s.WindowWidths)
	} else {
		cuts := windowCuts(n, par.MinValues)
		maxes := make([]uint16, len(cuts)-1)
		runs := make([]int, len(cuts)-1)
		widths := s.WindowWidths
		par.EachPiece(cuts, func(j, lo, hi int) error {
			maxes[j], runs[j] = levelsPiece(levels, lo, hi, widths)
			return nil
		})
		for j := range maxes {
			mx = max(mx, maxes[j])
			s.Runs += runs[j]
			if lo := cuts[j]; j > 0 && levels[lo] == levels[lo-1] {
				s.Runs-- // the piece's first run continues the one before
			}
		}
	}
	s.Max = mx
	s.BitWidth = bits.Len16(mx)
	return s
}

// levelsPiece measures levels [lo, hi) (lo a multiple of WindowSize): their
// largest level and their runs, counted as if they began a stream; it
// fills their entries of widths.
func levelsPiece(levels []uint16, lo, hi int, widths []int) (mx uint16, runs int) {
	prev := levels[lo]
	runs = 1
	longRuns := true
	for w := lo; w < hi; w += WindowSize {
		win := levels[w:min(hi, w+WindowSize)]
		runs0 := runs
		var wmax uint16
		if longRuns {
			wmax, prev, runs = levelsSkipping(win, prev, runs)
		} else {
			wmax, prev, runs = levelsScan(win, prev, runs)
		}
		longRuns = (runs-runs0)*32 <= len(win)
		mx = max(mx, wmax)
		widths[w/WindowSize] = bits.Len16(wmax)
	}
	return mx, runs
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
