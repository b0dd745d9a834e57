package reader

import (
	"fmt"
	"slices"

	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// decodeSparseWindow decodes elements [a, b) of a sparse page: the cached
// structure sliced to the window's top-level slots, and the values of the
// leaf slots inside, fetched by value ordinal (zipped), by chunk (chunked)
// or by item (indexed).
func (f *File) decodeSparseWindow(p *page, path []structural.Step, a, b uint64, cache pageCache) ([]structural.LayerData, *pageData, error) {
	m, err := f.sparseMetaFor(p, path)
	if err != nil {
		return nil, nil, err
	}
	lds, s0, s1, err := m.window(p, a, b)
	if err != nil {
		return nil, nil, err
	}
	pd, err := f.slotValues(p, m, s0, s1, cache)
	if err != nil {
		return nil, nil, err
	}
	return lds, pd, nil
}

// window checks element window [a, b) of sparse page p and expands its
// structure: the layers and the leaf slots [s0, s1).
func (m *sparseMeta) window(p *page, a, b uint64) ([]structural.LayerData, int, int, error) {
	lo, hi, err := m.topSlots(p, a, b)
	if err != nil {
		return nil, 0, 0, err
	}
	lds, s0, s1 := m.ix.Window(lo, hi)
	return lds, s0, s1, nil
}

// topSlots checks element window [a, b) of sparse page p and returns its
// top-level slots.
func (m *sparseMeta) topSlots(p *page, a, b uint64) (int, int, error) {
	if a > b || b > p.rows || a%m.scale != 0 || b%m.scale != 0 {
		return 0, 0, fmt.Errorf("window [%d, %d) of a sparse page of %d elements in rows of %d: %w", a, b, p.rows, m.scale, ErrCorrupt)
	}
	return int(a / m.scale), int(b / m.scale), nil
}

// slotValues decodes the values of leaf slots [s0, s1) of a sparse page.
func (f *File) slotValues(p *page, m *sparseMeta, s0, s1 int, cache pageCache) (*pageData, error) {
	pd := &pageData{numVisible: s1 - s0}
	var err error
	switch c := p.sparse.GetValues().GetCodec().(type) {
	case *enc23pb.ValuePlane_None:
		pd.allNull = true
	case *enc23pb.ValuePlane_Constant:
		pd.constant = c.Constant.Scalar
	case *enc23pb.ValuePlane_Zipped:
		vals, err := f.zippedSlots(p, m, s0, s1, cache)
		if err != nil {
			return nil, err
		}
		if pd.vals, err = scatter(vals, m.aliveSlots(s0, s1)); err != nil {
			return nil, err
		}
	case *enc23pb.ValuePlane_Chunked:
		if s0 == s1 {
			pd.allNull = true
			break
		}
		if pd.vals, pd.dict, err = f.chunkedSlots(p, c.Chunked, m, s0, s1, cache); err != nil {
			return nil, err
		}
	case *enc23pb.ValuePlane_Indexed:
		if pd.vals, pd.dict, err = f.indexedSlots(p, m, s0, s1, cache); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("sparse value codec %T: %w", c, ErrUnsupported)
	}
	return pd, nil
}

// zippedSlots fetches and decodes the stored values of the materialized
// slots among leaf slots [s0, s1): value ordinals [k0, k1), one contiguous
// byte range of buffer 0 (taken from what a take prefetched when it can).
func (f *File) zippedSlots(p *page, m *sparseMeta, s0, s1 int, cache pageCache) (values.Block, error) {
	return f.zippedOrdinals(p, m, m.ordinal(s0), m.ordinal(s1), cache)
}

// zippedOrdinals fetches and decodes the stored values of value ordinals
// [k0, k1).
func (f *File) zippedOrdinals(p *page, m *sparseMeta, k0, k1 int, cache pageCache) (values.Block, error) {
	data, ok := cache.prefetched(p, m, k0, k1)
	if !ok {
		var err error
		if data, err = f.zippedBytes(p, m, k0, k1); err != nil {
			return values.Block{}, err
		}
	}
	if m.width > 0 {
		return perValueFixed(m.zipped.ValueCompression, data, k1-k0, int(8*m.width))
	}
	return zippedRecords(m.zipped, m.fsst, data, k1-k0, m.offBits)
}

// zippedRecords decodes n variable-width zipped records without control
// words (a length prefix of offBits bits, then the value as stored) and
// undoes their per-value codec (with fsst, when not nil, the page's parsed
// FSST table).
func zippedRecords(fz *enc21pb.FullZipLayout, fsst *values.FsstTable, data []byte, n, offBits int) (values.Block, error) {
	lv := values.ZipLevels{MaxVisibleDef: structural.MaxVisibleDef(fz.Layers)}
	zp, err := values.ParseZippedVariable(data, nil, lv, n, n, n, offBits)
	if err != nil {
		return values.Block{}, err
	}
	in := values.Block{N: n, Offsets: zp.Offsets, Data: zp.VarData}
	if fsst != nil {
		return fsst.DecodeBlock(in)
	}
	return perValueVariable(fz.ValueCompression, in)
}

// fetchKey names one value chunk or one dictionary item of a sparse page.
type fetchKey struct {
	p *page
	k int
}

// sparseChunk is one decoded value chunk of a sparse chunked page.
type sparseChunk struct {
	vals values.Block
	dict *values.Block
}

// chunkedSlots fetches the chunks holding leaf slots [s0, s1), decodes
// them and keeps those slots. Chunks the call has not fetched yet are read
// with one request per contiguous run; the call keeps them (cache), so a
// take of many rows reads each chunk once.
func (f *File) chunkedSlots(p *page, ch *enc23pb.ChunkedValues, m *sparseMeta, s0, s1 int, cache pageCache) (values.Block, *values.Block, error) {
	c0, c1 := m.chunkOf(s0), m.chunkOf(s1-1)
	if c0 < 0 || c1 < c0 {
		return values.Block{}, nil, fmt.Errorf("leaf slots [%d, %d) outside the chunks: %w", s0, s1, ErrCorrupt)
	}
	if c0 == c1 {
		// One chunk (a take's run, typically): decoded once per call.
		if dc, ok := cache.sparseChunks[fetchKey{p, c0}]; ok {
			vals, err := sliceBlock(dc.vals, s0-m.chunks[c0].FirstValue, s1-m.chunks[c0].FirstValue)
			return vals, dc.dict, err
		}
	}
	lo := m.chunks[c0]
	cs := make([]int, c1-c0+1)
	for k := range cs {
		cs[k] = c0 + k
	}
	parts, whole, err := f.fetchChunks(p, m, cs, cache)
	if err != nil {
		return values.Block{}, nil, err
	}
	data := whole // the whole window in one read: no copy
	if data == nil {
		for _, b := range parts {
			data = append(data, b...)
		}
	}
	dc, err := decodeSparseChunks(ch, m, c0, c1, data)
	if err != nil {
		return values.Block{}, nil, err
	}
	if c0 == c1 {
		cache.sparseChunks[fetchKey{p, c0}] = dc
	}
	vals, err := sliceBlock(dc.vals, s0-lo.FirstValue, s1-lo.FirstValue)
	if err != nil {
		return values.Block{}, nil, err
	}
	return vals, dc.dict, nil
}

// decodeSparseChunks decodes chunks c0..c1 of a sparse chunked page from
// their bytes, data.
func decodeSparseChunks(ch *enc23pb.ChunkedValues, m *sparseMeta, c0, c1 int, data []byte) (sparseChunk, error) {
	lo, last := m.chunks[c0], m.chunks[c1]
	items := last.FirstValue + last.NumValues - lo.FirstValue
	// (The values' dictionary is the page's, decoded with its metadata.)
	mb := &enc21pb.MiniBlockLayout{
		ValueCompression: ch.Compression, NumBuffers: ch.NumBuffers, NumItems: uint64(items), HasLargeChunk: true,
		Layers: []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM},
	}
	dp, err := decodeChunkedPage(mb, [][]byte{m.chunkWords[4*c0 : 4*(c1+1)], data}, items)
	if err != nil {
		return sparseChunk{}, err
	}
	return sparseChunk{vals: dp.vals, dict: m.chunkDict}, nil
}

