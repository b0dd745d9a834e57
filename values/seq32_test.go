package values

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
)

func oolEncoding(w int) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_OutOfLineBitpacking{
		OutOfLineBitpacking: &enc21pb.OutOfLineBitpacking{UncompressedBitsPerValue: 64, Values: FlatEncoding(w)}}}
}

// TestDecodeUint32s: every form of a 64-bit block decodes to the values
// DecodeBlock gives, narrowed; a value past 32 bits is refused.
func TestDecodeUint32s(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	seen := map[string]int{}
	for _, n := range []int{1, 2, 3, 1023, 1024, 1025, 3000, 4096} {
		for _, maxDelta := range []uint64{0, 1, 5, 300, 1 << 20, 1 << 33} {
			vals := make([]uint64, n)
			v := uint64(rng.IntN(1000))
			for i := range vals {
				vals[i] = v
				v += rng.Uint64N(maxDelta + 1)
			}
			// A delta block over out-of-line bit packing (the codec the
			// writer picks), its deltas alone bit packed, a flat block, a
			// general one, and a raw-tail layout made by hand.
			b := Block{Bits: 64, N: n, Data: putValues(64, vals)}
			type form struct {
				name string
				enc  *enc21pb.CompressiveEncoding
				buf  []byte
			}
			var forms []form
			if dc, err := newDelta(b); err == nil {
				if buf, err := dc.AppendBlock(nil, b); err == nil {
					forms = append(forms, form{"delta", dc.Encoding(), buf})
				}
			}
			w := bitsFor(slices.Max(vals))
			if buf, err := AppendOutOfLineBitpacked(nil, 64, w, b.Data, n); err == nil {
				forms = append(forms, form{"ool", oolEncoding(w), buf})
			}
			if n < 1024 && w > 0 && flPackedWords(64, w) != n {
				forms = append(forms, form{"ool raw tail", oolEncoding(w), b.Data})
			}
			forms = append(forms, form{"flat", FlatEncoding(64), b.Data})
			for _, f := range forms {
				seen[f.name]++
				want, err := DecodeBlock(f.enc, f.buf, n)
				if err != nil {
					t.Fatalf("n=%d %s: DecodeBlock: %v", n, f.name, err)
				}
				got := make([]uint32, n)
				err = DecodeUint32s(f.enc, f.buf, got)
				if slices.Max(vals) > 1<<32-1 {
					if !errors.Is(err, ErrCorrupt) {
						t.Fatalf("n=%d %s: values past 32 bits decoded (%v)", n, f.name, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("n=%d %s: %v", n, f.name, err)
				}
				for i := range got {
					if uint64(got[i]) != binary.LittleEndian.Uint64(want.Data[8*i:]) || uint64(got[i]) != vals[i] {
						t.Fatalf("n=%d %s: value %d is %d, want %d", n, f.name, i, got[i], vals[i])
					}
				}
			}
		}
	}
	for _, name := range []string{"delta", "ool", "ool raw tail", "flat"} {
		if seen[name] < 3 {
			t.Errorf("form %q tried %d times", name, seen[name])
		}
	}
	// A truncated payload is refused, not read past.
	b := Block{Bits: 64, N: 3000, Data: putValues(64, make([]uint64, 3000))}
	for i := range 3000 {
		binary.LittleEndian.PutUint64(b.Data[8*i:], uint64(7*i))
	}
	dc, err := newDelta(b)
	if err != nil {
		t.Fatal(err)
	}
	buf, _ := dc.AppendBlock(nil, b)
	if err := DecodeUint32s(dc.Encoding(), buf[:len(buf)-8], make([]uint32, 3000)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated delta block: %v", err)
	}
}

func bitsFor(v uint64) int {
	w := 0
	for v > 0 {
		w++
		v >>= 1
	}
	return w
}
