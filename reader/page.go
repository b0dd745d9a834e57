package reader

import (
	"fmt"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// page is one page of a column with its normalized description.
type page struct {
	rows     uint64
	firstRow uint64
	buffers  []format.BufferRange
	layout   *enc21pb.PageLayout   // normalized execution description (dense pages)
	sparse   *enc23pb.PlanarLayout // sparse planar pages
	planar   bool
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
			return fmt.Errorf("rep stream presence disagrees with layers %v: %w", m.Layers, ErrCorrupt)
		}
		if (m.DefCompression != nil) != structural.HasDef(m.Layers) {
			return fmt.Errorf("def stream presence disagrees with layers %v: %w", m.Layers, ErrCorrupt)
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
		return fmt.Errorf("full-zip pages: %w", ErrUnsupported)
	case *enc21pb.PageLayout_SparseLayout:
		return fmt.Errorf("interim sparse pages: %w", ErrUnsupported)
	case *enc21pb.PageLayout_BlobLayout:
		return fmt.Errorf("blob v1 pages: %w", ErrUnsupported)
	default:
		return fmt.Errorf("page without layout: %w", ErrCorrupt)
	}
	return nil
}

// flatPage is a decoded page of a flat fixed-width leaf.
type flatPage struct {
	vals    []byte   // n values of bw bytes
	def     []uint16 // nil: all valid
	allNull bool
	n       int
}

