package reader

import (
	"encoding/binary"
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/values"
)

// hasPayload reports whether a block encoding stores a buffer (Constant,
// Range and Delta over such a child are metadata only).
func hasPayload(e *enc21pb.CompressiveEncoding) bool {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Constant, *enc21pb.CompressiveEncoding_Range:
		return false
	case *enc21pb.CompressiveEncoding_Delta:
		return hasPayload(c.Delta.GetDeltas())
	}
	return true
}

// sparseValueBuffers is the number of value-plane buffers of a sparse page.
func sparseValueBuffers(v *enc23pb.ValuePlane) (int, error) {
	switch c := v.GetCodec().(type) {
	case *enc23pb.ValuePlane_None, *enc23pb.ValuePlane_Constant:
		return 0, nil
	case *enc23pb.ValuePlane_Chunked:
		if c.Chunked.Dictionary != nil {
			return 3, nil
		}
		return 2, nil
	case *enc23pb.ValuePlane_Zipped:
		if _, ok := c.Zipped.Addressing.(*enc23pb.ZippedValues_BitsPerOffset); ok {
			return 2, nil
		}
		return 1, nil
	case *enc23pb.ValuePlane_Indexed:
		return 3, nil
	}
	return 0, fmt.Errorf("sparse page without values: %w", ErrCorrupt)
}

// validateSparse checks a sparse planar page of a flat leaf: one validity
// layer, and buffers for exactly the value plane plus the explicit sets.
func validateSparse(p *page) error {
	s := p.sparse.GetStructure().GetSparse()
	if len(s.Layers) == 0 {
		return fmt.Errorf("sparse structure without layers: %w", ErrCorrupt)
	}
	vb, err := sparseValueBuffers(p.sparse.GetValues())
	if err != nil {
		return err
	}
	want := vb
	for _, l := range s.Layers {
		switch x := l.GetLayer().(type) {
		case *enc23pb.SparseStructuralLayer_Validity:
			if hasPayload(x.Validity.GetPositions()) {
				want++
			}
		case *enc23pb.SparseStructuralLayer_List, *enc23pb.SparseStructuralLayer_FixedSizeList:
			return fmt.Errorf("sparse list layers: %w", ErrUnsupported)
		default:
			return fmt.Errorf("sparse layer without a kind: %w", ErrCorrupt)
		}
	}
	if len(p.buffers) != want {
		return fmt.Errorf("sparse page has %d buffers, want %d: %w", len(p.buffers), want, ErrCorrupt)
	}
	return nil
}

// decodeSparseFlat decodes a sparse page of a flat leaf: validity from the
// position set, values from the value plane.
func (f *File) decodeSparseFlat(p *page, bufs [][]byte, bits int) (*flatPage, error) {
	n := int(p.rows)
	bw := bits / 8
	s := p.sparse.GetStructure().GetSparse()
	if len(s.Layers) != 1 || s.Layers[0].GetValidity() == nil {
		return nil, fmt.Errorf("sparse page of a flat column with %d layers: %w", len(s.Layers), ErrUnsupported)
	}
	vs := s.Layers[0].GetValidity()
	vb, _ := sparseValueBuffers(p.sparse.GetValues())
	if vs.NumPositions > uint64(n) {
		return nil, fmt.Errorf("%d positions in a domain of %d: %w", vs.NumPositions, n, ErrCorrupt)
	}
	k := int(vs.NumPositions)
	var payload []byte
	if hasPayload(vs.GetPositions()) {
		payload = bufs[vb]
	}
	valid := make([]bool, n)
	listedValid := false
	switch vs.Meaning {
	case enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS:
		for i := range valid {
			valid[i] = true
		}
	case enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS:
		listedValid = true
	default:
		return nil, fmt.Errorf("sparse validity meaning %d: %w", vs.Meaning, ErrCorrupt)
	}
	if k > 0 {
		pos, err := values.DecodeBlock(vs.GetPositions(), payload, k)
		if err != nil {
			return nil, fmt.Errorf("validity positions: %w", err)
		}
		if pos.Bits != 64 {
			return nil, fmt.Errorf("positions of %d bits: %w", pos.Bits, ErrCorrupt)
		}
		prev := int64(-1)
		for i := 0; i < k; i++ {
			x := binary.LittleEndian.Uint64(pos.Data[8*i:])
			if int64(x) <= prev || x >= uint64(n) {
				return nil, fmt.Errorf("position %d not increasing inside [0, %d): %w", x, n, ErrCorrupt)
			}
			prev = int64(x)
			valid[x] = listedValid
		}
	}
	out := &flatPage{n: n, vals: make([]byte, n*bw), def: make([]uint16, n)}
	nvalid := 0
	for i, ok := range valid {
		if !ok {
			out.def[i] = 1
		} else {
			nvalid++
		}
	}
	switch c := p.sparse.GetValues().GetCodec().(type) {
	case *enc23pb.ValuePlane_None:
		if nvalid != 0 {
			return nil, fmt.Errorf("value codec none with %d valid leaves: %w", nvalid, ErrCorrupt)
		}
	case *enc23pb.ValuePlane_Constant:
		if len(c.Constant.Scalar) != bw {
			return nil, fmt.Errorf("constant of %d bytes for %d-byte values: %w", len(c.Constant.Scalar), bw, ErrCorrupt)
		}
		for i, ok := range valid {
			if ok {
				copy(out.vals[i*bw:], c.Constant.Scalar)
			}
		}
	case *enc23pb.ValuePlane_Chunked:
		ch := c.Chunked
		if ch.Levels != nil {
			return nil, fmt.Errorf("sparse chunked values with dense levels: %w", ErrCorrupt)
		}
		m := &enc21pb.MiniBlockLayout{
			ValueCompression: ch.Compression, Dictionary: ch.Dictionary, NumDictionaryItems: ch.NumDictionaryItems,
			NumBuffers: ch.NumBuffers, NumItems: uint64(n), HasLargeChunk: true,
			Layers: []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM},
		}
		dp, err := decodeFlatChunked(m, bufs[:vb], n, bits)
		if err != nil {
			return nil, err
		}
		out.vals = dp.vals
	case *enc23pb.ValuePlane_Zipped:
		z := c.Zipped
		a, ok := z.Addressing.(*enc23pb.ZippedValues_BitsPerValue)
		if !ok || int(a.BitsPerValue) != bits || z.GetCompression().GetFlat() == nil {
			return nil, fmt.Errorf("sparse zipped values other than flat %d-bit: %w", bits, ErrUnsupported)
		}
		if z.NumItems != uint64(nvalid) || len(bufs[0]) != nvalid*bw {
			return nil, fmt.Errorf("sparse zipped page holds %d bytes for %d valid values: %w", len(bufs[0]), nvalid, ErrCorrupt)
		}
		j := 0
		for i, ok := range valid {
			if ok {
				copy(out.vals[i*bw:], bufs[0][j*bw:(j+1)*bw])
				j++
			}
		}
	default:
		return nil, fmt.Errorf("sparse value codec %T: %w", c, ErrUnsupported)
	}
	return out, nil
}
