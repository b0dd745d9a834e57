package values

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
)

// TestLevelEncoderRoundTrip: each level codec the selector chooses, run
// chunk by chunk through one LevelEncoder (its scratch reused), reads back
// with DecodeLevels, and RLE streams with DecodeLevelRuns too.
func TestLevelEncoderRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	noise := make([]uint16, 9000)
	for i := range noise {
		noise[i] = uint16(r.IntN(3))
	}
	runs := make([]uint16, 9000)
	for i := range runs {
		runs[i] = uint16(i / 700 % 2)
	}
	for _, tc := range []struct {
		codec  Codec
		levels []uint16
		chunk  int // levels per chunk
	}{
		{FlatCodec{Bits: 16}, noise, 4096},
		{RleCodec{Bits: 16, LenBits: 8}, runs, 4096},
		{RleCodec{Bits: 16, LenBits: 16}, runs, 4096},
		{BitpackCodec{Bits: 16}, noise, 1024},
		{BitpackCodec{Bits: 16}, noise[:700], 1024},
		{OutOfLineCodec{Bits: 16, Width: 2}, noise, 4096},
		{OutOfLineCodec{Bits: 16, Width: 2}, noise, 5000}, // a short last chunk
		{GeneralCodec{Scheme: SchemeZstd, Level: 1, Inner: OutOfLineCodec{Bits: 16, Width: 2}}, noise, 8192},
		{GeneralCodec{Scheme: SchemeLZ4, Inner: FlatCodec{Bits: 16}}, runs, 3000},
	} {
		enc := LevelEncoder{Codec: tc.codec}
		var buf []byte
		for start := 0; start < len(tc.levels); start += tc.chunk {
			chunk := tc.levels[start:min(start+tc.chunk, len(tc.levels))]
			var err error
			if buf, err = enc.Append(buf[:0], chunk); err != nil {
				t.Fatalf("%s: %v", tc.codec.Name(), err)
			}
			got, err := DecodeLevels(tc.codec.Encoding(), buf, len(chunk), nil)
			if err != nil || !slices.Equal(got, chunk) {
				t.Fatalf("%s: chunk at %d: %v (levels equal: %v)", tc.codec.Name(), start, err, slices.Equal(got, chunk))
			}
			vals, lens, ok, err := DecodeLevelRuns(tc.codec.Encoding(), buf, len(chunk))
			if _, rle := tc.codec.(RleCodec); ok != rle || err != nil {
				t.Fatalf("%s: runs decoded %v, %v", tc.codec.Name(), ok, err)
			}
			var expanded []uint16
			for k, v := range vals {
				for range lens[k] {
					expanded = append(expanded, v)
				}
			}
			if ok && !slices.Equal(expanded, chunk) {
				t.Fatalf("%s: chunk at %d: runs differ", tc.codec.Name(), start)
			}
		}
	}
}

// TestLevelEncoderForms pins what the encoder writes beyond the codecs'
// block forms: flat levels as they are, an inline chunk as one block even
// when it holds no level (the block form writes none), general compression
// of the child's bytes, and no codec at all as an error.
func TestLevelEncoderForms(t *testing.T) {
	levels := []uint16{1, 0, 2, 2, 1}
	flat := AppendFlatLevels(nil, levels)
	enc := LevelEncoder{Codec: FlatCodec{Bits: 16}}
	if got, _ := enc.Append([]byte{9}, levels); !slices.Equal(got, append([]byte{9}, flat...)) {
		t.Errorf("flat: %v", got)
	}
	enc.Codec = BitpackCodec{Bits: 16}
	empty, err := enc.Append(nil, nil)
	if want, _ := AppendInlineBitpacked(nil, 16, nil, 0); err != nil || len(empty) == 0 || !slices.Equal(empty, want) {
		t.Errorf("inline, no level: %v, %v", empty, err)
	}
	if blk, _ := (BitpackCodec{Bits: 16}).AppendBlock(nil, Block{Bits: 16}); len(blk) != 0 {
		t.Errorf("inline block form of no level: %d bytes", len(blk))
	}
	g := GeneralCodec{Scheme: SchemeZstd, Level: 1, Inner: OutOfLineCodec{Bits: 16, Width: 2}}
	enc.Codec = g
	got, err := enc.Append(nil, levels)
	want, _ := g.AppendBlock(nil, Block{Bits: 16, N: len(levels), Data: flat})
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("general: %v, %v", got, err)
	}
	enc.Codec = GeneralCodec{Scheme: SchemeZstd, Inner: g}
	if _, err := enc.Append(nil, levels); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("general over general: %v", err)
	}
	enc.Codec = nil
	if _, err := enc.Append(nil, levels); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("no codec: %v", err)
	}
}

// TestDecodeLevelsInPlace: levels bit packed out of line, alone or under
// general compression, unpack straight into the destination after what it
// holds, equal to the block decode; a short payload is an error and leaves
// the destination as it was.
func TestDecodeLevelsInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 5, 1023, 1024, 1025, 5000} {
		for _, w := range []int{1, 2, 7, 15} {
			levels := make([]uint16, n)
			for i := range levels {
				if w > 0 {
					levels[i] = uint16(rng.IntN(1 << w))
				}
			}
			ool := OutOfLineCodec{Bits: 16, Width: w}
			packed, err := ool.AppendBlock(nil, Block{Bits: 16, N: n, Data: AppendFlatLevels(nil, levels)})
			if err != nil {
				t.Fatal(err)
			}
			z, err := AppendCompressed(nil, SchemeZstd, 1, packed)
			if err != nil {
				t.Fatal(err)
			}
			gz := GeneralCodec{Scheme: SchemeZstd, Level: 1, Inner: ool}
			// Runs of the same levels, run-length coded (one- and two-byte
			// run lengths), alone and under general compression.
			runs := make([]uint16, n)
			for i := range runs {
				runs[i] = levels[i/7*7]
			}
			type form struct {
				name string
				enc  *enc21pb.CompressiveEncoding
				buf  []byte
				want []uint16
			}
			forms := []form{{"ool", ool.Encoding(), packed, levels}, {"zstd(ool)", gz.Encoding(), z, levels}}
			for _, lb := range []int{8, 16} {
				rc := RleCodec{Bits: 16, LenBits: lb}
				rb, err := rc.AppendBlock(nil, Block{Bits: 16, N: n, Data: AppendFlatLevels(nil, runs)})
				if err != nil {
					t.Fatal(err)
				}
				lz, err := AppendCompressed(nil, SchemeLZ4, 0, rb)
				if err != nil {
					t.Fatal(err)
				}
				gl := GeneralCodec{Scheme: SchemeLZ4, Inner: rc}
				forms = append(forms, form{fmt.Sprintf("rle%d", lb), rc.Encoding(), rb, runs}, form{fmt.Sprintf("lz4(rle%d)", lb), gl.Encoding(), lz, runs})
			}
			for _, c := range forms {
				levels := c.want
				got, err := DecodeLevels(c.enc, c.buf, n, []uint16{9, 9})
				if err != nil || len(got) != n+2 || got[0] != 9 || got[1] != 9 || !slices.Equal(got[2:], levels) {
					t.Fatalf("n=%d w=%d %s: %d levels (%v), want the %d given after the two held", n, w, c.name, len(got), err, n)
				}
				if w > 0 {
					short, err := DecodeLevels(c.enc, c.buf[:len(c.buf)-1], n, []uint16{9})
					if err == nil || len(short) != 1 {
						t.Fatalf("n=%d w=%d %s: a short payload gave %d levels (%v)", n, w, c.name, len(short), err)
					}
				}
			}
		}
	}
}
