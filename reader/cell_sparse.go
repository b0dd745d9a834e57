package reader

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

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

// validateSparse checks that a sparse planar page has exactly the buffers of
// its value plane plus one per structural sequence with a payload.
func validateSparse(p *page) error {
	s := p.sparse.GetStructure().GetSparse()
	if len(s.Layers) == 0 {
		return fmt.Errorf("sparse structure without layers: %w", ErrCorrupt)
	}
	// Trivial structure is always dense and degenerate: a sparse page must
	// have a list or structural fixed-size-list layer, or some null (Lance's
	// definition: trivial structure is validity layers without nulls).
	trivial := true
	for _, l := range s.Layers {
		var v *enc23pb.SparseValiditySet
		switch x := l.GetLayer().(type) {
		case *enc23pb.SparseStructuralLayer_List, *enc23pb.SparseStructuralLayer_FixedSizeList:
			trivial = false
		case *enc23pb.SparseStructuralLayer_Validity:
			v = x.Validity
		}
		if v != nil && !(v.Meaning == enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS && v.NumPositions == 0) {
			trivial = false
		}
	}
	if trivial {
		return fmt.Errorf("sparse structure whose every layer is all-valid: %w (%w)", ErrNonCanonical, ErrCorrupt)
	}
	vb, err := sparseValueBuffers(p.sparse.GetValues())
	if err != nil {
		return err
	}
	sb, err := structural.SparseBuffers(s)
	if err != nil {
		return err
	}
	if want := vb + sb; len(p.buffers) != want {
		return fmt.Errorf("sparse page has %d buffers, want %d: %w", len(p.buffers), want, ErrCorrupt)
	}
	return nil
}

// decodeSparse turns a sparse planar page into per-layer structure (outer
// first, matching path) and its leaf values.
func (f *File) decodeSparse(p *page, bufs [][]byte, path []structural.Step) ([]structural.LayerData, *pageData, error) {
	lds, err := sparseLayers(p, bufs, path)
	if err != nil {
		return nil, nil, err
	}
	vb, _ := sparseValueBuffers(p.sparse.GetValues())
	pd, err := sparseValues(p, bufs[:vb], lds)
	if err != nil {
		return nil, nil, err
	}
	return lds, pd, nil
}

// sparseLayers decodes the structural sets of a sparse page (bufs holds
// every page buffer, the value buffers first) into per-layer structure.
func sparseLayers(p *page, bufs [][]byte, path []structural.Step) ([]structural.LayerData, error) {
	ix, err := sparseIndex(p, bufs, path)
	if err != nil {
		return nil, err
	}
	lds, _, _ := ix.Window(0, ix.Rows())
	return lds, nil
}

// sparseIndex reads the structural sets of a sparse page (bufs holds every
// page buffer, the value buffers first, those possibly not read) into an
// index of its structure.
func sparseIndex(p *page, bufs [][]byte, path []structural.Step) (*structural.SparseIndex, error) {
	var pageBytes uint64
	for _, b := range bufs {
		pageBytes += uint64(len(b))
	}
	vb, err := sparseValueBuffers(p.sparse.GetValues())
	if err != nil {
		return nil, err
	}
	if vb > len(bufs) {
		return nil, fmt.Errorf("sparse page has %d buffers, its values %d: %w", len(bufs), vb, ErrCorrupt)
	}
	return structural.ReadSparseIndex(p.sparse.GetStructure().GetSparse(), bufs[vb:], p.rows, path, pageBytes)
}

