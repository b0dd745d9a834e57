package format

import (
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
)

// PlanarFromPB21 re-expresses a dense pb21 page description as a planar one
// without changing its buffers: MiniBlock -> dense x chunked, FullZip ->
// dense x zipped, Constant without level buffers -> dense x constant, and the
// simple all-null page -> dense x none. Other forms have no dense planar
// counterpart and return an error wrapping ErrCorruptFile.
func PlanarFromPB21(l *enc21pb.PageLayout) (*enc23pb.PlanarLayout, error) {
	var layers []enc21pb.RepDefLayer
	var vp *enc23pb.ValuePlane
	switch x := l.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		m := x.MiniBlockLayout
		if !m.HasLargeChunk {
			return nil, fmt.Errorf("u16-framed mini-block pages have no planar form: %w", ErrCorruptFile)
		}
		layers = m.Layers
		vp = &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Chunked{Chunked: &enc23pb.ChunkedValues{
			Compression: m.ValueCompression,
			Levels: &enc23pb.DenseChunkLevels{
				Repetition:           m.RepCompression,
				Definition:           m.DefCompression,
				RepetitionIndexDepth: m.RepetitionIndexDepth,
			},
			Dictionary:         m.Dictionary,
			NumDictionaryItems: m.NumDictionaryItems,
			NumBuffers:         m.NumBuffers,
			NumItems:           m.NumItems,
		}}}
	case *enc21pb.PageLayout_FullZipLayout:
		f := x.FullZipLayout
		layers = f.Layers
		z := &enc23pb.ZippedValues{
			Compression:     f.ValueCompression,
			Levels:          &enc23pb.DenseZipLevels{BitsRepetition: f.BitsRep, BitsDefinition: f.BitsDef},
			NumItems:        uint64(f.NumItems),
			NumVisibleItems: uint64(f.NumVisibleItems),
		}
		switch d := f.Details.(type) {
		case *enc21pb.FullZipLayout_BitsPerValue:
			z.Addressing = &enc23pb.ZippedValues_BitsPerValue{BitsPerValue: d.BitsPerValue}
		case *enc21pb.FullZipLayout_BitsPerOffset:
			z.Addressing = &enc23pb.ZippedValues_BitsPerOffset{BitsPerOffset: d.BitsPerOffset}
		}
		vp = &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Zipped{Zipped: z}}
	case *enc21pb.PageLayout_ConstantLayout:
		c := x.ConstantLayout
		layers = c.Layers
		if c.InlineValue != nil {
			vp = &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Constant{Constant: &enc23pb.ConstantValue{Scalar: c.InlineValue}}}
		} else {
			vp = &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_None{None: &enc23pb.NoValues{}}}
		}
	default:
		return nil, fmt.Errorf("page layout %T has no dense planar form: %w", x, ErrCorruptFile)
	}
	return &enc23pb.PlanarLayout{
		Structure: &enc23pb.StructuralPlane{Codec: &enc23pb.StructuralPlane_Dense{Dense: &enc23pb.DenseStructure{Layers: layers}}},
		Values:    vp,
	}, nil
}

// PB21FromPlanar is the inverse of PlanarFromPB21 for dense planar pages. It
// enforces the canonicality rules of the planar model that concern dense
// structure: dense x constant only with trivial structure, dense x none only
// as a single nullable leaf layer.
func PB21FromPlanar(p *enc23pb.PlanarLayout) (*enc21pb.PageLayout, error) {
	dense := p.GetStructure().GetDense()
	if dense == nil {
		return nil, fmt.Errorf("planar page without dense structure: %w", ErrCorruptFile)
	}
	layers := dense.Layers
	if len(layers) == 0 {
		return nil, fmt.Errorf("dense structure without layers: %w", ErrCorruptFile)
	}
	for _, l := range layers {
		if l == enc21pb.RepDefLayer_REPDEF_UNSPECIFIED || enc21pb.RepDefLayer_name[int32(l)] == "" {
			return nil, fmt.Errorf("dense layer %d: %w", l, ErrCorruptFile)
		}
	}
	switch v := p.GetValues().GetCodec().(type) {
	case *enc23pb.ValuePlane_Chunked:
		c := v.Chunked
		lv := c.GetLevels()
		if lv == nil {
			return nil, fmt.Errorf("dense chunked page without levels: %w", ErrCorruptFile)
		}
		return &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: &enc21pb.MiniBlockLayout{
			RepCompression:       lv.Repetition,
			DefCompression:       lv.Definition,
			RepetitionIndexDepth: lv.RepetitionIndexDepth,
			ValueCompression:     c.Compression,
			Dictionary:           c.Dictionary,
			NumDictionaryItems:   c.NumDictionaryItems,
			NumBuffers:           c.NumBuffers,
			NumItems:             c.NumItems,
			Layers:               layers,
			HasLargeChunk:        true,
		}}}, nil
	case *enc23pb.ValuePlane_Zipped:
		f, err := FullZipFromZipped(v.Zipped, layers)
		if err != nil {
			return nil, err
		}
		return &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_FullZipLayout{FullZipLayout: f}}, nil
	case *enc23pb.ValuePlane_Constant:
		s := v.Constant.Scalar
		if len(s) == 0 || len(s) > 32 {
			return nil, fmt.Errorf("constant scalar of %d bytes (want 1..32): %w", len(s), ErrCorruptFile)
		}
		for _, l := range layers {
			if l != enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM {
				return nil, nonCanonical("dense x constant with non-trivial structure %v", layers)
			}
		}
		return &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{Layers: layers, InlineValue: s}}}, nil
	case *enc23pb.ValuePlane_None:
		if len(layers) != 1 || layers[0] != enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM {
			return nil, nonCanonical("dense x none requires a single nullable leaf layer, have %v", layers)
		}
		return &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{Layers: layers}}}, nil
	case nil:
		return nil, fmt.Errorf("planar page without values: %w", ErrCorruptFile)
	default:
		return nil, fmt.Errorf("value codec %T with dense structure: %w", v, ErrCorruptFile)
	}
}

// FullZipFromZipped re-expresses zipped values (with or without dense control
// words) as a FullZip description over the given layers.
func FullZipFromZipped(z *enc23pb.ZippedValues, layers []enc21pb.RepDefLayer) (*enc21pb.FullZipLayout, error) {
	if z.NumItems > 0xFFFFFFFF || z.NumVisibleItems > 0xFFFFFFFF {
		return nil, fmt.Errorf("zipped counts exceed u32: %w", ErrCorruptFile)
	}
	f := &enc21pb.FullZipLayout{
		BitsRep:          z.GetLevels().GetBitsRepetition(),
		BitsDef:          z.GetLevels().GetBitsDefinition(),
		NumItems:         uint32(z.NumItems),
		NumVisibleItems:  uint32(z.NumVisibleItems),
		ValueCompression: z.Compression,
		Layers:           layers,
	}
	switch a := z.Addressing.(type) {
	case *enc23pb.ZippedValues_BitsPerValue:
		f.Details = &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: a.BitsPerValue}
	case *enc23pb.ZippedValues_BitsPerOffset:
		f.Details = &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: a.BitsPerOffset}
	default:
		return nil, fmt.Errorf("zipped page without addressing: %w", ErrCorruptFile)
	}
	return f, nil
}
