package selector

import (
	"math/rand/v2"
	"testing"

	"github.com/planarlance/planar/values"
)

// levelRuns builds a level stream of runs: pairs of (level, length).
func levelRuns(runs ...int) []uint16 {
	var out []uint16
	for i := 0; i+1 < len(runs); i += 2 {
		for range runs[i+1] {
			out = append(out, uint16(runs[i]))
		}
	}
	return out
}

// levelNoise is n levels drawn from pick (seeded).
func levelNoise(n int, seed uint64, pick func(r *rand.Rand) uint16) []uint16 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]uint16, n)
	for i := range out {
		out[i] = pick(r)
	}
	return out
}

// TestLevelCodec: which codec a level stream gets, by its size, runs, the
// chunk count, the format and the plan's value codec.
func TestLevelCodec(t *testing.T) {
	packed := Plan{LevelComp: Bitpacked}
	window := Plan{LevelComp: Bitpacked, Codec: values.GeneralCodec{Scheme: values.SchemeZstd, Level: LargeChunkZstdLevel, Inner: values.FlatCodec{Bits: 32}, ChunkValues: 1 << 15}}
	small := window
	small.Codec = values.GeneralCodec{Scheme: values.SchemeZstd, Inner: values.FlatCodec{Bits: 32}, ChunkValues: 4096}
	uniform := func(r *rand.Rand) uint16 { return uint16(r.IntN(4)) }
	coin := func(r *rand.Rand) uint16 { return uint16(r.IntN(2)) }
	// Mostly 1, now and then 0 or 2: entropy far below the 2-bit width.
	skewed := func(r *rand.Rand) uint16 {
		switch x := r.IntN(200); {
		case x == 0:
			return 0
		case x == 1:
			return 2
		}
		return 1
	}
	alternating := func(n, run int) []uint16 {
		out := make([]uint16, n)
		for i := range out {
			out[i] = uint16(i / run % 2)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		levels   []uint16
		chunks   int
		plan     Plan
		format23 bool
		want     values.Codec
	}{
		{"absent stream", nil, 1, packed, true, nil},
		{"plan keeps levels flat", levelNoise(5000, 1, uniform), 2, Plan{}, true, values.FlatCodec{Bits: 16}},
		{"tiny page: a packed block is larger", levelNoise(10, 1, coin), 1, packed, true, values.FlatCodec{Bits: 16}},
		{"one block: inline", levelNoise(1000, 2, uniform), 1, packed, true, values.BitpackCodec{Bits: 16}},
		{"many blocks: out of line", levelNoise(5000, 3, coin), 2, packed, true, values.OutOfLineCodec{Bits: 16, Width: 1}},
		{"width of the largest level", levelNoise(5000, 3, uniform), 2, packed, false, values.OutOfLineCodec{Bits: 16, Width: 2}},
		{"long runs: u16 run lengths", levelRuns(0, 2000, 1, 3000), 2, packed, true, values.RleCodec{Bits: 16, LenBits: 16}},
		{"short runs: u8 run lengths", alternating(10000, 100), 3, packed, true, values.RleCodec{Bits: 16, LenBits: 8}},
		{"runs before 2.3: packed", levelRuns(0, 2000, 1, 3000), 2, packed, false, values.OutOfLineCodec{Bits: 16, Width: 1}},
		{"runs in a small page: rle beats a block", levelRuns(0, 30, 1, 40), 1, packed, true, values.RleCodec{Bits: 16, LenBits: 8}},
		{"runs cut by many chunks: packed", alternating(5000, 1000), 500, packed, true, values.OutOfLineCodec{Bits: 16, Width: 1}},
		{"skewed levels in windows: zstd", levelNoise(40000, 4, skewed), 2, window, false,
			values.GeneralCodec{Scheme: values.SchemeZstd, Level: LargeChunkZstdLevel, Inner: values.OutOfLineCodec{Bits: 16, Width: 2}}},
		{"skewed levels, small chunks: packed", levelNoise(40000, 4, skewed), 10, small, false, values.OutOfLineCodec{Bits: 16, Width: 2}},
		{"skewed levels, few per chunk: packed", levelNoise(40000, 4, skewed), 8, window, false, values.OutOfLineCodec{Bits: 16, Width: 2}},
		{"skewed levels, no window codec: packed", levelNoise(40000, 4, skewed), 2, packed, false, values.OutOfLineCodec{Bits: 16, Width: 2}},
		{"uniform levels in windows: zstd does not pay", levelNoise(40000, 5, uniform), 2, window, false, values.OutOfLineCodec{Bits: 16, Width: 2}},
		// Streams long enough to be judged by sampled windows.
		{"long skewed stream, sampled: zstd", levelNoise(3_000_000, 6, skewed), 40, window, false,
			values.GeneralCodec{Scheme: values.SchemeZstd, Level: LargeChunkZstdLevel, Inner: values.OutOfLineCodec{Bits: 16, Width: 2}}},
		{"long uniform stream, sampled: packed", levelNoise(3_000_000, 7, uniform), 40, window, false, values.OutOfLineCodec{Bits: 16, Width: 2}},
	} {
		got := LevelCodec(tc.levels, tc.chunks, tc.plan, tc.format23)
		if got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLevelWindows: short streams are tried whole; long ones by windows
// inside the stream, in order, starting on 1024-level boundaries, first
// at its start and last reaching near its end.
func TestLevelWindows(t *testing.T) {
	whole := 2*levelSampleWindows*levelSampleWindow - 1
	if w := levelWindows(whole); len(w) != 1 || w[0] != [2]int{0, whole} {
		t.Errorf("%d levels: windows %v, want the whole stream", whole, w)
	}
	for _, n := range []int{whole + 1, 3_000_000, 1<<24 + 17} {
		w := levelWindows(n)
		if len(w) != levelSampleWindows || w[0][0] != 0 || n-w[len(w)-1][1] >= 1024 {
			t.Errorf("%d levels: windows %v", n, w)
		}
		for i, win := range w {
			if win[0]%1024 != 0 || win[1]-win[0] != levelSampleWindow || win[1] > n || i > 0 && win[0] < w[i-1][1] {
				t.Errorf("%d levels: window %d is %v (all %v)", n, i, win, w)
			}
		}
	}
}

// TestWithLevelCodecs sets one codec per stream, none for an absent one.
func TestWithLevelCodecs(t *testing.T) {
	rep := levelRuns(1, 1, 0, 3, 1, 1, 0, 5)
	p := WithLevelCodecs(Plan{LevelComp: Bitpacked, Reason: "r"}, rep, nil, 1, true)
	if p.RepCodec != LevelCodec(rep, 1, p, true) || p.DefCodec != nil || p.Reason != "r" {
		t.Errorf("rep %v def %v reason %q", p.RepCodec, p.DefCodec, p.Reason)
	}
}

func TestRunEntries(t *testing.T) {
	for _, tc := range []struct {
		levels   []uint16
		e8, e16  int
		describe string
	}{
		{nil, 0, 0, "empty"},
		{levelRuns(3, 1), 1, 1, "one level"},
		{levelRuns(0, 255, 1, 256), 3, 2, "a run one past u8"},
		{levelRuns(2, 70000), 275, 2, "a run past u16"},
	} {
		if e8, e16 := runEntries(tc.levels); e8 != tc.e8 || e16 != tc.e16 {
			t.Errorf("%s: %d, %d entries, want %d, %d", tc.describe, e8, e16, tc.e8, tc.e16)
		}
	}
}
