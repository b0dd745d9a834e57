package reader

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// A sparse page is read in two steps. The first read of the page loads its
// metadata once and keeps it for the File's lifetime (sparseMeta): the
// structure as its stored position sets (structural.SparseIndex, which
// also ranks the materialized leaf slots) and whatever the value codec
// needs to address single values. Every read of
// the page, the first included, then fetches only the value bytes of the
// rows it asks for (cell_sparse_window.go).

// sparseMeta is the cached metadata of one sparse page.
type sparseMeta struct {
	// The page's structure as stored (its position sets), expanded per
	// window; for zipped and indexed values it also ranks the materialized
	// leaf slots (valid, under valid ancestors).
	ix    *structural.SparseIndex
	scale uint64 // page elements per top-level slot (ix.Scale(), as readRuns counts them)

	// Zipped values: the FullZip form of the description, the record width
	// in bytes (fixed-width addressing) or the offset index (variable).
	zipped  *enc21pb.FullZipLayout
	width   uint64
	offsets values.ZipRepIndex
	offBits int
	fsst    *values.FsstTable // the per-value FSST table, parsed once

	// Chunked values: the chunk words (buffer 0), their decoded locations
	// and the page dictionary (buffer 2) when there is one, decoded once:
	// every chunk's values index the same items, so the windows of a read
	// over several chunks join. (Decoded with each chunk, it cost a decode
	// per chunk a take touched, and the chunks' copies differed: a take of
	// 10,000 list rows built one array per row, 40 against 17 ms.)
	chunkWords []byte
	chunks     []values.ChunkRef
	chunkDict  *values.Block

	// Indexed values: one index per leaf slot and the item offset index.
	indices    values.Block
	itemZipped *enc21pb.FullZipLayout
	itemIndex  values.ZipRepIndex
	itemBits   int
	itemFsst   *values.FsstTable

	bytes uint64 // memory held, for the cache budget
}

// sparseCache holds the metadata of the sparse pages read so far.
type sparseCache struct {
	mu    sync.Mutex
	pages map[*page]*sparseMeta
	bytes uint64
}

// sparseCacheAllowance is what the cache may hold beyond twice the file's
// size: entries past the budget are used for one read and not kept (a
// variable for tests).
var sparseCacheAllowance uint64 = 64 << 20

// sparseMetaFor returns the metadata of a sparse page, loading it on first
// use.
func (f *File) sparseMetaFor(p *page, path []structural.Step) (*sparseMeta, error) {
	c := &f.sparseCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.pages[p]; ok {
		return m, nil
	}
	m, err := f.loadSparseMeta(p, path)
	if err != nil {
		return nil, err
	}
	if c.bytes+m.bytes <= 2*uint64(f.size)+sparseCacheAllowance {
		if c.pages == nil {
			c.pages = make(map[*page]*sparseMeta)
		}
		c.pages[p] = m
		c.bytes += m.bytes
	}
	return m, nil
}

// loadSparseMeta reads the structural buffers and the value codec's
// addressing buffers of a sparse page (no value bytes).
func (f *File) loadSparseMeta(p *page, path []structural.Step) (*sparseMeta, error) {
	vb, err := sparseValueBuffers(p.sparse.GetValues())
	if err != nil {
		return nil, err
	}
	if vb > len(p.buffers) {
		return nil, fmt.Errorf("sparse page has %d buffers, values need %d: %w", len(p.buffers), vb, ErrCorrupt)
	}
	bufs := make([][]byte, len(p.buffers))
	for i := vb; i < len(p.buffers); i++ {
		if bufs[i], err = f.readAt(p.buffers[i].Position, p.buffers[i].Size); err != nil {
			return nil, err
		}
	}
	ix, err := sparseIndex(p, bufs, path)
	if err != nil && vb > 0 && errors.Is(err, ErrCorrupt) {
		// The structure's slots must be backed by the whole page's bytes:
		// a large page whose structure is mostly metadata-only passes that
		// check only with its value buffers counted. Read them then.
		for i := 0; i < vb; i++ {
			if bufs[i], err = f.readAt(p.buffers[i].Position, p.buffers[i].Size); err != nil {
				return nil, err
			}
		}
		ix, err = sparseIndex(p, bufs, path)
	}
	if err != nil {
		return nil, err
	}
	// Page lengths count elements: rows times every structural
	// fixed-size-list dimension of the path (see readRuns).
	m := &sparseMeta{ix: ix, scale: uint64(ix.Scale())}
	if err := f.loadValueMeta(p, m); err != nil {
		return nil, err
	}
	m.bytes += ix.Bytes()
	return m, nil
}

