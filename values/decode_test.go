package values

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
)

func enc(c any) *enc21pb.CompressiveEncoding {
	switch x := c.(type) {
	case *enc21pb.Flat:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: x}}
	case *enc21pb.InlineBitpacking:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{InlineBitpacking: x}}
	case *enc21pb.OutOfLineBitpacking:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: x}}
	case *enc21pb.Rle:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Rle{Rle: x}}
	case *enc21pb.General:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_General{General: x}}
	case *enc21pb.Delta:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Delta{Delta: x}}
	case *enc21pb.Range:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Range{Range: x}}
	case *enc21pb.Constant:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: x}}
	}
	panic("enc")
}

// The decoder trees the reader hands chunks and blocks to, on real encoder
// output.
func TestDecodeTrees(t *testing.T) {
	vals := make([]byte, 0, 4*3000)
	for i := 0; i < 3000; i++ {
		vals = binary.LittleEndian.AppendUint32(vals, uint32(i/100))
	}
	packed, err := appendInlineBitpackedAll(nil, 32, vals[:4*1000], 1000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMiniBlock(enc(&enc21pb.InlineBitpacking{UncompressedBitsPerValue: 32}), [][]byte{packed}, 1000)
	if err != nil || string(got.Data) != string(vals[:4000]) {
		t.Fatalf("inline bitpacking chunk: %v", err)
	}
	rv, rl, err := appendRLE(nil, nil, 32, 8, vals, 3000)
	if err != nil {
		t.Fatal(err)
	}
	rle := enc(&enc21pb.Rle{Values: FlatEncoding(32), RunLengths: FlatEncoding(8)})
	if got, err = DecodeMiniBlock(rle, [][]byte{rv, rl}, 3000); err != nil || string(got.Data) != string(vals) {
		t.Fatalf("rle chunk: %v", err)
	}
	lz, err := AppendCompressed(nil, SchemeLZ4, 0, rv)
	if err != nil {
		t.Fatal(err)
	}
	gen := enc(&enc21pb.General{Compression: &enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4}, Values: rle})
	if got, err = DecodeMiniBlock(gen, [][]byte{lz, rl}, 3000); err != nil || string(got.Data) != string(vals) {
		t.Fatalf("general(rle) chunk: %v", err)
	}
	// Delta over out-of-line bitpacking, as pylance 2.3 writes sparse positions.
	pos := []uint64{5, 9, 10, 40, 41}
	var deltas []byte
	for i := 1; i < len(pos); i++ {
		deltas = binary.LittleEndian.AppendUint64(deltas, pos[i]-pos[i-1])
	}
	pk, err := AppendOutOfLineBitpacked(nil, 64, 5, deltas, 4)
	if err != nil {
		t.Fatal(err)
	}
	d := enc(&enc21pb.Delta{UncompressedBitsPerValue: 64, Base: 5, Deltas: enc(&enc21pb.OutOfLineBitpacking{UncompressedBitsPerValue: 64, Values: FlatEncoding(5)})})
	f, err := DecodeBlock(d, pk, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pos {
		if binary.LittleEndian.Uint64(f.Data[8*i:]) != p {
			t.Fatalf("delta position %d = %d", i, binary.LittleEndian.Uint64(f.Data[8*i:]))
		}
	}
	r, err := DecodeBlock(enc(&enc21pb.Range{UncompressedBitsPerValue: 32, Start: 3, Step: 5}), nil, 4)
	if err != nil || binary.LittleEndian.Uint32(r.Data[12:]) != 18 {
		t.Fatalf("range: %v", err)
	}
	lv, err := DecodeLevels(FlatEncoding(16), AppendFlatLevels(nil, []uint16{0, 1, 2}), 3, nil)
	if err != nil || len(lv) != 3 || lv[2] != 2 {
		t.Fatalf("levels: %v %v", lv, err)
	}
	for name, tc := range map[string]struct {
		e *enc21pb.CompressiveEncoding
		b []byte
		n int
	}{
		"flat short":      {FlatEncoding(32), make([]byte, 7), 2},
		"inline garbage":  {enc(&enc21pb.InlineBitpacking{UncompressedBitsPerValue: 32}), []byte{99, 0, 0, 0}, 4},
		"missing":         {&enc21pb.CompressiveEncoding{}, nil, 1},
		"range overflow":  {enc(&enc21pb.Range{UncompressedBitsPerValue: 32, Start: 1 << 32, Step: 1}), nil, 2},
		"delta overflow":  {enc(&enc21pb.Delta{UncompressedBitsPerValue: 64, Base: ^uint64(0), Deltas: FlatEncoding(64)}), binary.LittleEndian.AppendUint64(nil, 1), 2},
		"constant absent": {enc(&enc21pb.Constant{}), nil, 3},
	} {
		if _, err := DecodeBlock(tc.e, tc.b, tc.n); err == nil || !(errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzDecodeTrees(f *testing.F) {
	trees := []*enc21pb.CompressiveEncoding{
		FlatEncoding(16),
		enc(&enc21pb.InlineBitpacking{UncompressedBitsPerValue: 16}),
		enc(&enc21pb.OutOfLineBitpacking{UncompressedBitsPerValue: 16, Values: FlatEncoding(3)}),
		enc(&enc21pb.Rle{Values: FlatEncoding(16), RunLengths: FlatEncoding(8)}),
		enc(&enc21pb.General{Compression: &enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD}, Values: FlatEncoding(16)}),
		enc(&enc21pb.Delta{UncompressedBitsPerValue: 64, Base: 1, Deltas: FlatEncoding(64)}),
	}
	f.Add(uint8(0), []byte{1, 0, 2, 0}, uint16(2))
	f.Add(uint8(3), []byte{7, 0, 3}, uint16(3))
	f.Fuzz(func(t *testing.T, which uint8, b []byte, n uint16) {
		e := trees[int(which)%len(trees)]
		DecodeBlock(e, b, int(n))
		DecodeMiniBlock(e, [][]byte{b, b}, int(n))
		DecodeMiniBlock(e, [][]byte{b}, int(n))
	})
}
