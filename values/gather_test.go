package values

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
)

// TestGatherMiniBlock: single values read out of flat, bit-packed and
// byte-stream-split chunks, bare or under general compression, equal those of the whole chunk decoded, for every word
// width, bit width and chunk length; positions past the chunk and damaged
// bodies are ErrCorrupt.
func TestGatherMiniBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for iter := range 600 {
		bits := []int{8, 16, 32, 64}[iter%4]
		n := []int{1, 7, 100, 1023, 1024, 3000}[r.IntN(6)]
		w := r.IntN(bits + 1)
		raw := make([]byte, n*bits/8)
		for i := range n {
			v := r.Uint64()
			if w < 64 {
				v &= 1<<uint(w) - 1
			}
			for b := range bits / 8 {
				raw[i*bits/8+b] = byte(v >> (8 * b))
			}
		}
		for form := range 6 {
			packed := form > 0
			var enc *enc21pb.CompressiveEncoding
			buf := raw
			// chunk encodes raw under codec c, for the forms built from
			// codecs.
			chunk := func(c Codec) {
				enc = c.Encoding()
				bufs, err := c.AppendChunk(make([][]byte, c.NumBuffers()), Block{Bits: bits, N: n, Data: raw})
				if err != nil {
					t.Fatal(err)
				}
				buf = bufs[0]
			}
			switch form {
			case 3:
				if bits < 32 {
					continue // byte stream split is of 32- and 64-bit values
				}
				chunk(BssCodec{Bits: bits})
			case 4:
				chunk(GeneralCodec{Scheme: SchemeZstd, Inner: FlatCodec{Bits: bits}})
			case 5:
				if bits < 32 {
					continue
				}
				chunk(GeneralCodec{Scheme: SchemeLZ4, Inner: BssCodec{Bits: bits}})
			case 0:
				enc = FlatEncoding(bits)
			case 1:
				if n > flBlock {
					continue // a chunk holds one inline block
				}
				enc = BitpackCodec{Bits: bits}.Encoding()
				var err error
				if buf, err = AppendInlineBitpacked(nil, bits, raw, n); err != nil {
					t.Fatal(err)
				}
			case 2:
				if w == 0 || w >= bits {
					continue // out-of-line widths are 1..bits-1
				}
				enc = OutOfLineCodec{Bits: bits, Width: w}.Encoding()
				var err error
				if buf, err = AppendOutOfLineBitpacked(nil, bits, w, raw, n); err != nil {
					t.Fatal(err)
				}
			}
			if !CanGather(enc) {
				t.Fatalf("cannot gather %s", EncodingName(enc))
			}
			var whole Block
			var err error
			if form < 3 {
				whole, err = DecodeBlock(enc, buf, n)
			} else {
				whole, err = DecodeMiniBlock(enc, [][]byte{buf}, n)
			}
			if err != nil {
				t.Fatal(err)
			}
			at := make([]int, 1+r.IntN(20))
			for k := range at {
				at[k] = r.IntN(n)
			}
			got, err := GatherMiniBlock(enc, buf, n, at, Block{})
			if err != nil {
				t.Fatalf("bits %d w %d n %d form %d: %v", bits, w, n, form, err)
			}
			bw := bits / 8
			var want []byte
			for _, i := range at {
				want = append(want, whole.Data[i*bw:(i+1)*bw]...)
			}
			if got.N != len(at) || got.Bits != bits || !bytes.Equal(got.Data, want) {
				t.Fatalf("bits %d w %d n %d form %d at %v: got % x, want % x", bits, w, n, form, at, got.Data, want)
			}
			if _, err := GatherMiniBlock(enc, buf, n, []int{n}, Block{}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("position past the chunk: %v", err)
			}
			if packed && len(buf) > bw {
				if _, err := GatherMiniBlock(enc, buf[:len(buf)-1], n, at, Block{}); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("short body: %v", err)
				}
			}
		}
	}
	// Levels, out of line as the writer stores long streams.
	lv := make([]uint16, 1000)
	for i := range lv {
		lv[i] = uint16(r.IntN(3))
	}
	buf, err := AppendOutOfLineBitpacked(nil, 16, 2, AppendFlatLevels(nil, lv), len(lv))
	if err != nil {
		t.Fatal(err)
	}
	got, err := GatherLevels(OutOfLineCodec{Bits: 16, Width: 2}.Encoding(), buf, len(lv), []int{0, 999, 500}, nil)
	if err != nil || len(got) != 3 || got[0] != lv[0] || got[1] != lv[999] || got[2] != lv[500] {
		t.Fatalf("levels: %v %v", got, err)
	}
	// Run-length levels are decoded whole and picked.
	rle := RleCodec{Bits: 16, LenBits: 8}
	rlv := make([]uint16, 3000)
	for i := range rlv {
		rlv[i] = uint16(i / 700 % 2)
	}
	rbuf, err := rle.AppendBlock(nil, Block{Bits: 16, N: len(rlv), Data: AppendFlatLevels(nil, rlv)})
	if err != nil {
		t.Fatal(err)
	}
	got, err = GatherLevels(rle.Encoding(), rbuf, len(rlv), []int{0, 699, 700, 2999}, nil)
	if err != nil || len(got) != 4 || got[0] != 0 || got[1] != 0 || got[2] != 1 || got[3] != rlv[2999] {
		t.Fatalf("run-length levels: %v %v", got, err)
	}
	if _, err := GatherLevels(rle.Encoding(), rbuf, len(rlv), []int{3000}, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("run-length level past the chunk: %v", err)
	}
	if CanGather(RleCodec{Bits: 16, LenBits: 8}.Encoding()) {
		t.Fatal("RLE claims single-value reads")
	}
	if CanGather(GeneralCodec{Scheme: SchemeZstd, Inner: GeneralCodec{Scheme: SchemeLZ4, Inner: FlatCodec{Bits: 32}}}.Encoding()) {
		t.Fatal("nested general compression claims single-value reads")
	}
}
