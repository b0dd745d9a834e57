package values

import (
	"encoding/binary"
	"fmt"
)

// Chunked pages (Lance "mini-block" bytes) store values in small chunks that
// are decoded as a unit. Each chunk carries its own slice of the dense level
// streams. Page buffer 0 holds one metadata word per chunk, page buffer 1 the
// chunks back to back.

// chunkPad is the fill byte of chunk-internal padding.
const chunkPad = 0xFE

// MaxChunkValuesLog2 bounds the value count of one chunk (2^15, the largest
// count the 4-bit log field can express).
const MaxChunkValuesLog2 = 15

// ChunkLayout describes the framing shared by every chunk of one page.
type ChunkLayout struct {
	HasRep, HasDef bool // whether the page carries a rep / def stream
	NumBuffers     int  // value buffers per chunk
	Large          bool // u32 value sizes and metadata words (2.2+)
}

// ChunkParts is the content of one chunk.
type ChunkParts struct {
	LogNumValues uint8 // log2 of the value count; 0 for the last chunk
	NumLevels    int   // rep/def entries in this chunk (0 without levels)
	Rep, Def     []byte
	Values       [][]byte
}

func pad8(n int) int { return (8 - n%8) % 8 }

func appendPad(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, chunkPad)
	}
	return dst
}

// AppendChunk appends one serialized chunk to data and its metadata word to
// meta. It checks the format's hard limits.
func AppendChunk(meta, data []byte, l ChunkLayout, c ChunkParts) ([]byte, []byte, error) {
	meta, data, err := AppendChunkHead(meta, data, l, c)
	if err != nil {
		return meta, data, err
	}
	for _, v := range c.Values {
		data = append(data, v...)
		data = append(data, ChunkPadding(len(v))...)
	}
	return meta, data, nil
}

// AppendChunkHead is AppendChunk without the value buffers: it appends the
// chunk's bytes before its first value buffer (the header, the levels) to
// data, and its metadata word (which counts the value buffers of c, each
// followed by ChunkPadding of its size) to meta. The chunk is what it
// appends, then each value buffer and its padding, in order: a writer may
// write the values from where they lie.
func AppendChunkHead(meta, data []byte, l ChunkLayout, c ChunkParts) ([]byte, []byte, error) {
	if len(c.Values) != l.NumBuffers {
		return meta, data, fmt.Errorf("chunk has %d value buffers, layout says %d: %w", len(c.Values), l.NumBuffers, ErrNotApplicable)
	}
	if c.NumLevels > 0xFFFF || len(c.Rep) > 0xFFFF || len(c.Def) > 0xFFFF {
		return meta, data, fmt.Errorf("chunk levels exceed u16 limits (%d levels, %d rep bytes, %d def bytes): %w", c.NumLevels, len(c.Rep), len(c.Def), ErrNotApplicable)
	}
	start := len(data)
	data = binary.LittleEndian.AppendUint16(data, uint16(c.NumLevels))
	if l.HasRep {
		data = binary.LittleEndian.AppendUint16(data, uint16(len(c.Rep)))
	}
	if l.HasDef {
		data = binary.LittleEndian.AppendUint16(data, uint16(len(c.Def)))
	}
	for _, v := range c.Values {
		if l.Large {
			if uint64(len(v)) > 0xFFFFFFFF {
				return meta, data[:start], fmt.Errorf("chunk value buffer of %d bytes: %w", len(v), ErrNotApplicable)
			}
			data = binary.LittleEndian.AppendUint32(data, uint32(len(v)))
		} else {
			if len(v) > 0xFFFF {
				return meta, data[:start], fmt.Errorf("chunk value buffer of %d bytes exceeds u16 framing: %w", len(v), ErrNotApplicable)
			}
			data = binary.LittleEndian.AppendUint16(data, uint16(len(v)))
		}
	}
	data = appendPad(data, pad8(len(data)-start))
	if l.HasRep {
		data = append(data, c.Rep...)
		data = appendPad(data, pad8(len(c.Rep)))
	}
	if l.HasDef {
		data = append(data, c.Def...)
		data = appendPad(data, pad8(len(c.Def)))
	}
	size := len(data) - start
	for _, v := range c.Values {
		size += len(v) + pad8(len(v))
	}
	units := size/8 - 1
	if l.Large {
		if units >= 1<<28 {
			return meta, data[:start], fmt.Errorf("chunk of %d bytes too large: %w", size, ErrNotApplicable)
		}
		meta = binary.LittleEndian.AppendUint32(meta, uint32(units)<<4|uint32(c.LogNumValues))
	} else {
		if units >= 1<<12 {
			return meta, data[:start], fmt.Errorf("chunk of %d bytes exceeds u16 framing: %w", size, ErrNotApplicable)
		}
		meta = binary.LittleEndian.AppendUint16(meta, uint16(units)<<4|uint16(c.LogNumValues))
	}
	return meta, data, nil
}

