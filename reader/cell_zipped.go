package reader

import (
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// decodeZippedPage decodes a dense x zipped (FullZip) page.
func decodeZippedPage(z *enc21pb.FullZipLayout, bufs [][]byte, rows int) (*pageData, error) {
	return decodeZippedWith(z, bufs, rows, nil)
}

// decodeZippedWith is decodeZippedPage with the page's per-value FSST table
// already parsed (nil: parsed from the description when needed).
func decodeZippedWith(z *enc21pb.FullZipLayout, bufs [][]byte, rows int, fsst *values.FsstTable) (*pageData, error) {
	if len(bufs) < 1 || len(bufs) > 2 {
		return nil, fmt.Errorf("zipped page with %d buffers: %w", len(bufs), ErrCorrupt)
	}
	R := structural.NumLists(z.Layers)
	lv := values.ZipLevels{BitsRep: int(z.BitsRep), BitsDef: int(z.BitsDef), MaxRep: R, MaxVisibleDef: structural.MaxVisibleDef(z.Layers)}
	items, visible := int(z.NumItems), int(z.NumVisibleItems)
	if R == 0 && items != rows {
		return nil, fmt.Errorf("zipped page has %d items for %d rows: %w", items, rows, ErrCorrupt)
	}
	pd := &pageData{layers: z.Layers, numVisible: visible}
	var zp values.Zipped
	var err error
	switch d := z.Details.(type) {
	case *enc21pb.FullZipLayout_BitsPerValue:
		bits := int(d.BitsPerValue)
		if bits <= 0 || bits%8 != 0 {
			return nil, fmt.Errorf("zipped values of %d bits: %w", bits, ErrCorrupt)
		}
		w := bits / 8
		if lv.BitsRep+lv.BitsDef == 0 && values.LegacyPhantomControlWords(len(bufs[0]), items, w) && R == 0 {
			// Pages from writers that emitted a 1-byte control word although
			// both widths were recorded as zero.
			lv.BitsDef = 1
			zp, err = values.ParseZippedFixed(bufs[0], lv, items, visible, w)
			zp.Def = nil
		} else {
			zp, err = values.ParseZippedFixed(bufs[0], lv, items, visible, w)
		}
		if err != nil {
			return nil, err
		}
		pd.vals, err = perValueFixed(z.ValueCompression, zp.Values, visible, bits)
		if err != nil {
			return nil, err
		}
	case *enc21pb.FullZipLayout_BitsPerOffset:
		if len(bufs) != 2 {
			return nil, fmt.Errorf("variable zipped page without a repetition index: %w", ErrCorrupt)
		}
		zp, err = values.ParseZippedVariable(bufs[0], bufs[1], lv, items, visible, rows, int(d.BitsPerOffset))
		if err != nil {
			return nil, err
		}
		in := values.Block{N: visible, Offsets: zp.Offsets, Data: zp.VarData}
		if fsst != nil {
			pd.vals, err = fsst.DecodeBlock(in)
		} else {
			pd.vals, err = perValueVariable(z.ValueCompression, in)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("zipped page without addressing: %w", ErrCorrupt)
	}
	if R > 0 && zp.NumRows != rows {
		return nil, fmt.Errorf("zipped page holds %d rows, page %d: %w", zp.NumRows, rows, ErrCorrupt)
	}
	if R > 0 {
		pd.rep = zp.Rep
	}
	if structural.HasDef(z.Layers) {
		pd.def = zp.Def
		if pd.def == nil {
			// No control words: every item is a visible, valid value.
			if items != visible {
				return nil, fmt.Errorf("zipped page without levels has %d items, %d visible: %w", items, visible, ErrCorrupt)
			}
			pd.def = make([]uint16, items)
		}
	}
	return pd, nil
}

// perValueFixed interprets the fixed-width records of a zipped page.
func perValueFixed(e *enc21pb.CompressiveEncoding, data []byte, n, bits int) (values.Block, error) {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		if int(c.Flat.BitsPerValue) != bits {
			return values.Block{}, fmt.Errorf("zipped flat of %d bits in %d-bit records: %w", c.Flat.BitsPerValue, bits, ErrCorrupt)
		}
		return values.Block{Bits: bits, N: n, Data: data}, nil
	case *enc21pb.CompressiveEncoding_PackedStruct:
		fb, err := values.ParsePackedStruct(e)
		if err != nil {
			return values.Block{}, err
		}
		sum := 0
		for _, b := range fb {
			sum += b
		}
		if sum != bits {
			return values.Block{}, fmt.Errorf("zipped packed struct of %d bits in %d-bit records: %w", sum, bits, ErrCorrupt)
		}
		return values.Block{Bits: bits, N: n, Data: data}, nil
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		l, err := values.ParseFSLRows(c.FixedSizeList)
		if err != nil {
			return values.Block{}, fmt.Errorf("zipped values: %w", err)
		}
		if 8*l.RowBytes() != bits {
			return values.Block{}, fmt.Errorf("zipped fixed-size list rows of %d bits, layout needs %d: %w", bits, 8*l.RowBytes(), ErrCorrupt)
		}
		return l.Decode(data, n)
	}
	return values.Block{}, fmt.Errorf("zipped fixed-width encoding %T: %w", e.GetCompression(), ErrUnsupported)
}

// perValueVariable undoes the per-value codec of a variable zipped page.
func perValueVariable(e *enc21pb.CompressiveEncoding, in values.Block) (values.Block, error) {
	return perValueVariableDepth(e, in, 0)
}

func perValueVariableDepth(e *enc21pb.CompressiveEncoding, in values.Block, depth int) (values.Block, error) {
	if depth > 4 {
		return values.Block{}, fmt.Errorf("per-value encoding nested too deep: %w", ErrCorrupt)
	}
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_VariablePackedStruct:
		fields, err := values.ParseVariablePackedStruct(e)
		if err != nil {
			return values.Block{}, err
		}
		cols, err := values.DecodeVariablePackedStruct(in.Data, in.Offsets, values.VarPackedLayouts(fields))
		if err != nil {
			return values.Block{}, err
		}
		out := values.Block{N: in.N, Children: make([]values.Block, len(cols))}
		for j, col := range cols {
			if !col.Variable {
				if f := fields[j].Value.GetFlat(); f == nil || int(f.BitsPerValue) != col.Bits {
					return values.Block{}, fmt.Errorf("packed struct field %d encoded as %s: %w", j, values.EncodingName(fields[j].Value), ErrUnsupported)
				}
				out.Children[j] = values.Block{Bits: col.Bits, N: in.N, Data: col.Data}
				continue
			}
			b, err := perValueVariableDepth(fields[j].Value, values.Block{N: in.N, Offsets: col.Offsets, Data: col.Data}, depth+1)
			if err != nil {
				return values.Block{}, fmt.Errorf("packed struct field %d: %w", j, err)
			}
			out.Children[j] = b
		}
		return out, nil
	case *enc21pb.CompressiveEncoding_Variable:
		return in, nil
	case *enc21pb.CompressiveEncoding_Fsst:
		return values.FsstDecodeBlock(c.Fsst.SymbolTable, in)
	case *enc21pb.CompressiveEncoding_General:
		s := values.Scheme(c.General.GetCompression().GetScheme())
		out := values.Block{N: in.N, Offsets: make([]uint64, 1, in.N+1)}
		var err error
		for i := 0; i < in.N; i++ {
			v := in.Data[in.Offsets[i]:in.Offsets[i+1]]
			if len(v) > 0 {
				if out.Data, err = values.Decompress(out.Data, s, v); err != nil {
					return values.Block{}, err
				}
			}
			out.Offsets = append(out.Offsets, uint64(len(out.Data)))
		}
		return out, nil
	}
	return values.Block{}, fmt.Errorf("zipped variable encoding %T: %w", e.GetCompression(), ErrUnsupported)
}
