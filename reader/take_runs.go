package reader

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// A take is read column by column. The runs of a column that follow one
// another in the take and each lie inside one dense chunked or zipped page
// are decoded together: their levels and values are cut from the page's
// decoded chunks (or records) and joined, then unravelled and built into one
// array, so that a take of many scattered rows builds one array per page
// rather than one per row. Other runs (sparse and constant pages, runs
// across pages) are read one by one as windows.

// errNoJoin reports windows whose values cannot be joined into one block
// (packed struct fields, fixed-size lists whose items are not stored).
var errNoJoin = errors.New("values of windows cannot be joined")

// takeRuns reads the rows of runs (n rows in all) of every field.
func (f *File) takeRuns(runs []rowRun, n int64, cache pageCache) (arrow.RecordBatch, error) {
	layout, err := f.fieldLayout()
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, 0, len(layout))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, fc := range layout {
		a, err := f.takeField(fc, runs, n, cache)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", fc.field.Name, err)
		}
		cols = append(cols, a)
	}
	return array.NewRecordBatch(f.schema, cols, n), nil
}

func (f *File) takeField(fc fieldColumns, runs []rowRun, n int64, cache pageCache) (arrow.Array, error) {
	return f.assembleField(fc, func(k, ci int) (arrow.Array, error) {
		return f.takeLeaf(fc.field.Type, fc.paths[k], ci, runs, n, cache)
	})
}

