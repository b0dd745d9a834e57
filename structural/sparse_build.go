package structural

import (
	"fmt"
	"slices"

	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
)

// BuildSparse encodes the structure of a page, one LayerData per step of
// path (outer-most first, as UnravelPath returns it), as Lance 14's sparse
// structural layers and the payloads of their sequences, in buffer order.
//
// A struct or leaf step gives a validity layer, a list step a list layer
// (the positions of its non-empty slots, their child counts and its
// validity), a structural fixed-size-list step a fixed-size-list layer (its
// dimension and validity). Per layer, in field order, the non-empty
// positions, the counts and the validity add a buffer each unless they are
// stored in the descriptor alone. Sequences and validity polarity are chosen
// as Lance chooses them (see sequence.go and sparse_validity.go), so a page
// Lance writes and the same structure built here have identical layers and
// buffers.
//
// The layers must be consistent: each layer has as many slots as its parent
// has child slots, list offsets start at 0, never decrease and give null
// slots no children, fixed-size-list dimensions match the path.
func BuildSparse(lds []LayerData, path []Step) (*enc23pb.SparseStructure, [][]byte, error) {
	if len(lds) == 0 || len(lds) != len(path) {
		return nil, nil, fmt.Errorf("structural: %d layers for a path of %d steps", len(lds), len(path))
	}
	// First every layer is checked and its list positions and counts
	// listed; then the sets (positions, counts, validity of every layer)
	// are chosen and encoded side by side, each on its own; then the
	// layers are put together in order.
	outs := make([]layerOut, len(lds))
	var jobs []func() error
	var sizes []int // each job's sequence length, for the order below
	slots := 0
	domain := lds[0].Len
	for i, ld := range lds {
		if ld.Len != domain || ld.Len < 0 {
			return nil, nil, fmt.Errorf("structural: layer %d has %d slots, its parent %d child slots", i, ld.Len, domain)
		}
		if ld.Valid != nil && len(ld.Valid) != ld.Len {
			return nil, nil, fmt.Errorf("structural: layer %d has %d validity entries for %d slots", i, len(ld.Valid), ld.Len)
		}
		o := &outs[i]
		slots += ld.Len
		switch path[i].Kind {
		case StepList:
			pos, cnt, err := listNonEmpty(ld)
			if err != nil {
				return nil, nil, fmt.Errorf("structural: layer %d: %w", i, err)
			}
			o.list = &enc23pb.SparseListLayer{NumChildSlots: uint64(ld.Offsets[ld.Len]), NumNonEmptyPositions: uint64(len(pos))}
			jobs = append(jobs, func() (err error) {
				o.list.NonEmptyPositions, o.ne, err = positionSet(pos, uint64(ld.Len))
				return err
			}, func() (err error) {
				o.list.Counts, o.counts, err = countSet(cnt)
				return err
			})
			sizes = append(sizes, len(pos), len(cnt))
			domain = int(o.list.NumChildSlots)
		case StepFSL:
			if ld.Dim <= 0 || ld.Dim != path[i].Dim {
				return nil, nil, fmt.Errorf("structural: layer %d has dimension %d, the path %d", i, ld.Dim, path[i].Dim)
			}
			domain *= ld.Dim
		case StepStruct, StepLeaf:
		default:
			return nil, nil, fmt.Errorf("structural: path step %d has kind %v", i, path[i].Kind)
		}
		jobs = append(jobs, func() (err error) {
			o.valid, o.vb, err = validitySet(ld.Valid, ld.Len)
			return err
		})
		sizes = append(sizes, ld.Len)
	}
	// The longest sequences start first: a long one started last keeps
	// one core busy alone at the end (a list page's item validity after
	// its positions and counts). Each job writes its own layer's fields,
	// so the order changes nothing else.
	order := make([]int, len(jobs))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return sizes[b] - sizes[a] })
	run := par.Each
	if slots < par.MinValues {
		run = par.InTurn // a small structure: goroutines cost more than they save
	}
	if err := run(len(jobs), func(j int) error { return jobs[order[j]]() }); err != nil {
		return nil, nil, fmt.Errorf("structural: %w", err)
	}
	s := &enc23pb.SparseStructure{Layers: make([]*enc23pb.SparseStructuralLayer, 0, len(lds))}
	var bufs [][]byte
	add := func(p []byte) {
		if p != nil {
			bufs = append(bufs, p)
		}
	}
	for i, o := range outs {
		var layer enc23pb.SparseStructuralLayer
		switch path[i].Kind {
		case StepList:
			add(o.ne)
			add(o.counts)
			o.list.Validity = o.valid
			layer.Layer = &enc23pb.SparseStructuralLayer_List{List: o.list}
		case StepFSL:
			layer.Layer = &enc23pb.SparseStructuralLayer_FixedSizeList{FixedSizeList: &enc23pb.SparseFixedSizeListLayer{
				Dimension: uint64(lds[i].Dim), Validity: o.valid,
			}}
		default:
			layer.Layer = &enc23pb.SparseStructuralLayer_Validity{Validity: o.valid}
		}
		add(o.vb)
		s.Layers = append(s.Layers, &layer)
	}
	return s, bufs, nil
}

