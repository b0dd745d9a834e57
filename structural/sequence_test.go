package structural

import (
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/values"
)

func arith(n int, start, step uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = start + uint64(i)*step
	}
	return out
}

// increasing is n strictly increasing values with gaps in 1..maxGap.
func increasing(rng *rand.Rand, n int, maxGap uint64) []uint64 {
	out := make([]uint64, n)
	v := uint64(0)
	for i := range out {
		v += 1 + rng.Uint64N(maxGap)
		out[i] = v
	}
	return out
}

func randomFrom(rng *rand.Rand, n int, set []uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = set[rng.IntN(len(set))]
	}
	return out
}

// TestEncodeSequence: every sequence shape gets the codec Lance 14 chooses
// for it, an encoding Lance's sequence decoder accepts (checkSequence), and
// decodes back to itself.
func TestEncodeSequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	runs := func(n, runLen int) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = uint64(1 + i/runLen%3)
		}
		return out
	}
	cases := []struct {
		name string
		xs   []uint64
		want string // values.EncodingName of the encoding
	}{
		{"empty", nil, "constant"},
		{"one", []uint64{5}, "constant(8 bytes)"},
		{"one_max", []uint64{math.MaxUint64}, "constant(8 bytes)"},
		{"two_equal", []uint64{7, 7}, "constant(8 bytes)"},
		{"equal_5000", slices.Repeat([]uint64{1}, 5000), "constant(8 bytes)"},
		{"two_increasing", []uint64{3, 9}, "range64(3,+6)"},
		{"two_decreasing", []uint64{9, 3}, "flat64"}, // a raw tail costs what flat does
		{"arith", arith(2000, 10, 3), "range64(10,+3)"},
		{"arith_huge_step", arith(3, 0, 1<<62), "range64(0,+4611686018427387904)"},
		{"increasing_small", increasing(rng, 50, 4), "delta64(bitpack64(w=3))"},
		{"increasing_1025", increasing(rng, 1025, 100), "delta64(bitpack64(w=7))"},
		{"increasing_5000", increasing(rng, 5000, 1000), "delta64(bitpack64(w=10))"},
		{"quadratic", func() []uint64 {
			out := make([]uint64, 300)
			for i := range out {
				out[i] = uint64(i * (i + 1) / 2)
			}
			return out
		}(), "delta64(range64(1,+1))"},
		{"wide_gap", []uint64{0, 1, math.MaxUint64 - 1}, "delta64(range64(1,+18446744073709551612))"},
		{"full_width", []uint64{math.MaxUint64, 1, 1 << 63, 5}, "flat64"},
		{"counts_vary", []uint64{1, 3, 2, 7, 1, 1, 4}, "flat64"},
		{"counts_vary_2000", randomFrom(rng, 2000, arith(7, 1, 1)), "bitpack64(w=3)"},
		{"counts_small_set", randomFrom(rng, 3000, []uint64{1, 2, 4}), "dict[3](bitpack32(w=2),flat64)"},
		{"counts_two", randomFrom(rng, 3000, []uint64{5, 6}), "dict[2](bitpack32(w=1),range64(5,+1))"},
		{"runs", runs(3000, 100), "rle(flat64,constant(4 bytes))"},
		{"runs_ragged", func() []uint64 {
			var out []uint64
			for i := 0; len(out) < 3000; i++ {
				out = append(out, slices.Repeat([]uint64{uint64(i % 3)}, 50+i%7)...)
			}
			return out
		}(), "rle(bitpack64(w=2),flat32)"},
		{"runs_stepped", func() []uint64 {
			out := make([]uint64, 3000)
			for i := range out {
				out[i] = uint64(1 + i/300)
			}
			return out
		}(), "rle(range64(1,+1),constant(4 bytes))"},
		{"random_small", randomFrom(rng, 100, arith(16, 0, 1)), "dict[16](flat32,range64(0,+1))"},
		{"periodic_large", func() []uint64 {
			out := make([]uint64, 20000)
			for i := range out {
				out[i] = uint64(1 + i%5)
			}
			return out
		}(), "general(zstd,flat64)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			enc, payload, err := encodeSequence(c.xs)
			if err != nil {
				t.Fatal(err)
			}
			if got := values.EncodingName(enc); got != c.want {
				t.Errorf("encoding %s, want %s", got, c.want)
			}
			if err := checkSequence(enc, 64, int64(len(c.xs)), true); err != nil {
				t.Fatalf("Lance would refuse %v: %v", enc, err)
			}
			if values.HasPayload(enc) != (payload != nil) {
				t.Fatalf("payload of %d bytes for %v", len(payload), enc)
			}
			checkDecodes(t, enc, payload, c.xs)
		})
	}
}

