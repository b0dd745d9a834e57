package reader

import (
	"fmt"
	"sort"
	"sync"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Dense chunked and zipped pages are read by row window when a read covers
// part of a page. The first such read loads the page's addressing metadata
// once and keeps it for the File's lifetime (denseMeta): the chunk words
// (buffer 0) decoded into chunk locations, the row each chunk starts (from
// value counts, or from the repetition index of pages with lists) and the
// decoded dictionary; for zipped pages the record stride or the width of
// the repetition index entries. The zipped repetition index itself
// ((rows+1) entries) is not cached: a read fetches the entries of its rows.

// denseMeta is the cached addressing metadata of one dense page.
type denseMeta struct {
	// Chunked pages.
	mb       *enc21pb.MiniBlockLayout
	refs     []values.ChunkRef
	chunkRow []uint64 // chunkRow[c]: first row starting in chunk c; chunkRow[len(refs)] = rows
	trailer  []bool   // chunk c ends inside a row continued in chunk c+1
	dict     *values.Block
	maxRep   uint16

	// Zipped pages.
	z        *enc21pb.FullZipLayout
	lv       values.ZipLevels
	stride   uint64            // record bytes of fixed-width pages without repetition (0: indexed)
	width    int               // value bytes of fixed-width records (0: variable)
	offBits  int               // length prefix bits of variable-width records
	idxWidth uint64            // bytes per repetition index entry
	phantom  bool              // legacy 1-byte control words recorded as zero bits
	fsst     *values.FsstTable // the FSST table of the values, parsed once

	bytes uint64 // memory held, for the cache budget
}

// denseCache holds the metadata of the dense pages read by window so far.
type denseCache struct {
	mu    sync.Mutex
	pages map[*page]*denseMeta
	bytes uint64
}

// denseCacheAllowance is what the cache may hold beyond twice the file's
// size: entries past the budget are used for one read and not kept.
var denseCacheAllowance uint64 = 64 << 20

// denseWindowed reports whether reads of part of a dense page decode only
// the chunks or records of the rows they ask for: chunked pages without
// lists or with a repetition index, and zipped pages.
func (f *File) denseWindowed(p *page) bool {
	if f.paths.noDenseWindows || p.sparse != nil || p.layout == nil {
		return false
	}
	switch x := p.layout.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		m := x.MiniBlockLayout
		return m.RepCompression == nil || m.RepetitionIndexDepth > 0
	case *enc21pb.PageLayout_FullZipLayout:
		return x.FullZipLayout.NumItems > 0
	}
	return false
}

// denseMetaFor returns the metadata of a dense page, loading it on first
// use.
func (f *File) denseMetaFor(p *page) (*denseMeta, error) {
	c := &f.denseCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.pages[p]; ok {
		return m, nil
	}
	m, err := f.loadDenseMeta(p)
	if err != nil {
		return nil, err
	}
	if c.bytes+m.bytes <= 2*uint64(f.size)+denseCacheAllowance {
		if c.pages == nil {
			c.pages = map[*page]*denseMeta{}
		}
		c.pages[p] = m
		c.bytes += m.bytes
	}
	return m, nil
}

func (f *File) loadDenseMeta(p *page) (*denseMeta, error) {
	switch x := p.layout.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		return f.loadChunkedMeta(p, x.MiniBlockLayout)
	case *enc21pb.PageLayout_FullZipLayout:
		return loadZippedMeta(p, x.FullZipLayout)
	}
	return nil, fmt.Errorf("window of a %s page: %w", p.cell(), ErrUnsupported)
}

// maxRepIndexDepth bounds the repetition index depth a page may declare
// (writers write 1).
const maxRepIndexDepth = 16

