package reader

import (
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/structural"
)

// ReadAll reads every row of every column: a RecordReader's one batch.
func (f *File) ReadAll() (arrow.RecordBatch, error) {
	if f.numRows == 0 {
		return f.ReadRange(0, 0)
	}
	r, err := f.NewRecordReader(WithBatchRows(f.numRows))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	if !r.Next() {
		return nil, r.Err()
	}
	rec := r.RecordBatch()
	rec.Retain()
	return rec, nil
}

// ReadRange reads rows [start, start+n).
func (f *File) ReadRange(start, n int64) (arrow.RecordBatch, error) {
	c := newPageCache()
	defer c.release()
	rec, err := f.readRange(start, n, c)
	return rec, classify(err)
}

// pageCache holds the decoded pages of one call, so that a Take touching a
// page several times decodes it once, and the value chunks and dictionary
// items of sparse pages the call fetched, so that it fetches each once
// (and, for a take, the values it prefetched).
type pageCache struct {
	arrays  map[[2]int]arrow.Array // whole pages by column and page index
	fetched map[fetchKey][]byte
	spans   map[*page][]valueSpan // values a take prefetched (prefetchSparse)
	raw     *rawCache             // byte ranges of dense pages fetched by window
	chunks  map[chunkKey]*decodedChunk
	// sparseChunks are the value chunks of sparse chunked pages decoded
	// for a one-chunk window.
	sparseChunks map[fetchKey]sparseChunk
}

func newPageCache() pageCache {
	return pageCache{arrays: map[[2]int]arrow.Array{}, fetched: map[fetchKey][]byte{}, spans: map[*page][]valueSpan{}, raw: &rawCache{}, chunks: map[chunkKey]*decodedChunk{}, sparseChunks: map[fetchKey]sparseChunk{}}
}

func (c pageCache) release() {
	for _, a := range c.arrays {
		a.Release()
	}
}

func (f *File) readRange(start, n int64, cache pageCache) (arrow.RecordBatch, error) {
	layout, err := f.fieldLayout()
	if err != nil {
		return nil, err
	}
	return f.readFields(f.schema, layout, start, n, func(int, int) pageCache { return cache }, false)
}

// Take reads the rows at the given indices, in the given order (repeats
// allowed).
func (f *File) Take(indices []int64) (arrow.RecordBatch, error) {
	rec, err := f.take(indices, nil)
	return rec, classify(err)
}

// TakeColumns is Take of the named top-level fields only, in the given
// order (each at most once; an unknown name is ErrInvalidOption): pages of
// the other fields are neither read nor decoded.
func (f *File) TakeColumns(indices []int64, columns ...string) (arrow.RecordBatch, error) {
	if columns == nil {
		columns = []string{}
	}
	rec, err := f.take(indices, columns)
	return rec, classify(err)
}

// take reads the rows at indices of the named fields (every field when
// columns is nil).
func (f *File) take(indices []int64, columns []string) (arrow.RecordBatch, error) {
	schema, layout, err := f.projection(columns)
	if err != nil {
		return nil, err
	}
	for _, i := range indices {
		if i < 0 || i >= f.numRows {
			return nil, fmt.Errorf("row %d of %d: %w", i, f.numRows, ErrOutOfRange)
		}
	}
	// Read each maximal run of consecutive indices once, column by column,
	// through the read pipeline (readRuns).
	var runs []rowRun
	for _, i := range indices {
		if k := len(runs) - 1; k >= 0 && runs[k].end == i {
			runs[k].end++
			continue
		}
		runs = append(runs, rowRun{i, i + 1})
	}
	if len(indices) == 0 {
		cache := newPageCache()
		defer cache.release()
		return f.readFields(schema, layout, 0, 0, func(int, int) pageCache { return cache }, false)
	}
	// Each leaf column has a page cache of its own, the fetched byte
	// ranges of dense pages one cache for all (their requests coalesce
	// across columns): the leaves are prefetched and read side by side.
	caches := make(map[int]pageCache)
	raw := &rawCache{}
	for _, fc := range layout {
		for _, ci := range fc.cols {
			c := newPageCache()
			c.raw = raw
			caches[ci] = c
		}
	}
	defer func() {
		for _, c := range caches {
			c.release()
		}
	}()
	cacheFor := func(ci int) pageCache { return caches[ci] }
	// The stored values the runs need from sparse zipped pages, fetched
	// with one request per run of adjacent value ordinals.
	if err := f.prefetchSparse(layout, runs, cacheFor); err != nil {
		return nil, err
	}
	// The chunks and records the runs need from dense pages, with nearby
	// ranges coalesced.
	if err := f.prefetchDense(layout, runs, raw, cacheFor); err != nil {
		return nil, err
	}
	return f.takeRuns(schema, layout, runs, int64(len(indices)), cacheFor)
}