// chunkOf is the chunk of a sparse chunked page holding leaf slot s (-1
// when none does).
func (m *sparseMeta) chunkOf(s int) int {
	c, found := slices.BinarySearchFunc(m.chunks, s, func(c values.ChunkRef, s int) int { return c.FirstValue - s })
	if !found {
		c--
	}
	return c
}

// fetchChunks returns the stored bytes of chunks cs (increasing) of a
// sparse chunked page: from what the call fetched before, else read with
// one request per run of adjacent chunks not fetched yet (kept in cache).
// whole is the chunks' bytes in one piece when one request read them all.
func (f *File) fetchChunks(p *page, m *sparseMeta, cs []int, cache pageCache) (parts [][]byte, whole []byte, err error) {
	parts = make([][]byte, len(cs))
	for i := 0; i < len(cs); {
		if b, ok := cache.fetched[fetchKey{p, cs[i]}]; ok {
			parts[i] = b
			i++
			continue
		}
		j := i + 1
		for j < len(cs) && cs[j] == cs[j-1]+1 && cache.fetched[fetchKey{p, cs[j]}] == nil {
			j++
		}
		first, last := m.chunks[cs[i]], m.chunks[cs[j-1]]
		run, err := f.readAt(p.buffers[1].Position+uint64(first.Offset), uint64(last.Offset+last.Size-first.Offset))
		if err != nil {
			return nil, nil, err
		}
		for k := i; k < j; k++ {
			at := m.chunks[cs[k]].Offset - first.Offset
			parts[k] = run[at : at+m.chunks[cs[k]].Size]
			cache.fetched[fetchKey{p, cs[k]}] = parts[k]
		}
		if i == 0 && j == len(cs) {
			whole = run
		}
		i = j
	}
	return parts, whole, nil
}