// ordinal returns the number of materialized leaf slots before slot s (the
// value ordinal of slot s when it is materialized), 0 ≤ s ≤ leaf slots.
func (m *sparseMeta) ordinal(s int) int { return m.ix.Ordinal(s) }

// aliveSlots marks which of leaf slots [s0, s1) are materialized.
func (m *sparseMeta) aliveSlots(s0, s1 int) []bool {
	a := make([]bool, s1-s0)
	m.ix.Alive(a, s0)
	return a
}

// loadValueMeta reads and checks what the value codec needs to address
// values: nothing for fixed-width zipped, none and constant values.
func (f *File) loadValueMeta(p *page, m *sparseMeta) error {
	bufs := p.buffers
	switch c := p.sparse.GetValues().GetCodec().(type) {
	case *enc23pb.ValuePlane_None, *enc23pb.ValuePlane_Constant:
	case *enc23pb.ValuePlane_Zipped:
		n := m.ix.IndexMaterialized()
		z := c.Zipped
		if z.NumItems != uint64(n) || z.NumVisibleItems != uint64(n) {
			return fmt.Errorf("sparse zipped page stores %d values, %d materialized: %w", z.NumItems, n, ErrCorrupt)
		}
		fz, err := format21Zipped(z)
		if err != nil {
			return err
		}
		m.zipped = fz
		switch d := fz.Details.(type) {
		case *enc21pb.FullZipLayout_BitsPerValue:
			if d.BitsPerValue == 0 || d.BitsPerValue%8 != 0 {
				return fmt.Errorf("zipped values of %d bits: %w", d.BitsPerValue, ErrCorrupt)
			}
			m.width = uint64(d.BitsPerValue / 8)
			if hi, lo := bits.Mul64(m.width, uint64(n)); hi != 0 || lo != bufs[0].Size {
				return fmt.Errorf("sparse zipped page of %d bytes for %d values of %d bytes: %w", bufs[0].Size, n, m.width, ErrCorrupt)
			}
		case *enc21pb.FullZipLayout_BitsPerOffset:
			if d.BitsPerOffset != 32 && d.BitsPerOffset != 64 {
				return fmt.Errorf("zipped length prefix of %d bits: %w", d.BitsPerOffset, ErrCorrupt)
			}
			m.offBits = int(d.BitsPerOffset)
			if m.offsets, err = f.offsetIndex(bufs[1], n, bufs[0].Size); err != nil {
				return fmt.Errorf("sparse zipped offset index: %w", err)
			}
			if m.fsst, err = fsstTable(fz.ValueCompression); err != nil {
				return err
			}
			m.bytes += bufs[1].Size
		default:
			return fmt.Errorf("zipped page without addressing: %w", ErrCorrupt)
		}
	case *enc23pb.ValuePlane_Chunked:
		ch := c.Chunked
		if ch.Levels != nil {
			return fmt.Errorf("sparse chunked values with dense levels: %w", ErrCorrupt)
		}
		words, err := f.readAt(bufs[0].Position, bufs[0].Size)
		if err != nil {
			return err
		}
		if m.chunks, err = values.ParseChunkMeta(words, true, int(bufs[1].Size), uint64(m.ix.LeafSlots())); err != nil {
			return err
		}
		m.chunkWords = words
		m.bytes += uint64(len(words)) + 32*uint64(len(m.chunks))
		if ch.Dictionary != nil {
			// Counted decoded against the cache's budget.
			raw, err := f.readAt(bufs[2].Position, bufs[2].Size)
			if err != nil {
				return err
			}
			if m.chunkDict, err = decodePageDict(ch.Dictionary, raw, ch.NumDictionaryItems); err != nil {
				return err
			}
			m.bytes += uint64(len(m.chunkDict.Data)) + 8*uint64(len(m.chunkDict.Offsets))
		}
	case *enc23pb.ValuePlane_Indexed:
		return f.loadIndexedMeta(c.Indexed, bufs, m)
	default:
		return fmt.Errorf("sparse value codec %T: %w", c, ErrUnsupported)
	}
	return nil
}

