package relayout

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/reader"
)

// pagePlan is what happens to one source page.
type pagePlan struct {
	col, page int
	action    Action
	encoding  []byte // the new description (Reexpressed)
	report    PageReport
}

// planPages decides every page's fate, in column and page order. Without
// reencode, the first page without counterpart fails the conversion.
func planPages(f *reader.File, c *container, minor uint16, reencode bool) ([]*pagePlan, error) {
	var plans []*pagePlan
	srcMinor := c.footer.Minor
	for col, cm := range c.meta {
		for j, pg := range cm.Pages {
			p := &pagePlan{col: col, page: j}
			p.report = PageReport{Column: f.ColumnPath(col), Index: col, Page: j, Rows: pg.Length, Bytes: pageBytes(pg), NewPages: 1}
			enc, from, why, err := planPage(pg, srcMinor, minor)
			if err != nil {
				return nil, fmt.Errorf("column %q, page %d: %w", f.ColumnPath(col), j, err)
			}
			p.report.From = from
			switch {
			case why != nil && !reencode:
				return nil, fmt.Errorf("column %q, page %d: %s: %v: %w", f.ColumnPath(col), j, from, why, ErrNoCounterpart)
			case why != nil:
				p.action = Reencoded
				p.report.Reason = why.Error()
				p.report.NewPages = 0
			case enc == nil:
				p.action = Kept
				p.report.To = from
			default:
				p.action = Reexpressed
				p.encoding = enc
				p.report.To = formOf(enc, minor)
			}
			p.report.Action = p.action
			plans = append(plans, p)
		}
	}
	return plans, nil
}

// planPage returns the page's new description (nil: keep it as stored),
// its source form, and why it has no counterpart (nil if it has one).
// err is for descriptions that cannot be decoded at all.
func planPage(pg *file2pb.ColumnMetadata_Page, srcMinor, minor uint16) (enc []byte, from string, why, err error) {
	raw := pg.GetEncoding().GetDirect().GetEncoding()
	name, val, err := format.UnmarshalAny(raw)
	if err != nil {
		return nil, "", nil, err
	}
	switch name {
	case "lance.encodings21.PageLayout":
		l := &enc21pb.PageLayout{}
		if err := proto.Unmarshal(val, l); err != nil {
			return nil, "", nil, fmt.Errorf("page layout: %v: %w", err, reader.ErrCorrupt)
		}
		from = fmt.Sprintf("2.%d %s", srcMinor, pb21Form(l, len(pg.BufferOffsets)))
		if minor == 2 {
			if why := check22(l); why != nil {
				return nil, from, why, nil
			}
			return nil, from, nil, nil
		}
		p, why := planarFrom(l, len(pg.BufferOffsets))
		if why != nil {
			return nil, from, why, nil
		}
		enc, err := marshalAnyOrdered(format.URLPlanarLayout23, p)
		return enc, from, nil, err
	case "lance.encodings23.PlanarLayout":
		p := &enc23pb.PlanarLayout{}
		if err := proto.Unmarshal(val, p); err != nil {
			return nil, "", nil, fmt.Errorf("page layout: %v: %w", err, reader.ErrCorrupt)
		}
		from = "2.3 " + planarForm(p)
		if minor == 3 {
			return nil, from, nil, nil
		}
		if p.GetStructure().GetSparse() != nil {
			return nil, from, fmt.Errorf("sparse structure has no 2.2 form"), nil
		}
		l, err := format.PB21FromPlanar(p)
		if err != nil {
			return nil, from, fmt.Errorf("%v", err), nil
		}
		if why := check22(l); why != nil {
			return nil, from, why, nil
		}
		enc, err := marshalAnyOrdered(format.URLPageLayout21, l)
		return enc, from, nil, err
	}
	return nil, "", nil, fmt.Errorf("page encoding %q: %w", name, reader.ErrCorrupt)
}

// planarFrom re-expresses a pb21 page as a dense planar one, or says why it
// has no 2.3 counterpart.
func planarFrom(l *enc21pb.PageLayout, buffers int) (*enc23pb.PlanarLayout, error) {
	if why := check23(l); why != nil {
		return nil, why
	}
	if c := l.GetConstantLayout(); c != nil {
		// Only the metadata-only forms map: no level or scalar buffers.
		if buffers > 0 || c.RepCompression != nil || c.DefCompression != nil || c.NumRepValues > 0 || c.NumDefValues > 0 {
			return nil, fmt.Errorf("constant page with %d level/scalar buffers: 2.3 stores such pages as sparse structure", buffers)
		}
	}
	p, err := format.PlanarFromPB21(l)
	if err != nil {
		return nil, fmt.Errorf("%v", err)
	}
	// The planar canonicality rules (dense x constant only over trivial
	// structure, dense x none only as a single nullable leaf layer).
	if _, err := format.PB21FromPlanar(p); err != nil {
		return nil, fmt.Errorf("%v", err)
	}
	return p, nil
}

// pb21Form names a pb21 page's form.
func pb21Form(l *enc21pb.PageLayout, buffers int) string {
	switch x := l.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		if !x.MiniBlockLayout.HasLargeChunk {
			return "mini-block (u16 chunks)"
		}
		return "mini-block"
	case *enc21pb.PageLayout_FullZipLayout:
		return "full-zip"
	case *enc21pb.PageLayout_ConstantLayout:
		switch {
		case buffers > 0:
			return "constant with level buffers"
		case x.ConstantLayout.InlineValue != nil:
			return "constant"
		default:
			return "all-null"
		}
	case *enc21pb.PageLayout_BlobLayout:
		return "blob"
	case *enc21pb.PageLayout_SparseLayout:
		return "interim sparse"
	}
	return "unknown"
}

// planarForm names a planar page's cell.
func planarForm(p *enc23pb.PlanarLayout) string {
	s := "dense"
	if p.GetStructure().GetSparse() != nil {
		s = "sparse"
	}
	switch p.GetValues().GetCodec().(type) {
	case *enc23pb.ValuePlane_Chunked:
		return s + " x chunked"
	case *enc23pb.ValuePlane_Zipped:
		return s + " x zipped"
	case *enc23pb.ValuePlane_Constant:
		return s + " x constant"
	case *enc23pb.ValuePlane_None:
		return s + " x none"
	case *enc23pb.ValuePlane_Indexed:
		return s + " x indexed"
	}
	return s + " x ?"
}

// formOf names the form of a serialized description in the target.
func formOf(enc []byte, minor uint16) string {
	name, val, err := format.UnmarshalAny(enc)
	if err != nil {
		return "?"
	}
	if name == "lance.encodings23.PlanarLayout" {
		p := &enc23pb.PlanarLayout{}
		if proto.Unmarshal(val, p) != nil {
			return "?"
		}
		return fmt.Sprintf("2.%d %s", minor, planarForm(p))
	}
	l := &enc21pb.PageLayout{}
	if proto.Unmarshal(val, l) != nil {
		return "?"
	}
	return fmt.Sprintf("2.%d %s", minor, pb21Form(l, 0))
}
