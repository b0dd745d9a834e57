package reader

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Sparse fixed-width pages: the pages of a flat nullable column of
// fixed-width rows (values, or fixed-size lists of them) written sparse
// with zipped values store only their valid rows, each as Arrow lays it
// out. A read that covers several such pages whole scatters every page's
// rows straight into their places in one values buffer, the pages side by
// side: no page array that a join would copy again. A half-null 768-wide
// embedding column cut into 8 MiB pages (12 pages, 201 MB of Arrow values)
// allocated 481 MB and read in 118 ms on two cores that way; one buffer
// takes what a single page does.

// sparsePageRuns counts the runs readSparsePages read (tests check it).
var sparsePageRuns atomic.Int64

// sparsePage is what readSparsePages learns of one page before reading
// its values.
type sparsePage struct {
	m      *sparseMeta
	layer  structural.Layer
	valid  []bool // the rows' validity, nil when all are valid
	s0, s1 int    // the page's leaf slots
}

// readSparsePages reads pages (each covered whole) of a flat column of
// fixed-width rows into one array, or returns ok false when some page is
// not a sparse page of zipped rows of that width without item validity
// (the caller then decodes page by page).
func (lr *leafRead) readSparsePages(pages []*page) (out arrow.Array, ok bool, err error) {
	f := lr.f
	rowBytes := rawRowBytes(lr.leafType)
	if f.paths.noSparsePages || rowBytes == 0 || len(pages) < 2 {
		return nil, false, nil
	}
	for _, p := range pages {
		if p.sparse == nil || p.sparse.GetValues().GetZipped() == nil {
			return nil, false, nil
		}
	}
	// The structure of every page first: the rows' validity and how many
	// rows are stored, which sizes the values buffer.
	sp := make([]sparsePage, len(pages))
	err = par.Each(len(pages), func(i int) error {
		p := pages[i]
		m, err := f.sparseMetaFor(p, lr.path)
		if err != nil {
			return err
		}
		if m.width != uint64(rowBytes) || m.fsst != nil || m.scale != 1 {
			return nil
		}
		lds, s0, s1, err := m.window(p, 0, p.rows)
		if err != nil {
			return err
		}
		if len(lds) != 1 || lds[0].Len != int(p.rows) || s1-s0 != int(p.rows) || lds[0].Offsets != nil {
			return nil
		}
		sp[i] = sparsePage{m: m, layer: lds[0].Layer, valid: lds[0].Valid, s0: s0, s1: s1}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	at := make([]int, len(pages)+1) // first row of each page in the run
	stored := 0
	for i, s := range sp {
		if s.m == nil || s.layer != sp[0].layer {
			return nil, false, nil
		}
		at[i+1] = at[i] + int(pages[i].rows)
		stored += s.m.ordinal(s.s1) - s.m.ordinal(s.s0)
	}
	rows := at[len(pages)]
	if uint64(rows) > uint64(f.size)*8 {
		return nil, false, nil // more slots than the file can describe: the page path reports it
	}
	dst := bulk.ZeroedFor(rows*rowBytes, stored, rowBytes)
	plain := make([]bool, len(pages))
	dims := make([][]int, len(pages))
	err = par.Each(len(pages), func(i int) error {
		p, s := pages[i], sp[i]
		v, err := f.zippedSlots(p, s.m, s.s0, s.s1, pageCache{})
		if err != nil {
			return err
		}
		if v.Variable() || v.Bits != 8*rowBytes || v.NullItems || len(v.Data) != v.N*rowBytes || !sameDims(v.Dims, lr.leafType) {
			return nil
		}
		for _, iv := range v.ItemValid {
			if iv != nil {
				return nil
			}
		}
		alive := s.m.aliveSlots(s.s0, s.s1)
		if bitmap.CountTrue(alive) != v.N {
			return nil
		}
		scatterRows(dst[at[i]*rowBytes:at[i+1]*rowBytes], v.Data, alive, rowBytes)
		plain[i], dims[i] = true, v.Dims
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	for _, ok := range plain {
		if !ok {
			return nil, false, nil
		}
	}
	ld := structural.LayerData{Layer: sp[0].layer, Len: rows}
	for _, s := range sp {
		if s.valid != nil {
			ld.Valid = make([]bool, rows)
			break
		}
	}
	for i, s := range sp {
		switch {
		case ld.Valid == nil:
		case s.valid == nil:
			bitmap.FillTrue(ld.Valid[at[i]:at[i+1]])
		default:
			copy(ld.Valid[at[i]:at[i+1]], s.valid)
		}
	}
	pd := &pageData{numVisible: rows, vals: values.Block{N: rows, Bits: 8 * rowBytes, Dims: dims[0], Data: dst}}
	if out, err = buildLeafArray(lr.types, lr.path, lr.leafType, pd, []structural.LayerData{ld}); err != nil {
		return nil, false, err
	}
	sparsePageRuns.Add(1)
	return out, true, nil
}