// offsetIndex reads and validates the offset index of n zipped values
// stored in dataLen bytes: n+1 entries, the last one dataLen.
func (f *File) offsetIndex(r format.BufferRange, n int, dataLen uint64) (values.ZipRepIndex, error) {
	b, err := f.readAt(r.Position, r.Size)
	if err != nil {
		return values.ZipRepIndex{}, err
	}
	if dataLen > 1<<62 {
		return values.ZipRepIndex{}, fmt.Errorf("%d data bytes: %w", dataLen, ErrCorrupt)
	}
	x, err := values.ParseZipRepIndex(b, n, int(dataLen))
	if err != nil {
		return values.ZipRepIndex{}, err
	}
	if x.Offset(n) != dataLen {
		return values.ZipRepIndex{}, fmt.Errorf("offset index ends at %d, data has %d bytes: %w", x.Offset(n), dataLen, ErrCorrupt)
	}
	return x, nil
}

// loadIndexedMeta decodes the indices of an indexed value plane (buffer 0)
// and reads its item offset index (buffer 2); the items stay on disk.
func (f *File) loadIndexedMeta(ix *enc23pb.IndexedValues, bufs []format.BufferRange, m *sparseMeta) error {
	m.ix.IndexMaterialized()
	idxEnc, items := ix.GetIndices(), ix.GetItems()
	if idxEnc == nil || items == nil {
		return fmt.Errorf("indexed values without indices or items: %w", ErrCorrupt)
	}
	if items.NumItems == 0 || items.NumItems > 0xFFFFFFFF || items.NumItems != items.NumVisibleItems || items.Levels != nil {
		return fmt.Errorf("indexed dictionary of %d items (%d visible, levels %v): %w", items.NumItems, items.NumVisibleItems, items.Levels != nil, ErrCorrupt)
	}
	a, ok := items.Addressing.(*enc23pb.ZippedValues_BitsPerOffset)
	if !ok || (a.BitsPerOffset != 32 && a.BitsPerOffset != 64) {
		return fmt.Errorf("indexed dictionary items not addressed by 32- or 64-bit lengths: %w", ErrCorrupt)
	}
	// Every item has at least its length prefix.
	if items.NumItems > bufs[1].Size/uint64(a.BitsPerOffset/8) {
		return fmt.Errorf("indexed dictionary of %d items in %d bytes: %w", items.NumItems, bufs[1].Size, ErrCorrupt)
	}
	var err error
	if m.itemZipped, err = format21Zipped(items); err != nil {
		return err
	}
	m.itemBits = int(a.BitsPerOffset)
	if m.itemFsst, err = fsstTable(m.itemZipped.ValueCompression); err != nil {
		return err
	}
	if m.itemIndex, err = f.offsetIndex(bufs[2], int(items.NumItems), bufs[1].Size); err != nil {
		return fmt.Errorf("indexed dictionary offsets: %w", err)
	}
	payload, err := f.readAt(bufs[0].Position, bufs[0].Size)
	if err != nil {
		return err
	}
	if values.HasPayload(idxEnc) != (len(payload) > 0) {
		return fmt.Errorf("indexed values: index payload of %d bytes for %s: %w", len(payload), values.EncodingName(idxEnc), ErrCorrupt)
	}
	if len(payload) == 0 {
		payload = nil
	}
	slots := m.ix.LeafSlots()
	idx, err := values.DecodeBlock(idxEnc, payload, slots)
	if err != nil {
		return fmt.Errorf("indexed values indices: %w", err)
	}
	if idx.Bits != 32 || idx.N != slots || len(idx.Data) < 4*slots {
		return fmt.Errorf("indexed values indices decoded as %d %d-bit values, want %d u32: %w", idx.N, idx.Bits, slots, ErrCorrupt)
	}
	for i := 0; i < slots; i++ {
		if k := le32(idx.Data[4*i:]); uint64(k) >= items.NumItems {
			return fmt.Errorf("indexed values: slot %d names item %d of %d: %w", i, k, items.NumItems, ErrCorrupt)
		}
	}
	m.indices = idx
	m.bytes += uint64(len(idx.Data)) + bufs[2].Size
	return nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// fsstTable parses the symbol table of a per-value FSST encoding (nil for
// other encodings).
func fsstTable(e *enc21pb.CompressiveEncoding) (*values.FsstTable, error) {
	c := e.GetFsst()
	if c == nil {
		return nil, nil
	}
	t, err := values.ParseFsstTable(c.SymbolTable)
	if err != nil {
		return nil, fmt.Errorf("per-value fsst: %w", err)
	}
	return t, nil
}
