package reader

import (
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

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
	arrays  map[[2]int]arrow.Array
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
	return f.readFields(f.schema, layout, start, n, func(int) pageCache { return cache }, false)
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
	// Read each maximal run of consecutive indices once, column by column
	// (take_runs.go).
	var runs []rowRun
	for _, i := range indices {
		if k := len(runs) - 1; k >= 0 && runs[k].end == i {
			runs[k].end++
			continue
		}
		runs = append(runs, rowRun{i, i + 1})
	}
	cache := newPageCache()
	defer cache.release()
	if len(indices) == 0 {
		return f.readFields(schema, layout, 0, 0, func(int) pageCache { return cache }, false)
	}
	// The stored values the runs need from sparse zipped pages, fetched
	// with one request per run of adjacent value ordinals.
	if err := f.prefetchSparse(layout, runs, cache); err != nil {
		return nil, err
	}
	// The chunks and records the runs need from dense pages, with nearby
	// ranges coalesced.
	if err := f.prefetchDense(layout, runs, cache); err != nil {
		return nil, err
	}
	return f.takeRuns(schema, layout, runs, int64(len(indices)), cache)
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

// readField reads rows [start, end) of one top-level field.
func (f *File) readField(fc fieldColumns, start, end int64, cache pageCache) (arrow.Array, error) {
	return f.assembleField(fc, func(k, ci int) (arrow.Array, error) {
		return f.readLeaf(fc.field.Type, fc.paths[k], ci, start, end, cache)
	})
}

// assembleField reads each leaf column of a top-level field with leaf and
// merges them into the field's array.
func (f *File) assembleField(fc fieldColumns, leaf func(k, ci int) (arrow.Array, error)) (arrow.Array, error) {
	parts := make([]arrow.Array, 0, len(fc.cols))
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for k, ci := range fc.cols {
		a, err := leaf(k, ci)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.leaves[ci].Path, err)
		}
		parts = append(parts, a)
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
	types, err := pathTypes(top, path)
	if err != nil {
		return nil, err
	}
	leafType := types[len(types)-1]
	pages := f.columns[ci]
	dims := int64(f.dims[ci])
	// Page lengths count elements: rows times structural FSL dimensions.
	es, ee := uint64(start*dims), uint64(end*dims)
	first := sort.Search(len(pages), func(k int) bool { return pages[k].firstRow+pages[k].rows > es })
	var chunks []arrow.Array
	defer func() {
		for _, c := range chunks {
			c.Release()
		}
	}()
	ud := uint64(dims)
	if last := sort.Search(len(pages), func(k int) bool { return pages[k].firstRow >= ee }); len(types) == 1 && ud == 1 &&
		last-first > 1 && pages[first].firstRow == es && pages[last-1].firstRow+pages[last-1].rows == ee {
		// Whole pages of a flat column: raw pages go straight to one
		// buffer, strings are expanded straight into one.
		if out, ok, err := f.readRawPages(leafType, pages[first:last]); err != nil || ok {
			return out, err
		}
		if out, ok, err := f.readFlatVariable(leafType, path, pages[first:last]); err != nil || ok {
			return out, err
		}
	}
	for pi := first; pi < len(pages) && pages[pi].firstRow < ee; pi++ {
		p := pages[pi]
		if p.firstRow%ud != 0 || p.rows%ud != 0 {
			return nil, fmt.Errorf("page %d of %d elements at %d does not hold whole rows of %d: %w", pi, p.rows, p.firstRow, dims, ErrCorrupt)
		}
		// The elements of the page the read covers.
		a, b := max(es, p.firstRow)-p.firstRow, min(ee, p.firstRow+p.rows)-p.firstRow
		if p.windowed() || f.denseWindowed(p) && (a != 0 || b != p.rows) {
			part, err := f.decodePageArray(p, types, path, leafType, a, b, cache)
			if err != nil {
				return nil, fmt.Errorf("page %d: %w", pi, err)
			}
			chunks = append(chunks, part)
			continue
		}
		whole, ok := cache.arrays[[2]int{ci, pi}]
		if !ok {
			var err error
			if whole, err = f.decodePageArray(p, types, path, leafType, 0, p.rows, cache); err != nil {
				return nil, fmt.Errorf("page %d: %w", pi, err)
			}
			cache.arrays[[2]int{ci, pi}] = whole
		}
		if uint64(whole.Len()) != p.rows/ud {
			return nil, fmt.Errorf("page %d decoded to %d rows, holds %d: %w", pi, whole.Len(), p.rows/ud, ErrCorrupt)
		}
		chunks = append(chunks, array.NewSlice(whole, int64(a/ud), int64(b/ud)))
	}
	var out arrow.Array
	switch len(chunks) {
	case 0:
		// No rows: an empty array of the projected type.
		return emptyProjected(types, path, leafType)
	case 1:
		if noOffsets(chunks[0].DataType()) && chunks[0].Data().Offset() == 0 {
			// One page, no offsets to normalize: no copy.
			chunks[0].Retain()
			out = chunks[0]
			break
		}
		fallthrough
	default:
		// Concatenate also normalizes offsets, so that every leaf of a
		// field lines up.
		var err error
		if out, err = joinArrays(chunks); err != nil {
			return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
		}
	}
	if int64(out.Len()) != end-start {
		out.Release()
		return nil, fmt.Errorf("pages hold %d rows, %d needed: %w", out.Len(), end-start, ErrCorrupt)
	}
	return out, nil
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

// decodePageArray decodes elements [a, b) of one page of a leaf column
// into the projected array of its path (divided by FSL dimensions). Only
// windowed pages (see page.windowed) decode part of a page; others need
// [0, rows). Sparse pages read their structure once (sparseMetaFor) and
// then only the value bytes of the window.
func (f *File) decodePageArray(p *page, types []arrow.DataType, path []structural.Step, leafType arrow.DataType, a, b uint64, cache pageCache) (arrow.Array, error) {
	var pd *pageData
	var lds []structural.LayerData
	var err error
	switch {
	case p.sparse != nil:
		// Cached structure, and only the value bytes of the window.
		if lds, pd, err = f.decodeSparseWindow(p, path, a, b, cache); err != nil {
			return nil, err
		}
	default:
		switch c := p.layout.GetConstantLayout(); {
		case c != nil:
			var bufs [][]byte
			if bufs, err = f.pageBuffers(p); err == nil {
				pd, err = decodeConstantWindow(c, bufs, p.rows, a, b)
			}
		case a == 0 && b == p.rows:
			var bufs [][]byte
			if bufs, err = f.pageBuffers(p); err == nil {
				pd, err = decodeDense(p, bufs)
			}
		case f.denseWindowed(p):
			// Only the chunks or records of the window.
			pd, err = f.decodeDenseWindow(p, a, b, cache)
		default:
			err = fmt.Errorf("partial decode of a %s page: %w", p.cell(), ErrUnsupported)
		}
		if err != nil {
			return nil, err
		}
		if len(pd.layers) != len(path) {
			return nil, fmt.Errorf("page has %d layers, column path %d: %w", len(pd.layers), len(path), ErrCorrupt)
		}
		if lds, err = structural.UnravelPath(pd.layers, path, pd.rep, pd.def, int(b-a), pd.numVisible); err != nil {
			return nil, err
		}
	}
	return buildLeafArray(types, path, leafType, pd, lds)
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