func (f *File) loadChunkedMeta(p *page, mb *enc21pb.MiniBlockLayout) (*denseMeta, error) {
	if mb.NumBuffers == 0 || mb.NumBuffers > 16 {
		return nil, fmt.Errorf("mini-block page with %d value buffers: %w", mb.NumBuffers, ErrCorrupt)
	}
	if mb.NumItems > 1<<40 {
		return nil, fmt.Errorf("mini-block page with %d items: %w", mb.NumItems, ErrCorrupt)
	}
	hasRep := mb.RepCompression != nil
	if !hasRep && mb.NumItems != p.rows {
		return nil, fmt.Errorf("mini-block page has %d items for %d rows: %w", mb.NumItems, p.rows, ErrCorrupt)
	}
	depth := uint64(mb.RepetitionIndexDepth)
	if depth > maxRepIndexDepth {
		return nil, fmt.Errorf("repetition index depth %d: %w", depth, ErrCorrupt)
	}
	// Chunk words, dictionary and repetition index in one batch.
	var want []byteRange
	want = append(want, byteRange{p.buffers[0].Position, p.buffers[0].Size})
	if mb.Dictionary != nil {
		want = append(want, byteRange{p.buffers[2].Position, p.buffers[2].Size})
	}
	last := p.buffers[len(p.buffers)-1]
	if depth > 0 {
		want = append(want, byteRange{last.Position, last.Size})
	}
	var rc rawCache
	if err := f.prefetch(&rc, want); err != nil {
		return nil, err
	}
	get := func(r byteRange) []byte {
		b, _ := rc.lookup(r.off, r.n)
		return b
	}
	words := get(want[0])
	refs, err := values.ParseChunkMeta(words, mb.HasLargeChunk, int(min(p.buffers[1].Size, 1<<62)), mb.NumItems)
	if err != nil {
		return nil, err
	}
	m := &denseMeta{mb: mb, refs: refs, chunkRow: make([]uint64, len(refs)+1), trailer: make([]bool, len(refs))}
	m.bytes = uint64(len(refs))*(48+9) + 8
	m.maxRep = uint16(structural.NumLists(mb.Layers))
	if fs, _ := values.FsstCoded(mb.ValueCompression); fs != nil {
		if m.fsst, err = values.ParseFsstTable(fs.SymbolTable); err != nil {
			return nil, fmt.Errorf("fsst values: %w", err)
		}
		m.bytes += 8 << 10
	}
	if mb.Dictionary != nil {
		db := get(want[1])
		if mb.NumDictionaryItems > 1<<32 || !backed(mb.NumDictionaryItems, uint64(len(db))) {
			return nil, fmt.Errorf("dictionary of %d items: %w", mb.NumDictionaryItems, ErrCorrupt)
		}
		d, err := values.DecodeBlock(mb.Dictionary, db, int(mb.NumDictionaryItems))
		if err != nil {
			return nil, fmt.Errorf("dictionary: %w", err)
		}
		m.dict = &d
		m.bytes += uint64(len(d.Data)) + 8*uint64(len(d.Offsets))
	}
	if !hasRep {
		for c, r := range refs {
			m.chunkRow[c] = uint64(r.FirstValue)
		}
		m.chunkRow[len(refs)] = mb.NumItems
		return m, nil
	}
	if m.chunkRow, m.trailer, err = values.ParseRepIndex(get(want[len(want)-1]), len(refs), depth, p.rows); err != nil {
		return nil, err
	}
	return m, nil
}

// chunkSpan returns the chunks [c0, c1] holding rows [a, b) (a < b).
func (m *denseMeta) chunkSpan(a, b uint64) (int, int) {
	return m.chunkSpanFrom(a, b, 0)
}

// chunkOf returns the first chunk whose rows end after row r, trying chunk
// from and the next one before searching: the windows of a take come in
// row order, most in the chunk of the window before or the next.
func (m *denseMeta) chunkOf(r uint64, from int) int {
	n := len(m.refs)
	if from < 0 || from >= n || m.chunkRow[from] > r {
		from = 0
	}
	// Chunks before from end at or before chunkRow[from] <= r.
	for k := from; k < min(from+2, n); k++ {
		if m.chunkRow[k+1] > r {
			return k
		}
	}
	from = min(from+2, n)
	return from + sort.Search(n-from, func(c int) bool { return m.chunkRow[from+c+1] > r })
}