// chunkPads is the padding a value buffer may need.
var chunkPads = [8]byte{chunkPad, chunkPad, chunkPad, chunkPad, chunkPad, chunkPad, chunkPad, chunkPad}

// ChunkPadding is the padding after a chunk's value buffer of n bytes.
func ChunkPadding(n int) []byte { return chunkPads[:pad8(n)] }

// ChunkRef locates one chunk inside page buffer 1.
type ChunkRef struct {
	Offset, Size int
	NumValues    int
	FirstValue   int // index of the chunk's first visible item in the page
}

// ParseChunkMeta decodes page buffer 0 of a chunked page into chunk
// locations. dataLen is the size of page buffer 1 and numItems the page's
// visible item count.
func ParseChunkMeta(meta []byte, large bool, dataLen int, numItems uint64) ([]ChunkRef, error) {
	w := 2
	if large {
		w = 4
	}
	if len(meta)%w != 0 {
		return nil, fmt.Errorf("chunk metadata of %d bytes is not a multiple of %d: %w", len(meta), w, ErrCorrupt)
	}
	n := len(meta) / w
	if n == 0 && numItems > 0 {
		return nil, fmt.Errorf("no chunks for %d items: %w", numItems, ErrCorrupt)
	}
	refs := make([]ChunkRef, n)
	off := 0
	var values uint64
	for i := range refs {
		var word uint32
		if large {
			word = binary.LittleEndian.Uint32(meta[4*i:])
		} else {
			word = uint32(binary.LittleEndian.Uint16(meta[2*i:]))
		}
		lg := int(word & 0xF)
		size := (int(word>>4) + 1) * 8
		if size > dataLen-off {
			return nil, fmt.Errorf("chunk %d of %d bytes at %d overruns %d data bytes: %w", i, size, off, dataLen, ErrCorrupt)
		}
		var cnt uint64
		if i == n-1 {
			if values > numItems {
				return nil, fmt.Errorf("chunks hold more than %d items: %w", numItems, ErrCorrupt)
			}
			cnt = numItems - values
			if lg != 0 && cnt != 1<<lg {
				return nil, fmt.Errorf("last chunk says 2^%d values, %d remain: %w", lg, cnt, ErrCorrupt)
			}
			if cnt > 1<<MaxChunkValuesLog2 || (cnt == 0 && numItems > 0) {
				return nil, fmt.Errorf("last chunk holds %d values: %w", cnt, ErrCorrupt)
			}
		} else {
			if lg == 0 {
				return nil, fmt.Errorf("chunk %d (not last) has log value count 0: %w", i, ErrCorrupt)
			}
			cnt = 1 << lg
		}
		refs[i] = ChunkRef{Offset: off, Size: size, NumValues: int(cnt), FirstValue: int(values)}
		values += cnt
		off += size
	}
	if off != dataLen {
		return nil, fmt.Errorf("chunks cover %d of %d data bytes: %w", off, dataLen, ErrCorrupt)
	}
	return refs, nil
}

// ParseChunk splits one chunk into its level and value buffers (padding
// removed). The returned slices alias chunk.
func ParseChunk(chunk []byte, l ChunkLayout) (ChunkParts, error) {
	var c ChunkParts
	pos := 0
	u16 := func() (int, error) {
		if pos+2 > len(chunk) {
			return 0, fmt.Errorf("chunk header truncated at %d of %d bytes: %w", pos, len(chunk), ErrCorrupt)
		}
		v := int(binary.LittleEndian.Uint16(chunk[pos:]))
		pos += 2
		return v, nil
	}
	var err error
	if c.NumLevels, err = u16(); err != nil {
		return c, err
	}
	repSize, defSize := 0, 0
	if l.HasRep {
		if repSize, err = u16(); err != nil {
			return c, err
		}
	}
	if l.HasDef {
		if defSize, err = u16(); err != nil {
			return c, err
		}
	}
	if l.NumBuffers < 0 || l.NumBuffers > 64 {
		return c, fmt.Errorf("chunk declares %d value buffers: %w", l.NumBuffers, ErrCorrupt)
	}
	sizes := make([]int, l.NumBuffers)
	for i := range sizes {
		if l.Large {
			if pos+4 > len(chunk) {
				return c, fmt.Errorf("chunk header truncated: %w", ErrCorrupt)
			}
			sizes[i] = int(binary.LittleEndian.Uint32(chunk[pos:]))
			pos += 4
		} else {
			if sizes[i], err = u16(); err != nil {
				return c, err
			}
		}
	}
	pos += pad8(pos)
	take := func(n int) ([]byte, error) {
		if n < 0 || n > len(chunk)-pos {
			return nil, fmt.Errorf("chunk section of %d bytes at %d overruns %d-byte chunk: %w", n, pos, len(chunk), ErrCorrupt)
		}
		b := chunk[pos : pos+n : pos+n]
		pos += n
		pos += pad8(n)
		return b, nil
	}
	if l.HasRep {
		if c.Rep, err = take(repSize); err != nil {
			return c, err
		}
	}
	if l.HasDef {
		if c.Def, err = take(defSize); err != nil {
			return c, err
		}
	}
	c.Values = make([][]byte, l.NumBuffers)
	for i, s := range sizes {
		if c.Values[i], err = take(s); err != nil {
			return c, err
		}
	}
	return c, nil
}