// layerOut is one sparse layer as its sets are encoded: the list layer's
// descriptor (list layers), the validity set, and their payloads (nil when
// metadata only).
type layerOut struct {
	list   *enc23pb.SparseListLayer
	valid  *enc23pb.SparseValiditySet
	ne     []byte // non-empty positions
	counts []byte
	vb     []byte // validity positions
}

// BuildSparseDense is BuildSparse over a page's dense levels, unraveled
// along path.
func BuildSparseDense(d Dense, path []Step) (*enc23pb.SparseStructure, [][]byte, error) {
	lds, err := UnravelPath(d.Layers, path, d.Rep, d.Def, d.NumRows, d.NumVisible)
	if err != nil {
		return nil, nil, fmt.Errorf("unraveling own levels: %w", err)
	}
	return BuildSparse(lds, path)
}

// listNonEmpty lists a list layer's non-empty slots and their child
// counts, checking its offsets.
func listNonEmpty(ld LayerData) (pos, cnt []uint64, err error) {
	if len(ld.Offsets) != ld.Len+1 || ld.Offsets[0] != 0 {
		return nil, nil, fmt.Errorf("%d list offsets for %d slots", len(ld.Offsets), ld.Len)
	}
	ne := 0
	for s := 0; s < ld.Len; s++ {
		if ld.Offsets[s+1] != ld.Offsets[s] {
			ne++
		}
	}
	pos, cnt = make([]uint64, 0, ne), make([]uint64, 0, ne)
	for s := 0; s < ld.Len; s++ {
		n := ld.Offsets[s+1] - ld.Offsets[s]
		switch {
		case n < 0:
			return nil, nil, fmt.Errorf("list offsets decrease at slot %d", s)
		case n > 0 && ld.Valid != nil && !ld.Valid[s]:
			return nil, nil, fmt.Errorf("null list slot %d has %d children", s, n)
		case n > 0:
			pos = append(pos, uint64(s))
			cnt = append(cnt, uint64(n))
		}
	}
	return pos, cnt, nil
}

// positionSet encodes strictly increasing positions of a domain: metadata
// only when they are all the slots, one run or one progression (Lance's
// SparsePositionPlan), else as a block-encoded sequence.
func positionSet(xs []uint64, domain uint64) (*enc21pb.CompressiveEncoding, []byte, error) {
	n := uint64(len(xs))
	switch {
	case n == 0:
		return emptyEncoding(), nil, nil
	case xs[0] == 0 && n == domain:
		return progression(0, 1, n), nil, nil
	case xs[n-1]-xs[0]+1 == n:
		return progression(xs[0], 1, n), nil, nil
	}
	if e, ok := symbolic(xs); ok {
		return e, nil, nil
	}
	return encodeSequence(xs)
}

// countSet encodes positive list counts: Constant{} when there are none,
// Constant{count} when they are all one count, else as a block-encoded
// sequence.
func countSet(xs []uint64) (*enc21pb.CompressiveEncoding, []byte, error) {
	if len(xs) == 0 {
		return emptyEncoding(), nil, nil
	}
	same := true
	for _, x := range xs {
		if x != xs[0] {
			same = false
			break
		}
	}
	if same {
		return constantEncoding(64, xs[0]), nil, nil
	}
	return encodeSequence(xs)
}
