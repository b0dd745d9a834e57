package structural

import (
	"errors"
	"fmt"
	"math"

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
// valid), list offsets and fixed-size-list dimension. It is
// ReadSparseIndex expanded over the whole page.
func ReadSparse(s *enc23pb.SparseStructure, bufs [][]byte, rows uint64, path []Step, pageBytes uint64) ([]LayerData, error) {
	x, err := ReadSparseIndex(s, bufs, rows, path, pageBytes)
	if err != nil {
		return nil, err
	}
	lds, _, _ := x.Window(0, x.top)
	return lds, nil
}

// ReadSparseIndex reads the sets of a sparse structure into a SparseIndex.
// rows is the page's row count as stored (rows times every structural
// fixed-size-list dimension), bufs exactly the structure's buffers in
// order, and pageBytes the size of the whole page, which bounds what a
// corrupt page can make it allocate.
//
// Every invariant is checked: layer kinds match the path, sequences have a
// form Lance's sequence decoder accepts, positions are strictly increasing
// inside their domain, counts are positive, sum to the child slots and
// belong to valid slots, and the buffers are all used. Errors wrap
// ErrCorruptSparse.
func ReadSparseIndex(s *enc23pb.SparseStructure, bufs [][]byte, rows uint64, path []Step, pageBytes uint64) (*SparseIndex, error) {
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
	x := &SparseIndex{top: domain, scale: int(scale), layers: make([]indexLayer, len(path))}
	sr := &seqReader{bufs: bufs, pageBytes: pageBytes}
	for i, l := range layers {
		il := &x.layers[i]
		il.slots = domain
		var err error
		switch v := l.GetLayer().(type) {
		case *enc23pb.SparseStructuralLayer_Validity:
			if k := path[i].Kind; k != StepStruct && k != StepLeaf {
				return nil, sparseCorrupt("validity layer at a %v step", k)
			}
			if err = sr.validity(il, v.Validity, "validity layer"); err != nil {
				return nil, err
			}
		case *enc23pb.SparseStructuralLayer_List:
			if path[i].Kind != StepList {
				return nil, sparseCorrupt("list layer at a %v step", path[i].Kind)
			}
			if err = sr.list(il, v.List); err != nil {
				return nil, err
			}
			domain = int(v.List.NumChildSlots)
		case *enc23pb.SparseStructuralLayer_FixedSizeList:
			fl := v.FixedSizeList
			if path[i].Kind != StepFSL || uint64(path[i].Dim) != fl.Dimension {
				return nil, sparseCorrupt("fixed-size-list layer of dimension %d at a %v step of dimension %d", fl.Dimension, path[i].Kind, path[i].Dim)
			}
			if err = sr.validity(il, fl.GetValidity(), "fixed-size list"); err != nil {
				return nil, err
			}
			il.dim = int(fl.Dimension)
			child := uint64(domain) * fl.Dimension
			if child > maxSparseSlots || !backed(child, pageBytes) {
				return nil, sparseCorrupt("fixed-size list of %d x %d slots", domain, il.dim)
			}
			domain = int(child)
		default:
			return nil, sparseCorrupt("layer %d without a kind", i)
		}
	}
	if sr.next != len(sr.bufs) {
		return nil, sparseCorrupt("%d structural buffers, %d used", len(sr.bufs), sr.next)
	}
	if err := sr.run(); err != nil {
		return nil, err
	}
	x.leafSlots = domain
	return x, nil
}

// validity plans the read of the validity set of layer l (over its slots
// set): the item layer kind follows (all valid when it names no null).
func (r *seqReader) validity(l *indexLayer, v *enc23pb.SparseValiditySet, what string) error {
	if v == nil {
		return sparseCorrupt("%s without validity", what)
	}
	switch v.Meaning {
	case enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS:
		l.nulls = true
	case enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS:
	default:
		return sparseCorrupt("%s validity meaning %d", what, v.Meaning)
	}
	if err := r.positionsInto(&l.valid, v.GetPositions(), v.NumPositions, l.slots, what+" validity"); err != nil {
		return err
	}
	r.after = append(r.after, func() error {
		l.layer = NullableItem
		if l.nulls && l.valid.n == 0 {
			l.layer = AllValidItem
		}
		return nil
	})
	return nil
}

// list plans the read of a list layer over l.slots slots: its validity,
// non-empty positions and the running sum of their counts.
func (r *seqReader) list(l *indexLayer, ls *enc23pb.SparseListLayer) error {
	if ls.NumChildSlots > math.MaxInt32 || !backed(ls.NumChildSlots, r.pageBytes) {
		return sparseCorrupt("list of %d child slots", ls.NumChildSlots)
	}
	if err := r.positionsInto(&l.ne, ls.GetNonEmptyPositions(), ls.NumNonEmptyPositions, l.slots, "list non-empty"); err != nil {
		return err
	}
	counts, n := ls.GetCounts(), ls.NumNonEmptyPositions
	if err := r.planDecode(counts, n, "list counts", func(payload []byte) (err error) {
		l.cum, err = decodeCounts(counts, payload, n, ls.NumChildSlots)
		return err
	}); err != nil {
		return err
	}
	if err := r.validity(l, ls.GetValidity(), "list"); err != nil {
		return err
	}
	r.after = append(r.after, func() error {
		l.layer = AllValidList
		if !(l.nulls && l.valid.n == 0) {
			l.layer = NullableList
			if p, ok := nullAmong(&l.ne, &l.valid, l.nulls, l.slots); !ok {
				return sparseCorrupt("list slot %d is non-empty and null", p)
			}
		}
		return nil
	})
	return nil
}

// decodeCounts decodes the counts of a list layer's n non-empty positions
// as their running sum: out[k] is the child slots before the k-th, out[n]
// every child slot. Each count is positive and they sum to childSlots.
// Explicit counts are decoded into out[1:] and summed in place.
func decodeCounts(e *enc21pb.CompressiveEncoding, payload []byte, n, childSlots uint64) ([]uint32, error) {
	switch e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Constant, *enc21pb.CompressiveEncoding_Range:
		c, err := decodeSeq(e, payload, n, "list counts")
		if err != nil {
			return nil, err
		}
		return runningCounts(&c, childSlots)
	}
	if !backed(n, uint64(len(payload))) {
		return nil, sparseCorrupt("list counts: %d values from %d bytes", n, len(payload))
	}
	cum := make([]uint32, n+1)
	d := cum[1:]
	if err := values.DecodeUint32s(e, payload, d); err != nil {
		return nil, sparseCorrupt("list counts: %v", err)
	}
	// Each under 2^32, n of them cannot wrap 64 bits; checked once at the
	// end.
	var total uint64
	var zero uint32 = 1
	for k, c := range d {
		total += uint64(c)
		zero &= min(c, 1)
		d[k] = uint32(total)
	}
	if zero == 0 {
		return nil, sparseCorrupt("a non-empty list slot with count 0")
	}
	if total != childSlots {
		return nil, sparseCorrupt("list counts sum to %d, child slots %d", total, childSlots)
	}
	return cum, nil
}