// decodeTakeChunks decodes, side by side, the chunks a take's windows of a
// sparse chunked page need (leaf: each window's leaf slots), each once,
// into the call's cache, which chunkedSlots then serves them from. The
// chunks not fetched yet are read with one request per run of adjacent
// ones. Windows across chunks are left to chunkedSlots.
func (f *File) decodeTakeChunks(p *page, ch *enc23pb.ChunkedValues, m *sparseMeta, leaf [][2]int, cache pageCache) error {
	var need []int
	for _, ls := range leaf {
		if ls[0] == ls[1] {
			continue
		}
		c := m.chunkOf(ls[0])
		if c < 0 || c != m.chunkOf(ls[1]-1) {
			continue
		}
		if _, ok := cache.sparseChunks[fetchKey{p, c}]; ok || len(need) > 0 && need[len(need)-1] == c {
			continue
		}
		need = append(need, c)
	}
	slices.Sort(need)
	need = slices.Compact(need)
	if len(need) < 2 {
		return nil
	}
	data, _, err := f.fetchChunks(p, m, need, cache)
	if err != nil {
		return err
	}
	decoded := make([]sparseChunk, len(need))
	if err := par.Each(len(need), func(i int) error {
		var err error
		decoded[i], err = decodeSparseChunks(ch, m, need[i], need[i], data[i])
		return err
	}); err != nil {
		return err
	}
	for i, c := range need {
		cache.sparseChunks[fetchKey{p, c}] = decoded[i]
	}
	return nil
}

// indexedSlots returns the indices of leaf slots [s0, s1) and a
// dictionary of just the items their materialized slots name, behind an
// empty item 0 that the other slots name. Items the call has not fetched
// yet are read with one request per run of consecutive items; the call
// keeps them decoded (cache).
func (f *File) indexedSlots(p *page, m *sparseMeta, s0, s1 int, cache pageCache) (values.Block, *values.Block, error) {
	alive := m.aliveSlots(s0, s1)
	var need []uint32
	for s := s0; s < s1; s++ {
		if alive[s-s0] {
			need = append(need, le32(m.indices.Data[4*s:]))
		}
	}
	slices.Sort(need)
	need = slices.Compact(need)
	fetched := func(i int) bool {
		_, ok := cache.fetched[fetchKey{p, int(need[i])}]
		return ok
	}
	for i := 0; i < len(need); {
		if fetched(i) {
			i++
			continue
		}
		j := i + 1
		for j < len(need) && need[j] == need[j-1]+1 && !fetched(j) {
			j++
		}
		lo, hi := m.itemIndex.Offset(int(need[i])), m.itemIndex.Offset(int(need[j-1])+1)
		data, err := f.readAt(p.buffers[1].Position+lo, hi-lo)
		if err != nil {
			return values.Block{}, nil, err
		}
		run, err := zippedRecords(m.itemZipped, m.itemFsst, data, j-i, m.itemBits)
		if err != nil {
			return values.Block{}, nil, fmt.Errorf("indexed dictionary items: %w", err)
		}
		if !run.Variable() || run.N != j-i {
			return values.Block{}, nil, fmt.Errorf("indexed dictionary items decoded as %d %d-bit values: %w", run.N, run.Bits, ErrCorrupt)
		}
		for k := i; k < j; k++ {
			cache.fetched[fetchKey{p, int(need[k])}] = run.Data[run.Offsets[k-i]:run.Offsets[k-i+1]]
		}
		i = j
	}
	dict := values.Block{N: 1 + len(need), Offsets: make([]uint64, 2, len(need)+2)}
	for _, k := range need {
		dict.Data = append(dict.Data, cache.fetched[fetchKey{p, int(k)}]...)
		dict.Offsets = append(dict.Offsets, uint64(len(dict.Data)))
	}
	idx := values.Block{Bits: 32, N: s1 - s0, Data: make([]byte, 4*(s1-s0))}
	for s := s0; s < s1; s++ {
		if !alive[s-s0] {
			continue
		}
		k, _ := slices.BinarySearch(need, le32(m.indices.Data[4*s:]))
		putLE32(idx.Data[4*(s-s0):], uint32(k+1))
	}
	return idx, &dict, nil
}

