package stats

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/planarlance/planar/internal/par"
)

// le encodes vals little-endian at the given width (values are truncated).
func le(width int, vals ...uint64) []byte {
	out := make([]byte, len(vals)*width/8)
	for i, v := range vals {
		switch width {
		case 8:
			out[i] = byte(v)
		case 16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
		case 32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		case 64:
			binary.LittleEndian.PutUint64(out[8*i:], v)
		}
	}
	return out
}

func neg(width int, v int64) uint64 { return uint64(v) & (math.MaxUint64 >> (64 - width)) }

func TestFixedTable(t *testing.T) {
	const F, T = false, true
	tests := []struct {
		name  string
		bits  int
		vals  []uint64
		nulls []bool
		want  FixedStats
	}{
		{"u8 runs", 8, []uint64{1, 1, 2, 2, 2, 3}, nil, FixedStats{
			N: 6, Bits: 8, Bytes: 6, MinU: 1, MaxU: 3, MinS: 1, MaxS: 3, BitWidth: 2, WindowWidths: []int{2},
			Runs: 3, Distinct: 3, Sorted: true, DeltaWidth: 1}},
		{"u8 signed", 8, []uint64{0xff, 0x80, 5, 0x7f}, nil, FixedStats{
			N: 4, Bits: 8, Bytes: 4, MinU: 5, MaxU: 255, MinS: -128, MaxS: 127, BitWidth: 8, WindowWidths: []int{8},
			Runs: 4, Distinct: 4}},
		{"u16 step 3", 16, []uint64{10, 13, 16, 19}, nil, FixedStats{
			N: 4, Bits: 16, Bytes: 8, MinU: 10, MaxU: 19, MinS: 10, MaxS: 19, BitWidth: 5, WindowWidths: []int{5},
			Runs: 4, Distinct: 4, Sorted: true, Step: 3, DeltaWidth: 2}},
		{"u16 signed", 16, []uint64{neg(16, -2), 3, neg(16, -300)}, nil, FixedStats{
			N: 3, Bits: 16, Bytes: 6, MinU: 3, MaxU: 65534, MinS: -300, MaxS: 3, BitWidth: 16, WindowWidths: []int{16},
			Runs: 3, Distinct: 3}},
		{"u32 non-constant step", 32, []uint64{1, 3, 5, 8}, nil, FixedStats{
			N: 4, Bits: 32, Bytes: 16, MinU: 1, MaxU: 8, MinS: 1, MaxS: 8, BitWidth: 4, WindowWidths: []int{4},
			Runs: 4, Distinct: 4, Sorted: true, DeltaWidth: 2}},
		{"u32 constant negative", 32, []uint64{neg(32, -5), neg(32, -5), neg(32, -5)}, nil, FixedStats{
			N: 3, Bits: 32, Bytes: 12, MinU: 0xfffffffb, MaxU: 0xfffffffb, MinS: -5, MaxS: -5, BitWidth: 32, WindowWidths: []int{32},
			Runs: 1, Distinct: 1, Constant: true, Sorted: true}},
		{"u32 single", 32, []uint64{42}, nil, FixedStats{
			N: 1, Bits: 32, Bytes: 4, MinU: 42, MaxU: 42, MinS: 42, MaxS: 42, BitWidth: 6, WindowWidths: []int{6},
			Runs: 1, Distinct: 1, Constant: true, Sorted: true}},
		{"u32 decreasing step", 32, []uint64{9, 6, 3}, nil, FixedStats{
			N: 3, Bits: 32, Bytes: 12, MinU: 3, MaxU: 9, MinS: 3, MaxS: 9, BitWidth: 4, WindowWidths: []int{4},
			Runs: 3, Distinct: 3}},
		{"u64 extremes", 64, []uint64{1 << 63, math.MaxInt64, 0}, nil, FixedStats{
			N: 3, Bits: 64, Bytes: 24, MinU: 0, MaxU: 1 << 63, MinS: math.MinInt64, MaxS: math.MaxInt64, BitWidth: 64, WindowWidths: []int{64},
			Runs: 3, Distinct: 3}},
		{"u64 big step", 64, []uint64{0, 1 << 40, 2 << 40, 3 << 40}, nil, FixedStats{
			N: 4, Bits: 64, Bytes: 32, MinU: 0, MaxU: 3 << 40, MinS: 0, MaxS: 3 << 40, BitWidth: 42, WindowWidths: []int{42},
			Runs: 4, Distinct: 4, Sorted: true, Step: 1 << 40, DeltaWidth: 41}},
		{"u64 signed sorted as unsigned", 64, []uint64{1, neg(64, -1)}, nil, FixedStats{
			N: 2, Bits: 64, Bytes: 16, MinU: 1, MaxU: math.MaxUint64, MinS: -1, MaxS: 1, BitWidth: 64, WindowWidths: []int{64},
			Runs: 2, Distinct: 2, Sorted: true, Step: math.MaxUint64 - 1, DeltaWidth: 64}},
		{"u64 nulls excluded", 64, []uint64{7, 100, 3, 3, 9}, []bool{F, T, F, F, F}, FixedStats{
			N: 5, Nulls: 1, Bits: 64, Bytes: 40, MinU: 3, MaxU: 9, MinS: 3, MaxS: 9, BitWidth: 7, WindowWidths: []int{7},
			Runs: 4, Distinct: 3}},
		{"u32 null breaks no sort", 32, []uint64{1, 0, 2, 5}, []bool{F, T, F, F}, FixedStats{
			N: 4, Nulls: 1, Bits: 32, Bytes: 16, MinU: 1, MaxU: 5, MinS: 1, MaxS: 5, BitWidth: 3, WindowWidths: []int{3},
			Runs: 4, Distinct: 3, Sorted: true}},
		{"u16 constant around null", 16, []uint64{4, 9, 4}, []bool{F, T, F}, FixedStats{
			N: 3, Nulls: 1, Bits: 16, Bytes: 6, MinU: 4, MaxU: 4, MinS: 4, MaxS: 4, BitWidth: 4, WindowWidths: []int{4},
			Runs: 3, Distinct: 1, Constant: true, Sorted: true}},
		{"u8 signed with nulls", 8, []uint64{0xfe, 0x01, 0x80}, []bool{F, F, T}, FixedStats{
			N: 3, Nulls: 1, Bits: 8, Bytes: 3, MinU: 1, MaxU: 254, MinS: -2, MaxS: 1, BitWidth: 8, WindowWidths: []int{8},
			Runs: 3, Distinct: 2}},
		{"u8 all null", 8, []uint64{5, 5}, []bool{T, T}, FixedStats{
			N: 2, Nulls: 2, Bits: 8, Bytes: 2, BitWidth: 3, WindowWidths: []int{3}, Runs: 1, Sorted: true}},
		{"u64 empty", 64, nil, nil, FixedStats{Bits: 64, Sorted: true}},
		{"nulls all false", 32, []uint64{2, 4, 6}, []bool{F, F, F}, FixedStats{
			N: 3, Bits: 32, Bytes: 12, MinU: 2, MaxU: 6, MinS: 2, MaxS: 6, BitWidth: 3, WindowWidths: []int{3},
			Runs: 3, Distinct: 3, Sorted: true, Step: 2, DeltaWidth: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Fixed(le(tc.bits, tc.vals...), tc.bits, len(tc.vals), tc.nulls)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFixedOtherWidths(t *testing.T) {
	for _, tc := range []struct{ bits, n, bytes int }{{1, 10, 2}, {24, 5, 15}, {128, 3, 48}, {0, 4, 0}} {
		got := Fixed(make([]byte, tc.bytes), tc.bits, tc.n, make([]bool, tc.n))
		want := FixedStats{N: tc.n, Bits: tc.bits, Bytes: tc.bytes}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("bits %d: got %+v want %+v", tc.bits, got, want)
		}
	}
	nulls := []bool{true, false, true}
	if got := Fixed(nil, 1, 3, nulls); got.Nulls != 2 || got.Bytes != 1 {
		t.Errorf("bool nulls: %+v", got)
	}
}

func TestFixedWindows(t *testing.T) {
	const n = 2*WindowSize + 452
	vals := make([]uint64, n)
	for i := range vals {
		vals[i] = uint64(i % 16) // width 4 everywhere
	}
	vals[WindowSize+7] = 1 << 20 // window 1: 21
	vals[n-1] = 1 << 7           // short last window: 8
	nulls := make([]bool, n)
	nulls[n-1] = true // nulls count as stored
	for _, w := range []int{32, 64} {
		for _, nl := range [][]bool{nil, nulls} {
			got := Fixed(le(w, vals...), w, n, nl)
			if want := []int{4, 21, 8}; !reflect.DeepEqual(got.WindowWidths, want) {
				t.Errorf("bits %d nulls %v: windows %v want %v", w, nl != nil, got.WindowWidths, want)
			}
			if got.BitWidth != 21 || got.Runs != n {
				t.Errorf("bits %d: BitWidth %d Runs %d", w, got.BitWidth, got.Runs)
			}
			wantMax := uint64(1 << 20)
			if got.MaxU != wantMax || got.Distinct != 18-uint64(b2i(nl != nil)) {
				t.Errorf("bits %d nulls %v: MaxU %d Distinct %d", w, nl != nil, got.MaxU, got.Distinct)
			}
		}
	}
	// One run and one constant value across window boundaries.
	c := make([]uint64, 3*WindowSize)
	for i := range c {
		c[i] = 77
	}
	got := Fixed(le(16, c...), 16, len(c), nil)
	if got.Runs != 1 || !got.Constant || got.Distinct != 1 || !reflect.DeepEqual(got.WindowWidths, []int{7, 7, 7}) {
		t.Errorf("constant: %+v", got)
	}
	// An arithmetic sequence spanning windows keeps its step.
	for i := range c {
		c[i] = uint64(1000 + 5*i)
	}
	got = Fixed(le(32, c...), 32, len(c), nil)
	if got.Step != 5 || got.DeltaWidth != 3 || !got.Sorted || got.Runs != len(c) {
		t.Errorf("step across windows: Step %d DeltaWidth %d Sorted %v", got.Step, got.DeltaWidth, got.Sorted)
	}
	c[2*WindowSize] += 1 // one difference of 6, one of 4
	got = Fixed(le(32, c...), 32, len(c), nil)
	if got.Step != 0 || got.DeltaWidth != 3 || !got.Sorted {
		t.Errorf("broken step: Step %d DeltaWidth %d Sorted %v", got.Step, got.DeltaWidth, got.Sorted)
	}
}

// reference computes FixedStats naively, one value at a time.
func reference(vals []uint64, width int, nulls []bool) FixedStats {
	n := len(vals)
	s := FixedStats{N: n, Bits: width, Bytes: n * width / 8, Sorted: true}
	shift := uint(64 - width)
	seen := map[uint64]bool{}
	var or, wor, prevNN uint64
	haveNN := false
	for i, v := range vals {
		or |= v
		wor |= v
		if i%WindowSize == WindowSize-1 || i == n-1 {
			s.WindowWidths = append(s.WindowWidths, bits.Len64(wor))
			wor = 0
		}
		if i == 0 || v != vals[i-1] {
			s.Runs++
		}
		if nulls != nil && nulls[i] {
			s.Nulls++
			continue
		}
		sv := int64(v<<shift) >> shift
		if !haveNN {
			s.MinU, s.MaxU, s.MinS, s.MaxS = v, v, sv, sv
		} else {
			s.MinU, s.MaxU = min(s.MinU, v), max(s.MaxU, v)
			s.MinS, s.MaxS = min(s.MinS, sv), max(s.MaxS, sv)
			if v < prevNN {
				s.Sorted = false
			}
		}
		prevNN, haveNN = v, true
		seen[v] = true
	}
	s.BitWidth = bits.Len64(or)
	s.Distinct = uint64(len(seen))
	s.Constant = len(seen) == 1
	if s.Nulls == 0 && n >= 2 {
		step := vals[1] - vals[0]
		var maxD uint64
		for i := 1; i < n; i++ {
			d := vals[i] - vals[i-1]
			if d != step || vals[i] <= vals[i-1] {
				step = 0
			}
			maxD = max(maxD, d)
		}
		s.Step = step
		if s.Sorted {
			s.DeltaWidth = bits.Len64(maxD)
		}
	}
	return s
}

func TestFixedMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 700 {
		width := []int{8, 16, 32, 64}[iter%4]
		n := []int{1, 2, 3, 17, 1023, 1024, 1025, 3000, 5000}[r.IntN(9)]
		mask := uint64(math.MaxUint64) >> (64 - width)
		vals := make([]uint64, n)
		switch iter / 4 % 7 {
		case 0: // random
			for i := range vals {
				vals[i] = r.Uint64() & uint64(mask)
			}
		case 1: // few distinct, with runs
			for i := range vals {
				if i > 0 && r.IntN(3) > 0 {
					vals[i] = vals[i-1]
				} else {
					vals[i] = uint64(r.IntN(20)) & uint64(mask)
				}
			}
		case 2: // sorted
			var v uint64
			for i := range vals {
				v += uint64(r.IntN(3))
				vals[i] = v & uint64(mask)
			}
		case 3: // arithmetic
			start, step := uint64(r.IntN(50)), uint64(1+r.IntN(3))
			for i := range vals {
				vals[i] = (start + uint64(i)*step) & uint64(mask)
			}
		case 4: // signed around zero
			for i := range vals {
				vals[i] = uint64(int64(r.IntN(200)-100)) & uint64(mask)
			}
		case 5, 6: // sorted (distinct or with duplicates) for two thirds, then random
			var v uint64
			for i := range vals {
				if i < 2*n/3 {
					v += uint64(r.IntN(2 + iter%3))
				} else {
					v = r.Uint64()
				}
				vals[i] = v & uint64(mask)
			}
		}
		var nulls []bool
		switch iter % 6 {
		case 1, 4: // scattered
			nulls = make([]bool, n)
			for i := range nulls {
				nulls[i] = r.IntN(4) == 0
			}
		case 3: // whole windows null or valid, and a run across a boundary
			nulls = make([]bool, n)
			for i := range nulls {
				nulls[i] = (i/WindowSize)%2 == 0 || i%1500 > 1400
			}
		case 5: // one null
			nulls = make([]bool, n)
			nulls[r.IntN(n)] = true
		}
		want := reference(vals, width, nulls)
		data := le(width, vals...)
		misaligned := append(make([]byte, 1, len(data)+1), data...)[1:]
		for _, d := range [][]byte{data, misaligned} {
			got := Fixed(d, width, n, nulls)
			if want.Distinct > 256 && width > 16 {
				if e := math.Abs(float64(got.Distinct)/float64(want.Distinct) - 1); e < 0.06 {
					got.Distinct = want.Distinct
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("iter %d width %d n %d nulls %v:\n got %+v\nwant %+v", iter, width, n, nulls != nil, got, want)
			}
			// FixedOnly: the same measures, without the distinct count
			// of wide unsorted values.
			only := FixedOnly(d, width, n, nulls)
			if width > 16 && !want.Sorted {
				if only.Distinct != 0 {
					t.Fatalf("iter %d: FixedOnly counted %d distinct values", iter, only.Distinct)
				}
				only.Distinct = got.Distinct
			}
			if !reflect.DeepEqual(only, got) {
				t.Fatalf("iter %d width %d n %d: FixedOnly\n got %+v\nwant %+v", iter, width, n, only, got)
			}
		}
	}
}

func TestFixedPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"short data":  func() { Fixed(make([]byte, 7), 32, 2, nil) },
		"short nulls": func() { Fixed(make([]byte, 8), 32, 2, []bool{false}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestFixedAllocs(t *testing.T) {
	vals := make([]uint64, 1<<16)
	for i := range vals {
		vals[i] = uint64(i * 7919)
	}
	nulls := make([]bool, len(vals))
	nulls[5] = true
	for _, w := range []int{8, 16, 32, 64} {
		data := le(w, vals...)
		for _, nl := range [][]bool{nil, nulls} {
			if a := testing.AllocsPerRun(20, func() { Fixed(data, w, len(vals), nl) }); a > 1 {
				t.Errorf("bits %d: %v allocs per pass, want 1 (WindowWidths)", w, a)
			}
		}
	}
	offs := make([]uint64, 1001)
	for i := range offs {
		offs[i] = uint64(3 * i)
	}
	data := make([]byte, 3000)
	if a := testing.AllocsPerRun(20, func() { Variable(offs, data, nil) }); a > 0 {
		t.Errorf("Variable: %v allocs", a)
	}
}

func TestVariable(t *testing.T) {
	const F, T = false, true
	tests := []struct {
		name    string
		offsets []uint64
		data    string
		nulls   []bool
		want    VarStats
	}{
		{`["ab", "", "cde", null]`, []uint64{0, 2, 2, 5, 5}, "abcde", []bool{F, F, F, T}, VarStats{
			N: 4, Nulls: 1, Bytes: 5, MaxLen: 3, MinLen: 0, Distinct: 3, OffsetWidth: 3}},
		{"constant with null and offset", []uint64{3, 5, 9, 11}, "zzzxy----xy", []bool{F, T, F}, VarStats{
			N: 3, Nulls: 1, Bytes: 8, MaxLen: 2, MinLen: 2, Distinct: 1, Constant: true, OffsetWidth: 4}},
		{"duplicates", []uint64{0, 1, 2, 3, 4}, "abab", nil, VarStats{
			N: 4, Bytes: 4, MaxLen: 1, MinLen: 1, Distinct: 2, OffsetWidth: 3}},
		{"same prefix differs", []uint64{0, 20, 40}, "0123456789abcdefghij0123456789abcdefghiJ", nil, VarStats{
			N: 2, Bytes: 40, MaxLen: 20, MinLen: 20, Distinct: 2, OffsetWidth: 6}},
		{"all empty", []uint64{0, 0, 0}, "", nil, VarStats{N: 2, Distinct: 1, Constant: true}},
		{"all null", []uint64{0, 1, 2}, "ab", []bool{T, T}, VarStats{N: 2, Nulls: 2, Bytes: 2, OffsetWidth: 2}},
		{"no values", []uint64{0}, "", nil, VarStats{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Variable(tc.offsets, []byte(tc.data), tc.nulls)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestLevelsMatchesScan(t *testing.T) {
	// Four cores or not, long streams are measured in pieces: runs that
	// cross the cuts must count once.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 240 {
		n := 1 + r.IntN(5000)
		if iter%6 == 0 {
			n = 2<<16 + r.IntN(300_000)
		}
		lv := make([]uint16, n)
		change := 1 + r.IntN(100)
		for i := range lv {
			if i > 0 && r.IntN(change) > 0 {
				lv[i] = lv[i-1]
			} else {
				lv[i] = uint16(r.IntN(1 + iter%9))
			}
		}
		want := LevelStats{N: n, Runs: 1}
		for i, v := range lv {
			if i%WindowSize == 0 {
				want.WindowWidths = append(want.WindowWidths, 0)
			}
			w := &want.WindowWidths[len(want.WindowWidths)-1]
			*w = max(*w, bits.Len16(v))
			want.Max = max(want.Max, v)
			if i > 0 && v != lv[i-1] {
				want.Runs++
			}
		}
		want.BitWidth = bits.Len16(want.Max)
		if got := Levels(lv); !reflect.DeepEqual(got, want) {
			t.Fatalf("iter %d: got %+v want %+v", iter, got, want)
		}
	}
}

func TestLevels(t *testing.T) {
	tests := []struct {
		name   string
		levels []uint16
		want   LevelStats
	}{
		{"small", []uint16{0, 0, 1, 1, 1, 3}, LevelStats{N: 6, Max: 3, BitWidth: 2, Runs: 3, WindowWidths: []int{2}}},
		{"zeros", []uint16{0, 0}, LevelStats{N: 2, Runs: 1, WindowWidths: []int{0}}},
		{"wide", []uint16{40000, 0, 0, 0, 0, 65535}, LevelStats{N: 6, Max: 65535, BitWidth: 16, Runs: 3, WindowWidths: []int{16}}},
		{"empty", nil, LevelStats{}},
	}
	long := make([]uint16, 2*WindowSize+1)
	long[3] = 1
	long[WindowSize] = 5
	long[2*WindowSize] = 1
	tests = append(tests, struct {
		name   string
		levels []uint16
		want   LevelStats
	}{"windows", long, LevelStats{N: len(long), Max: 5, BitWidth: 3, Runs: 6, WindowWidths: []int{1, 3, 1}}})
	// Long runs (the skipping scan) with changes at every offset within a group.
	runsy := make([]uint16, 5*WindowSize+3)
	for i := range runsy {
		runsy[i] = 2
	}
	runsy[2*WindowSize+1] = 7 // one-level run
	for i := 3*WindowSize + 2; i < 3*WindowSize+9; i++ {
		runsy[i] = 4
	}
	runsy[len(runsy)-1] = 0
	tests = append(tests, struct {
		name   string
		levels []uint16
		want   LevelStats
	}{"long runs", runsy, LevelStats{N: len(runsy), Max: 7, BitWidth: 3, Runs: 6, WindowWidths: []int{2, 2, 3, 3, 2, 2}}})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Levels(tc.levels); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestVariableInPieces: a large page measured in pieces side by side gives
// what one pass gives: lengths, constancy, and the distinct count whether
// the sketch stays exact (few values) or goes dense (many).
func TestVariableInPieces(t *testing.T) {
	const n = 300_000 // several pieces of at least par.MinValues
	r := rand.New(rand.NewPCG(8, 9))
	for _, tc := range []struct {
		name  string
		value func(i int) string // "" with null
		null  func(i int) bool
	}{
		{"few distinct, nulls", func(i int) string { return fmt.Sprint("v", r.IntN(200)) }, func(i int) bool { return i%9 == 0 }},
		{"many distinct", func(i int) string { return fmt.Sprint("value-", r.IntN(1<<20)) }, func(int) bool { return false }},
		{"few per half, many in all", func(i int) string { return fmt.Sprint(i < n/2, r.IntN(200)) }, func(int) bool { return false }},
		{"constant", func(int) string { return "same" }, func(i int) bool { return i%5 == 1 }},
		{"first piece all null", func(int) string { return "same" }, func(i int) bool { return i < n/2 }},
		{"constant per half", func(i int) string { return map[bool]string{true: "a", false: "b"}[i < n/2] }, func(int) bool { return false }},
	} {
		offsets := []uint64{0}
		var data []byte
		nulls := make([]bool, n)
		for i := range n {
			if tc.null(i) {
				nulls[i] = true
			} else {
				data = append(data, tc.value(i)...)
			}
			offsets = append(offsets, uint64(len(data)))
		}
		measure := func(procs int) VarStats {
			prev := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(prev)
			return Variable(offsets, data, nulls)
		}
		one, pieces := measure(1), measure(4)
		if one != pieces {
			t.Errorf("%s: one pass %+v, pieces %+v", tc.name, one, pieces)
		}
	}
}

// TestFixedInPieces: a page measured in pieces (cut at window boundaries,
// joined in order) gives exactly what one pass gives, distinct estimate
// included, whatever the cuts: runs and sortedness across a cut, pieces
// sorted on their own but not together, pieces of nulls only, distinct sets
// small per piece but large together.
func TestFixedInPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for iter := range 3000 {
		width := []int{8, 16, 32, 64}[iter%4]
		n := []int{2048, 3000, 5000, 9000, 20000}[r.IntN(5)]
		mask := uint64(math.MaxUint64) >> (64 - width)
		vals := make([]uint64, n)
		pattern := iter / 4 % 12
		switch pattern {
		case 0: // random
			for i := range vals {
				vals[i] = r.Uint64() & mask
			}
		case 1: // few distinct, with runs (across cuts too)
			for i := range vals {
				if i > 0 && r.IntN(8) > 0 {
					vals[i] = vals[i-1]
				} else {
					vals[i] = uint64(r.IntN(20)) & mask
				}
			}
		case 2: // sorted, with duplicates
			var v uint64
			for i := range vals {
				v += uint64(r.IntN(3))
				vals[i] = v & mask
			}
		case 3: // arithmetic
			start, step := uint64(r.IntN(50)), uint64(1+r.IntN(3))
			for i := range vals {
				vals[i] = (start + uint64(i)*step) & mask
			}
		case 4: // signed around zero, and the all-ones value
			for i := range vals {
				vals[i] = uint64(int64(r.IntN(200)-100)) & mask
				if r.IntN(50) == 0 {
					vals[i] = mask
				}
			}
		case 5: // sawtooth: sorted within stretches of 1024..4096, falling between
			var v uint64
			span := 1024 << r.IntN(3)
			for i := range vals {
				if i%span == 0 {
					v = uint64(r.IntN(10))
				}
				v += uint64(r.IntN(2))
				vals[i] = v & mask
			}
		case 6: // about 150 distinct per stretch of 2048, different between stretches
			for i := range vals {
				vals[i] = (uint64(i/2048)*1000 + uint64(r.IntN(150))) & mask
			}
		case 7: // constant
			c := r.Uint64() & mask
			for i := range vals {
				vals[i] = c
			}
		case 8: // sorted then random
			var v uint64
			for i := range vals {
				if i < n/2 {
					v += uint64(r.IntN(4))
				} else {
					v = r.Uint64()
				}
				vals[i] = v & mask
			}
		case 9: // increasing by one, equal across some windows
			for i := range vals {
				vals[i] = uint64(i/700) & mask
			}
		case 10: // 255 to 258 distinct in shuffled stretches: a few per piece, the set's limit in all
			d := 255 + r.IntN(4)
			perm := r.Perm(d)
			for i := range vals {
				vals[i] = uint64(perm[i*d/n]*7919+3) & mask
			}
		case 11: // arithmetic but for one larger step (placed at a cut below)
			for i := range vals {
				vals[i] = uint64(5+3*i) & mask
			}
		}
		var nulls []bool
		switch iter % 5 {
		case 1: // scattered
			nulls = make([]bool, n)
			for i := range nulls {
				nulls[i] = r.IntN(4) == 0
			}
		case 2: // whole windows null, the first among them
			nulls = make([]bool, n)
			for i := range nulls {
				nulls[i] = (i/WindowSize)%3 == 0
			}
		case 3: // one null
			nulls = make([]bool, n)
			nulls[r.IntN(n)] = true
		case 4: // all but a few null
			nulls = make([]bool, n)
			for i := range nulls {
				nulls[i] = r.IntN(100) > 0
			}
		}
		// Cuts: 2 to 5 pieces at random window boundaries.
		windows := (n + WindowSize - 1) / WindowSize
		var inner []int
		for _, w := range r.Perm(windows - 1)[:min(windows-1, 1+r.IntN(4))] {
			inner = append(inner, (w+1)*WindowSize)
		}
		slices.Sort(inner)
		cuts := append(append([]int{0}, inner...), n)
		if pattern == 11 { // a step of 4, 2 or 0 across the first cut
			shift := []uint64{1, mask, mask - 2}[r.IntN(3)]
			for i := cuts[1]; i < n; i++ {
				vals[i] = (vals[i] + shift) & mask
			}
		}
		data := le(width, vals...)
		for _, distinct := range []bool{true, false} {
			one := fixed(data, width, n, nulls, distinct, 0, []int{0, n})
			pieces := fixed(data, width, n, nulls, distinct, 0, cuts)
			if !reflect.DeepEqual(one, pieces) {
				t.Fatalf("iter %d (pattern %d, width %d, n %d, nulls %d, cuts %v, distinct %v):\n one pass %+v\n   pieces %+v",
					iter, pattern, width, n, iter%5, cuts, distinct, one, pieces)
			}
		}
		checkUpTo(t, fmt.Sprintf("iter %d (pattern %d, width %d, n %d, cuts %v)", iter, pattern, width, n, cuts), data, width, n, nulls, cuts)
	}
}

// checkUpTo checks FixedUpTo against Fixed on one page, in one pass and in
// the pieces of cuts, for bounds around the page's distinct count: every
// measure but Distinct is Fixed's, and Distinct exceeds each bound exactly
// when Fixed's does.
func checkUpTo(t *testing.T, what string, data []byte, width, n int, nulls []bool, cuts []int) {
	t.Helper()
	full := fixed(data, width, n, nulls, true, 0, []int{0, n})
	d := full.Distinct
	for _, most := range []uint64{1, 50, d / 4, d / 3, d / 2, d*9/20 + 1, d, 2 * d} {
		if most == 0 {
			continue
		}
		for _, c := range [][]int{{0, n}, cuts} {
			got := fixed(data, width, n, nulls, true, most, c)
			if (got.Distinct > most) != (d > most) {
				t.Fatalf("%s, most %d, cuts %v: distinct %d against %d counted whole", what, most, c, got.Distinct, d)
			}
			got.Distinct = d
			if !reflect.DeepEqual(got, full) {
				t.Fatalf("%s, most %d, cuts %v:\n up to %+v\n whole %+v", what, most, c, got, full)
			}
		}
	}
}

// TestFixedUpToStops: on a page of distinct values, a count bounded far
// below them stops early (its estimate is of the values counted so far),
// in one pass and in pieces, and still says more than the bound.
func TestFixedUpToStops(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1 << 18
	vals := make([]uint64, n)
	for i := range vals {
		vals[i] = r.Uint64()
	}
	data := le(64, vals...)
	whole := Fixed(data, 64, n, nil)
	if whole.Distinct < n*9/10 {
		t.Fatalf("whole page: %d distinct of %d", whole.Distinct, n)
	}
	const most = 2000
	for _, cuts := range [][]int{{0, n}, {0, n / 2, n}, {0, 64 * WindowSize, 100 * WindowSize, n}} {
		got := fixed(data, 64, n, nil, true, most, cuts)
		// It stops at the first check past 2*most in each piece: within
		// a few checks' values of it.
		if got.Distinct <= most || got.Distinct > uint64(len(cuts)-1)*(2*most+4*stopCheckWindows*WindowSize) {
			t.Errorf("cuts %v: distinct %d, want above %d and stopped early (the page has %d)", cuts, got.Distinct, most, whole.Distinct)
		}
	}
	if got := FixedUpTo(data, 64, n, nil, 0); got.Distinct != whole.Distinct {
		t.Errorf("most 0: distinct %d, want %d", got.Distinct, whole.Distinct)
	}
}

// FuzzFixedInPieces checks one pass against pieces on pages spun from the
// fuzzer's bytes: values cycle through them (so runs, sortedness and the
// distinct count follow the input), nulls and cuts come from a seed.
func FuzzFixedInPieces(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(3), uint64(0), uint16(4000))
	f.Add([]byte{0, 0, 0, 1}, uint8(2), uint64(7), uint16(9000))
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255, 0}, uint8(7), uint64(3), uint16(2049))
	f.Fuzz(func(t *testing.T, src []byte, mode uint8, seed uint64, size uint16) {
		if len(src) == 0 {
			return
		}
		width := []int{8, 16, 32, 64}[mode%4]
		n := 1025 + int(size)%20000
		mask := uint64(math.MaxUint64) >> (64 - width)
		vals := make([]uint64, n)
		var acc uint64
		for i := range vals {
			b := uint64(src[i%len(src)])
			if mode&4 != 0 { // sorted-ish: a running sum of the bytes
				acc += b
			} else {
				acc = b * 0x9e3779b97f4a7c15 >> (i % 7)
			}
			vals[i] = acc & mask
		}
		r := rand.New(rand.NewPCG(seed, uint64(n)))
		var nulls []bool
		if seed%3 != 0 {
			nulls = make([]bool, n)
			for i := range nulls {
				nulls[i] = r.IntN(int(seed%7)+2) == 0
			}
		}
		windows := (n + WindowSize - 1) / WindowSize
		var inner []int
		for _, w := range r.Perm(windows - 1)[:1+r.IntN(windows-1)] {
			inner = append(inner, (w+1)*WindowSize)
		}
		slices.Sort(inner)
		cuts := append(append([]int{0}, inner...), n)
		data := le(width, vals...)
		for _, distinct := range []bool{true, false} {
			one := fixed(data, width, n, nulls, distinct, 0, []int{0, n})
			pieces := fixed(data, width, n, nulls, distinct, 0, cuts)
			if !reflect.DeepEqual(one, pieces) {
				t.Fatalf("width %d n %d cuts %v distinct %v:\n one pass %+v\n   pieces %+v", width, n, cuts, distinct, one, pieces)
			}
		}
	})
}

// TestVariableParts: values whose bytes lie in several parts (cut at random
// values, some parts empty of values or bytes, some large enough to be
// measured in pieces) measure as the same values in one buffer.
func TestVariableParts(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	for iter := range 40 {
		n := 1 + r.IntN(300)
		if iter%8 == 0 {
			n = 2*par.MinValues + r.IntN(3*par.MinValues)
		}
		distinct := 1 + r.IntN(5000)
		if iter%5 == 0 {
			distinct = 1 // constant
		}
		offs := []uint64{0}
		var data []byte
		nulls := make([]bool, n)
		for i := range n {
			if r.IntN(6) == 0 && iter%3 != 0 {
				nulls[i] = true
			} else {
				data = fmt.Appendf(data, "v%d-%s", r.IntN(distinct), strings.Repeat("x", r.IntN(4)))
			}
			offs = append(offs, uint64(len(data)))
		}
		firsts := []int{0}
		for len(firsts) < 1+r.IntN(6) {
			firsts = append(firsts, firsts[len(firsts)-1]+r.IntN(n-firsts[len(firsts)-1]+1))
		}
		var parts [][]byte
		for k, lo := range firsts {
			hi := n
			if k+1 < len(firsts) {
				hi = firsts[k+1]
			}
			parts = append(parts, bytes.Clone(data[offs[lo]:offs[hi]]))
		}
		for _, nl := range [][]bool{nil, nulls} {
			want := Variable(offs, data, nl)
			got := VariableParts(offs, parts, firsts, nl)
			if got != want {
				t.Fatalf("iter %d, %d values in %d parts (firsts %v): %+v, one buffer %+v", iter, n, len(parts), firsts, got, want)
			}
		}
	}
}
