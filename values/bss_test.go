package values

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestByteStreamSplitExample(t *testing.T) {
	var src []byte
	for _, f := range []float32{1, 2, 3} {
		src = binary.LittleEndian.AppendUint32(src, math.Float32bits(f))
	}
	if want := cxHex(t, "00 00 80 3F 00 00 00 40 00 00 40 40"); !bytes.Equal(src, want) {
		t.Fatalf("input % x", src)
	}
	got := appendByteStreamSplit([]byte{7}, 32, src, 3)
	if want := cxHex(t, "07 00 00 00 00 00 00 80 00 40 3F 40 40"); !bytes.Equal(got, want) {
		t.Fatalf("split % x want % x", got, want)
	}
	dec, err := decodeByteStreamSplit([]byte{8}, 32, got[1:], 3)
	if err != nil || !bytes.Equal(dec[1:], src) || dec[0] != 8 {
		t.Fatalf("decode % x, %v", dec, err)
	}
}

func TestByteStreamSplitRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, bits := range []int{32, 64} {
		b := bits / 8
		for _, n := range []int{0, 1, 2, 7, 100, 4097} {
			src := make([]byte, n*b+3) // trailing bytes beyond n are ignored
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			enc := appendByteStreamSplit(nil, bits, src, n)
			if len(enc) != n*b {
				t.Fatalf("len %d", len(enc))
			}
			for i := range n {
				for j := range b {
					if enc[j*n+i] != src[i*b+j] {
						t.Fatalf("bits=%d n=%d: byte %d of value %d misplaced", bits, n, j, i)
					}
				}
			}
			dec, err := decodeByteStreamSplit(nil, bits, enc, n)
			if err != nil || !bytes.Equal(dec, src[:n*b]) {
				t.Fatalf("bits=%d n=%d: round trip: %v", bits, n, err)
			}
		}
	}
}

func TestByteStreamSplitErrors(t *testing.T) {
	for _, c := range []struct {
		bits, n int
		src     []byte
	}{
		{32, 2, make([]byte, 7)},
		{32, 2, make([]byte, 9)},
		{64, 1, make([]byte, 4)},
		{32, -1, nil},
		{64, 1 << 60, make([]byte, 8)},
	} {
		out, err := decodeByteStreamSplit([]byte{1}, c.bits, c.src, c.n)
		if !errors.Is(err, ErrCorrupt) || len(out) != 1 {
			t.Errorf("bits=%d n=%d len=%d: want ErrCorrupt, got %v", c.bits, c.n, len(c.src), err)
		}
	}
	if _, err := decodeByteStreamSplit(nil, 16, make([]byte, 4), 2); !errors.Is(err, ErrUnsupported) {
		t.Errorf("16-bit: %v", err)
	}
}

func FuzzDecodeBSS(f *testing.F) {
	f.Add(false, uint16(3), cxHex(f, "00 00 00 00 00 00 80 00 40 3F 40 40"))
	f.Add(true, uint16(1), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(true, uint16(2), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, wide bool, n16 uint16, src []byte) {
		bits := 32
		if wide {
			bits = 64
		}
		n := int(n16)
		dec, err := decodeByteStreamSplit(nil, bits, src, n)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if got := appendByteStreamSplit(nil, bits, dec, n); !bytes.Equal(got, src) {
			t.Fatal("re-split differs from input")
		}
	})
}

// TestDecodersDoNotAllocate checks that the decoders append into a
// pre-sized buffer without allocating.
func TestDecodersDoNotAllocate(t *testing.T) {
	src := make([]byte, 4000)
	for i := range src {
		src[i] = byte(i / 37)
	}
	bss := appendByteStreamSplit(nil, 32, src, 1000)
	v, l, _ := appendRLE(nil, nil, 32, 8, src, 1000)
	blk, _ := appendRLEBlock(nil, 32, 8, src, 1000)
	tab := BuildFsstTable([][]byte{src})
	enc := tab.AppendEncoded(nil, src)
	lz, _ := AppendCompressed(nil, SchemeLZ4, 0, src)
	dst := make([]byte, 0, 8192)
	for name, f := range map[string]func(){
		"bss":       func() { _, _ = decodeByteStreamSplit(dst, 32, bss, 1000) },
		"rle":       func() { _, _ = DecodeRLE(dst, 32, 8, v, l, 1000) },
		"rle block": func() { _, _ = decodeRLEBlock(dst, 32, 8, blk, 1000) },
		"fsst":      func() { _, _ = tab.AppendDecoded(dst, enc) },
		"fsst enc":  func() { _ = tab.AppendEncoded(dst, src) },
		"lz4":       func() { _, _ = Decompress(dst, SchemeLZ4, lz) },
		"lz4 enc":   func() { _, _ = AppendCompressed(dst, SchemeLZ4, 0, src) },
	} {
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s: %v allocations per run", name, a)
		}
	}
}