// FlatChunkLog2 returns Lance's chunk size (log2 of the value count) for
// Flat values of the given width: starting from 2 values (8 when values are
// not byte aligned), double while twice the chunk stays under the 8186-byte
// mini-block budget and the count stays at most 4096.
func FlatChunkLog2(bitsPerValue int) uint8 {
	size, num, lg := 2*bitsPerValue/8, 2, uint8(1)
	if bitsPerValue%8 != 0 {
		size, num, lg = bitsPerValue, 8, 3 // words of 8 values
	}
	for 2*size < maxChunkBytes && 2*num <= 4096 {
		size, num, lg = 2*size, 2*num, lg+1
	}
	return lg
}

// maxChunkBytes is Lance's mini-block chunk budget.
const maxChunkBytes = 8186

// AppendRepIndex appends to a chunked page's repetition index (depth 1) the
// (ends, partial) pair of one chunk, whose repetition levels are rep (R the
// page's list count; last for the page's last chunk), and fixes up the
// previous chunk's pair when this chunk starts exactly at a row. It returns
// whether this chunk ends inside a row.
func AppendRepIndex(idx []byte, rep []uint16, R uint16, last, prevPartial bool) ([]byte, bool) {
	ends, lastStart := 0, -1
	for j, r := range rep {
		if r == R {
			if j >= 1 {
				ends++
			}
			lastStart = j
		}
	}
	if last {
		ends++
	}
	partial := 0
	if !last {
		if lastStart < 0 {
			partial = len(rep)
		} else {
			partial = len(rep) - lastStart
		}
	}
	if len(idx) >= 16 && len(rep) > 0 && rep[0] == R && prevPartial {
		p := len(idx) - 16
		binary.LittleEndian.PutUint64(idx[p:], binary.LittleEndian.Uint64(idx[p:])+1)
		binary.LittleEndian.PutUint64(idx[p+8:], 0)
	}
	idx = binary.LittleEndian.AppendUint64(idx, uint64(ends))
	idx = binary.LittleEndian.AppendUint64(idx, uint64(partial))
	return idx, partial != 0
}

// ParseRepIndex reads the repetition index of a chunked page of rows rows
// in chunks chunks (depth numbers after each (ends, partial) pair) and
// returns, per chunk, the first row that starts in it (one more entry: the
// row count), and whether the chunk ends inside a row that the next one
// continues. Every count is checked against the page.
func ParseRepIndex(idx []byte, chunks int, depth, rows uint64) (chunkRow []uint64, trailer []bool, err error) {
	group := 8 * (depth + 1)
	if uint64(len(idx)) != group*uint64(chunks) {
		return nil, nil, fmt.Errorf("repetition index of %d bytes for %d chunks of depth %d: %w", len(idx), chunks, depth, ErrCorrupt)
	}
	chunkRow = make([]uint64, chunks+1)
	trailer = make([]bool, chunks)
	var row, ends uint64
	pre := false
	for c := 0; c < chunks; c++ {
		e := binary.LittleEndian.Uint64(idx[uint64(c)*group:])
		partial := binary.LittleEndian.Uint64(idx[uint64(c)*group+8:])
		trailer[c] = partial > 0 && c < chunks-1
		if e > rows || ends+e > rows {
			return nil, nil, fmt.Errorf("repetition index: chunk %d ends %d rows, page has %d: %w", c, e, rows, ErrCorrupt)
		}
		ends += e
		starts := e
		if trailer[c] {
			starts++
		}
		if pre {
			if starts == 0 {
				return nil, nil, fmt.Errorf("repetition index: chunk %d continues a row and starts none: %w", c, ErrCorrupt)
			}
			starts--
		}
		chunkRow[c] = row
		row += starts
		pre = trailer[c]
	}
	if ends != rows || row != rows {
		return nil, nil, fmt.Errorf("repetition index holds %d rows (%d started), page %d: %w", ends, row, rows, ErrCorrupt)
	}
	chunkRow[chunks] = row
	return chunkRow, trailer, nil
}