func checkDecodes(t *testing.T, enc *enc21pb.CompressiveEncoding, payload []byte, xs []uint64) {
	t.Helper()
	sr := &seqReader{bufs: [][]byte{payload}, pageBytes: uint64(len(payload))}
	if payload == nil {
		sr.bufs = nil
	}
	got, err := sr.read(enc, uint64(len(xs)), "test")
	if err != nil && len(xs) > 0 && slices.Max(xs) > math.MaxUint32 {
		// A sparse page keeps its sets under 2^31: the reader refuses
		// explicit values past 32 bits; the block itself decodes.
		if !errors.Is(err, ErrCorruptSparse) {
			t.Fatalf("decoding %v: %v", enc, err)
		}
		b, err := values.DecodeBlock(enc, payload, len(xs))
		if err != nil || b.Bits != 64 || b.N != len(xs) {
			t.Fatalf("decoding %v: %d %d-bit values (%v)", enc, b.N, b.Bits, err)
		}
		for i, x := range xs {
			if v := binary.LittleEndian.Uint64(b.Data[8*i:]); v != x {
				t.Fatalf("value %d decodes to %d, want %d (%v)", i, v, x, enc)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("decoding %v: %v", enc, err)
	}
	if got.n != len(xs) || sr.next != len(sr.bufs) {
		t.Fatalf("decoded %d values using %d buffers, want %d using %d", got.n, sr.next, len(xs), len(sr.bufs))
	}
	for i, x := range xs {
		if v := got.at(i); v != x {
			t.Fatalf("value %d decodes to %d, want %d (%v)", i, v, x, enc)
		}
	}
}

// TestSequenceRandom: random sequences of every shape encode to forms Lance
// reads and decode back; ties and costs never pick a form outside the
// grammar.
func TestSequenceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 400; i++ {
		n := rng.IntN(3000)
		var xs []uint64
		switch i % 5 {
		case 0:
			xs = increasing(rng, n, 1+rng.Uint64N(1000))
		case 1:
			xs = randomFrom(rng, n, arith(1+rng.IntN(40), rng.Uint64N(100), 1+rng.Uint64N(5)))
		case 2:
			for len(xs) < n {
				xs = append(xs, slices.Repeat([]uint64{rng.Uint64N(8)}, 1+rng.IntN(50))...)
			}
		case 3:
			for range n {
				xs = append(xs, rng.Uint64()>>rng.IntN(64))
			}
		case 4:
			xs = arith(n, rng.Uint64N(1000), rng.Uint64N(3))
		}
		enc, payload, err := encodeSequence(xs)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkSequence(enc, 64, int64(len(xs)), true); err != nil {
			t.Fatalf("case %d: Lance would refuse %v: %v", i, values.EncodingName(enc), err)
		}
		checkDecodes(t, enc, payload, xs)
	}
}

// TestCandidateCosts: the wire cost of a payload candidate is its
// descriptor, its payload padded to 8 bytes and 16 bytes of buffer
// overhead; out-of-line bit packing estimates the smaller tail.
func TestCandidateCosts(t *testing.T) {
	xs := arith(1500, 0, 1)
	xs[7] = 3 // not a range any more
	s := newStats(64)
	for _, x := range xs {
		s.push(x)
	}
	cs := directCandidates(xs, &s, structCost, true)
	if len(cs) != 2 {
		t.Fatalf("%d direct candidates, want flat and out-of-line", len(cs))
	}
	flat, ool := cs[0], cs[1]
	if flat.payload != 1500*8 || flat.wire != uint64(4+1500*8+16) {
		t.Errorf("flat payload %d wire %d", flat.payload, flat.wire)
	}
	// 11 bits: one packed chunk of 1024 values (176 words) and a tail of
	// 476 values, padded (176 words) rather than raw (476 words).
	if want := uint64(2 * 176 * 8); ool.payload != want {
		t.Errorf("out-of-line payload %d, want %d", ool.payload, want)
	}
	p, err := ool.write(nil)
	if err != nil || uint64(len(p)) != ool.payload {
		t.Errorf("out-of-line writes %d bytes (%v), estimated %d", len(p), err, ool.payload)
	}
	if got := outOfLineBytes(1030, 64, 11); got != 176*8+6*8 {
		t.Errorf("raw tail of 6 values: %d bytes", got)
	}
}

// TestCheckSequenceRefuses: the forms Lance's sequence decoder refuses.
func TestCheckSequenceRefuses(t *testing.T) {
	flat := func(b uint64) *enc21pb.CompressiveEncoding { return values.FlatEncoding(int(b)) }
	cases := []struct {
		name string
		enc  *enc21pb.CompressiveEncoding
		n    int64
	}{
		{"missing", &enc21pb.CompressiveEncoding{}, 3},
		{"flat32", flat(32), 3},
		{"constant_value_empty", constantEncoding(64, 1), 0},
		{"constant_empty_values", emptyEncoding(), 2},
		{"constant_4_bytes", constantEncoding(32, 1), 2},
		{"range_step0", rangeEncoding(64, 1, 0), 3},
		{"range_one", rangeEncoding(64, 1, 1), 1},
		{"range_overflow", rangeEncoding(64, math.MaxUint64-1, 1), 3},
		{"ool_w0", values.OutOfLineCodec{Bits: 64, Width: 0}.Encoding(), 3},
		{"ool_w64", values.OutOfLineCodec{Bits: 64, Width: 64}.Encoding(), 3},
		{"delta_one", values.DeltaCodec{Bits: 64, Deltas: values.OutOfLineCodec{Bits: 64, Width: 3}}.Encoding(), 1},
		{"delta_delta", values.DeltaCodec{Bits: 64, Deltas: values.DeltaCodec{Bits: 64, Deltas: values.FlatCodec{Bits: 64}}}.Encoding(), 5},
		{"general_bitpack", values.GeneralCodec{Scheme: values.SchemeZstd, Inner: values.OutOfLineCodec{Bits: 64, Width: 3}}.Encoding(), 5},
		{"rle_nested", values.RleCodec{Bits: 64}.Encoding(), 5}, // 8-bit run lengths
		{"dictionary_empty", &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Dictionary{Dictionary: &enc21pb.Dictionary{
			Indices: flat(32), Items: flat(64)}}}, 5},
		{"inline_1025", values.BitpackCodec{Bits: 64}.Encoding(), 1025},
		{"fsst", &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Fsst{Fsst: &enc21pb.Fsst{}}}, 5},
	}
	for _, c := range cases {
		if err := checkSequence(c.enc, 64, c.n, true); err == nil {
			t.Errorf("%s: accepted %v", c.name, c.enc)
		}
	}
}

