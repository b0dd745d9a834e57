package structural

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/values"
)

// ErrCorruptSparse reports a sparse structure (its layers, sets or their
// payloads) that no writer could have produced.
var ErrCorruptSparse = errors.New("planar/structural: corrupt sparse structure")

func sparseCorrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorruptSparse}, args...)...)
}

// maxSparseSlots bounds every domain of a sparse page.
const maxSparseSlots = 1 << 31

// A page may claim more slots than its bytes hold (a list layer of empty
// lists stores almost nothing), but only so many: unbackedAllowance slots
// beyond backedPerByte per byte of the page (the reader's bound for pages
// whose rows are not backed by stored values). Every allocation of ReadSparse
// is proportional to such a count.
const (
	unbackedAllowance = 1 << 22
	backedPerByte     = 1024
)

// backed reports whether count slots or values can come from payload bytes.
func backed(count, payload uint64) bool {
	return count <= unbackedAllowance || payload < (1<<53)/backedPerByte && count-unbackedAllowance <= backedPerByte*payload
}

// sparseSequences lists, in buffer order, the sequences of a sparse
// structure: list layers give non-empty positions, counts and validity;
// validity and fixed-size-list layers their validity.
func sparseSequences(s *enc23pb.SparseStructure) ([]*enc21pb.CompressiveEncoding, error) {
	var out []*enc21pb.CompressiveEncoding
	for i, l := range s.GetLayers() {
		switch x := l.GetLayer().(type) {
		case *enc23pb.SparseStructuralLayer_Validity:
			out = append(out, x.Validity.GetPositions())
		case *enc23pb.SparseStructuralLayer_List:
			out = append(out, x.List.GetNonEmptyPositions(), x.List.GetCounts(), x.List.GetValidity().GetPositions())
		case *enc23pb.SparseStructuralLayer_FixedSizeList:
			out = append(out, x.FixedSizeList.GetValidity().GetPositions())
		default:
			return nil, sparseCorrupt("layer %d without a kind", i)
		}
	}
	for _, e := range out {
		if e == nil {
			return nil, sparseCorrupt("sequence without an encoding")
		}
	}
	return out, nil
}

// SparseBuffers is the number of page buffers the sets of a sparse
// structure take (one per sequence with a payload).
func SparseBuffers(s *enc23pb.SparseStructure) (int, error) {
	seqs, err := sparseSequences(s)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range seqs {
		if values.HasPayload(e) {
			n++
		}
	}
	return n, nil
}

// ReadSparse decodes a sparse structure into one LayerData per step of
// path, outer-most first: per layer its validity (nil when every slot is
// valid), list offsets and fixed-size-list dimension. rows is the page's row
// count as stored (rows times every structural fixed-size-list dimension),
// bufs exactly the structure's buffers in order, and pageBytes the size of
// the whole page, which bounds what a corrupt page can make ReadSparse
// allocate.
//
// Every invariant is checked: layer kinds match the path, sequences have a
// form Lance's sequence decoder accepts, positions are strictly increasing
// inside their domain, counts are positive, sum to the child slots and
// belong to valid slots, and the buffers are all used. Errors wrap
// ErrCorruptSparse.
func ReadSparse(s *enc23pb.SparseStructure, bufs [][]byte, rows uint64, path []Step, pageBytes uint64) ([]LayerData, error) {
	layers := s.GetLayers()
	if len(layers) == 0 || len(layers) != len(path) {
		return nil, sparseCorrupt("%d layers for a column path of %d steps", len(layers), len(path))
	}
	scale := uint64(1)
	for _, l := range layers {
		if fl := l.GetFixedSizeList(); fl != nil {
			if fl.Dimension == 0 || fl.Dimension > 1<<20 || scale > maxSparseSlots/fl.Dimension {
				return nil, sparseCorrupt("fixed-size list of dimension %d", fl.Dimension)
			}
			scale *= fl.Dimension
		}
	}
	if rows%scale != 0 {
		return nil, sparseCorrupt("page of %d elements is not a multiple of the fixed-size-list scale %d", rows, scale)
	}
	if rows > maxSparseSlots || !backed(rows, pageBytes) {
		return nil, sparseCorrupt("page of %d elements in %d bytes", rows, pageBytes)
	}
	domain := int(rows / scale)
	sr := &seqReader{bufs: bufs, pageBytes: pageBytes}
	lds := make([]LayerData, len(path))
	for i, l := range layers {
		ld := LayerData{Len: domain}
		var err error
		switch x := l.GetLayer().(type) {
		case *enc23pb.SparseStructuralLayer_Validity:
			if k := path[i].Kind; k != StepStruct && k != StepLeaf {
				return nil, sparseCorrupt("validity layer at a %v step", k)
			}
			if ld.Valid, err = sr.validity(x.Validity, domain, "validity layer"); err != nil {
				return nil, err
			}
			ld.Layer = itemLayer(ld.Valid)
		case *enc23pb.SparseStructuralLayer_List:
			if path[i].Kind != StepList {
				return nil, sparseCorrupt("list layer at a %v step", path[i].Kind)
			}
			if ld, err = sr.list(x.List, domain); err != nil {
				return nil, err
			}
			domain = int(x.List.NumChildSlots)
		case *enc23pb.SparseStructuralLayer_FixedSizeList:
			fl := x.FixedSizeList
			if path[i].Kind != StepFSL || uint64(path[i].Dim) != fl.Dimension {
				return nil, sparseCorrupt("fixed-size-list layer of dimension %d at a %v step of dimension %d", fl.Dimension, path[i].Kind, path[i].Dim)
			}
			if ld.Valid, err = sr.validity(fl.GetValidity(), domain, "fixed-size list"); err != nil {
				return nil, err
			}
			ld.Layer = itemLayer(ld.Valid)
			ld.Dim = int(fl.Dimension)
			child := uint64(domain) * fl.Dimension
			if child > maxSparseSlots || !backed(child, pageBytes) {
				return nil, sparseCorrupt("fixed-size list of %d x %d slots", domain, ld.Dim)
			}
			domain = int(child)
		default:
			return nil, sparseCorrupt("layer %d without a kind", i)
		}
		lds[i] = ld
	}
	if sr.next != len(sr.bufs) {
		return nil, sparseCorrupt("%d structural buffers, %d used", len(sr.bufs), sr.next)
	}
	return lds, nil
}

