package reader

import (
	"fmt"
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Large takes of a dense chunked page. A take of many rows touches most
// chunks of a page; reading it as one window a run costs a window's
// bookkeeping per row. Instead the rows are gathered straight from the
// decoded chunks into one page of levels and values, built into one array:
//
//   - gatherChunks (pages without repetition levels, where chunk c holds
//     rows [chunkRow[c], chunkRow[c+1]) exactly): each chunk the rows touch
//     is decoded once (from the take's coalesced prefetch) and its rows
//     copied out; FSST-coded values are gathered still coded and expanded
//     once, dictionary indices stay indices until the array is built.
//   - gatherWhole (pages with repetition levels, whose rows may straddle
//     chunks): the page is decoded whole and rows are cut at the row starts
//     its repetition levels mark.

const (
	gatherWindows = iota
	gatherChunks
	gatherWhole
)

// minWholeWindows keeps small takes on windows whatever the page: a take
// of a few rows reads only their chunks.
const minWholeWindows = 32

// gatherMode returns how a take of wins windows holding rows rows reads
// chunked page p of a column with path:
//   - by reading single values (gatherChunks, then gatherValues) when
//     the page has no repetition levels, its chunks' values and levels
//     can be read one by one, and the take wants at most a quarter of the
//     page's rows: a chunk is then read, not decoded;
//   - by gathering when the windows are at least half as many as the
//     chunks (most chunks are decoded anyway);
//   - else by windows.
//
// (Measured in-process on 1M-row pages, 10,000 random rows: int64 9.3 ->
// 5.0 ms, float64 dictionary 11.3 -> 7.2, int32 with nulls 14.6 -> 8.4,
// low-cardinality strings 12.4 -> 5.2; 100 rows stay on windows.)
func (f *File) gatherMode(p *page, path []structural.Step, wins int, rows, dims uint64) int {
	mb := p.layout.GetMiniBlockLayout()
	if dims != 1 || mb == nil || f.paths.wholePageTake < 0 || !rowLevels(path) {
		return gatherWindows
	}
	if f.paths.wholePageTake == 0 {
		m, err := f.denseMetaFor(p)
		if err != nil || m.mb == nil {
			return gatherWindows
		}
		if mb.RepCompression == nil && 4*rows <= p.rows && valuesByOne(m.mb) {
			return gatherChunks
		}
		if wins < minWholeWindows || 2*wins < len(m.refs) {
			return gatherWindows
		}
	}
	if mb.RepCompression == nil {
		return gatherChunks
	}
	return gatherWhole
}

// valuesByOne reports whether the chunks of a page read single values
// (gatherValues; their definition levels, of any form, are picked by
// values.GatherLevels).
func valuesByOne(mb *enc21pb.MiniBlockLayout) bool {
	return mb.NumBuffers == 1 && values.CanGather(mb.ValueCompression)
}

// gatherable reports whether the values of a decoded page or chunk can be
// gathered row by row: byte-aligned fixed width or variable width, without
// fixed-size-list structure or packed struct fields.
func gatherable(v values.Block) bool {
	return v.Dims == nil && !hasItemValidity(v) && v.Children == nil && !v.NullItems && (v.Variable() || v.Bits%8 == 0)
}

// appendValues appends values [a, b) of v to dst (of v's form).
func appendValues(dst *values.Block, v values.Block, a, b int) {
	if v.Variable() {
		if dst.Offsets == nil {
			dst.Offsets = []uint64{0}
		}
		lo, hi := v.Offsets[a], v.Offsets[b]
		base := uint64(len(dst.Data)) - lo
		dst.Data = append(dst.Data, v.Data[lo:hi]...)
		for _, o := range v.Offsets[a+1 : b+1] {
			dst.Offsets = append(dst.Offsets, o+base)
		}
	} else {
		bw := v.Bits / 8
		dst.Data = append(dst.Data, v.Data[a*bw:b*bw]...)
	}
	dst.N += b - a
}

// gather reads the rows of wins from chunked page p by mode (gatherChunks
// or gatherWhole) into one projected array. ok is false when the page's
// values cannot be gathered (the caller reads by windows).
func (f *File) gather(mode int, p *page, types []arrow.DataType, path []structural.Step, leafType arrow.DataType, wins [][2]uint64, cache pageCache) (arrow.Array, bool, error) {
	var g *pageData
	var n int
	var err error
	if mode == gatherChunks {
		g, n, err = f.gatherChunks(p, wins, cache)
	} else {
		g, n, err = f.gatherWhole(p, wins)
	}
	if err != nil || g == nil {
		return nil, false, err
	}
	if len(g.layers) != len(path) {
		return nil, false, fmt.Errorf("page has %d layers, column path %d: %w", len(g.layers), len(path), ErrCorrupt)
	}
	lds, err := structural.UnravelPath(g.layers, path, g.rep, g.def, n, g.numVisible)
	if err != nil {
		return nil, false, err
	}
	a, err := buildLeafArray(types, path, leafType, g, lds)
	return a, err == nil, err
}

// gatherChunks gathers the rows of wins from the chunks of a page without
// repetition levels. It returns the gathered page (nil: not gatherable)
// and its row count.
func (f *File) gatherChunks(p *page, wins [][2]uint64, cache pageCache) (*pageData, int, error) {
	m, err := f.denseMetaFor(p)
	if err != nil {
		return nil, 0, err
	}
	if m.mb == nil || m.mb.RepCompression != nil {
		return nil, 0, nil
	}
	g := &pageData{layers: m.mb.Layers, dict: m.dict}
	if valuesByOne(m.mb) {
		return f.gatherValues(p, m, g, wins, cache)
	}
	// Chunks are decoded one at a time and not kept in the take's cache:
	// their rows are copied out at once, so a page's decoded chunks are
	// never all held (the last one serves the windows that follow in it).
	once := cache
	once.chunks = nil
	var dc *decodedChunk
	n, c, dcAt := 0, 0, -1
	for _, w := range wins {
		for r := w[0]; r < w[1]; {
			if c >= len(m.refs) || r < m.chunkRow[c] || r >= m.chunkRow[c+1] {
				if c = m.chunkOf(r, c); c >= len(m.refs) {
					return nil, 0, fmt.Errorf("row %d in none of %d chunks: %w", r, len(m.refs), ErrCorrupt)
				}
			}
			if dcAt != c {
				if dc, err = f.chunk(p, m, c, once); err != nil {
					return nil, 0, err
				}
				dcAt = c
			}
			v := dc.vals
			if !gatherable(v) || n > 0 && (v.Bits != g.vals.Bits || (dc.def == nil) != (g.def == nil)) {
				return nil, 0, nil
			}
			lo, hi := r-m.chunkRow[c], min(w[1], m.chunkRow[c+1])-m.chunkRow[c]
			if hi > uint64(v.N) || dc.def != nil && hi > uint64(len(dc.def)) {
				return nil, 0, fmt.Errorf("chunk %d of %d values holds rows to %d: %w", c, v.N, hi, ErrCorrupt)
			}
			if n == 0 {
				g.vals.Bits = v.Bits
			}
			if dc.def != nil {
				g.def = append(g.def, dc.def[lo:hi]...)
			}
			appendValues(&g.vals, v, int(lo), int(hi))
			n += int(hi - lo)
			r += hi - lo
		}
	}
	if m.fsst != nil {
		if g.vals, err = m.fsst.DecodeBlock(g.vals); err != nil {
			return nil, 0, err
		}
	}
	g.numVisible = n
	return g, n, nil
}

// gatherValues is gatherChunks for chunks whose values and levels can be
// read one by one (flat or inline bit-packed): only the rows' values and
// levels are read out of each chunk, not the chunk decoded whole.
func (f *File) gatherValues(p *page, m *denseMeta, g *pageData, wins [][2]uint64, cache pageCache) (*pageData, int, error) {
	if m.mb.ValueCompression.GetGeneral() != nil {
		return f.gatherCompressed(p, m, g, wins, cache)
	}
	var at []int
	c := -1
	flush := func() error {
		if len(at) == 0 {
			return nil
		}
		err := f.gatherChunkRows(p, m, c, at, g, cache)
		at = at[:0]
		return err
	}
	for _, w := range wins {
		for r := w[0]; r < w[1]; r++ {
			if c < 0 || r < m.chunkRow[c] || r >= m.chunkRow[c+1] {
				if err := flush(); err != nil {
					return nil, 0, err
				}
				if c = m.chunkOf(r, c); c >= len(m.refs) {
					return nil, 0, fmt.Errorf("row %d in none of %d chunks: %w", r, len(m.refs), ErrCorrupt)
				}
			}
			at = append(at, int(r-m.chunkRow[c]))
		}
	}
	if err := flush(); err != nil {
		return nil, 0, err
	}
	g.numVisible = g.vals.N
	return g, g.vals.N, nil
}

// gatherCompressed is gatherValues for chunks under general compression,
// each decompressed whole for its rows: with minParallelGather chunks or
// more, they are read side by side, each into a part of its own, joined in
// order after.
func (f *File) gatherCompressed(p *page, m *denseMeta, g *pageData, wins [][2]uint64, cache pageCache) (*pageData, int, error) {
	// The rows by chunk: chunk cs[k] holds rows at[ends[k]:ends[k+1]].
	at, cs, ends := []int{}, []int{}, []int{0}
	c := -1
	for _, w := range wins {
		for r := w[0]; r < w[1]; r++ {
			if c < 0 || r < m.chunkRow[c] || r >= m.chunkRow[c+1] {
				if c = m.chunkOf(r, c); c >= len(m.refs) {
					return nil, 0, fmt.Errorf("row %d in none of %d chunks: %w", r, len(m.refs), ErrCorrupt)
				}
				if len(cs) > 0 {
					ends = append(ends, len(at))
				}
				cs = append(cs, c)
			}
			at = append(at, int(r-m.chunkRow[c]))
		}
	}
	ends = append(ends, len(at))
	run := par.InTurn
	if len(cs) >= minParallelGather {
		run = par.Each
	}
	parts := make([]pageData, len(cs))
	if err := run(len(cs), func(k int) error {
		return f.gatherChunkRows(p, m, cs[k], at[ends[k]:ends[k+1]], &parts[k], cache)
	}); err != nil {
		return nil, 0, err
	}
	blocks := make([]values.Block, len(parts))
	for k := range parts {
		blocks[k] = parts[k].vals
		g.def = append(g.def, parts[k].def...)
	}
	vals, err := concatBlocks(blocks)
	if err != nil {
		return nil, 0, err
	}
	g.vals, g.numVisible = vals, vals.N
	return g, vals.N, nil
}

// minParallelGather is the fewest compressed chunks a take reads side by
// side.
const minParallelGather = 4

// gatherChunkRows appends the values and levels of rows at (rising, from
// the chunk's first) of chunk c to g.
func (f *File) gatherChunkRows(p *page, m *denseMeta, c int, at []int, g *pageData, cache pageCache) error {
	mb := m.mb
	layout := values.ChunkLayout{HasDef: mb.DefCompression != nil, NumBuffers: 1, Large: mb.HasLargeChunk}
	r := m.refs[c]
	data, err := f.fetch(cache.raw, p.buffers[1].Position+uint64(r.Offset), uint64(r.Size))
	if err != nil {
		return err
	}
	parts, err := values.ParseChunk(data, layout)
	if err != nil {
		return fmt.Errorf("chunk %d: %w", c, err)
	}
	if layout.HasDef {
		if parts.NumLevels != r.NumValues {
			return fmt.Errorf("chunk %d has %d levels for %d values: %w", c, parts.NumLevels, r.NumValues, ErrCorrupt)
		}
		if g.def, err = values.GatherLevels(mb.DefCompression, parts.Def, parts.NumLevels, at, g.def); err != nil {
			return fmt.Errorf("chunk %d def: %w", c, err)
		}
	}
	if len(parts.Values) != 1 {
		return fmt.Errorf("chunk %d has %d value buffers: %w", c, len(parts.Values), ErrCorrupt)
	}
	if g.vals, err = values.GatherMiniBlock(mb.ValueCompression, parts.Values[0], r.NumValues, at, g.vals); err != nil {
		return fmt.Errorf("chunk %d values: %w", c, err)
	}
	return nil
}

// gatherWhole decodes a page with repetition levels whole and gathers the
// rows of wins (spans of its levels between the row starts). It returns
// the gathered page (nil: not gatherable) and its row count.
func (f *File) gatherWhole(p *page, wins [][2]uint64) (*pageData, int, error) {
	bufs, err := f.pageBuffers(p)
	if err != nil {
		return nil, 0, err
	}
	pd, err := decodeDense(p, bufs)
	if err != nil {
		return nil, 0, err
	}
	v := pd.vals
	if pd.rep == nil || pd.constant != nil || pd.scalarBuf != nil || pd.allNull || !gatherable(v) {
		return nil, 0, nil
	}
	if v.N != pd.numVisible {
		return nil, 0, fmt.Errorf("chunked page decoded to %d values for %d visible: %w", v.N, pd.numVisible, ErrCorrupt)
	}
	lev, vis, err := windowStarts(pd, wins, int(p.rows))
	if err != nil {
		return nil, 0, err
	}
	if total := vis[len(vis)-1]; total != v.N {
		return nil, 0, fmt.Errorf("chunked page's levels mark %d visible values, %d decoded: %w", total, v.N, ErrCorrupt)
	}
	g := &pageData{layers: pd.layers, dict: pd.dict, vals: values.Block{Bits: v.Bits}}
	n := 0
	for k, w := range wins {
		l0, l1 := lev[2*k], lev[2*k+1]
		g.rep = append(g.rep, pd.rep[l0:l1]...)
		if pd.def != nil {
			g.def = append(g.def, pd.def[l0:l1]...)
		}
		appendValues(&g.vals, v, int(vis[2*k]), int(vis[2*k+1]))
		n += int(w[1] - w[0])
	}
	g.numVisible = g.vals.N
	return g, n, nil
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
// elements), so that its rows can be gathered.
func rowLevels(path []structural.Step) bool {
	return !structural.HasStep(path, structural.StepFSL)
}

// windowStarts returns, for a page of rows rows with repetition levels
// and the windows wins (in any order), the level index and the value
// ordinal at which each window's first row starts and its end row starts
// (entries 2k and 2k+1 for window k; the end of the page for its last
// row), and last those of the page's end (its level count and visible
// values): a row starts where the repetition level is the page's
// greatest. One pass over the levels, keeping nothing per row.
func windowStarts(pd *pageData, wins [][2]uint64, rows int) (lev, vis []int, err error) {
	R := uint16(structural.NumLists(pd.layers))
	maxVis := uint16(structural.MaxVisibleDef(pd.layers))
	if pd.def != nil && len(pd.def) != len(pd.rep) {
		return nil, nil, fmt.Errorf("%d repetition and %d definition levels: %w", len(pd.rep), len(pd.def), ErrCorrupt)
	}
	bounds := make([]int, 0, 2*len(wins)+1)
	for _, w := range wins {
		bounds = append(bounds, int(w[0]), int(w[1]))
	}
	bounds = append(bounds, rows)
	// The bounds in row order (windows may come in any order, repeated).
	order := make([]int, len(bounds))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return bounds[order[a]] < bounds[order[b]] })
	lev, vis = make([]int, len(bounds)), make([]int, len(bounds))
	// started counts the row starts up to and including level i; it
	// passes want, the next bound, exactly at that row's first level. The
	// counts are branch-free, the bound test is rarely true.
	next, started, c := 0, 0, 0
	want := bounds[order[0]]
	mark := func(at int) {
		for next < len(order) && bounds[order[next]] == started-1 {
			lev[order[next]], vis[order[next]] = at, c
			next++
		}
		want = math.MaxInt
		if next < len(order) {
			want = bounds[order[next]]
		}
	}
	if pd.def == nil {
		for i, r := range pd.rep {
			if started += b2i(r == R); started > want {
				c = i
				mark(i)
			}
		}
		c = len(pd.rep)
	} else {
		def := pd.def[:len(pd.rep)]
		for i, r := range pd.rep {
			if started += b2i(r == R); started > want {
				mark(i)
			}
			c += b2i(def[i] <= maxVis)
		}
	}
	started++ // the end of the page starts row started-1
	mark(len(pd.rep))
	if started-1 != rows || next != len(bounds) {
		return nil, nil, fmt.Errorf("levels hold %d rows, page %d: %w", started-1, rows, ErrCorrupt)
	}
	return lev, vis, nil
}

// b2i is 1 for true, 0 for false (a flag set, no branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// windowRows is the number of rows of wins.
func windowRows(wins [][2]uint64) uint64 {
	var n uint64
	for _, w := range wins {
		n += w[1] - w[0]
	}
	return n
}