// decodeFlat decodes a page of a flat leaf whose values are bits wide.
func (f *File) decodeFlat(p *page, bits int) (*flatPage, error) {
	n := int(p.rows)
	bw := bits / 8
	bufs := make([][]byte, len(p.buffers))
	for i, r := range p.buffers {
		b, err := f.readAt(r.Position, r.Size)
		if err != nil {
			return nil, err
		}
		bufs[i] = b
	}
	if p.sparse != nil {
		return f.decodeSparseFlat(p, bufs, bits)
	}
	switch x := p.layout.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		return decodeFlatChunked(x.MiniBlockLayout, bufs, n, bits)
	case *enc21pb.PageLayout_ConstantLayout:
		c := x.ConstantLayout
		out := &flatPage{n: n}
		if len(c.Layers) != 1 {
			return nil, fmt.Errorf("constant page of a flat column has %d layers: %w", len(c.Layers), ErrUnsupported)
		}
		if c.InlineValue == nil {
			if len(bufs) == 1 || len(bufs) == 3 {
				return nil, fmt.Errorf("constant page with a scalar buffer for a fixed-width column: %w", ErrUnsupported)
			}
			out.allNull = true
			out.vals = make([]byte, n*bw)
			return out, nil
		}
		if len(c.InlineValue) != bw {
			return nil, fmt.Errorf("constant of %d bytes for %d-byte values: %w", len(c.InlineValue), bw, ErrCorrupt)
		}
		out.vals = make([]byte, 0, n*bw)
		for i := 0; i < n; i++ {
			out.vals = append(out.vals, c.InlineValue...)
		}
		if len(bufs) == 2 {
			// Legacy constant page with level buffers: [rep, def].
			if len(bufs[0]) != 0 {
				return nil, fmt.Errorf("repetition levels on a flat column: %w", ErrCorrupt)
			}
			if len(bufs[1]) > 0 {
				cnt := int(c.NumDefValues)
				enc := c.DefCompression
				if enc == nil {
					enc = values.FlatEncoding(16)
					cnt = len(bufs[1]) / 2
				}
				if cnt != n {
					return nil, fmt.Errorf("constant page has %d def levels for %d rows: %w", cnt, n, ErrCorrupt)
				}
				def, err := values.DecodeLevels(enc, bufs[1], cnt, nil)
				if err != nil {
					return nil, err
				}
				out.def = def
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("layout %T: %w", p.layout.GetLayout(), ErrUnsupported)
}

func decodeFlatChunked(m *enc21pb.MiniBlockLayout, bufs [][]byte, n, bits int) (*flatPage, error) {
	if len(m.Layers) != 1 || structural.IsList(m.Layers[0]) {
		return nil, fmt.Errorf("mini-block page with layers %v on a flat column: %w", m.Layers, ErrUnsupported)
	}
	if m.NumItems != uint64(n) {
		return nil, fmt.Errorf("mini-block page has %d items for %d rows: %w", m.NumItems, n, ErrCorrupt)
	}
	if m.NumBuffers == 0 || m.NumBuffers > 16 {
		return nil, fmt.Errorf("mini-block page with %d value buffers: %w", m.NumBuffers, ErrCorrupt)
	}
	refs, err := values.ParseChunkMeta(bufs[0], m.HasLargeChunk, len(bufs[1]), m.NumItems)
	if err != nil {
		return nil, err
	}
	var dict *values.Fixed
	if m.Dictionary != nil {
		if m.NumDictionaryItems > uint64(n)+1<<20 {
			return nil, fmt.Errorf("dictionary of %d items: %w", m.NumDictionaryItems, ErrCorrupt)
		}
		d, err := values.DecodeBlock(m.Dictionary, bufs[2], int(m.NumDictionaryItems))
		if err != nil {
			return nil, fmt.Errorf("dictionary: %w", err)
		}
		if d.Bits != bits {
			return nil, fmt.Errorf("dictionary items are %d bits, column %d: %w", d.Bits, bits, ErrCorrupt)
		}
		dict = &d
	}
	bw := bits / 8
	out := &flatPage{n: n, vals: make([]byte, 0, n*bw)}
	layout := values.ChunkLayout{HasDef: m.DefCompression != nil, NumBuffers: int(m.NumBuffers), Large: m.HasLargeChunk}
	if out.def == nil && layout.HasDef {
		out.def = make([]uint16, 0, n)
	}
	for ci, r := range refs {
		parts, err := values.ParseChunk(bufs[1][r.Offset:r.Offset+r.Size], layout)
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", ci, err)
		}
		if layout.HasDef {
			if parts.NumLevels != r.NumValues {
				return nil, fmt.Errorf("chunk %d has %d levels for %d values: %w", ci, parts.NumLevels, r.NumValues, ErrCorrupt)
			}
			if out.def, err = values.DecodeLevels(m.DefCompression, parts.Def, parts.NumLevels, out.def); err != nil {
				return nil, fmt.Errorf("chunk %d def: %w", ci, err)
			}
		}
		v, err := values.DecodeMiniBlock(m.ValueCompression, parts.Values, r.NumValues)
		if err != nil {
			return nil, fmt.Errorf("chunk %d values: %w", ci, err)
		}
		if dict != nil {
			if out.vals, err = lookup(out.vals, v, dict); err != nil {
				return nil, fmt.Errorf("chunk %d: %w", ci, err)
			}
			continue
		}
		if v.Bits != bits {
			return nil, fmt.Errorf("chunk %d decoded %d-bit values for a %d-bit column: %w", ci, v.Bits, bits, ErrCorrupt)
		}
		out.vals = append(out.vals, v.Data[:r.NumValues*bw]...)
	}
	return out, nil
}

// lookup appends the dictionary items named by indices.
func lookup(dst []byte, idx values.Fixed, dict *values.Fixed) ([]byte, error) {
	ib := idx.Bits / 8
	if idx.Bits%8 != 0 || ib < 1 || ib > 8 {
		return dst, fmt.Errorf("dictionary indices of %d bits: %w", idx.Bits, ErrCorrupt)
	}
	w := dict.Bits / 8
	for i := 0; i < idx.N; i++ {
		var k uint64
		for j := ib - 1; j >= 0; j-- {
			k = k<<8 | uint64(idx.Data[i*ib+j])
		}
		if k >= uint64(dict.N) {
			// Index slots under nulls may hold anything; keep them in range.
			k = 0
			if dict.N == 0 {
				dst = append(dst, make([]byte, w)...)
				continue
			}
		}
		dst = append(dst, dict.Data[int(k)*w:int(k+1)*w]...)
	}
	return dst, nil
}
