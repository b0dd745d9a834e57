package relayout

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/file2pb"
)

func TestMarshalOrdered(t *testing.T) {
	flat := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: 32}}}
	zip := &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_FullZipLayout{FullZipLayout: &enc21pb.FullZipLayout{
		BitsDef: 1, Details: &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: 32}, NumItems: 3000, NumVisibleItems: 3000,
		ValueCompression: flat, Layers: []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM, enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST},
	}}}
	cm := &file2pb.ColumnMetadata{Pages: []*file2pb.ColumnMetadata_Page{{BufferOffsets: []uint64{64, 128}, BufferSizes: []uint64{3, 0}, Length: 7, Priority: 5,
		Encoding: &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: []byte{1, 2}}}}}}}
	for _, tc := range []struct {
		name string
		m    proto.Message
		// want is the prost order's prefix where it differs from Go's.
		want []byte
	}{
		// bits_def (2) = 1, bits_per_offset (4) = 32, num_items (5) ...:
		// Go writes the oneof member after the layers.
		{"full-zip", zip, []byte{0x1a, 0, 0x10, 0x01, 0x20, 0x20, 0x28}},
		{"column metadata", cm, nil},
		{"flat", flat, nil},
	} {
		got, err := marshalOrdered(tc.m)
		if err != nil {
			t.Fatal(err)
		}
		goBytes, _ := proto.MarshalOptions{Deterministic: true}.Marshal(tc.m)
		if len(got) != len(goBytes) {
			t.Fatalf("%s: %d bytes, Go %d", tc.name, len(got), len(goBytes))
		}
		back := tc.m.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(got, back); err != nil || !proto.Equal(back, tc.m) {
			t.Fatalf("%s: does not round-trip: %v", tc.name, err)
		}
		if tc.want == nil {
			if !bytes.Equal(got, goBytes) {
				t.Errorf("%s: differs from Go's order without a oneof", tc.name)
			}
			continue
		}
		w := bytes.Clone(tc.want)
		w[1] = got[1] // the length
		if !bytes.HasPrefix(got, w) || bytes.Equal(got, goBytes) {
			t.Errorf("%s: % x, want prefix % x", tc.name, got, w)
		}
	}
}
