package selector

import (
	"math/bits"

	"github.com/planarlance/planar/values"
)

// LargeChunkZstdLevel is the Zstd level of the large-chunk candidates: the
// fastest. Level 3 makes the URL class 20% smaller again (8.1 against
// 10.1 MB) but writes it at ~0.7× the lance policy's speed, against ~0.9×
// at level 1 (issue 12 asks the cost policy to stay within 0.9×).
const LargeChunkZstdLevel = 1

// largeChunkCandidates adds, for the cost policy, general compression over
// large chunks: Zstd over chunks of about LargeChunkBytes of raw values (up to
// 2^15 values, the most a chunk's 4-bit log2 count can say), over the plain
// form of the values (offsets and bytes in one buffer for strings, so both
// are compressed), over FSST-coded strings, and over byte stream split for
// 32/64-bit values. The cost model weighs them like any candidate: a take
// of one row reads and decodes a whole large chunk (readCost), so they win only
// where they save more than that.
// Those for which pays (given the codec and its inner size) is false are
// not tried.
func largeChunkCandidates(p Page, o Options, pays func(values.Codec, int) bool) []Candidate {
	prof := p.Profile
	if prof == nil || prof.N == 0 || prof.Sample.N == 0 {
		return nil
	}
	raw := prof.RawBytes()
	if raw < 2*largeChunk {
		return nil // a page this small gains little from larger chunks
	}
	per := largeChunkValues(p)
	if per == 0 {
		return nil
	}
	var inners []values.Codec
	switch p.Kind {
	case values.KindFixed:
		if p.Bits%8 != 0 || p.Bits < 8 {
			return nil
		}
		inners = append(inners, values.FlatCodec{Bits: p.Bits})
		if (p.Bits == 32 || p.Bits == 64) && o.BSS != BSSOff && (p.Float || ByteEntropy(prof.Sample) < 5) {
			inners = append(inners, values.BssCodec{Bits: p.Bits})
		}
	case values.KindVariable:
		if !o.StringWindows || prof.Var == nil || prof.OffBits == 0 {
			// Off by default: on the URL class large chunks make the file
			// 0.68× but a take of 100 random rows 5.4× slower (3.1 against
			// 0.57 ms, pylance 1.9; before the reader kept windows' FSST
			// codes coded, 8.2), of 10,000 rows 3× (33 against 11, pylance
			// 22.5), and the write's CPU 1.27× (Zstd over 14 MB of codes):
			// past pylance's on all three. The cost model weighs one take
			// per page, too little to see the takes.
			return nil
		}
		// Where FSST applies, Zstd over its codes (smaller than Zstd over
		// the text on every string class measured) instead of over the
		// raw strings: one trial compression per page, not two.
		v := values.VariableCodec{OffBits: prof.OffBits}
		if useFsst(p, o) {
			inners = append(inners, values.FsstCodec{Table: p.Fsst, Values: v})
		} else {
			inners = append(inners, v)
		}
	default:
		return nil
	}
	var out []Candidate
	for _, c := range inners {
		inner, ok := c.Estimate(prof)
		if !ok {
			continue
		}
		g := values.GeneralCodec{Scheme: values.SchemeZstd, Level: LargeChunkZstdLevel, Inner: c, ChunkValues: per}
		if !pays(g, inner) {
			continue
		}
		if n, ok := g.Estimate(prof); ok && n < inner {
			out = append(out, Candidate{Codec: g, Bytes: n, InnerBytes: inner})
		}
	}
	return out
}

// largeChunkValues is the value count of a large chunk: the largest power of
// two whose raw values fit LargeChunkBytes, at most 2^MaxChunkValuesLog2, and
// small enough that a chunk's levels stay within the 65535 a chunk header
// can count (with a margin for unevenly spread levels); 0 when large chunks
// would not be larger than ordinary chunks.
func largeChunkValues(p Page) int {
	prof := p.Profile
	perValue := max(1, prof.RawBytes()/max(1, prof.N))
	n := 1 << values.MaxChunkValuesLog2
	for n > 1 && n*perValue > LargeChunkBytes {
		n /= 2
	}
	if p.HasLevels && p.NumLevels > p.NumVisible && p.NumVisible > 0 {
		lim := int(int64(32768) * int64(p.NumVisible) / int64(p.NumLevels))
		if lim < 1 {
			return 0
		}
		n = min(n, 1<<(bits.Len(uint(lim))-1))
	}
	if n < 1024 || n*perValue < largeChunk {
		return 0
	}
	return n
}
