package relayout

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
)

// SameFile reports how two files differ beyond the order of protobuf fields
// in their page descriptions (nil: not at all): same size, same data region
// and offset tables, the same page descriptions as messages.
func SameFile(a, b []byte) error {
	ca, err := parseContainer(bytes.NewReader(a), int64(len(a)), -1)
	if err != nil {
		return err
	}
	cb, err := parseContainer(bytes.NewReader(b), int64(len(b)), -1)
	if err != nil {
		return err
	}
	start := ca.footer.ColumnMetaStart
	if len(a) != len(b) || ca.footer != cb.footer || !bytes.Equal(a[:start], b[:start]) || !bytes.Equal(a[len(a)-format.FooterSize-16*len(ca.meta)-16*len(ca.globals):], b[len(b)-format.FooterSize-16*len(cb.meta)-16*len(cb.globals):]) {
		return fmt.Errorf("sizes, data regions, tables or footers differ")
	}
	for i := range ca.meta {
		pa, pb := ca.meta[i].Pages, cb.meta[i].Pages
		if len(pa) != len(pb) {
			return fmt.Errorf("column %d: page counts differ", i)
		}
		for j := range pa {
			da, db := pa[j].GetEncoding().GetDirect().GetEncoding(), pb[j].GetEncoding().GetDirect().GetEncoding()
			if !sameDescription(da, db) {
				return fmt.Errorf("column %d page %d: descriptions differ", i, j)
			}
			pa[j].Encoding, pb[j].Encoding = nil, nil
			if !proto.Equal(pa[j], pb[j]) {
				return fmt.Errorf("column %d page %d: pages differ", i, j)
			}
		}
	}
	return nil
}

func sameDescription(a, b []byte) bool {
	na, va, err1 := format.UnmarshalAny(a)
	nb, vb, err2 := format.UnmarshalAny(b)
	if err1 != nil || err2 != nil || na != nb {
		return false
	}
	var ma, mb proto.Message = &enc21pb.PageLayout{}, &enc21pb.PageLayout{}
	if na == "lance.encodings23.PlanarLayout" {
		ma, mb = &enc23pb.PlanarLayout{}, &enc23pb.PlanarLayout{}
	}
	return proto.Unmarshal(va, ma) == nil && proto.Unmarshal(vb, mb) == nil && proto.Equal(ma, mb)
}