// takeLeaf reads the rows of runs of one physical column.
func (f *File) takeLeaf(top arrow.DataType, path []structural.Step, ci int, runs []rowRun, n int64, cache pageCache) (arrow.Array, error) {
	types, err := pathTypes(top, path)
	if err != nil {
		return nil, err
	}
	leafType := types[len(types)-1]
	dims := f.dims[ci]
	pages := f.columns[ci]
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	// inPage returns the chunked page holding run r whole, or nil.
	inPage := func(r rowRun) *page {
		es, ee := uint64(r.start)*dims, uint64(r.end)*dims
		pi := sortSearchPages(pages, es)
		if pi >= len(pages) {
			return nil
		}
		p := pages[pi]
		if ee > p.firstRow+p.rows || !p.denseWindowed() || p.firstRow%dims != 0 {
			return nil
		}
		return p
	}
	// inSparse returns the sparse page holding run r whole, or nil.
	inSparse := func(r rowRun) *page {
		es, ee := uint64(r.start)*dims, uint64(r.end)*dims
		pi := sortSearchPages(pages, es)
		if pi >= len(pages) || pages[pi].sparse == nil || ee > pages[pi].firstRow+pages[pi].rows {
			return nil
		}
		return pages[pi]
	}
	for i := 0; i < len(runs); {
		if sp := inSparse(runs[i]); sp != nil && sparseJoin {
			var wins [][2]uint64
			first := i
			for ; i < len(runs) && inSparse(runs[i]) == sp; i++ {
				wins = append(wins, [2]uint64{uint64(runs[i].start)*dims - sp.firstRow, uint64(runs[i].end)*dims - sp.firstRow})
			}
			a, err := f.decodeSparseWindows(sp, types, path, leafType, wins, cache)
			switch {
			case errors.Is(err, errNoJoin):
				// Values that cannot be joined: one window a run.
				for _, r := range runs[first:i] {
					a, err := f.readLeaf(top, path, ci, r.start, r.end, cache)
					if err != nil {
						return nil, err
					}
					parts = append(parts, a)
				}
			case err != nil:
				return nil, err
			default:
				parts = append(parts, a)
			}
			continue
		}
		p := inPage(runs[i])
		if p == nil {
			a, err := f.readLeaf(top, path, ci, runs[i].start, runs[i].end, cache)
			if err != nil {
				return nil, err
			}
			parts = append(parts, a)
			i++
			continue
		}
		var wins [][2]uint64
		first := i
		for ; i < len(runs) && inPage(runs[i]) == p; i++ {
			wins = append(wins, [2]uint64{uint64(runs[i].start)*dims - p.firstRow, uint64(runs[i].end)*dims - p.firstRow})
		}
		if rowLevels(path) && f.wholeBetter(p, len(wins), dims) {
			a, ok, err := f.takeFromWhole(p, types, path, leafType, wins, cache)
			if err != nil {
				return nil, err
			}
			if ok {
				parts = append(parts, a)
				continue
			}
		}
		a, err := f.decodeWindows(p, types, path, leafType, wins, cache)
		if errors.Is(err, errNoJoin) {
			// Values that cannot be joined: one window a run.
			for _, r := range runs[first:i] {
				a, err := f.readLeaf(top, path, ci, r.start, r.end, cache)
				if err != nil {
					return nil, err
				}
				parts = append(parts, a)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, a)
	}
	var out arrow.Array
	if len(parts) == 1 && parts[0].Data().Offset() == 0 {
		parts[0].Retain()
		out = parts[0]
	} else if out, err = joinArrays(parts); err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	if int64(out.Len()) != n {
		out.Release()
		return nil, fmt.Errorf("take read %d rows, %d asked: %w", out.Len(), n, ErrCorrupt)
	}
	return out, nil
}

// decodeWindows decodes element windows of a dense chunked or zipped page,
// in order, into one projected array.
func (f *File) decodeWindows(p *page, types []arrow.DataType, path []structural.Step, leafType arrow.DataType, wins [][2]uint64, cache pageCache) (arrow.Array, error) {
	m, err := f.denseMetaFor(p)
	if err != nil {
		return nil, err
	}
	var all *pageData
	var blocks []values.Block
	elems := uint64(0)
	for _, w := range wins {
		var pd *pageData
		if m.mb != nil {
			pd, err = f.chunkedWindowDense(p, m, w[0], w[1], cache)
		} else {
			pd, err = f.zippedWindowDense(p, m, w[0], w[1], cache)
		}
		if err != nil {
			return nil, err
		}
		if pd.vals.NullItems || pd.vals.Children != nil {
			return nil, errNoJoin
		}
		elems += w[1] - w[0]
		if all == nil {
			all = pd
			blocks = append(blocks, pd.vals)
			continue
		}
		all.rep = append(all.rep, pd.rep...)
		all.def = append(all.def, pd.def...)
		all.numVisible += pd.numVisible
		blocks = append(blocks, pd.vals)
	}
	for _, b := range blocks[1:] {
		if !joinable(blocks[0], b) {
			return nil, errNoJoin
		}
	}
	if all.vals, err = concatBlocks(blocks); err != nil {
		return nil, err
	}
	if len(all.layers) != len(path) {
		return nil, fmt.Errorf("page has %d layers, column path %d: %w", len(all.layers), len(path), ErrCorrupt)
	}
	lds, err := structural.UnravelPath(all.layers, path, all.rep, all.def, int(elems), all.numVisible)
	if err != nil {
		return nil, err
	}
	leaf, err := leafArray(leafType, all, lds[len(lds)-1].Valid)
	if err != nil {
		return nil, err
	}
	defer leaf.Release()
	d, err := projected(types, path, lds, leaf)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return array.MakeFromData(d), nil
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

// minWholeWindows keeps small takes on windows whatever the page: a take
// of a few rows reads only their chunks.
const minWholeWindows = 32

// sparseJoin enables decodeSparseWindows for takes (tests compare both).
var sparseJoin = true

// wholePageTake chooses how takes read dense chunked pages: 0 by the
// number of windows (wholeBetter), 1 always whole, -1 never (tests).
var wholePageTake = 0

// wholeBetter reports whether a take of wins windows from chunked page p
// (of a column whose rows are spans of levels, rowLevels)
// is cheaper decoding the whole page and picking its rows: when the
// windows are at least half as many as the chunks, most chunks are
// decoded anyway, and one pass over the page costs less than a window's
// bookkeeping per run. (Measured on 1M random int64 in one page of 256
// chunks: 10,000 rows in 6.1-8.4 ms against 9.4-10.6 by windows; 100 rows
// stay on windows.)
func (f *File) wholeBetter(p *page, wins int, dims uint64) bool {
	if dims != 1 || wholePageTake < 0 || p.layout.GetMiniBlockLayout() == nil {
		return false
	}
	if wholePageTake > 0 {
		return true
	}
	m, err := f.denseMetaFor(p)
	return wins >= minWholeWindows && err == nil && m.mb != nil && 2*wins >= len(m.refs)
}

// takeFromWhole decodes chunked page p whole and gathers the rows of wins
// (spans of its levels, through the row starts of its repetition levels
// when it has them) from its decoded levels and values (dictionary indices stay indices
// until the gathered rows are built, so only they are looked up). ok is
// false for values it does not gather (fixed-size lists, packed structs,
// sub-byte widths, constant pages): the caller reads by windows.
func (f *File) takeFromWhole(p *page, types []arrow.DataType, path []structural.Step, leafType arrow.DataType, wins [][2]uint64, cache pageCache) (arrow.Array, bool, error) {
	bufs, err := f.pageBuffers(p)
	if err != nil {
		return nil, false, err
	}
	pd, err := decodeDense(p, bufs)
	if err != nil {
		return nil, false, err
	}
	v := pd.vals
	if len(pd.layers) != len(path) || pd.constant != nil || pd.scalarBuf != nil || pd.allNull ||
		v.Dims != nil || hasItemValidity(v) || v.Children != nil || v.NullItems || !v.Variable() && v.Bits%8 != 0 {
		return nil, false, nil
	}
	rows := int(p.rows)
	// lv and vl give the first level and the first value of each row (and
	// of row rows, their ends): the identity without repetition levels,
	// else the row starts the repetition levels mark.
	lv, vl := func(r int) int { return r }, func(r int) int { return r }
	if pd.rep != nil {
		starts, vis, err := rowStarts(pd)
		if err != nil {
			return nil, false, err
		}
		if len(starts) != rows+1 {
			return nil, false, fmt.Errorf("levels hold %d rows, page %d: %w", len(starts)-1, rows, ErrCorrupt)
		}
		lv, vl = func(r int) int { return int(starts[r]) }, func(r int) int { return int(vis[r]) }
	} else if pd.def != nil && len(pd.def) != rows {
		return nil, false, fmt.Errorf("chunked page of %d rows has %d levels: %w", rows, len(pd.def), ErrCorrupt)
	}
	if v.N != pd.numVisible || vl(rows) != v.N {
		return nil, false, fmt.Errorf("chunked page of %d rows decoded to %d values for %d visible: %w", rows, v.N, vl(rows), ErrCorrupt)
	}
	n, nv := 0, 0
	for _, w := range wins {
		n += int(w[1] - w[0])
		nv += vl(int(w[1])) - vl(int(w[0]))
	}
	g := &pageData{layers: pd.layers, numVisible: nv, dict: pd.dict, vals: values.Block{Bits: v.Bits, N: nv}}
	for _, w := range wins {
		l0, l1 := lv(int(w[0])), lv(int(w[1]))
		if pd.rep != nil {
			g.rep = append(g.rep, pd.rep[l0:l1]...)
		}
		if pd.def != nil {
			g.def = append(g.def, pd.def[l0:l1]...)
		}
	}
	if v.Variable() {
		g.vals.Offsets = make([]uint64, 1, nv+1)
		for _, w := range wins {
			a, b := vl(int(w[0])), vl(int(w[1]))
			lo, hi := v.Offsets[a], v.Offsets[b]
			base := uint64(len(g.vals.Data)) - lo
			g.vals.Data = append(g.vals.Data, v.Data[lo:hi]...)
			for _, o := range v.Offsets[a+1 : b+1] {
				g.vals.Offsets = append(g.vals.Offsets, o+base)
			}
		}
	} else {
		bw := v.Bits / 8
		g.vals.Data = make([]byte, 0, nv*bw)
		for _, w := range wins {
			g.vals.Data = append(g.vals.Data, v.Data[vl(int(w[0]))*bw:vl(int(w[1]))*bw]...)
		}
	}
	lds, err := structural.UnravelPath(g.layers, path, g.rep, g.def, n, nv)
	if err != nil {
		return nil, false, err
	}
	leaf, err := leafArray(leafType, g, lds[len(lds)-1].Valid)
	if err != nil {
		return nil, false, err
	}
	defer leaf.Release()
	d, err := projected(types, path, lds, leaf)
	if err != nil {
		return nil, false, err
	}
	defer d.Release()
	return array.MakeFromData(d), true, nil
}

// hasItemValidity reports whether v holds an item validity bitmap.
func hasItemValidity(v values.Block) bool {
	for _, iv := range v.ItemValid {
		if iv != nil {
			return true
		}
	}
	return false
}

// rowLevels reports whether a column's rows are whole spans of its level
// stream (no structural fixed-size list above the leaf, whose pages count
// elements), so that takeFromWhole can gather them.
func rowLevels(path []structural.Step) bool {
	for _, st := range path {
		if st.Kind == structural.StepFSL {
			return false
		}
	}
	return true
}

// rowStarts returns, for a page with repetition levels, the level index
// and the value ordinal at which each row starts, with one more entry for
// the end: a row starts where the repetition level is the page's
// greatest.
func rowStarts(pd *pageData) (starts, vis []int32, err error) {
	R := uint16(0)
	for _, l := range pd.layers {
		if structural.IsList(l) {
			R++
		}
	}
	maxVis := uint16(structural.MaxVisibleDef(pd.layers))
	if pd.def != nil && len(pd.def) != len(pd.rep) || len(pd.rep) >= 1<<31 {
		return nil, nil, fmt.Errorf("%d repetition and %d definition levels: %w", len(pd.rep), len(pd.def), ErrCorrupt)
	}
	c := int32(0)
	for i, r := range pd.rep {
		if r == R {
			starts = append(starts, int32(i))
			vis = append(vis, c)
		}
		if pd.def == nil || pd.def[i] <= maxVis {
			c++
		}
	}
	starts = append(starts, int32(len(pd.rep)))
	vis = append(vis, c)
	return starts, vis, nil
}