// runningCounts is decodeCounts for counts that are not stored (a
// constant or a progression).
func runningCounts(counts *seqValues, childSlots uint64) ([]uint32, error) {
	cum := make([]uint32, counts.n+1)
	var total uint64
	for k := 0; k < counts.n; k++ {
		c := counts.at(k)
		if c == 0 {
			return nil, sparseCorrupt("a non-empty list slot with count 0")
		}
		if c > childSlots-total {
			return nil, sparseCorrupt("list counts exceed %d child slots", childSlots)
		}
		total += c
		cum[k+1] = uint32(total)
	}
	if total != childSlots {
		return nil, sparseCorrupt("list counts sum to %d, child slots %d", total, childSlots)
	}
	return cum, nil
}

// nullAmong reports the first of positions ps (inside [0, slots)) that a
// validity set makes null (false when there is one). Explicit sets are
// checked branch-free through a bitmap of the validity positions; the
// offender is looked for only on failure.
func nullAmong(ps, v *posList, nulls bool, slots int) (int, bool) {
	if ps.p != nil && v.p != nil {
		marks := make([]uint64, (slots+63)/64)
		for _, p := range v.p {
			marks[p/64] |= 1 << (p % 64)
		}
		// hit: some position is named; miss: some position is not.
		var hit, miss uint64
		for _, p := range ps.p {
			b := marks[p/64] >> (p % 64) & 1
			hit |= b
			miss |= b ^ 1
		}
		if nulls && hit == 0 || !nulls && miss == 0 {
			return 0, true
		}
	}
	j := 0
	for k := 0; k < ps.n; k++ {
		p := ps.at(k)
		for j < v.n && v.at(j) < p {
			j++
		}
		if (j < v.n && v.at(j) == p) == nulls {
			return p, false
		}
	}
	return 0, true
}
