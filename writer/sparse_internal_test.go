package writer

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/values"
)

// lanceSequenceRules checks a sparse u64 sequence encoding against the rules
// of Lance 14's reader (encodings/physical/sequence/decoder.rs and the block
// decompressors of compression.rs, range.rs, delta.rs, bitpacking.rs,
// constant.rs), as far as planar emits the codecs: it returns why Lance would
// refuse the sequence, or nil.
func lanceSequenceRules(e *enc21pb.CompressiveEncoding, bufs [][]byte, n int) error {
	c, isConst := e.GetCompression().(*enc21pb.CompressiveEncoding_Constant)
	empty := isConst && c.Constant.GetValue() == nil
	if empty != (n == 0) {
		return fmt.Errorf("Constant{} must be used exactly for empty sequences (n=%d)", n)
	}
	need, err := lanceBlockRules(e, n, true)
	if err != nil {
		return err
	}
	if need != (len(bufs) == 1) || len(bufs) > 1 {
		return fmt.Errorf("payload required %v, %d buffers given", need, len(bufs))
	}
	if need {
		return lancePayloadRules(e, bufs[0], n)
	}
	return nil
}

// lanceBlockRules is create_fixed_width_block_decompressor_inner plus the
// cardinality checks for 64-bit values; it reports whether a payload is
// required.
func lanceBlockRules(e *enc21pb.CompressiveEncoding, n int, composite bool) (bool, error) {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		if c.Flat.BitsPerValue != 64 || c.Flat.Data != nil {
			return false, fmt.Errorf("flat of %d bits", c.Flat.BitsPerValue)
		}
		return true, nil
	case *enc21pb.CompressiveEncoding_Constant:
		if v := c.Constant.GetValue(); v != nil && len(v) != 8 {
			return false, fmt.Errorf("constant scalar of %d bytes", len(v))
		}
		return false, nil
	case *enc21pb.CompressiveEncoding_Range:
		r := c.Range
		if r.UncompressedBitsPerValue != 64 {
			return false, fmt.Errorf("range of %d bits", r.UncompressedBitsPerValue)
		}
		if r.Step == 0 {
			return false, fmt.Errorf("Range step must be positive")
		}
		if n < 2 {
			return false, fmt.Errorf("Range requires at least 2 values, got %d", n)
		}
		if hi, lo := mathMul(r.Step, uint64(n-1)); hi != 0 || lo > math.MaxUint64-r.Start {
			return false, fmt.Errorf("range overflows")
		}
		return false, nil
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		if c.InlineBitpacking.UncompressedBitsPerValue != 64 || c.InlineBitpacking.Values != nil {
			return false, fmt.Errorf("inline bitpacking form")
		}
		if n > 1024 {
			return false, fmt.Errorf("Inline bitpacking chunk has %d values, expected at most 1024", n)
		}
		return true, nil
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		o := c.OutOfLineBitpacking
		if o.UncompressedBitsPerValue != 64 {
			return false, fmt.Errorf("out-of-line of %d bits", o.UncompressedBitsPerValue)
		}
		f := o.GetValues().GetFlat()
		if f == nil || f.Data != nil {
			return false, fmt.Errorf("out-of-line values must be plain Flat")
		}
		if f.BitsPerValue == 0 || f.BitsPerValue >= 64 {
			return false, fmt.Errorf("Out-of-line bitpacking width %d is invalid for 64-bit values", f.BitsPerValue)
		}
		return true, nil
	case *enc21pb.CompressiveEncoding_Delta:
		if !composite {
			return false, fmt.Errorf("Delta is not allowed below a composite")
		}
		if c.Delta.UncompressedBitsPerValue != 64 {
			return false, fmt.Errorf("delta of %d bits", c.Delta.UncompressedBitsPerValue)
		}
		if n < 2 {
			return false, fmt.Errorf("Delta requires at least 2 values, got %d", n)
		}
		return lanceBlockRules(c.Delta.GetDeltas(), n-1, false)
	}
	return false, fmt.Errorf("planar does not emit %T for sequences", e.GetCompression())
}

func mathMul(a, b uint64) (uint64, uint64) { return bits.Mul64(a, b) }

// lancePayloadRules checks the payload lengths Lance's decompressors
// require.
func lancePayloadRules(e *enc21pb.CompressiveEncoding, buf []byte, n int) error {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		if len(buf) != 8*n {
			return fmt.Errorf("flat payload %d bytes for %d values", len(buf), n)
		}
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		if len(buf) < 8 {
			return fmt.Errorf("inline payload of %d bytes", len(buf))
		}
		w := binary.LittleEndian.Uint64(buf)
		if w > 64 || uint64(len(buf)-8) != w*1024/8 {
			return fmt.Errorf("inline payload of %d bytes for width %d", len(buf), w)
		}
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		w := int(c.OutOfLineBitpacking.GetValues().GetFlat().GetBitsPerValue())
		per := (1024*w + 63) / 64 * 8
		full := n / 1024 * per
		raw, padded := full+n%1024*8, full
		if n%1024 > 0 {
			padded += per
		}
		if len(buf) != raw && len(buf) != padded {
			return fmt.Errorf("out-of-line payload %d bytes, want %d or %d", len(buf), raw, padded)
		}
	case *enc21pb.CompressiveEncoding_Delta:
		return lancePayloadRules(c.Delta.GetDeltas(), buf, n-1)
	}
	return nil
}

