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

// takeRuns reads the rows of runs (n rows in all) of the fields of layout,
// as a batch of schema.
func (f *File) takeRuns(schema *arrow.Schema, layout []fieldColumns, runs []rowRun, n int64, cache pageCache) (arrow.RecordBatch, error) {
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
	return array.NewRecordBatch(schema, cols, n), nil
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
		if ee > p.firstRow+p.rows || !f.denseWindowed(p) || p.firstRow%dims != 0 {
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
		if sp := inSparse(runs[i]); sp != nil && !f.paths.noSparseJoin {
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
		if mode := f.gatherMode(p, path, len(wins), dims); mode != gatherWindows {
			a, ok, err := f.gather(mode, p, types, path, leafType, wins, cache)
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
	return buildLeafArray(types, path, leafType, all, lds)
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