// wordsOf is xs as little-endian u64 bytes.
func wordsOf(xs []uint64) []byte {
	out := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		out = binary.LittleEndian.AppendUint64(out, x)
	}
	return out
}

// TestDistinctSet: the set analyze fills holds what a map would, gives up
// past maxBlockDictItems values, and ranks values as their sorted order
// does, 0 and 2^64-1 included.
func TestDistinctSet(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 200 {
		n := 1 + r.IntN(6000)
		spread := []uint64{3, 100, 5000, math.MaxUint64}[iter%4]
		xs := make([]uint64, n)
		for i := range xs {
			switch r.IntN(20) {
			case 0:
				xs[i] = math.MaxUint64
			case 1:
				xs[i] = 0
			default:
				xs[i] = r.Uint64N(spread)
			}
		}
		want := map[uint64]bool{}
		d := newDistinctSet(n)
		ok := true
		for _, x := range xs {
			want[x] = true
			if ok && !d.add(x) {
				ok = false
			}
		}
		if ok != (len(want) <= maxBlockDictItems) {
			t.Fatalf("iter %d: %d distinct, set ok %v", iter, len(want), ok)
		}
		if !ok {
			continue
		}
		sorted := d.sorted()
		keys := slices.Sorted(maps.Keys(want))
		if !slices.Equal(sorted, keys) {
			t.Fatalf("iter %d: sorted %v, want %v", iter, sorted, keys)
		}
		for r, v := range keys {
			if got := d.rank(v); got != uint32(r) {
				t.Fatalf("iter %d: rank of %d is %d, want %d", iter, v, got, r)
			}
		}
	}
}
