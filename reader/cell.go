package reader

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// One reader per cell kind. Every read (ReadAll, ReadRange, the stream,
// Take) cuts its rows into element windows per page (leafRead.read) and
// hands each page's windows, in order, to the reader of that page's cell:
//
//   - sparseCell: the page's structure is loaded and cached once
//     (sparseMetaFor); windows cut it and read only their values.
//   - denseCell (chunked and zipped pages that address rows): the cached
//     chunk or record addressing (denseMetaFor) serves windows; a large
//     take gathers chunks or the whole page instead (take_gather.go); a
//     window covering the page decodes it whole.
//   - constantCell: rows not backed by stored values, never decoded whole.
//   - wholeCell: every other page (legacy layouts, chunked pages with lists
//     and no repetition index) is decoded whole once per call and sliced.
//
// A cell appends Arrow arrays of its windows' rows, in order; the leaf's
// arrays are joined once. How a cell serves its windows is its own
// business: the pipeline neither knows nor cares.

// rowRun is rows [start, end) of a read.
type rowRun struct{ start, end int64 }

// cellReader reads element windows of one page of the leaf being read.
// wins are sorted, disjoint, non-empty and inside the page.
type cellReader interface {
	read(lr *leafRead, p *page, wins [][2]uint64, dst []arrow.Array) ([]arrow.Array, error)
}

// errNoJoin reports windows whose values cannot be joined into one block
// (packed struct fields, fixed-size lists whose items are not stored): the
// cell then reads its windows one by one.
var errNoJoin = errors.New("values of windows cannot be joined")

// cellFor returns the reader of page p's cell.
func (f *File) cellFor(p *page) cellReader {
	switch {
	case p.sparse != nil:
		return sparseCell{}
	case p.layout.GetConstantLayout() != nil:
		return constantCell{}
	case f.denseWindowed(p):
		return denseCell{}
	}
	return wholeCell{}
}

// leafRead is one read of one physical column: the projected types of its
// path, its pages, the call's cache, and the arrays read so far.
type leafRead struct {
	f        *File
	ci, at   int // the column, and the index of the page being read
	path     []structural.Step
	types    []arrow.DataType
	leafType arrow.DataType
	dims     uint64
	pages    []*page
	cache    pageCache
	// sliced: some part is a sub-range of a cached whole page (its buffers
	// are the page's), so even a single part must be copied out.
	sliced bool
}

// build unravels decoded levels of elems elements and builds the projected
// array of the path.
func (lr *leafRead) build(pd *pageData, elems int) (arrow.Array, error) {
	if len(pd.layers) != len(lr.path) {
		return nil, fmt.Errorf("page has %d layers, column path %d: %w", len(pd.layers), len(lr.path), ErrCorrupt)
	}
	lds, err := structural.UnravelPath(pd.layers, lr.path, pd.rep, pd.def, elems, pd.numVisible)
	if err != nil {
		return nil, err
	}
	return buildLeafArray(lr.types, lr.path, lr.leafType, pd, lds)
}

// eachWindow reads windows one by one with one.
func eachWindow(wins [][2]uint64, dst []arrow.Array, one func(a, b uint64) (arrow.Array, error)) ([]arrow.Array, error) {
	for _, w := range wins {
		a, err := one(w[0], w[1])
		if err != nil {
			return dst, err
		}
		dst = append(dst, a)
	}
	return dst, nil
}

// sparseUnjoined counts the reads of several windows of a sparse page
// whose values could not be joined (one array built per window).
var sparseUnjoined atomic.Int64

// sparseCell reads sparse pages: the windows' structure is cut from the
// cached structure and their values joined into one array when they can be.
type sparseCell struct{}

