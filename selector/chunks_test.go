package selector

import (
	"encoding/binary"
	"math/bits"
	"testing"

	"github.com/planarlance/planar/values"
)

// TestChunkCounts: every page's values are cut into chunks that add up to
// the page, each but the last a power of two, and each within its codec's
// limit (bit packing one 1024-value block, RLE Lance's byte budget,
// variable-width values the mini-block byte budget, large chunks their
// set count).
func TestChunkCounts(t *testing.T) {
	const n = 10000
	fixed := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(fixed[4*i:], uint32(i/700)) // runs of 700
	}
	offs := make([]uint64, n+1)
	for i := range n {
		offs[i+1] = offs[i] + uint64(1+i%200) // strings of 1 to 200 bytes
	}
	str := make([]byte, offs[n])
	i32 := values.Block{Bits: 32, N: n, Data: fixed}
	vs := values.Block{N: n, Data: str, Offsets: offs}
	cases := []struct {
		name  string
		codec values.Codec
		kind  values.Kind
		v     values.Block
		limit func(start, cnt int) bool
	}{
		{"flat", values.FlatCodec{Bits: 32}, values.KindFixed, i32, func(_, c int) bool { return c <= 1<<values.FlatChunkLog2(32) }},
		{"bitpack", values.BitpackCodec{Bits: 32}, values.KindFixed, i32, func(_, c int) bool { return c <= 1024 }},
		{"large chunks", values.GeneralCodec{Scheme: values.SchemeZstd, Inner: values.FlatCodec{Bits: 32}, ChunkValues: 4096}, values.KindFixed, i32, func(_, c int) bool { return c <= 4096 }},
		{"rle", values.RleCodec{Bits: 32, LenBits: 8}, values.KindFixed, i32, func(s, c int) bool {
			runs := values.RunCount(32, fixed[4*s:4*(s+c)], c)
			return runs*5+c/255*5 <= rleMaxChunkBytes && c <= values.RleCodec{Bits: 32, LenBits: 8}.MaxChunkValues()
		}},
		{"strings", values.VariableCodec{OffBits: 32}, values.KindVariable, vs, func(s, c int) bool {
			return c <= 2 || (c+1)*32/8+int(offs[s+c]-offs[s]) <= values.VariableChunkBytes
		}},
	}
	for _, tc := range cases {
		counts := ChunkCounts(tc.codec, tc.kind, tc.v, 32)
		sum := 0
		for k, c := range counts {
			if c < 1 || k < len(counts)-1 && bits.OnesCount(uint(c)) != 1 {
				t.Errorf("%s: chunk %d of %d values", tc.name, k, c)
			}
			if !tc.limit(sum, c) {
				t.Errorf("%s: chunk %d of %d values at %d exceeds its limit", tc.name, k, c, sum)
			}
			sum += c
		}
		if sum != n {
			t.Errorf("%s: chunks hold %d values, page %d", tc.name, sum, n)
		}
		t.Logf("%s: %d chunks", tc.name, len(counts))
	}
}
