package reader

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

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

// sparseSequences lists, in buffer order, the block-encoded sequences of a
// sparse structure: list layers give non-empty positions, counts and
// validity; validity and fixed-size-list layers their validity.
func sparseSequences(s *enc23pb.SparseStructure) ([]*enc21pb.CompressiveEncoding, error) {
	var out []*enc21pb.CompressiveEncoding
	for _, l := range s.Layers {
		switch x := l.GetLayer().(type) {
		case *enc23pb.SparseStructuralLayer_Validity:
			out = append(out, x.Validity.GetPositions())
		case *enc23pb.SparseStructuralLayer_List:
			out = append(out, x.List.GetNonEmptyPositions(), x.List.GetCounts(), x.List.GetValidity().GetPositions())
		case *enc23pb.SparseStructuralLayer_FixedSizeList:
			out = append(out, x.FixedSizeList.GetValidity().GetPositions())
		default:
			return nil, fmt.Errorf("sparse layer without a kind: %w", ErrCorrupt)
		}
	}
	for _, e := range out {
		if e == nil {
			return nil, fmt.Errorf("sparse sequence without an encoding: %w", ErrCorrupt)
		}
	}
	return out, nil
}

// validateSparse checks that a sparse planar page has exactly the buffers of
// its value plane plus one per structural sequence with a payload.
func validateSparse(p *page) error {
	s := p.sparse.GetStructure().GetSparse()
	if len(s.Layers) == 0 {
		return fmt.Errorf("sparse structure without layers: %w", ErrCorrupt)
	}
	// Trivial structure is always dense and degenerate: a sparse page must
	// have a list layer or some null.
	trivial := true
	for _, l := range s.Layers {
		var v *enc23pb.SparseValiditySet
		switch x := l.GetLayer().(type) {
		case *enc23pb.SparseStructuralLayer_List:
			trivial = false
		case *enc23pb.SparseStructuralLayer_FixedSizeList:
			v = x.FixedSizeList.GetValidity()
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
	seqs, err := sparseSequences(s)
	if err != nil {
		return err
	}
	want := vb
	for _, e := range seqs {
		if values.HasPayload(e) {
			want++
		}
	}
	if len(p.buffers) != want {
		return fmt.Errorf("sparse page has %d buffers, want %d: %w", len(p.buffers), want, ErrCorrupt)
	}
	return nil
}

// seqReader hands out the payloads of the structural sequences in order.
type seqReader struct {
	bufs [][]byte
	next int
}

func (r *seqReader) u64s(e *enc21pb.CompressiveEncoding, n uint64, what string) ([]uint64, error) {
	var payload []byte
	if values.HasPayload(e) {
		if r.next >= len(r.bufs) {
			return nil, fmt.Errorf("%s: missing buffer: %w", what, ErrCorrupt)
		}
		payload = r.bufs[r.next]
		r.next++
	}
	if n == 0 {
		return nil, nil
	}
	if n > 1<<32 || !backed(n, uint64(len(payload))) {
		return nil, fmt.Errorf("%s: %d values from %d bytes: %w", what, n, len(payload), ErrCorrupt)
	}
	b, err := values.DecodeBlock(e, payload, int(n))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if b.Bits != 64 {
		return nil, fmt.Errorf("%s of %d bits: %w", what, b.Bits, ErrCorrupt)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b.Data[8*i:])
	}
	return out, nil
}

// positions decodes a strictly increasing position set inside [0, domain).
func (r *seqReader) positions(e *enc21pb.CompressiveEncoding, n uint64, domain int, what string) ([]uint64, error) {
	if n > uint64(domain) {
		return nil, fmt.Errorf("%s: %d positions in a domain of %d: %w", what, n, domain, ErrCorrupt)
	}
	ps, err := r.u64s(e, n, what)
	if err != nil {
		return nil, err
	}
	for i, x := range ps {
		if x >= uint64(domain) || (i > 0 && x <= ps[i-1]) {
			return nil, fmt.Errorf("%s: position %d not increasing inside [0, %d): %w", what, x, domain, ErrCorrupt)
		}
	}
	return ps, nil
}

func (r *seqReader) validity(v *enc23pb.SparseValiditySet, domain int, what string) ([]bool, error) {
	if v == nil {
		return nil, fmt.Errorf("%s without validity: %w", what, ErrCorrupt)
	}
	ps, err := r.positions(v.GetPositions(), v.NumPositions, domain, what+" validity")
	if err != nil {
		return nil, err
	}
	switch v.Meaning {
	case enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS:
		if len(ps) == 0 {
			return nil, nil
		}
		valid := make([]bool, domain)
		for i := range valid {
			valid[i] = true
		}
		for _, x := range ps {
			valid[x] = false
		}
		return valid, nil
	case enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS:
		valid := make([]bool, domain)
		for _, x := range ps {
			valid[x] = true
		}
		return valid, nil
	}
	return nil, fmt.Errorf("%s validity meaning %d: %w", what, v.Meaning, ErrCorrupt)
}

// maxSparseSlots bounds every domain of a sparse page.
const maxSparseSlots = 1 << 31

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
	s := p.sparse.GetStructure().GetSparse()
	if len(s.Layers) != len(path) {
		return nil, fmt.Errorf("sparse page has %d layers, column path %d: %w", len(s.Layers), len(path), ErrCorrupt)
	}
	scale := uint64(1)
	for _, l := range s.Layers {
		if fl := l.GetFixedSizeList(); fl != nil {
			if fl.Dimension == 0 || fl.Dimension > 1<<20 || scale > maxSparseSlots/fl.Dimension {
				return nil, fmt.Errorf("sparse fixed-size list of dimension %d: %w", fl.Dimension, ErrCorrupt)
			}
			scale *= fl.Dimension
		}
	}
	if p.rows%scale != 0 {
		return nil, fmt.Errorf("page of %d elements is not a multiple of the fixed-size-list scale %d: %w", p.rows, scale, ErrCorrupt)
	}
	// Every slot of the page's domains is allocated for: the slots must be
	// backed by the page's bytes (beyond a fixed allowance).
	var pageBytes uint64
	for _, b := range bufs {
		pageBytes += uint64(len(b))
	}
	if !backed(p.rows, pageBytes) {
		return nil, fmt.Errorf("sparse page of %d elements in %d bytes: %w", p.rows, pageBytes, ErrCorrupt)
	}
	domain := int(p.rows / scale)
	vb, _ := sparseValueBuffers(p.sparse.GetValues())
	sr := &seqReader{bufs: bufs[vb:]}
	lds := make([]structural.LayerData, len(path))
	for i, l := range s.Layers {
		ld := structural.LayerData{Len: domain}
		var err error
		switch x := l.GetLayer().(type) {
		case *enc23pb.SparseStructuralLayer_Validity:
			if path[i].Kind == structural.StepList || path[i].Kind == structural.StepFSL {
				return nil, fmt.Errorf("sparse validity layer at a %v step: %w", path[i].Kind, ErrCorrupt)
			}
			if ld.Valid, err = sr.validity(x.Validity, domain, "validity layer"); err != nil {
				return nil, err
			}
			ld.Layer = structural.AllValidItem
			if ld.Valid != nil {
				ld.Layer = structural.NullableItem
			}
		case *enc23pb.SparseStructuralLayer_List:
			if path[i].Kind != structural.StepList {
				return nil, fmt.Errorf("sparse list layer at a %v step: %w", path[i].Kind, ErrCorrupt)
			}
			lst := x.List
			if lst.NumChildSlots > maxSparseSlots || !backed(lst.NumChildSlots, pageBytes) {
				return nil, fmt.Errorf("list of %d child slots: %w", lst.NumChildSlots, ErrCorrupt)
			}
			ne, err := sr.positions(lst.GetNonEmptyPositions(), lst.NumNonEmptyPositions, domain, "list non-empty")
			if err != nil {
				return nil, err
			}
			counts, err := sr.u64s(lst.GetCounts(), lst.NumNonEmptyPositions, "list counts")
			if err != nil {
				return nil, err
			}
			if ld.Valid, err = sr.validity(lst.GetValidity(), domain, "list"); err != nil {
				return nil, err
			}
			ld.Layer = structural.AllValidList
			if ld.Valid != nil {
				ld.Layer = structural.NullableList
			}
			ld.Offsets = make([]int32, domain+1)
			var total uint64
			k := 0
			for slot := 0; slot < domain; slot++ {
				if k < len(ne) && ne[k] == uint64(slot) {
					if counts[k] == 0 || (ld.Valid != nil && !ld.Valid[slot]) {
						return nil, fmt.Errorf("list slot %d is non-empty with count %d: %w", slot, counts[k], ErrCorrupt)
					}
					total += counts[k]
					if total > lst.NumChildSlots {
						return nil, fmt.Errorf("list counts exceed %d child slots: %w", lst.NumChildSlots, ErrCorrupt)
					}
					k++
				}
				ld.Offsets[slot+1] = int32(total)
			}
			if total != lst.NumChildSlots {
				return nil, fmt.Errorf("list counts sum to %d, child slots %d: %w", total, lst.NumChildSlots, ErrCorrupt)
			}
			domain = int(lst.NumChildSlots)
		case *enc23pb.SparseStructuralLayer_FixedSizeList:
			if path[i].Kind != structural.StepFSL || uint64(path[i].Dim) != x.FixedSizeList.Dimension {
				return nil, fmt.Errorf("sparse fixed-size-list layer at a %v step: %w", path[i].Kind, ErrCorrupt)
			}
			if ld.Valid, err = sr.validity(x.FixedSizeList.GetValidity(), domain, "fixed-size list"); err != nil {
				return nil, err
			}
			ld.Layer = structural.AllValidItem
			if ld.Valid != nil {
				ld.Layer = structural.NullableItem
			}
			ld.Dim = int(x.FixedSizeList.Dimension)
			if uint64(domain)*uint64(ld.Dim) > maxSparseSlots || !backed(uint64(domain)*uint64(ld.Dim), pageBytes) {
				return nil, fmt.Errorf("sparse fixed-size list of %d x %d slots: %w", domain, ld.Dim, ErrCorrupt)
			}
			domain *= ld.Dim
		}
		lds[i] = ld
	}
	if sr.next != len(sr.bufs) {
		return nil, fmt.Errorf("sparse page has %d unused structural buffers: %w", len(sr.bufs)-sr.next, ErrCorrupt)
	}
	return lds, nil
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
func materialized(lds []structural.LayerData) []bool {
	alive := make([]bool, lds[0].Len)
	for i := range alive {
		alive[i] = true
	}
	for _, ld := range lds {
		for i := range alive {
			if ld.Valid != nil && !ld.Valid[i] {
				alive[i] = false
			}
		}
		switch {
		case ld.Offsets != nil:
			next := make([]bool, ld.Offsets[len(ld.Offsets)-1])
			for i := 0; i < ld.Len; i++ {
				for j := ld.Offsets[i]; j < ld.Offsets[i+1]; j++ {
					next[j] = alive[i]
				}
			}
			alive = next
		case ld.Dim > 0:
			next := make([]bool, ld.Len*ld.Dim)
			for i := range next {
				next[i] = alive[i/ld.Dim]
			}
			alive = next
		}
	}
	return alive
}

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
	out.Data = make([]byte, len(alive)*w)
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
	for i, a := range alive {
		if !a {
			continue
		}
		copy(out.Data[i*w:], in.Data[j*w:(j+1)*w])
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

// format21Zipped re-expresses sparse zipped values as a FullZip description
// without control words.
func format21Zipped(z *enc23pb.ZippedValues) (*enc21pb.FullZipLayout, error) {
	if z.Levels != nil {
		return nil, fmt.Errorf("sparse zipped values with dense levels: %w", ErrCorrupt)
	}
	return format.FullZipFromZipped(z, []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM})
}