// TestU64SequenceLanceRules enumerates sequence shapes and checks that every
// encoding u64Sequence emits is one Lance 14's reader accepts, that it
// decodes to the input, and that position and count sets obey the sparse
// reader's extra rules (a Constant position set holds one position, a
// constant count is not zero).
func TestU64SequenceLanceRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	rep := func(n int, v uint64) []uint64 { return slices.Repeat([]uint64{v}, n) }
	arith := func(n int, start, step uint64) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = start + uint64(i)*step
		}
		return out
	}
	sortedRandom := func(n int, maxGap uint64) []uint64 {
		out := make([]uint64, n)
		v := uint64(0)
		for i := range out {
			v += rng.Uint64N(maxGap + 1)
			out[i] = v
		}
		return out
	}
	increasing := func(n int, maxGap uint64) []uint64 {
		out := sortedRandom(n, maxGap)
		for i := range out {
			out[i] += uint64(i)
		}
		return out
	}
	unsorted := func(n int, max uint64) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = rng.Uint64N(max)
		}
		return out
	}
	cases := []struct {
		name      string
		xs        []uint64
		positions bool // strictly increasing: also a position set
		counts    bool // all positive: also a count set
	}{
		{"empty", nil, true, true},
		{"one_zero", []uint64{0}, true, false},
		{"one_value", []uint64{5}, true, true},
		{"one_max", []uint64{math.MaxUint64}, true, true},
		{"two_equal", rep(2, 7), false, true},
		{"equal_1000", rep(1000, 7), false, true},
		{"equal_5000", rep(5000, 1), false, true},
		{"zeros", rep(300, 0), false, false},
		{"two_increasing", []uint64{3, 9}, true, true},
		{"two_decreasing", []uint64{9, 3}, false, true},
		{"arith_step1", arith(500, 0, 1), true, false},
		{"arith_step3", arith(2000, 10, 3), true, true},
		{"arith_huge_step", arith(3, 0, 1<<62), true, false},
		{"sorted_dups", sortedRandom(700, 3), false, false},
		{"increasing_small", increasing(50, 4), true, true},
		{"increasing_1024", increasing(1024, 100), true, true},
		{"increasing_1025", increasing(1025, 100), true, true},
		{"increasing_5000", increasing(5000, 1000), true, true},
		{"increasing_wide_gaps", []uint64{0, 1, math.MaxUint64 - 1}, true, false},
		{"unsorted_small", unsorted(100, 16), false, false},
		{"unsorted_1024", unsorted(1024, 1<<20), false, false},
		{"unsorted_3000", unsorted(3000, 1<<40), false, false},
		{"unsorted_full_width", []uint64{math.MaxUint64, 1, 1 << 63, 5}, false, true},
		{"counts_vary", []uint64{1, 3, 2, 7, 1, 1, 4}, false, true},
		{"counts_alternate", slices.Repeat([]uint64{1, 2}, 400), false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			enc, bufs := u64Sequence(c.xs)
			if err := lanceSequenceRules(enc, bufs, len(c.xs)); err != nil {
				t.Fatalf("Lance would refuse %v: %v", enc, err)
			}
			var payload []byte
			if len(bufs) == 1 {
				payload = bufs[0]
			}
			if len(c.xs) > 0 {
				b, err := values.DecodeBlock(enc, payload, len(c.xs))
				if err != nil {
					t.Fatalf("decode %v: %v", enc, err)
				}
				for i, x := range c.xs {
					if got := binary.LittleEndian.Uint64(b.Data[8*i:]); got != x {
						t.Fatalf("value %d decodes to %d, want %d (%v)", i, got, x, enc)
					}
				}
			}
			k, ok := enc.GetCompression().(*enc21pb.CompressiveEncoding_Constant)
			if ok && k.Constant.GetValue() != nil {
				if c.positions && len(c.xs) != 1 {
					t.Errorf("position set of %d as Constant: Lance requires exactly one", len(c.xs))
				}
				if c.counts && binary.LittleEndian.Uint64(k.Constant.GetValue()) == 0 {
					t.Errorf("count set as Constant 0: Lance refuses zero counts")
				}
			}
			t.Logf("%d values: %v", len(c.xs), enc)
		})
	}
}

// TestSparseValidityLanceRules: both position sets sparseValidity weighs
// are valid Lance sequences, whatever the null pattern.
func TestSparseValidityLanceRules(t *testing.T) {
	patterns := map[string]func(i int) bool{
		"all_valid":  func(int) bool { return true },
		"all_null":   func(int) bool { return false },
		"first_null": func(i int) bool { return i != 0 },
		"last_valid": func(i int) bool { return i == 0 },
		"alternate":  func(i int) bool { return i%2 == 0 },
		"every_7th":  func(i int) bool { return i%7 != 3 },
		"random":     func(i int) bool { return (i*2654435761)>>7&1 == 0 },
	}
	for name, p := range patterns {
		for _, n := range []int{1, 2, 3, 1000, 1025, 5000} {
			valid := make([]bool, n)
			nv := 0
			for i := range valid {
				valid[i] = p(i)
				if valid[i] {
					nv++
				}
			}
			v, bufs := sparseValidity(valid, n)
			if err := lanceSequenceRules(v.Positions, bufs, int(v.NumPositions)); err != nil {
				t.Errorf("%s/%d: Lance would refuse %v: %v", name, n, v, err)
			}
			want := uint64(nv)
			if v.Meaning.String() == "SPARSE_VALIDITY_NULL_POSITIONS" {
				want = uint64(n - nv)
			}
			if v.NumPositions != want {
				t.Errorf("%s/%d: %d positions, want %d", name, n, v.NumPositions, want)
			}
		}
	}
}
