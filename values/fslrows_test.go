package values

import (
	"bytes"
	"errors"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
)

func fslEnc(dim uint64, valid bool, inner *enc21pb.CompressiveEncoding) *enc21pb.FixedSizeList {
	return &enc21pb.FixedSizeList{ItemsPerValue: dim, HasValidity: valid, Values: inner}
}

func wrapFSL(f *enc21pb.FixedSizeList) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{FixedSizeList: f}}
}

func nullConstant() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: &enc21pb.Constant{}}}
}

// Two layers with validity (3 items, then 3x2=6 items per row), u8 items:
// per row one byte of outer bits, one byte of inner bits, six data bytes.
func TestFSLRowsTwoLayers(t *testing.T) {
	f := fslEnc(3, true, wrapFSL(fslEnc(2, true, FlatEncoding(8))))
	l, err := ParseFSLRows(f)
	if err != nil {
		t.Fatal(err)
	}
	if l.RowBytes() != 8 || l.ValidBytes != 2 || l.DataBytes != 6 || l.ItemBits != 8 {
		t.Fatalf("layout %+v", l)
	}
	data := []byte{
		0b101, 0b110111, 1, 2, 3, 4, 5, 6,
		0b010, 0b001100, 7, 8, 9, 10, 11, 12,
		0b111, 0b111111, 13, 14, 15, 16, 17, 18,
	}
	b, err := l.Decode(data, 3)
	if err != nil {
		t.Fatal(err)
	}
	if b.N != 3 || b.Bits != 48 || b.NullItems || b.Variable() {
		t.Fatalf("block %+v", b)
	}
	if want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}; !bytes.Equal(b.Data, want) {
		t.Errorf("data %v", b.Data)
	}
	// Layer 0: 3 bits per row: 101, 010, 111 -> bits 0..8 = 1,0,1,0,1,0,1,1,1.
	if want := []byte{0b11010101, 0b1}; !bytes.Equal(b.ItemValid[0], want) {
		t.Errorf("outer validity %08b", b.ItemValid[0])
	}
	// Layer 1: 6 bits per row: 110111, 001100, 111111.
	if want := []byte{0b00110111, 0b11110011, 0b11}; !bytes.Equal(b.ItemValid[1], want) {
		t.Errorf("inner validity %08b", b.ItemValid[1])
	}
}

// Items all null: a Constant without a value ends the chain; rows hold only
// the validity bytes (here 10 bits per row: two bytes).
func TestFSLRowsNullItems(t *testing.T) {
	l, err := ParseFSLRows(fslEnc(10, true, nullConstant()))
	if err != nil {
		t.Fatal(err)
	}
	if l.RowBytes() != 2 || l.ItemBits != 0 || l.DataBytes != 0 {
		t.Fatalf("layout %+v", l)
	}
	b, err := l.Decode([]byte{0, 0, 0, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !b.NullItems || b.Variable() || b.Bits != 0 || len(b.Data) != 0 || len(b.ItemValid[0]) != 3 {
		t.Fatalf("block %+v", b)
	}
}

// Without validity the rows are the flattened items themselves.
func TestFSLRowsNoValidityIsZeroCopy(t *testing.T) {
	l, err := ParseFSLRows(fslEnc(2, false, FlatEncoding(16)))
	if err != nil {
		t.Fatal(err)
	}
	data := []byte{1, 0, 2, 0, 3, 0, 4, 0}
	b, err := l.Decode(data, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b.Bits != 32 || &b.Data[0] != &data[0] || b.ItemValid[0] != nil {
		t.Fatalf("block %+v", b)
	}
}

func TestFSLRowsRejects(t *testing.T) {
	for name, f := range map[string]*enc21pb.FixedSizeList{
		"zero dim":          fslEnc(0, false, FlatEncoding(8)),
		"huge dim":          fslEnc(1<<21, false, FlatEncoding(8)),
		"no items":          fslEnc(4, false, nullConstant()),
		"variable items":    fslEnc(4, false, &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{}}}),
		"odd bits":          fslEnc(3, false, FlatEncoding(4)),
		"constant w/ value": fslEnc(2, true, &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: &enc21pb.Constant{Value: []byte{1}}}}),
		"missing values":    fslEnc(2, true, nil),
	} {
		if _, err := ParseFSLRows(f); err == nil || !(errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported)) {
			t.Errorf("%s: %v", name, err)
		}
	}
	deep := fslEnc(2, false, FlatEncoding(8))
	for i := 0; i < 9; i++ {
		deep = fslEnc(2, false, wrapFSL(deep))
	}
	if _, err := ParseFSLRows(deep); !errors.Is(err, ErrCorrupt) {
		t.Errorf("10 layers: %v", err)
	}
	l, _ := ParseFSLRows(fslEnc(3, true, FlatEncoding(8)))
	if _, err := l.Decode(make([]byte, 7), 2); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short data: %v", err)
	}
	if _, err := l.Decode(nil, -1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("negative count: %v", err)
	}
}

// A page dictionary of fixed-size lists with item validity is a block in
// the row layout.
func TestDecodeBlockFSLWithValidity(t *testing.T) {
	enc := wrapFSL(fslEnc(3, true, FlatEncoding(16)))
	data := []byte{0b011, 1, 0, 2, 0, 3, 0, 0b100, 4, 0, 5, 0, 6, 0}
	b, err := DecodeBlock(enc, data, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b.N != 2 || b.Bits != 48 || !bytes.Equal(b.Data, []byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}) || !bytes.Equal(b.ItemValid[0], []byte{0b100011}) {
		t.Fatalf("block %+v", b)
	}
}

// TestHasPayloadComposites: Lance's composites store a payload when any
// child does; all-metadata children (Range, Constant) make none.
func TestHasPayloadComposites(t *testing.T) {
	rng := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Range{Range: &enc21pb.Range{UncompressedBitsPerValue: 32, Start: 1, Step: 1}}}
	rle := func(v, l *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Rle{Rle: &enc21pb.Rle{Values: v, RunLengths: l}}}
	}
	dict := func(i, v *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Dictionary{Dictionary: &enc21pb.Dictionary{Indices: i, Items: v}}}
	}
	delta := func(d *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Delta{Delta: &enc21pb.Delta{UncompressedBitsPerValue: 64, Deltas: d}}}
	}
	for _, c := range []struct {
		name string
		e    *enc21pb.CompressiveEncoding
		want bool
	}{
		{"flat", FlatEncoding(32), true},
		{"range", rng, false},
		{"constant", nullConstant(), false},
		{"rle(range,range)", rle(rng, rng), false},
		{"rle(range,constant)", rle(rng, nullConstant()), false},
		{"rle(flat,range)", rle(FlatEncoding(32), rng), true},
		{"rle(range,flat)", rle(rng, FlatEncoding(8)), true},
		{"dictionary(range,constant)", dict(rng, nullConstant()), false},
		{"dictionary(flat,range)", dict(FlatEncoding(8), rng), true},
		{"delta(rle(range,range))", delta(rle(rng, rng)), false},
		{"delta(flat)", delta(FlatEncoding(64)), true},
	} {
		if got := HasPayload(c.e); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
