package reader

import (
	"fmt"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/structural"
)

// page is one page of a column with its normalized description.
type page struct {
	rows     uint64
	firstRow uint64
	buffers  []format.BufferRange
	layout   *enc21pb.PageLayout   // normalized execution description (dense pages)
	sparse   *enc23pb.PlanarLayout // sparse planar pages
	planar   bool
	// planarDesc is the planar description as stored (planar pages only).
	planarDesc *enc23pb.PlanarLayout
}

// windowed reports whether reads decode only the rows they ask for of the
// page rather than the whole page: dense constant and no-values pages
// (their rows are not backed by stored values, so they are never decoded
// whole) and sparse pages (whose cached structure addresses single values).
func (p *page) windowed() bool {
	return p.sparse != nil || p.layout.GetConstantLayout() != nil
}

func (p *page) cell() string {
	if p.sparse != nil {
		switch p.sparse.GetValues().GetCodec().(type) {
		case *enc23pb.ValuePlane_Chunked:
			return "sparse x chunked"
		case *enc23pb.ValuePlane_Zipped:
			return "sparse x zipped"
		case *enc23pb.ValuePlane_Constant:
			return "sparse x constant"
		case *enc23pb.ValuePlane_None:
			return "sparse x none"
		case *enc23pb.ValuePlane_Indexed:
			return "sparse x indexed"
		}
	}
	switch x := p.layout.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		return "dense x chunked"
	case *enc21pb.PageLayout_FullZipLayout:
		return "dense x zipped"
	case *enc21pb.PageLayout_ConstantLayout:
		c := x.ConstantLayout
		legacy := len(p.buffers) > 0
		switch {
		case len(p.buffers) == 1:
			return "dense x constant"
		case len(p.buffers) == 3:
			return "legacy constant (scalar and levels in page buffers)"
		case c.InlineValue != nil && !legacy:
			return "dense x constant"
		case c.InlineValue == nil && !legacy:
			return "dense x none"
		}
		return "legacy constant (levels in page buffers)"
	}
	return "unknown"
}

// validate checks the description against the page's buffers and the
// canonicality rules that apply to it.
func (p *page) validate(minor uint16) error {
	switch x := p.layout.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		m := x.MiniBlockLayout
		if len(m.Layers) == 0 {
			return fmt.Errorf("mini-block page without layers: %w", ErrCorrupt)
		}
		if m.HasLargeChunk != (minor >= 2) && minor >= 2 {
			return fmt.Errorf("2.%d mini-block page must use u32 chunk framing: %w", minor, ErrCorrupt)
		}
		// The layers alone decide which level streams exist.
		if (m.RepCompression != nil) != structural.HasRep(m.Layers) {
			return fmt.Errorf("rep stream presence disagrees with layers %v: %w (%w)", m.Layers, ErrNonCanonical, ErrCorrupt)
		}
		if (m.DefCompression != nil) != structural.HasDef(m.Layers) {
			return fmt.Errorf("def stream presence disagrees with layers %v: %w (%w)", m.Layers, ErrNonCanonical, ErrCorrupt)
		}
		if (m.RepetitionIndexDepth > 0) != structural.HasRep(m.Layers) {
			return fmt.Errorf("repetition index depth %d with layers %v: %w (%w)", m.RepetitionIndexDepth, m.Layers, ErrNonCanonical, ErrCorrupt)
		}
		want := 2
		if m.Dictionary != nil {
			want++
		}
		if m.RepetitionIndexDepth > 0 {
			want++
		}
		if len(p.buffers) != want {
			return fmt.Errorf("mini-block page has %d buffers, want %d: %w", len(p.buffers), want, ErrCorrupt)
		}
		if m.ValueCompression == nil {
			return fmt.Errorf("mini-block page without value compression: %w", ErrCorrupt)
		}
	case *enc21pb.PageLayout_ConstantLayout:
		c := x.ConstantLayout
		if len(c.Layers) == 0 {
			return fmt.Errorf("constant page without layers: %w", ErrCorrupt)
		}
		if c.InlineValue != nil && len(c.InlineValue) > 32 {
			return fmt.Errorf("inline value of %d bytes: %w", len(c.InlineValue), ErrCorrupt)
		}
		switch len(p.buffers) {
		case 0, 2:
		case 1, 3:
			if c.InlineValue != nil {
				return fmt.Errorf("constant page with inline value and a scalar buffer: %w", ErrCorrupt)
			}
		default:
			return fmt.Errorf("constant page with %d buffers: %w", len(p.buffers), ErrCorrupt)
		}
	case *enc21pb.PageLayout_FullZipLayout:
		z := x.FullZipLayout
		if len(z.Layers) == 0 || z.ValueCompression == nil {
			return fmt.Errorf("full-zip page without layers or values: %w", ErrCorrupt)
		}
		want := 1
		if _, ok := z.Details.(*enc21pb.FullZipLayout_BitsPerOffset); ok || structural.HasRep(z.Layers) {
			want = 2
		}
		if len(p.buffers) != want && !(want == 2 && len(p.buffers) == 1 && z.NumItems == 0) {
			return fmt.Errorf("full-zip page has %d buffers, want %d: %w", len(p.buffers), want, ErrCorrupt)
		}
	case *enc21pb.PageLayout_SparseLayout:
		return fmt.Errorf("interim sparse pages: %w", ErrUnsupported)
	case *enc21pb.PageLayout_BlobLayout:
		return fmt.Errorf("blob v1 pages: %w", ErrUnsupported)
	default:
		return fmt.Errorf("page without layout: %w", ErrCorrupt)
	}
	return nil
}
