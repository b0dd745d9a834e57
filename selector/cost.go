package selector

import (
	"github.com/planarlance/planar/values"
)

// Policy is how the selector picks among admissible candidates.
type Policy int

// Policies.
const (
	// PolicyCost (the default) considers Lance's candidates plus general
	// compression (LZ4, Zstd) over them, and picks the minimum of
	// bytes + Lambda·read cost.
	PolicyCost Policy = iota
	// PolicyLance reproduces Lance's writer: only the candidates Lance's
	// rules admit (general compression only when the field asks for it),
	// smallest estimate wins.
	PolicyLance
)

func (p Policy) String() string { return [...]string{"cost", "lance"}[p] }

// DefaultLambda weighs read cost against stored bytes: one byte-equivalent
// of read work costs 0.05 stored bytes. With it, Zstd (read cost about 1.5
// per decoded byte) wins only when it saves more than about 8% of the raw
// size over a codec that is free to decode.
const DefaultLambda = 0.05

// DefaultMu weighs write work against stored bytes: one byte-equivalent of
// encoding work costs 0.05 stored bytes. Zstd (about 3 per input byte at
// its fastest level) then has to save about 15% more than a free codec.
const DefaultMu = 0.05

// Cost weights of the cost model.
type Weights struct {
	// Lambda multiplies the read cost (default DefaultLambda; negative
	// means 0).
	Lambda float64
	// Mu multiplies the write cost (default DefaultMu; negative means 0).
	Mu float64
}

func (w Weights) mu() float64 { return weight(w.Mu, DefaultMu) }

func (w Weights) lambda() float64 { return weight(w.Lambda, DefaultLambda) }

// weight resolves a cost weight: 0 is the default, negative leaves the term
// out.
func weight(v, def float64) float64 {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return def
	}
	return v
}

// cost is what the policy weighs of a chunked candidate: its stored bytes
// plus the weighted read and write work (bytes alone under the lance
// policy, which compares sizes only).
func (o Options) cost(c values.Codec, stored, innerBytes int, prof *values.Profile) float64 {
	if o.Policy == PolicyLance {
		return float64(stored)
	}
	return float64(stored) + o.Weights.lambda()*readCost(c, stored, innerBytes, prof) + o.Weights.mu()*writeCost(c, innerBytes, prof)
}

// decodeFactor is the read work of a codec per decoded byte, relative to
// copying (byte-equivalents), measured with the values package benchmarks
// (BenchmarkCodecs) on a 2-core EPYC: flat copies, bit unpacking runs at
// ~4.5 GB/s, LZ4 at ~2.3 GB/s, Zstd at ~1 GB/s, FSST at ~1.3 GB/s.
func decodeFactor(c values.Codec) float64 {
	switch x := c.(type) {
	case values.FlatCodec, values.VariableCodec:
		return 0.05
	case values.BitpackCodec:
		return perValue(0.25, x.Bits)
	case values.OutOfLineCodec:
		return perValue(0.25, x.Bits)
	case values.RleCodec:
		return 0.1
	case values.BssCodec:
		return 0.3
	case values.FsstCodec:
		return 1.0
	case values.FslCodec:
		return decodeFactor(x.Values)
	case values.GeneralCodec:
		return decodeFactor(x.Inner) // plus work's share for the compression
	}
	return 0.5
}

// perValue scales a bit-packing factor measured on 32-bit values to
// values of bits bits. Packing and unpacking cost nearly the same per
// value whatever its width (unpacking 64K values: 0.60, 0.74, 0.95 and
// 0.92 ns a value for 8-, 16-, 32- and 64-bit values, alike at packed
// widths 20 and 63), so per byte narrow values cost more and wide ones
// less: a 63-bit int64 column bit-packed saves 1.6% of its bytes at half
// the per-byte work of 32-bit values, which is worth it (pylance's choice;
// flat under one factor for all widths).
func perValue(f float64, bits int) float64 {
	switch bits {
	case 8:
		return 2.5 * f
	case 16:
		return 1.6 * f
	case 64:
		return f / 2
	}
	return f
}