// chunkSpanFrom is chunkSpan looking first at chunk from (see chunkOf).
func (m *denseMeta) chunkSpanFrom(a, b uint64, from int) (int, int) {
	n := len(m.refs)
	c0 := m.chunkOf(a, from)
	c1 := m.chunkOf(b-1, c0)
	// A row that ends a chunk may continue into the next ones.
	if c1 < n && m.chunkRow[c1+1] == b {
		for c1 < n-1 && m.trailer[c1] {
			c1++
		}
	}
	return c0, min(c1, n-1)
}

func loadZippedMeta(p *page, z *enc21pb.FullZipLayout) (*denseMeta, error) {
	R := structural.NumLists(z.Layers)
	m := &denseMeta{z: z, bytes: 64}
	m.lv = values.ZipLevels{BitsRep: int(z.BitsRep), BitsDef: int(z.BitsDef), MaxRep: R, MaxVisibleDef: structural.MaxVisibleDef(z.Layers)}
	if m.lv.BitsRep < 0 || m.lv.BitsDef < 0 || m.lv.BitsRep+m.lv.BitsDef > 32 {
		return nil, fmt.Errorf("zipped control words of %d+%d bits: %w", z.BitsRep, z.BitsDef, ErrCorrupt)
	}
	if R == 0 && uint64(z.NumItems) != p.rows {
		return nil, fmt.Errorf("zipped page has %d items for %d rows: %w", z.NumItems, p.rows, ErrCorrupt)
	}
	data := p.buffers[0].Size
	switch d := z.Details.(type) {
	case *enc21pb.FullZipLayout_BitsPerValue:
		bits := d.BitsPerValue
		if bits == 0 || bits%8 != 0 || bits > 1<<24 {
			return nil, fmt.Errorf("zipped values of %d bits: %w", bits, ErrCorrupt)
		}
		m.width = int(bits / 8)
		if R == 0 {
			cw := uint64(m.lv.WordBytes())
			if cw == 0 && p.rows > 0 && p.rows < 1<<40 && values.LegacyPhantomControlWords(int(min(data, 1<<62)), int(p.rows), m.width) {
				m.phantom, cw = true, 1
			}
			m.stride = cw + uint64(m.width)
			if p.rows > data/m.stride || m.stride*p.rows != data {
				return nil, fmt.Errorf("zipped page of %d bytes for %d records of %d bytes: %w", data, p.rows, m.stride, ErrCorrupt)
			}
			return m, nil
		}
	case *enc21pb.FullZipLayout_BitsPerOffset:
		m.offBits = int(d.BitsPerOffset)
		if m.offBits != 32 && m.offBits != 64 {
			return nil, fmt.Errorf("zipped length prefix of %d bits: %w", m.offBits, ErrCorrupt)
		}
		var err error
		if m.fsst, err = fsstTable(z.ValueCompression); err != nil {
			return nil, err
		}
		if m.fsst != nil {
			m.bytes += 8 << 10
		}
	default:
		return nil, fmt.Errorf("zipped page without addressing: %w", ErrCorrupt)
	}
	if len(p.buffers) != 2 {
		return nil, fmt.Errorf("zipped page without a repetition index: %w", ErrCorrupt)
	}
	is := p.buffers[1].Size
	if p.rows >= is || is%(p.rows+1) != 0 {
		return nil, fmt.Errorf("repetition index of %d bytes for %d rows: %w", is, p.rows, ErrCorrupt)
	}
	m.idxWidth = is / (p.rows + 1)
	if w := m.idxWidth; w != 1 && w != 2 && w != 4 && w != 8 {
		return nil, fmt.Errorf("repetition index of %d-byte entries: %w", w, ErrCorrupt)
	}
	return m, nil
}