func itemLayer(valid []bool) Layer {
	if valid != nil {
		return NullableItem
	}
	return AllValidItem
}

// validity decodes a validity set over domain slots (nil: all valid).
func (r *seqReader) validity(v *enc23pb.SparseValiditySet, domain int, what string) ([]bool, error) {
	if v == nil {
		return nil, sparseCorrupt("%s without validity", what)
	}
	nullPositions := false
	switch v.Meaning {
	case enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS:
		nullPositions = true
	case enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS:
	default:
		return nil, sparseCorrupt("%s validity meaning %d", what, v.Meaning)
	}
	ps, err := r.positions(v.GetPositions(), v.NumPositions, domain, what+" validity")
	if err != nil {
		return nil, err
	}
	if nullPositions && ps.n == 0 {
		return nil, nil
	}
	valid := make([]bool, domain)
	if nullPositions {
		bitmap.FillTrue(valid)
	}
	// (positions checked inside the domain)
	if ps.data == nil {
		for i := 0; i < ps.n; i++ {
			valid[ps.at(i)] = !nullPositions
		}
		return valid, nil
	}
	d := ps.data[:8*ps.n]
	for i := 0; i+8 <= len(d); i += 8 {
		valid[binary.LittleEndian.Uint64(d[i:])] = !nullPositions
	}
	return valid, nil
}

// list decodes a list layer over domain slots.
func (r *seqReader) list(l *enc23pb.SparseListLayer, domain int) (LayerData, error) {
	ld := LayerData{Len: domain}
	if l.NumChildSlots > math.MaxInt32 || !backed(l.NumChildSlots, r.pageBytes) {
		return ld, sparseCorrupt("list of %d child slots", l.NumChildSlots)
	}
	ne, err := r.positions(l.GetNonEmptyPositions(), l.NumNonEmptyPositions, domain, "list non-empty")
	if err != nil {
		return ld, err
	}
	counts, err := r.read(l.GetCounts(), l.NumNonEmptyPositions, "list counts")
	if err != nil {
		return ld, err
	}
	if ld.Valid, err = r.validity(l.GetValidity(), domain, "list"); err != nil {
		return ld, err
	}
	ld.Layer = AllValidList
	if ld.Valid != nil {
		ld.Layer = NullableList
	}
	ld.Offsets = make([]int32, domain+1)
	var total uint64
	slot := 0
	for k := 0; k < ne.n; k++ {
		p, c := int(ne.at(k)), counts.at(k)
		if c == 0 || (ld.Valid != nil && !ld.Valid[p]) {
			return ld, sparseCorrupt("list slot %d is non-empty with count %d", p, c)
		}
		if c > l.NumChildSlots-total {
			return ld, sparseCorrupt("list counts exceed %d child slots", l.NumChildSlots)
		}
		for ; slot < p; slot++ {
			ld.Offsets[slot+1] = int32(total)
		}
		total += c
		ld.Offsets[p+1] = int32(total)
		slot = p + 1
	}
	for ; slot < domain; slot++ {
		ld.Offsets[slot+1] = int32(total)
	}
	if total != l.NumChildSlots {
		return ld, sparseCorrupt("list counts sum to %d, child slots %d", total, l.NumChildSlots)
	}
	return ld, nil
}