func putLE32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// sliceBlock returns values [i, j) of a decoded block.
func sliceBlock(b values.Block, i, j int) (values.Block, error) {
	if i < 0 || j < i || j > b.N {
		return values.Block{}, fmt.Errorf("values [%d, %d) of %d: %w", i, j, b.N, ErrCorrupt)
	}
	out := values.Block{Bits: b.Bits, N: j - i, Dims: b.Dims, NullItems: b.NullItems}
	switch {
	case b.Children != nil:
		out.Children = make([]values.Block, len(b.Children))
		for k, c := range b.Children {
			var err error
			if out.Children[k], err = sliceBlock(c, i, j); err != nil {
				return values.Block{}, err
			}
		}
	case b.NullItems:
	case b.Variable():
		if len(b.Offsets) != b.N+1 {
			return values.Block{}, fmt.Errorf("%d offsets for %d values: %w", len(b.Offsets), b.N, ErrCorrupt)
		}
		lo, hi := b.Offsets[i], b.Offsets[j]
		if lo > hi || hi > uint64(len(b.Data)) {
			return values.Block{}, fmt.Errorf("value bytes [%d, %d) of %d: %w", lo, hi, len(b.Data), ErrCorrupt)
		}
		out.Data = b.Data[lo:hi:hi]
		out.Offsets = make([]uint64, j-i+1)
		for k := range out.Offsets {
			out.Offsets[k] = b.Offsets[i+k] - lo
		}
	default:
		var err error
		if out.Data, err = sliceBits(b.Data, i*b.Bits, j*b.Bits); err != nil {
			return values.Block{}, err
		}
	}
	if len(b.ItemValid) > 0 {
		if len(b.Dims) != len(b.ItemValid) {
			return values.Block{}, fmt.Errorf("item validity of %d layers for %d dimensions: %w", len(b.ItemValid), len(b.Dims), ErrCorrupt)
		}
		out.ItemValid = make([][]byte, len(b.ItemValid))
		per := 1
		for k, iv := range b.ItemValid {
			per *= b.Dims[k]
			if iv == nil {
				continue
			}
			var err error
			if out.ItemValid[k], err = sliceBits(iv, i*per, j*per); err != nil {
				return values.Block{}, err
			}
		}
	}
	return out, nil
}

// sliceBits returns bits [lo, hi) of b from bit 0 (sharing b when lo is
// byte aligned).
func sliceBits(b []byte, lo, hi int) ([]byte, error) {
	if hi > 8*len(b) {
		return nil, fmt.Errorf("bits [%d, %d) of %d bytes: %w", lo, hi, len(b), ErrCorrupt)
	}
	if lo%8 == 0 {
		end := (hi + 7) / 8
		return b[lo/8 : end : end], nil
	}
	return appendBitRange(nil, b, lo, hi), nil
}

// appendBitRange appends bits [lo, hi) of src to an empty dst, from bit 0.
func appendBitRange(dst, src []byte, lo, hi int) []byte {
	return appendBitsFrom(dst, 0, src, lo, hi-lo)
}