func (sparseCell) read(lr *leafRead, p *page, wins [][2]uint64, dst []arrow.Array) ([]arrow.Array, error) {
	if len(wins) > 1 && !lr.f.paths.noSparseJoin {
		a, err := lr.f.decodeSparseWindows(p, lr.types, lr.path, lr.leafType, wins, lr.cache)
		if err == nil {
			return append(dst, a), nil
		}
		if !errors.Is(err, errNoJoin) {
			return dst, err
		}
		sparseUnjoined.Add(1)
	}
	return eachWindow(wins, dst, func(a, b uint64) (arrow.Array, error) {
		lds, pd, err := lr.f.decodeSparseWindow(p, lr.path, a, b, lr.cache)
		if err != nil {
			return nil, err
		}
		return buildLeafArray(lr.types, lr.path, lr.leafType, pd, lds)
	})
}

// denseCell reads dense chunked and zipped pages that address rows.
type denseCell struct{}

func (denseCell) read(lr *leafRead, p *page, wins [][2]uint64, dst []arrow.Array) ([]arrow.Array, error) {
	if len(wins) == 1 && wins[0][0] == 0 && wins[0][1] == p.rows {
		return wholeCell{}.read(lr, p, wins, dst)
	}
	f := lr.f
	if mode := f.gatherMode(p, lr.path, len(wins), windowRows(wins), lr.dims); mode != gatherWindows {
		a, ok, err := f.gather(mode, p, lr.types, lr.path, lr.leafType, wins, lr.cache)
		if err != nil {
			return dst, err
		}
		if ok {
			return append(dst, a), nil
		}
	}
	a, err := f.decodeWindows(p, lr, wins)
	if err == nil {
		return append(dst, a), nil
	}
	if !errors.Is(err, errNoJoin) {
		return dst, err
	}
	return eachWindow(wins, dst, func(a, b uint64) (arrow.Array, error) {
		pd, err := f.decodeDenseWindow(p, a, b, lr.cache)
		if err != nil {
			return nil, err
		}
		return lr.build(pd, int(b-a))
	})
}

// constantCell reads dense constant and no-values pages.
type constantCell struct{}

func (constantCell) read(lr *leafRead, p *page, wins [][2]uint64, dst []arrow.Array) ([]arrow.Array, error) {
	bufs, err := lr.f.pageBuffers(p)
	if err != nil {
		return dst, err
	}
	c := p.layout.GetConstantLayout()
	return eachWindow(wins, dst, func(a, b uint64) (arrow.Array, error) {
		pd, err := decodeConstantWindow(c, bufs, p.rows, a, b)
		if err != nil {
			return nil, err
		}
		return lr.build(pd, int(b-a))
	})
}

// wholeCell decodes a page whole, once per call (the call's cache keeps
// it), and slices the windows out of it.
type wholeCell struct{}

func (wholeCell) read(lr *leafRead, p *page, wins [][2]uint64, dst []arrow.Array) ([]arrow.Array, error) {
	whole, ok := lr.cache.arrays[[2]int{lr.ci, lr.at}]
	if !ok {
		bufs, err := lr.f.pageBuffers(p)
		if err != nil {
			return dst, err
		}
		pd, err := decodeDense(p, bufs)
		if err != nil {
			return dst, err
		}
		if whole, err = lr.build(pd, int(p.rows)); err != nil {
			return dst, err
		}
		lr.cache.arrays[[2]int{lr.ci, lr.at}] = whole
	}
	if uint64(whole.Len()) != p.rows/lr.dims {
		return dst, fmt.Errorf("decoded to %d rows, holds %d: %w", whole.Len(), p.rows/lr.dims, ErrCorrupt)
	}
	for _, w := range wins {
		a, b := int64(w[0]/lr.dims), int64(w[1]/lr.dims)
		if a == 0 && b == int64(whole.Len()) {
			whole.Retain()
			dst = append(dst, whole)
			continue
		}
		lr.sliced = true
		dst = append(dst, array.NewSlice(whole, a, b))
	}
	return dst, nil
}

// joinable reports whether two value blocks have one form (width, item
// validity layers present) and can be concatenated.
func joinable(a, b values.Block) bool {
	if a.Bits != b.Bits || a.Variable() != b.Variable() || len(a.ItemValid) != len(b.ItemValid) {
		return false
	}
	for k := range a.ItemValid {
		if (a.ItemValid[k] == nil) != (b.ItemValid[k] == nil) {
			return false
		}
	}
	return true
}
