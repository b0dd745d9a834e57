package reader

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/values"
)

// indexedPage builds an indexed value plane over the items (32-bit length
// prefixes, Variable per-value codec), an offset index of width ow bytes,
// and flat u32 indices.
func indexedPage(items []string, ow int, idx []uint32) (*enc23pb.IndexedValues, [][]byte) {
	var data, offs []byte
	put := func(v uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		offs = append(offs, b[:ow]...)
	}
	put(0)
	for _, s := range items {
		data = binary.LittleEndian.AppendUint32(data, uint32(len(s)))
		data = append(data, s...)
		put(uint64(len(data)))
	}
	var ib []byte
	for _, k := range idx {
		ib = binary.LittleEndian.AppendUint32(ib, k)
	}
	variable := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: values.FlatEncoding(32)}}}
	ix := &enc23pb.IndexedValues{
		Indices: values.FlatEncoding(32),
		Items: &enc23pb.ZippedValues{Compression: variable, Addressing: &enc23pb.ZippedValues_BitsPerOffset{BitsPerOffset: 32},
			NumItems: uint64(len(items)), NumVisibleItems: uint64(len(items))},
	}
	return ix, [][]byte{ib, data, offs}
}

func TestDecodeIndexed(t *testing.T) {
	for _, ow := range []int{1, 2, 4, 8} {
		ix, bufs := indexedPage([]string{"", "alpha", "be"}, ow, []uint32{1, 0, 2, 2, 0, 1})
		idx, dict, err := decodeIndexed(ix, bufs, 6)
		if err != nil {
			t.Fatalf("width %d: %v", ow, err)
		}
		if idx.Bits != 32 || idx.N != 6 || dict.N != 3 || string(dict.Data) != "alphabe" {
			t.Fatalf("width %d: indices %+v, items %+v", ow, idx, dict)
		}
		// Null slots come out empty whatever they name.
		out, err := expandDict(idx, dict, []bool{true, false, true, false, true, true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := 0; i < out.N; i++ {
			got = append(got, string(out.Data[out.Offsets[i]:out.Offsets[i+1]]))
		}
		if want := []string{"alpha", "", "be", "", "", "alpha"}; len(got) != 6 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] || got[4] != want[4] || got[5] != want[5] {
			t.Errorf("width %d: %q", ow, got)
		}
	}
}

func TestDecodeIndexedRejects(t *testing.T) {
	rng := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Range{Range: &enc21pb.Range{UncompressedBitsPerValue: 32, Step: 1}}}
	for _, c := range []struct {
		name  string
		slots int
		edit  func(ix *enc23pb.IndexedValues, bufs [][]byte) [][]byte
	}{
		{"index beyond items", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			binary.LittleEndian.PutUint32(b[0][4:], 3)
			return b
		}},
		{"fewer indices than slots", 4, nil},
		{"payload for a metadata-only codec", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			ix.Indices = rng
			return b
		}},
		{"no payload for a flat codec", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			b[0] = nil
			return b
		}},
		{"indices of 16 bits", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			ix.Indices = values.FlatEncoding(16)
			return b
		}},
		{"offset index of 3-byte entries", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			b[2] = make([]byte, 12)
			return b
		}},
		{"offset index ending short of the items", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			b[2][3]--
			return b
		}},
		{"no items", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			ix.Items.NumItems, ix.Items.NumVisibleItems = 0, 0
			return b
		}},
		{"more items than the buffer holds", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			ix.Items.NumItems, ix.Items.NumVisibleItems = 1<<30, 1<<30
			return b
		}},
		{"hidden items", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			ix.Items.NumVisibleItems = 2
			return b
		}},
		{"levels", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			ix.Items.Levels = &enc23pb.DenseZipLevels{}
			return b
		}},
		{"16-bit lengths", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			ix.Items.Addressing = &enc23pb.ZippedValues_BitsPerOffset{BitsPerOffset: 16}
			return b
		}},
		{"fixed-width items", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			ix.Items.Addressing = &enc23pb.ZippedValues_BitsPerValue{BitsPerValue: 8}
			return b
		}},
		{"two buffers", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte { return b[:2] }},
		{"no items message", 3, func(ix *enc23pb.IndexedValues, b [][]byte) [][]byte {
			ix.Items = nil
			return b
		}},
	} {
		ix, bufs := indexedPage([]string{"", "x", "yz"}, 1, []uint32{0, 1, 2})
		if c.edit != nil {
			bufs = c.edit(ix, bufs)
		}
		if _, _, err := decodeIndexed(ix, bufs, c.slots); !errors.Is(err, ErrCorrupt) && !errors.Is(err, values.ErrCorrupt) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
