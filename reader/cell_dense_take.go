package reader

import (
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Row windows of dense chunked and zipped pages (see cell_dense_meta.go for the
// cached addressing). A chunked window decodes only the chunks holding its
// rows (each chunk once per call: decoded chunks are kept in the call's
// pageCache) and cuts the rows' levels and values out of them; a zipped
// window reads only the records of its rows, by stride or through the
// repetition index entries of its rows.

// chunkKey names one chunk of a dense chunked page.
type chunkKey struct {
	p *page
	c int
}

// decodedChunk is one decoded chunk: its levels and values, and (chunks
// with lists, built on first use) where each row starts.
type decodedChunk struct {
	rep, def []uint16
	vals     values.Block

	indexed bool
	rowAt   []uint32 // level index of each row start
	visAt   []uint32 // visible entries before each row start
	visible uint32   // visible entries of the chunk
}

// indexRows locates the row starts of a chunk with lists.
func (dc *decodedChunk) indexRows(maxRep, maxVis uint16) {
	if dc.indexed {
		return
	}
	dc.indexed = true
	var vis uint32
	for i, r := range dc.rep {
		if r == maxRep {
			dc.rowAt = append(dc.rowAt, uint32(i))
			dc.visAt = append(dc.visAt, vis)
		}
		if dc.def == nil || dc.def[i] <= maxVis {
			vis++
		}
	}
	dc.visible = vis
}

// decodeDenseWindow decodes elements [a, b) (a < b) of a dense chunked or
// zipped page.
func (f *File) decodeDenseWindow(p *page, a, b uint64, cache pageCache) (*pageData, error) {
	m, err := f.denseMetaFor(p)
	if err != nil {
		return nil, err
	}
	if m.mb != nil {
		return f.chunkedWindowDense(p, m, a, b, cache)
	}
	return f.zippedWindowDense(p, m, a, b, cache)
}

// decodeWindows decodes element windows of a dense chunked or zipped page,
// in order, into one projected array: their levels and values are cut from
// the page's decoded chunks (or records) and joined, then unravelled and
// built once, so that a take of many scattered rows builds one array per
// page rather than one per row. It returns errNoJoin when the windows'
// values cannot be joined.
func (f *File) decodeWindows(p *page, lr *leafRead, wins [][2]uint64) (arrow.Array, error) {
	cache := lr.cache
	m, err := f.denseMetaFor(p)
	if err != nil {
		return nil, err
	}
	if m.mb != nil {
		if err := f.predecodeChunks(p, m, wins, cache); err != nil {
			return nil, err
		}
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
		if len(wins) > 1 && (pd.vals.NullItems || pd.vals.Children != nil) {
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
	return lr.build(all, int(elems))
}

// predecodeChunks decodes side by side the chunks of chunked page p that
// windows wins (in order) need and cache does not hold, when there are at
// least minParallelGather of them and they are under general compression
// (each a decompression: windows of Zstd, whose single chunks a take of a
// few hundred rows otherwise decodes one after another); the windows then
// cut their rows from the cache.
func (f *File) predecodeChunks(p *page, m *denseMeta, wins [][2]uint64, cache pageCache) error {
	mb := m.mb
	if cache.chunks == nil || len(wins) < minParallelGather ||
		mb.ValueCompression.GetGeneral() == nil && mb.DefCompression.GetGeneral() == nil && mb.RepCompression.GetGeneral() == nil {
		return nil
	}
	var cs []int
	last := -1
	for _, w := range wins {
		c0, c1 := m.chunkSpan(w[0], w[1])
		if c0 > c1 || c1 >= len(m.refs) {
			return nil // (the window reports it)
		}
		for c := max(c0, last+1); c <= c1; c++ {
			if _, ok := cache.chunks[chunkKey{p, c}]; !ok {
				cs = append(cs, c)
			}
		}
		last = max(last, c1)
	}
	if len(cs) < minParallelGather {
		return nil
	}
	dcs := make([]*decodedChunk, len(cs))
	once := cache
	once.chunks = nil
	if err := par.Each(len(cs), func(k int) error {
		var err error
		dcs[k], err = f.chunk(p, m, cs[k], once)
		return err
	}); err != nil {
		return err
	}
	for k, c := range cs {
		cache.chunks[chunkKey{p, c}] = dcs[k]
	}
	return nil
}

// chunk returns decoded chunk c of a chunked page.
func (f *File) chunk(p *page, m *denseMeta, c int, cache pageCache) (*decodedChunk, error) {
	k := chunkKey{p, c}
	if dc, ok := cache.chunks[k]; ok {
		return dc, nil
	}
	r := m.refs[c]
	data, err := f.fetch(cache.raw, p.buffers[1].Position+uint64(r.Offset), uint64(r.Size))
	if err != nil {
		return nil, err
	}
	mb := m.mb
	layout := values.ChunkLayout{HasRep: mb.RepCompression != nil, HasDef: mb.DefCompression != nil, NumBuffers: int(mb.NumBuffers), Large: mb.HasLargeChunk}
	dc := &decodedChunk{}
	if dc.rep, dc.def, dc.vals, err = decodeOneChunk(mb, layout, structural.MaxVisibleDef(mb.Layers), data, r, c, nil, nil, m.fsst != nil); err != nil {
		return nil, err
	}
	if dc.vals.N != r.NumValues {
		return nil, fmt.Errorf("chunk %d decoded to %d values, holds %d: %w", c, dc.vals.N, r.NumValues, ErrCorrupt)
	}
	if cache.chunks != nil {
		cache.chunks[k] = dc
	}
	return dc, nil
}

func (f *File) chunkedWindowDense(p *page, m *denseMeta, a, b uint64, cache pageCache) (*pageData, error) {
	c0, c1 := m.chunkSpan(a, b)
	if c0 > c1 || c1 >= len(m.refs) {
		return nil, fmt.Errorf("rows [%d, %d) in none of %d chunks: %w", a, b, len(m.refs), ErrCorrupt)
	}
	chunks := make([]*decodedChunk, 0, c1-c0+1)
	for c := c0; c <= c1; c++ {
		dc, err := f.chunk(p, m, c, cache)
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, dc)
	}
	mb := m.mb
	pd := &pageData{layers: mb.Layers, dict: m.dict}
	// The level range [la, lb) and value range [va, vb) of the rows,
	// counted from the start of chunk c0.
	var la, lb, va, vb uint64
	if mb.RepCompression == nil {
		first := m.chunkRow[c0]
		la, lb = a-first, b-first
		va, vb = la, lb
	} else {
		maxVis := uint16(structural.MaxVisibleDef(mb.Layers))
		// Row chunkRow[c0] is the first row start of chunk c0 (its
		// preamble, if any, belongs to an earlier row).
		skip, stop := a-m.chunkRow[c0], b-m.chunkRow[c0]
		var at, vis, starts uint64
		foundA, foundB := false, false
		for _, dc := range chunks {
			dc.indexRows(m.maxRep, maxVis)
			n := uint64(len(dc.rowAt))
			if !foundA && skip < starts+n {
				k := skip - starts
				la, va, foundA = at+uint64(dc.rowAt[k]), vis+uint64(dc.visAt[k]), true
			}
			if stop < starts+n {
				k := stop - starts
				lb, vb, foundB = at+uint64(dc.rowAt[k]), vis+uint64(dc.visAt[k]), true
				break
			}
			starts += n
			at += uint64(len(dc.rep))
			vis += uint64(dc.visible)
		}
		if !foundB {
			lb, vb = at, vis
		}
		if !foundA || !foundB && starts < stop {
			return nil, fmt.Errorf("chunks %d..%d hold %d row starts from row %d, rows [%d, %d) asked: %w", c0, c1, starts, m.chunkRow[c0], a, b, ErrCorrupt)
		}
	}
	if mb.RepCompression != nil {
		pd.rep = levelRange(chunks, la, lb, func(dc *decodedChunk) []uint16 { return dc.rep })
	}
	if mb.DefCompression != nil {
		pd.def = levelRange(chunks, la, lb, func(dc *decodedChunk) []uint16 { return dc.def })
	}
	if mb.RepCompression == nil && uint64(len(pd.def)) != lb-la && pd.def != nil {
		return nil, fmt.Errorf("chunks hold %d levels for %d rows: %w", len(pd.def), lb-la, ErrCorrupt)
	}
	pd.numVisible = int(vb - va)
	var err error
	if pd.vals, err = blockRange(chunks, va, vb, m.fsst); err != nil {
		return nil, err
	}
	return pd, nil
}

// levelRange copies levels [la, lb) of the concatenated chunks.
func levelRange(chunks []*decodedChunk, la, lb uint64, get func(*decodedChunk) []uint16) []uint16 {
	out := make([]uint16, 0, lb-la)
	var at uint64
	for _, dc := range chunks {
		l := get(dc)
		s, e := at, at+uint64(len(l))
		at = e
		if e <= la || s >= lb {
			continue
		}
		out = append(out, l[max(s, la)-s:min(e, lb)-s]...)
	}
	return out
}

// blockRange copies values [va, vb) of the concatenated chunks. fsst, when
// not nil, is the table the chunks' values are still coded with: only the
// values copied are expanded.
func blockRange(chunks []*decodedChunk, va, vb uint64, fsst *values.FsstTable) (values.Block, error) {
	first := chunks[0].vals
	out := values.Block{Bits: first.Bits, Dims: first.Dims, NullItems: first.NullItems}
	if out.Variable() {
		out.Offsets = make([]uint64, 1, vb-va+1)
	}
	// Bits per value of every FSL layer's item validity.
	layerBits := make([]int, len(first.ItemValid))
	if len(first.ItemValid) > 0 {
		if len(first.Dims) != len(first.ItemValid) {
			return out, fmt.Errorf("item validity of %d layers for %d dimensions: %w", len(first.ItemValid), len(first.Dims), ErrCorrupt)
		}
		out.ItemValid = make([][]byte, len(first.ItemValid))
		per := 1
		for k := range layerBits {
			per *= first.Dims[k]
			layerBits[k] = per
		}
	}
	nbits := 0
	var at uint64
	for _, dc := range chunks {
		v := dc.vals
		s, e := at, at+uint64(v.N)
		at = e
		if e <= va || s >= vb {
			continue
		}
		lo, hi := int(max(s, va)-s), int(min(e, vb)-s)
		if fsst != nil {
			var err error
			if v, err = expandRange(fsst, v, lo, hi); err != nil {
				return out, err
			}
			lo, hi = 0, hi-lo
		}
		if v.Bits != out.Bits || v.Variable() != out.Variable() || len(v.ItemValid) != len(out.ItemValid) || v.Children != nil {
			return out, fmt.Errorf("chunks decoded to different forms: %w", ErrCorrupt)
		}
		switch {
		case v.NullItems:
		case v.Variable():
			if len(v.Offsets) < hi+1 || v.Offsets[hi] > uint64(len(v.Data)) || v.Offsets[lo] > v.Offsets[hi] {
				return out, fmt.Errorf("chunk offsets do not cover %d values: %w", hi, ErrCorrupt)
			}
			base := uint64(len(out.Data)) - v.Offsets[lo]
			for _, o := range v.Offsets[lo+1 : hi+1] {
				out.Offsets = append(out.Offsets, base+o)
			}
			out.Data = append(out.Data, v.Data[v.Offsets[lo]:v.Offsets[hi]]...)
		case v.Bits%8 == 0:
			w := v.Bits / 8
			if len(v.Data) < hi*w {
				return out, fmt.Errorf("chunk of %d bytes holds %d values of %d bits: %w", len(v.Data), hi, v.Bits, ErrCorrupt)
			}
			out.Data = append(out.Data, v.Data[lo*w:hi*w]...)
		default:
			if len(v.Data)*8 < hi*v.Bits {
				return out, fmt.Errorf("chunk of %d bytes holds %d values of %d bits: %w", len(v.Data), hi, v.Bits, ErrCorrupt)
			}
			out.Data = appendBitsFrom(out.Data, nbits, v.Data, lo*v.Bits, (hi-lo)*v.Bits)
			nbits += (hi - lo) * v.Bits
		}
		for k, lb := range layerBits {
			if (v.ItemValid[k] == nil) != (first.ItemValid[k] == nil) {
				return out, fmt.Errorf("chunks disagree on item validity: %w", ErrCorrupt)
			}
			if v.ItemValid[k] != nil {
				if len(v.ItemValid[k])*8 < hi*lb {
					return out, fmt.Errorf("chunk item validity too short: %w", ErrCorrupt)
				}
				out.ItemValid[k] = appendBitsFrom(out.ItemValid[k], out.N*lb, v.ItemValid[k], lo*lb, (hi-lo)*lb)
			}
		}
		out.N += hi - lo
	}
	return out, nil
}

// expandRange expands values [lo, hi) of an FSST-coded variable block.
func expandRange(t *values.FsstTable, v values.Block, lo, hi int) (values.Block, error) {
	if !v.Variable() || len(v.Offsets) < hi+1 || v.Offsets[hi] > uint64(len(v.Data)) || v.Offsets[lo] > v.Offsets[hi] {
		return values.Block{}, fmt.Errorf("fsst-coded chunk offsets do not cover %d values: %w", hi, ErrCorrupt)
	}
	base := v.Offsets[lo]
	offs := make([]uint64, hi-lo+1)
	for i := range offs {
		o := v.Offsets[lo+i]
		if o < base || o > v.Offsets[hi] {
			return values.Block{}, fmt.Errorf("fsst-coded chunk offsets decrease: %w", ErrCorrupt)
		}
		offs[i] = o - base
	}
	return t.DecodeBlock(values.Block{N: hi - lo, Offsets: offs, Data: v.Data[base:v.Offsets[hi]]})
}

// appendBitsFrom appends n bits of src from bit from at bit position at of
// dst.
func appendBitsFrom(dst []byte, at int, src []byte, from, n int) []byte {
	if need := (at + n + 7) / 8; len(dst) < need {
		dst = append(dst, make([]byte, need-len(dst))...)
	}
	bitutil.CopyBitmap(src, from, n, dst, at)
	return dst
}

// zippedRange returns the data byte range (relative to buffer 0) of rows
// [a, b) of a zipped page and, for indexed pages, the row offsets rebased
// to it (b-a+1 entries of 8 bytes).
func (f *File) zippedRange(p *page, m *denseMeta, a, b uint64, cache pageCache) (lo, hi uint64, index []byte, err error) {
	if m.stride > 0 {
		return a * m.stride, b * m.stride, nil, nil
	}
	w := m.idxWidth
	ent, err := f.fetch(cache.raw, p.buffers[1].Position+a*w, (b-a+1)*w)
	if err != nil {
		return 0, 0, nil, err
	}
	get := func(i uint64) uint64 {
		var v uint64
		for k := int(w) - 1; k >= 0; k-- {
			v = v<<8 | uint64(ent[i*w+uint64(k)])
		}
		return v
	}
	lo, hi = get(0), get(b-a)
	if lo > hi || hi > p.buffers[0].Size {
		return 0, 0, nil, fmt.Errorf("repetition index: rows [%d, %d) at bytes [%d, %d) of %d: %w", a, b, lo, hi, p.buffers[0].Size, ErrCorrupt)
	}
	if m.offBits == 0 {
		return lo, hi, nil, nil
	}
	index = make([]byte, 8*(b-a+1))
	prev := lo
	for i := uint64(0); i <= b-a; i++ {
		v := get(i)
		if v < prev || v > hi {
			return 0, 0, nil, fmt.Errorf("repetition index entry %d is %d (previous %d, range end %d): %w", a+i, v, prev, hi, ErrCorrupt)
		}
		prev = v
		putU64(index[8*i:], v-lo)
	}
	return lo, hi, index, nil
}

func putU64(b []byte, v uint64) {
	for k := range 8 {
		b[k] = byte(v >> (8 * k))
	}
}

func (f *File) zippedWindowDense(p *page, m *denseMeta, a, b uint64, cache pageCache) (*pageData, error) {
	lo, hi, index, err := f.zippedRange(p, m, a, b, cache)
	if err != nil {
		return nil, err
	}
	data, err := f.fetch(cache.raw, p.buffers[0].Position+lo, hi-lo)
	if err != nil {
		return nil, err
	}
	rows := b - a
	items, visible := rows, rows
	if m.lv.MaxRep > 0 {
		ic, vc, rc, err := values.ZippedCounts(data, m.lv, m.width, m.offBits)
		if err != nil {
			return nil, err
		}
		if uint64(rc) != rows {
			return nil, fmt.Errorf("zipped rows [%d, %d) hold %d row starts: %w", a, b, rc, ErrCorrupt)
		}
		items, visible = uint64(ic), uint64(vc)
	}
	if items > 1<<32 {
		return nil, fmt.Errorf("zipped window of %d items: %w", items, ErrCorrupt)
	}
	// The page description, restricted to the window.
	z := &enc21pb.FullZipLayout{
		BitsRep: m.z.BitsRep, BitsDef: m.z.BitsDef, Details: m.z.Details, ValueCompression: m.z.ValueCompression,
		Layers: m.z.Layers, NumItems: uint32(items), NumVisibleItems: uint32(visible),
	}
	bufs := [][]byte{data}
	if index != nil {
		bufs = append(bufs, index)
	}
	return decodeZippedWith(z, bufs, int(rows), m.fsst)
}

// denseWindow is a run's element window [a, b) of a dense page.
type denseWindow struct {
	p    *page
	m    *denseMeta
	a, b uint64
	ci   int // the page's column
}

// prefetchDense reads the byte ranges the runs of a take need from dense
// chunked and zipped pages they cover in part: the chunks of the runs' rows
// and the records of zipped rows, the latter after the repetition index
// entries that locate them. Each round is one batch of coalesced reads.
func (f *File) prefetchDense(layout []fieldColumns, runs []rowRun, raw *rawCache, cacheFor func(ci int) pageCache) error {
	// A window of a chunked page becomes the byte ranges of its chunks at
	// once; windows of zipped pages are kept for the rounds below.
	var want []byteRange
	var zipped, indexed []denseWindow
	var hintM *denseMeta
	hint := 0 // the chunk of the window before, if of the same page
	for _, fc := range layout {
		for k, ci := range fc.cols {
			dims := f.dims[ci]
			pages := f.columns[ci]
			// Pages the take will decode whole (gatherWhole) are read then,
			// whole: nothing to prefetch for them. Per-page tallies are
			// slices by page number; runs mostly come in row order, so
			// the page of the previous run is tried first.
			whole := make([]bool, len(pages))
			if rowLevels(fc.paths[k]) {
				n, rows := make([]int, len(pages)), make([]uint64, len(pages))
				pi := 0
				for _, r := range runs {
					if pi = pageNear(pages, uint64(r.start)*dims, pi); pi < len(pages) {
						n[pi]++
						rows[pi] += uint64(r.end - r.start)
					}
				}
				for pi, c := range n {
					if c > 0 {
						whole[pi] = f.gatherMode(pages[pi], fc.paths[k], c, rows[pi], dims) == gatherWhole
					}
				}
			}
			metas := make([]*denseMeta, len(pages))
			first := 0
			for _, r := range runs {
				es, ee := uint64(r.start)*dims, uint64(r.end)*dims
				first = pageNear(pages, es, first)
				for pi := first; pi < len(pages) && pages[pi].firstRow < ee; pi++ {
					p := pages[pi]
					a, b := max(es, p.firstRow)-p.firstRow, min(ee, p.firstRow+p.rows)-p.firstRow
					if !f.denseWindowed(p) || a == 0 && b == p.rows || a >= b || whole[pi] {
						continue
					}
					if metas[pi] == nil {
						m, err := f.denseMetaFor(p)
						if err != nil {
							return fmt.Errorf("column %q: page %d: %w", f.leaves[ci].Path, pi, err)
						}
						metas[pi] = m
					}
					m := metas[pi]
					if m.mb == nil {
						zipped = append(zipped, denseWindow{p, m, a, b, ci})
						continue
					}
					if m != hintM {
						hintM, hint = m, 0
					}
					c0, c1 := m.chunkSpanFrom(a, b, hint)
					hint = c1
					for c := c0; c <= c1 && c < len(m.refs); c++ {
						r := m.refs[c]
						br := byteRange{p.buffers[1].Position + uint64(r.Offset), uint64(r.Size)}
						if n := len(want); n > 0 && want[n-1] == br {
							continue // the chunk of the window before
						}
						want = append(want, br)
					}
				}
			}
		}
	}
	for _, w := range zipped {
		switch {
		case w.m.stride > 0:
			want = append(want, byteRange{w.p.buffers[0].Position + w.a*w.m.stride, (w.b - w.a) * w.m.stride})
		default:
			iw := w.m.idxWidth
			want = append(want, byteRange{w.p.buffers[1].Position + w.a*iw, (w.b - w.a + 1) * iw})
			indexed = append(indexed, w)
		}
	}
	if err := f.prefetch(raw, want); err != nil {
		return err
	}
	want = want[:0]
	for _, w := range indexed {
		lo, hi, _, err := f.zippedRange(w.p, w.m, w.a, w.b, cacheFor(w.ci))
		if err != nil {
			return fmt.Errorf("column %q: %w", f.leaves[w.ci].Path, err)
		}
		want = append(want, byteRange{w.p.buffers[0].Position + lo, hi - lo})
	}
	return f.prefetch(raw, want)
}

// pageNear is sortSearchPages that first tries page hint and the one after
// it (a take's runs mostly come in row order).
func pageNear(pages []*page, e uint64, hint int) int {
	for pi := hint; pi < min(hint+2, len(pages)); pi++ {
		if p := pages[pi]; p.firstRow <= e && e < p.firstRow+p.rows && (pi == 0 || pages[pi-1].firstRow+pages[pi-1].rows <= e) {
			return pi
		}
	}
	return sortSearchPages(pages, e)
}

// sortSearchPages returns the first page holding elements at or after e.
func sortSearchPages(pages []*page, e uint64) int {
	return sort.Search(len(pages), func(k int) bool { return pages[k].firstRow+pages[k].rows > e })
}
