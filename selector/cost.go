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

// decodeFactor is the read work of a codec per decoded byte, relative to
// copying (byte-equivalents), measured with the values package benchmarks
// (BenchmarkCodecs) on a 2-core EPYC: flat copies, bit unpacking runs at
// ~4.5 GB/s, LZ4 at ~2.3 GB/s, Zstd at ~1 GB/s, FSST at ~1.3 GB/s.
func decodeFactor(c values.Codec) float64 {
	switch x := c.(type) {
	case values.FlatCodec, values.VariableCodec:
		return 0.05
	case values.BitpackCodec, values.OutOfLineCodec:
		return 0.25
	case values.RleCodec:
		return 0.1
	case values.BssCodec:
		return 0.3
	case values.FsstCodec:
		return 1.0
	case values.FslCodec:
		return decodeFactor(x.Values)
	case values.GeneralCodec:
		f := 0.5
		if x.Scheme == values.SchemeZstd {
			f = 1.5
		}
		return f + decodeFactor(x.Inner)
	}
	return 0.5
}

// encodeFactor is the write work of a codec per input byte, relative to
// copying (byte-equivalents), from BenchmarkCodecs: bit packing ~3 GB/s,
// LZ4 ~400 MB/s, Zstd at its fastest ~150-300 MB/s on chunk-sized inputs.
func encodeFactor(c values.Codec) float64 {
	switch x := c.(type) {
	case values.FlatCodec, values.VariableCodec, values.FslCodec, values.PackedStructCodec:
		return 0
	case values.BitpackCodec, values.OutOfLineCodec, values.BssCodec:
		return 0.1
	case values.RleCodec:
		return 0.2
	case values.FsstCodec:
		return 1.5
	case values.GeneralCodec:
		f := 1.0
		if x.Scheme == values.SchemeZstd {
			f = 3.0
		}
		return f + encodeFactor(x.Inner)
	}
	return 0.5
}

// writeCost estimates the encoding work of a candidate, byte-equivalents.
func writeCost(c values.Codec, prof *values.Profile) float64 {
	return float64(prof.RawBytes()) * encodeFactor(c)
}

// readCost estimates the read work of a chunked candidate in
// byte-equivalents (structural.md §7): taking one random row reads and
// decodes one chunk (one IO, priced as 4 KiB), scanning decodes every value.
func readCost(c values.Codec, stored int, prof *values.Profile) float64 {
	decoded := float64(prof.RawBytes())
	chunks := 1.0
	if n := float64(prof.N); n > 0 {
		chunks = max(1, n/1024)
	}
	take := 4096 + float64(stored)/chunks*(1+decodeFactor(c))
	scan := decoded * decodeFactor(c)
	return take + scan
}