// sparseValues decodes the value plane of a sparse page (bufs holds the
// value buffers) over the leaf slots of its decoded structure.
func sparseValues(p *page, bufs [][]byte, lds []structural.LayerData) (*pageData, error) {
	last := lds[len(lds)-1]
	leafSlots := last.Len
	switch {
	case last.Offsets != nil:
		leafSlots = int(last.Offsets[last.Len])
	case last.Dim > 0:
		leafSlots = last.Len * last.Dim
	}
	vb := len(bufs)
	pd := &pageData{numVisible: leafSlots}
	switch c := p.sparse.GetValues().GetCodec().(type) {
	case *enc23pb.ValuePlane_None:
		pd.allNull = true
	case *enc23pb.ValuePlane_Constant:
		pd.constant = c.Constant.Scalar
	case *enc23pb.ValuePlane_Chunked:
		ch := c.Chunked
		if ch.Levels != nil {
			return nil, fmt.Errorf("sparse chunked values with dense levels: %w", ErrCorrupt)
		}
		m := &enc21pb.MiniBlockLayout{
			ValueCompression: ch.Compression, Dictionary: ch.Dictionary, NumDictionaryItems: ch.NumDictionaryItems,
			NumBuffers: ch.NumBuffers, NumItems: uint64(leafSlots), HasLargeChunk: true,
			Layers: []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM},
		}
		dp, err := decodeChunkedPage(m, bufs[:vb], leafSlots)
		if err != nil {
			return nil, err
		}
		pd.vals, pd.dict = dp.vals, dp.dict
	case *enc23pb.ValuePlane_Zipped:
		// Only leaf slots valid all the way up are stored.
		alive := materialized(lds)
		n := 0
		for _, a := range alive {
			if a {
				n++
			}
		}
		z := c.Zipped
		if z.NumItems != uint64(n) || z.NumVisibleItems != uint64(n) {
			return nil, fmt.Errorf("sparse zipped page stores %d values, %d materialized: %w", z.NumItems, n, ErrCorrupt)
		}
		fz, err := format21Zipped(z)
		if err != nil {
			return nil, err
		}
		zp, err := decodeZippedPage(fz, bufs[:vb], n)
		if err != nil {
			return nil, err
		}
		if pd.vals, err = scatter(zp.vals, alive); err != nil {
			return nil, err
		}
	case *enc23pb.ValuePlane_Indexed:
		idx, dict, err := decodeIndexed(c.Indexed, bufs[:vb], leafSlots)
		if err != nil {
			return nil, err
		}
		pd.vals, pd.dict = idx, dict
	default:
		return nil, fmt.Errorf("sparse value codec %T: %w", c, ErrUnsupported)
	}
	return pd, nil
}

// materialized marks the leaf slots whose every ancestor slot and own slot
// are valid.
func materialized(lds []structural.LayerData) []bool { return structural.MaterializedMask(lds) }

// scatter spreads the values stored for the alive slots over every slot
// (other slots get zero or empty values).
func scatter(in values.Block, alive []bool) (values.Block, error) {
	out := values.Block{N: len(alive), Bits: in.Bits, Dims: in.Dims}
	j := 0
	if in.Variable() {
		out.Offsets = make([]uint64, 1, len(alive)+1)
		for _, a := range alive {
			if a {
				out.Data = append(out.Data, in.Data[in.Offsets[j]:in.Offsets[j+1]]...)
				j++
			}
			out.Offsets = append(out.Offsets, uint64(len(out.Data)))
		}
		return out, nil
	}
	if in.Bits%8 != 0 {
		return values.Block{}, fmt.Errorf("sparse zipped %d-bit values: %w", in.Bits, ErrUnsupported)
	}
	w := in.Bits / 8
	out.NullItems = in.NullItems
	// The slots not stored stay zero.
	out.Data = bulk.ZeroedFor(len(alive)*w, in.N, w)
	// Fixed-size-list item validity moves with its slot; slots not stored
	// get null items.
	per := make([]int, len(in.ItemValid))
	if len(in.ItemValid) > 0 {
		if len(in.Dims) != len(in.ItemValid) {
			return values.Block{}, fmt.Errorf("item validity of %d layers for %d dimensions: %w", len(in.ItemValid), len(in.Dims), ErrCorrupt)
		}
		out.ItemValid = make([][]byte, len(in.ItemValid))
		d := 1
		for k, iv := range in.ItemValid {
			d *= in.Dims[k]
			per[k] = d
			if iv != nil {
				out.ItemValid[k] = make([]byte, (len(alive)*d+7)/8)
			}
		}
	}
	scatterRows(out.Data, in.Data, alive, w)
	if len(in.ItemValid) == 0 {
		return out, nil
	}
	for i, a := range alive {
		if !a {
			continue
		}
		for k, iv := range in.ItemValid {
			if iv == nil {
				continue
			}
			for b := 0; b < per[k]; b++ {
				if bitutil.BitIsSet(iv, j*per[k]+b) {
					bitutil.SetBit(out.ItemValid[k], i*per[k]+b)
				}
			}
		}
		j++
	}
	return out, nil
}

// scatterRows copies the w-byte rows of src, one after another, to the
// rows of dst whose slots are alive, in order; the other rows of dst are
// left as they are.
func scatterRows(dst, src []byte, alive []bool, w int) {
	var moved bulk.Counter // (the slots' pages fault in on first touch)
	j := 0
	for i, a := range alive {
		if a {
			copy(dst[i*w:(i+1)*w], src[j*w:(j+1)*w])
			j++
			moved.Add(w)
		}
	}
}

// format21Zipped re-expresses sparse zipped values as a FullZip description
// without control words.
func format21Zipped(z *enc23pb.ZippedValues) (*enc21pb.FullZipLayout, error) {
	if z.Levels != nil {
		return nil, fmt.Errorf("sparse zipped values with dense levels: %w", ErrCorrupt)
	}
	return format.FullZipFromZipped(z, []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM})
}