// takeRuns reads the rows of runs (n rows in all) of the fields of layout,
// as a batch of schema, the fields and their leaves side by side (leaf
// column ci with cacheFor(ci)); the error is the first field's that failed.
func (f *File) takeRuns(schema *arrow.Schema, layout []fieldColumns, runs []rowRun, n int64, cacheFor func(ci int) pageCache) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(layout))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	err := par.Each(len(layout), func(i int) error {
		fc := layout[i]
		a, err := f.assembleField(fc, func(k, ci int) (arrow.Array, error) {
			return f.readRuns(fc.field.Type, fc.paths[k], ci, runs, n, cacheFor(ci), true)
		}, true)
		if err != nil {
			return fmt.Errorf("field %q: %w", fc.field.Name, err)
		}
		cols[i] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	return array.NewRecordBatch(schema, cols, n), nil
}

// projection returns the schema and layout of the named top-level fields,
// in the order named (every field when columns is nil).
func (f *File) projection(columns []string) (*arrow.Schema, []fieldColumns, error) {
	layout, err := f.fieldLayout()
	if err != nil || columns == nil {
		return f.schema, layout, err
	}
	fields := make([]fieldColumns, 0, len(columns))
	afs := make([]arrow.Field, 0, len(columns))
	for i, name := range columns {
		k := -1
		for j, fc := range layout {
			if fc.field.Name == name {
				k = j
				break
			}
		}
		if k < 0 || slices.Contains(columns[:i], name) {
			return nil, nil, fmt.Errorf("column %q: not a top-level field of the file, or named twice: %w", name, ErrInvalidOption)
		}
		fields = append(fields, layout[k])
		afs = append(afs, layout[k].field)
	}
	md := f.schema.Metadata()
	return arrow.NewSchema(afs, &md), fields, nil
}

func bitWidth(dt arrow.DataType) int {
	if fw, ok := dt.(arrow.FixedWidthDataType); ok {
		return fw.BitWidth()
	}
	return 0
}

// readField reads rows [start, end) of one top-level field, leaf k with
// cache(k) (with parallel, leaves side by side: their caches must then be
// distinct).
func (f *File) readField(fc fieldColumns, start, end int64, cache func(k int) pageCache, parallel bool) (arrow.Array, error) {
	return f.assembleField(fc, func(k, ci int) (arrow.Array, error) {
		return f.readLeaf(fc.field.Type, fc.paths[k], ci, start, end, cache(k))
	}, parallel)
}

// assembleField reads each leaf column of a top-level field with leaf
// (with parallel, the leaves side by side) and merges them into the
// field's array. The error is the first leaf's that failed, in leaf order,
// either way.
func (f *File) assembleField(fc fieldColumns, leaf func(k, ci int) (arrow.Array, error), parallel bool) (arrow.Array, error) {
	parts := make([]arrow.Array, len(fc.cols))
	defer func() {
		for _, p := range parts {
			if p != nil {
				p.Release()
			}
		}
	}()
	read := func(k int) error {
		a, err := leaf(k, fc.cols[k])
		if err != nil {
			return fmt.Errorf("column %q: %w", f.leaves[fc.cols[k]].Path, err)
		}
		parts[k] = a
		return nil
	}
	run := par.InTurn
	if parallel {
		run = par.Each
	}
	if err := run(len(parts), read); err != nil {
		return nil, err
	}
	m, err := merge(fc.field.Type, parts, fc.paths, 0)
	if err != nil {
		return nil, err
	}
	if !arrow.TypeEqual(m.DataType(), fc.field.Type) {
		// Projected types (e.g. map entries) are rebuilt under the schema's
		// own type.
		d := m.Data()
		rebuilt := retype(d, fc.field.Type)
		m.Release()
		m = array.MakeFromData(rebuilt)
		rebuilt.Release()
	}
	return m, nil
}

// retype rebuilds array data under a structurally identical type (names,
// nullability and metadata from the schema).
func retype(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	var kids []arrow.ArrayData
	var childTypes []arrow.DataType
	switch t := dt.(type) {
	case *arrow.StructType:
		for i := 0; i < t.NumFields(); i++ {
			childTypes = append(childTypes, t.Field(i).Type)
		}
	case *arrow.ListType:
		childTypes = []arrow.DataType{t.Elem()}
	case *arrow.LargeListType:
		childTypes = []arrow.DataType{t.Elem()}
	case *arrow.MapType:
		childTypes = []arrow.DataType{t.Elem()}
	case *arrow.FixedSizeListType:
		childTypes = []arrow.DataType{t.Elem()}
	}
	for i, c := range d.Children() {
		if i < len(childTypes) {
			k := retype(c, childTypes[i])
			defer k.Release()
			kids = append(kids, k)
		}
	}
	out := array.NewData(dt, d.Len(), d.Buffers(), kids, d.NullN(), d.Offset())
	if dict := d.Dictionary(); dict != nil {
		out.SetDictionary(dict)
	}
	return out
}

// readLeaf reads rows [start, end) of one physical column as the projected
// array of its path.
func (f *File) readLeaf(top arrow.DataType, path []structural.Step, ci int, start, end int64, cache pageCache) (arrow.Array, error) {
	if start == end {
		return f.readRuns(top, path, ci, nil, 0, cache, false)
	}
	return f.readRuns(top, path, ci, []rowRun{{start, end}}, end-start, cache, false)
}

// readRuns is the read pipeline every read of a leaf column goes through:
// the rows of runs (n in all, in order) are cut into element windows per
// page, each page's windows are read by the reader of its cell (cell.go),
// and the arrays are joined once. take says the runs are a take's, whose
// prefetched bytes are in cache.
func (f *File) readRuns(top arrow.DataType, path []structural.Step, ci int, runs []rowRun, n int64, cache pageCache, take bool) (arrow.Array, error) {
	types, err := pathTypes(top, path)
	if err != nil {
		return nil, err
	}
	lr := &leafRead{f: f, ci: ci, path: path, types: types, leafType: types[len(types)-1], dims: uint64(f.dims[ci]), pages: f.columns[ci], cache: cache}
	if len(runs) == 0 {
		// No rows: an empty array of the projected type.
		return emptyProjected(types, path, lr.leafType)
	}
	if len(runs) == 1 {
		if out, ok, err := lr.wholePages(runs[0]); err != nil || ok {
			return out, err
		}
	}
	var parts []arrow.Array
	defer func() {
		for _, a := range parts {
			a.Release()
		}
	}()
	// Consecutive windows in one page are read together.
	type group struct {
		pi   int
		wins [][2]uint64
	}
	var groups []group
	for _, r := range runs {
		es, ee := uint64(r.start)*lr.dims, uint64(r.end)*lr.dims
		for es < ee {
			k := sortSearchPages(lr.pages, es)
			if k >= len(lr.pages) {
				return nil, fmt.Errorf("element %d beyond the column's %d pages: %w", es, len(lr.pages), ErrCorrupt)
			}
			p := lr.pages[k]
			if p.firstRow%lr.dims != 0 || p.rows%lr.dims != 0 {
				return nil, fmt.Errorf("page %d of %d elements at %d does not hold whole rows of %d: %w", k, p.rows, p.firstRow, lr.dims, ErrCorrupt)
			}
			e := min(ee, p.firstRow+p.rows)
			if n := len(groups); n == 0 || groups[n-1].pi != k {
				groups = append(groups, group{pi: k})
			}
			g := &groups[len(groups)-1]
			g.wins = append(g.wins, [2]uint64{es - p.firstRow, e - p.firstRow})
			es = e
		}
	}
	read := func(lr *leafRead, g group, dst []arrow.Array) ([]arrow.Array, error) {
		p := lr.pages[g.pi]
		lr.at = g.pi
		dst, err := f.cellFor(p).read(lr, p, g.wins, dst)
		if err != nil {
			return dst, fmt.Errorf("page %d: %w", g.pi, err)
		}
		return dst, nil
	}
	whole := func(g group) bool {
		return len(g.wins) == 1 && g.wins[0] == [2]uint64{0, lr.pages[g.pi].rows}
	}
	var wholes []int
	for i, g := range groups {
		if whole(g) {
			wholes = append(wholes, i)
		}
	}
	if take || len(wholes) < 2 {
		for _, g := range groups {
			if parts, err = read(lr, g, parts); err != nil {
				return nil, err
			}
		}
	} else {
		// A range read over several whole pages: the whole pages are
		// decoded side by side, each with a cache of its own (a later
		// batch never needs them); pages read in part keep the shared
		// cache, which carries them to the next batch. The error is the
		// first page's in order.
		res := make([][]arrow.Array, len(groups))
		errs := make([]error, len(groups))
		for i, g := range groups {
			if !whole(g) {
				res[i], errs[i] = read(lr, g, nil)
			}
		}
		_ = par.Each(len(wholes), func(k int) error {
			i := wholes[k]
			own := *lr
			own.cache = newPageCache()
			res[i], errs[i] = read(&own, groups[i], nil)
			own.cache.release()
			return nil
		})
		for i := range groups {
			parts = append(parts, res[i]...)
		}
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
	}
	var out arrow.Array
	if len(parts) == 1 && parts[0].Data().Offset() == 0 && (!lr.sliced || noOffsets(parts[0].DataType())) {
		// One part that owns its buffers: no copy.
		parts[0].Retain()
		out = parts[0]
	} else if out, err = joinArrays(parts); err != nil {
		// Joining also normalizes offsets, so that every leaf of a field
		// lines up.
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	if int64(out.Len()) != n {
		out.Release()
		return nil, fmt.Errorf("pages gave %d rows, %d asked: %w", out.Len(), n, ErrCorrupt)
	}
	return out, nil
}

// wholePages reads a run covering two or more whole pages of a flat column
// straight into one buffer when their pages allow it: raw fixed-width pages
// (raw_pages.go), sparse fixed-width pages (sparse_pages.go) and strings
// expanded in place (flat_strings.go).
func (lr *leafRead) wholePages(r rowRun) (arrow.Array, bool, error) {
	pages := lr.pages
	es, ee := uint64(r.start)*lr.dims, uint64(r.end)*lr.dims
	first := sortSearchPages(pages, es)
	last := sort.Search(len(pages), func(k int) bool { return pages[k].firstRow >= ee })
	if len(lr.types) != 1 || lr.dims != 1 || last-first < 2 || pages[first].firstRow != es || pages[last-1].firstRow+pages[last-1].rows != ee {
		return nil, false, nil
	}
	if out, ok, err := lr.f.readRawPages(lr.leafType, pages[first:last]); err != nil || ok {
		return out, ok, err
	}
	if out, ok, err := lr.readSparsePages(pages[first:last]); err != nil || ok {
		return out, ok, err
	}
	return lr.f.readFlatVariable(lr.leafType, lr.path, pages[first:last])
}

func emptyProjected(types []arrow.DataType, path []structural.Step, leafType arrow.DataType) (arrow.Array, error) {
	pd := &pageData{numVisible: 0, allNull: true}
	leaf, err := leafArray(leafType, pd, nil)
	if err != nil {
		// Types no scalar stands for (packed structs): Arrow's own empty
		// array.
		empty := array.MakeArrayOfNull(memory.DefaultAllocator, leafType, 0)
		leaf = empty.Data()
		leaf.Retain()
		empty.Release()
	}
	defer leaf.Release()
	layers := make([]structural.LayerData, len(path))
	for i := range layers {
		layers[i].Offsets = []int32{0}
	}
	d, err := projected(types, path, layers, leaf)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// buildLeafArray builds the projected array of a column's path from decoded
// values and their unravelled structure (lds, outer first; the last entry
// is the leaf validity).
func buildLeafArray(types []arrow.DataType, path []structural.Step, leafType arrow.DataType, pd *pageData, lds []structural.LayerData) (arrow.Array, error) {
	leaf, err := leafArray(leafType, pd, lds[len(lds)-1].Valid)
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

// noOffsets reports whether arrays of dt hold no offsets at any depth
// (fixed-width values, fixed-size lists and structs of them).
func noOffsets(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		return noOffsets(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !noOffsets(f.Type) {
				return false
			}
		}
		return true
	case *arrow.DictionaryType:
		return false
	case arrow.FixedWidthDataType:
		return true
	}
	return false
}