// encodeFactor is the write work of a codec per input byte, relative to
// copying (byte-equivalents), from BenchmarkCodecs: bit packing ~3 GB/s,
// LZ4 ~400 MB/s, Zstd at its fastest ~150-300 MB/s on chunk-sized inputs.
// General compression's own work is counted by work, over the bytes its
// child hands it; here it is the child's factor.
func encodeFactor(c values.Codec) float64 {
	switch x := c.(type) {
	case values.FlatCodec, values.VariableCodec, values.FslCodec, values.PackedStructCodec:
		return 0
	case values.BitpackCodec:
		return perValue(0.1, x.Bits)
	case values.OutOfLineCodec:
		return perValue(0.1, x.Bits)
	case values.BssCodec:
		return 0.1
	case values.RleCodec:
		return 0.2
	case values.FsstCodec:
		return 1.5
	case values.GeneralCodec:
		return encodeFactor(x.Inner)
	}
	return 0.5
}

// LargeChunkBytes is the raw size of the large chunks the cost policy offers
// under general compression (the public option key calls them "windows"):
// Zstd finds matches and builds its entropy tables over the whole chunk,
// and a call costs less per byte. A one-row take decodes a whole large
// chunk: 64 KiB keeps nearly all of the size gain of 256 KiB chunks (URL class 9.65 against 9.44 MB) at a quarter of
// the take's work.
const LargeChunkBytes = 64 << 10

// largeChunk is the raw chunk size from which a compression call counts
// as a large chunk (its per-call cost amortised).
const largeChunk = 32 << 10

// generalFactors are the encode and decode work of general compression per
// byte it compresses (the child's output), by scheme, level and chunk size.
// Measured with klauspost/compress on URL text and split numbers (shared
// 2-core Xeon, noisy): Zstd level 1 encodes ~140 MB/s over 4 KiB chunks but ~500 MB/s
// over 256 KiB chunks, level 3 ~200-450 MB/s, level 7 ~110-300 MB/s;
// decoding runs at ~0.7-1.5 GB/s whatever the level. LZ4 ~400 MB/s and
// ~2.3 GB/s.
func generalFactors(g values.GeneralCodec, chunkRaw float64) (enc, dec float64) {
	if g.Scheme != values.SchemeZstd {
		return 1.0, 0.5
	}
	big := chunkRaw >= largeChunk
	switch l := g.Level; {
	case l >= 10:
		enc = 20
	case l >= 7:
		enc = 5
	case l == 0 || l >= 3:
		enc = 2.5
		if !big {
			enc = 4
		}
	default:
		enc = 1.5
		if !big {
			enc = 3
		}
	}
	return enc, 1.5
}

// work is the encode and decode work of a candidate, byte-equivalents: the
// child codec's factors over the raw values, plus general compression's
// over the bytes it is handed (innerBytes: the child's stored size).
func work(c values.Codec, innerBytes int, prof *values.Profile) (enc, dec float64) {
	raw := float64(prof.RawBytes())
	enc, dec = raw*encodeFactor(c), raw*decodeFactor(c)
	if g, ok := c.(values.GeneralCodec); ok {
		ge, gd := generalFactors(g, raw/chunkCount(c, prof))
		enc += ge * float64(innerBytes)
		dec += gd * float64(innerBytes)
	}
	return enc, dec
}

// chunkCount is about how many chunks the page's values make under c.
func chunkCount(c values.Codec, prof *values.Profile) float64 {
	n := float64(prof.N)
	if n <= 0 {
		return 1
	}
	per := 1024.0
	if g, ok := c.(values.GeneralCodec); ok && g.ChunkValues > 0 {
		per = float64(g.ChunkValues)
	} else if prof.Var != nil && prof.RawBytes() > 0 {
		// Variable-width chunks hold about VariableChunkBytes.
		per = max(1, float64(values.VariableChunkBytes)*n/float64(prof.RawBytes()))
	}
	return max(1, n/per)
}

// writeCost estimates the encoding work of a candidate, byte-equivalents.
func writeCost(c values.Codec, innerBytes int, prof *values.Profile) float64 {
	e, _ := work(c, innerBytes, prof)
	return e
}

// readCost estimates the read work of a chunked candidate in
// byte-equivalents (structural.md §7): taking one random row reads one
// chunk (one IO, priced as 4 KiB, plus its stored bytes) and decodes all of
// it, which is what large chunks make expensive; scanning decodes every
// value.
func readCost(c values.Codec, stored, innerBytes int, prof *values.Profile) float64 {
	_, dec := work(c, innerBytes, prof)
	chunks := chunkCount(c, prof)
	take := 4096 + (float64(stored)+dec)/chunks
	return take + dec
}
