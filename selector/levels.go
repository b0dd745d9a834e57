package selector

import (
	"github.com/planarlance/planar/stats"
	"github.com/planarlance/planar/values"
)

// The level streams of a dense chunked page: each chunk stores its slice of
// the repetition and definition levels with one codec per stream for the
// whole page, chosen here once the writer has cut the page into chunks
// (the choice depends on the chunk count) and run by values.LevelEncoder.

// WithLevelCodecs returns plan with the codecs of a dense chunked page's
// level streams (RepCodec, DefCodec; nil for an absent stream), the page
// being cut into chunks chunks. format23: the file is Lance 2.3, whose
// readers take u16 RLE levels.
func WithLevelCodecs(plan Plan, rep, def []uint16, chunks int, format23 bool) Plan {
	plan.RepCodec = LevelCodec(rep, chunks, plan, format23)
	plan.DefCodec = LevelCodec(def, chunks, plan, format23)
	return plan
}

// LevelCodec chooses the codec of one level stream (nil for an absent
// stream), by the stored size of each form:
//   - flat u16 when the plan keeps levels flat, or when packing would not
//     shrink them (tiny pages: an inline block costs a width word and 1024
//     packed values however few are stored);
//   - RLE with u16 run values (2.3 only; Lance 2.2 readers accept only u8
//     run lengths over flat values) when runs beat packing: long runs of
//     one level, as leading or trailing nulls make;
//   - inline bit packing when the stream fits one 1024-level block;
//   - else out-of-line bit packing at the stream's width, under Zstd for
//     the cost policy's large chunks when a trial says it pays
//     (zstdLevels).
func LevelCodec(levels []uint16, chunks int, plan Plan, format23 bool) values.Codec {
	if levels == nil {
		return nil
	}
	flat := values.FlatCodec{Bits: 16}
	if plan.LevelComp != Bitpacked {
		return flat
	}
	n := len(levels)
	ls := stats.Levels(levels)
	w := ls.BitWidth
	packed := (n*w + 7) / 8
	if n <= 1024 {
		packed = (1 + 64*w) * 2
	}
	// Each chunk starts a run and carries an 8-byte block header.
	if rle := (ls.Runs+chunks)*4 + 8*chunks; format23 && rle < packed && rle < 2*n {
		// Run lengths of one or two bytes, whichever stores the runs in
		// fewer bytes (Lance's choice; runs longer than the width allows
		// are cut).
		lenBits := 16
		if e8, e16 := runEntries(levels); 3*e8 <= 4*e16 {
			lenBits = 8
		}
		return values.RleCodec{Bits: 16, LenBits: lenBits}
	}
	if packed >= 2*n {
		return flat
	}
	if n <= 1024 {
		return values.BitpackCodec{Bits: 16}
	}
	ool := values.OutOfLineCodec{Bits: 16, Width: w}
	if g, ok := zstdLevels(levels, chunks, ool, plan); ok {
		return g
	}
	return ool
}

// minZstdLevelChunk is the average levels per chunk from which general
// compression of the level streams is tried (large chunks): below it the
// per-chunk frame and table overheads eat the gain.
const minZstdLevelChunk = 8192

// levelZstdWork is the cost, in stored bytes per packed level byte, of
// Zstd over a large chunk's level streams: λ·1.5 (decode) + μ·1.5 (encode,
// level 1 over large inputs) at the default weights.
const levelZstdWork = DefaultLambda*1.5 + DefaultMu*1.5

// zstdLevels decides, for the cost policy's large chunks, whether a level
// stream is stored as General{Zstd, ool} instead of bit packed alone, by the
// cost model's terms: compressing the packed stream (one trial over the
// page) must save more than λ·read + μ·write of Zstd over those bytes.
// Skewed definition levels (few nulls, lists mostly of one shape) have
// entropy well under their bit width, which Zstd's entropy coder takes.
func zstdLevels(levels []uint16, chunks int, ool values.OutOfLineCodec, plan Plan) (values.GeneralCodec, bool) {
	gc := values.GeneralCodec{Scheme: values.SchemeZstd, Level: LargeChunkZstdLevel, Inner: ool}
	g, ok := plan.Codec.(values.GeneralCodec)
	if !ok || g.ChunkValues <= 4096 || chunks == 0 || len(levels)/chunks < minZstdLevelChunk {
		return gc, false
	}
	// A long stream is judged by evenly spread windows of it (the sizes
	// are compared as sums, so the rule is the same as over the whole);
	// the general codec's block is its child's compressed, so each window
	// is packed and the packed bytes compressed.
	var packedLen, zLen int
	var flat, packed, z []byte
	for _, win := range levelWindows(len(levels)) {
		var err error
		flat = values.AppendFlatLevels(flat[:0], levels[win[0]:win[1]])
		packed, err = ool.AppendBlock(packed[:0], values.Block{Bits: 16, N: win[1] - win[0], Data: flat})
		if err != nil {
			return gc, false
		}
		if z, err = values.AppendCompressed(z[:0], gc.Scheme, gc.Level, packed); err != nil {
			return gc, false
		}
		packedLen += len(packed)
		zLen += len(z)
	}
	if float64(zLen)+levelZstdWork*float64(packedLen) >= float64(packedLen) {
		return gc, false
	}
	return gc, true
}

// levelSampleWindow is the levels in each window a long level stream's
// Zstd trial compresses, and levelSampleWindows how many windows; a
// stream under twice their total is tried whole.
const (
	levelSampleWindow  = 1 << 16
	levelSampleWindows = 4
)

// levelWindows returns the [start, end) windows of a stream of n levels
// that zstdLevels compresses: the whole stream, or levelSampleWindows
// windows of levelSampleWindow levels spread evenly from its start to
// its end, each starting at a multiple of 1024.
func levelWindows(n int) [][2]int {
	if n < 2*levelSampleWindows*levelSampleWindow {
		return [][2]int{{0, n}}
	}
	wins := make([][2]int, levelSampleWindows)
	for i := range wins {
		start := i * (n - levelSampleWindow) / (levelSampleWindows - 1) &^ 1023
		wins[i] = [2]int{start, start + levelSampleWindow}
	}
	return wins
}

// runEntries counts the RLE entries of levels with one- and two-byte run
// lengths (a run longer than the largest length takes several entries).
func runEntries(levels []uint16) (e8, e16 int) {
	for i := 0; i < len(levels); {
		j := i + 1
		for j < len(levels) && levels[j] == levels[i] {
			j++
		}
		e8 += (j - i + 254) / 255
		e16 += (j - i + 65534) / 65535
		i = j
	}
	return e8, e16
}
