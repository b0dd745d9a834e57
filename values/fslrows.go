package values

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/proto/enc21pb"
)

// FSLRows is the row layout Lance's value codec gives fixed-size lists of
// fixed-width items when it stores them one row at a time (the per-value
// records of zipped pages, and fixed-size-list blocks such as page
// dictionaries): per row, one validity bitmap for every list layer that has
// one (outer layer first; layer k's bitmap has one bit per item of that
// layer in the row, D_0*...*D_k bits, rounded up to whole bytes), then the
// row's items back to back. A chain that ends in a Constant without a value
// stores no items at all: every item is null and only the bitmaps remain.
type FSLRows struct {
	Dims     []int  // dimensions, outer first
	HasValid []bool // per layer: a validity bitmap is stored
	// ItemBits is the width of one item; 0 when items are not stored.
	ItemBits int
	// ValidBytes and DataBytes are the bytes per row of the bitmaps and of
	// the items.
	ValidBytes, DataBytes int
}

// maxFSLLayers bounds the nesting of fixed-size-list encodings.
const maxFSLLayers = 8

// ParseFSLRows reads the row layout of a FixedSizeList encoding chain.
func ParseFSLRows(f *enc21pb.FixedSizeList) (FSLRows, error) {
	var l FSLRows
	items := 1
	for f != nil {
		d := f.ItemsPerValue
		if d == 0 || d > 1<<20 || len(l.Dims) >= maxFSLLayers || uint64(items)*d > maxDecodeValues {
			return FSLRows{}, fmt.Errorf("fixed-size list of %d items at depth %d: %w", d, len(l.Dims), ErrCorrupt)
		}
		items *= int(d)
		l.Dims = append(l.Dims, int(d))
		l.HasValid = append(l.HasValid, f.HasValidity)
		if f.HasValidity {
			l.ValidBytes += (items + 7) / 8
		}
		inner := f.GetValues()
		switch c := inner.GetCompression().(type) {
		case *enc21pb.CompressiveEncoding_FixedSizeList:
			f = c.FixedSizeList
			continue
		case *enc21pb.CompressiveEncoding_Flat:
			bits := int(c.Flat.BitsPerValue)
			if c.Flat.Data != nil {
				return FSLRows{}, fmt.Errorf("fixed-size list items with buffer compression: %w", ErrUnsupported)
			}
			// Items are whole bytes, or bits filling whole bytes per row.
			if bits <= 0 || bits > 1<<16 || (bits%8 != 0 && bits != 1) || (bits*items)%8 != 0 {
				return FSLRows{}, fmt.Errorf("fixed-size list of %d items of %d bits: %w", items, bits, ErrUnsupported)
			}
			l.ItemBits = bits
			l.DataBytes = bits * items / 8
		case *enc21pb.CompressiveEncoding_Constant:
			if len(c.Constant.GetValue()) != 0 {
				return FSLRows{}, fmt.Errorf("fixed-size list over a constant with a value: %w", ErrUnsupported)
			}
			// Items not stored: all null. Lance marks the layer that
			// holds them as having validity (all bits clear).
		default:
			return FSLRows{}, fmt.Errorf("fixed-size list over %s: %w", EncodingName(inner), ErrUnsupported)
		}
		break
	}
	if l.ValidBytes+l.DataBytes == 0 {
		return FSLRows{}, fmt.Errorf("fixed-size list rows of zero bytes: %w", ErrCorrupt)
	}
	return l, nil
}

// RowBytes is the size of one stored row.
func (l FSLRows) RowBytes() int { return l.ValidBytes + l.DataBytes }

// Decode splits n stored rows into item data and per-layer item validity:
// a block of n values whose ItemValid has one bitmap per layer (nil for
// layers without one), bit i being item i of the block at that layer. data
// must hold at least n rows.
func (l FSLRows) Decode(data []byte, n int) (Block, error) {
	row := l.RowBytes()
	if n < 0 || n > len(data)/row {
		return Block{}, fmt.Errorf("%d fixed-size-list rows of %d bytes in %d bytes: %w", n, row, len(data), ErrCorrupt)
	}
	out := Block{N: n, Bits: 8 * l.DataBytes, Dims: l.Dims, ItemValid: make([][]byte, len(l.Dims)), NullItems: l.ItemBits == 0}
	if l.ValidBytes == 0 {
		out.Data = data[:n*row]
		return out, nil
	}
	per := 1
	for k, d := range l.Dims {
		per *= d
		if l.HasValid[k] {
			out.ItemValid[k] = make([]byte, (n*per+7)/8)
		}
	}
	if l.DataBytes > 0 {
		out.Data = make([]byte, 0, n*l.DataBytes)
	}
	for r := 0; r < n; r++ {
		rec := data[r*row : (r+1)*row]
		pos, per := 0, 1
		for k, d := range l.Dims {
			per *= d
			if !l.HasValid[k] {
				continue
			}
			copyBits(out.ItemValid[k], r*per, rec[pos:], per)
			pos += (per + 7) / 8
		}
		out.Data = append(out.Data, rec[pos:]...)
	}
	return out, nil
}

// copyBits sets the n bits of src (from bit 0, LSB first) at bit position at
// of dst.
func copyBits(dst []byte, at int, src []byte, n int) {
	bitutil.CopyBitmap(src, 0, n, dst, at)
}

// fslRowsNeeded reports whether a FixedSizeList block encoding stores its
// rows with validity bitmaps or without items (anything the flattened-items
// block decode cannot express).
func fslRowsNeeded(f *enc21pb.FixedSizeList) bool {
	for d := 0; f != nil && d <= maxFSLLayers; d++ {
		if f.HasValidity {
			return true
		}
		inner := f.GetValues()
		if inner.GetConstant() != nil {
			return true
		}
		f = inner.GetFixedSizeList()
	}
	return false
}

// FslCodec stores fixed-size lists of Dim items: with HasValidity, first a
// buffer with the items' validity bitmap, then the items through Values.
// The block's Data holds N·Dim items of Values' width and ItemValid[0] the
// item validity.
type FslCodec struct {
	Dim         int
	HasValidity bool
	Values      Codec
}

func (c FslCodec) Name() string {
	v := ""
	if c.HasValidity {
		v = ",validity"
	}
	return fmt.Sprintf("fsl%d%s(%s)", c.Dim, v, c.Values.Name())
}
func (c FslCodec) Contexts() Context {
	if c.HasValidity {
		return InChunk
	}
	return c.Values.Contexts()
}
func (c FslCodec) NumBuffers() int { return c.Values.NumBuffers() + b2i(c.HasValidity) }
func (c FslCodec) items(b Block) (Block, error) {
	if c.Dim <= 0 || b.Variable() || b.Bits%c.Dim != 0 {
		return Block{}, notApplicable("fixed size list", "%d-bit rows do not hold %d items", b.Bits, c.Dim)
	}
	if c.HasValidity && (len(b.ItemValid) == 0 || len(b.ItemValid[0]) < (b.N*c.Dim+7)/8) {
		return Block{}, notApplicable("fixed size list", "item validity missing")
	}
	return Block{Bits: b.Bits / c.Dim, N: b.N * c.Dim, Data: b.Data, ItemValid: b.ItemValid[min(1, len(b.ItemValid)):], Dims: b.Dims[min(1, len(b.Dims)):]}, nil
}
func (c FslCodec) Check(b Block) error {
	it, err := c.items(b)
	if err != nil {
		return err
	}
	return c.Values.Check(it)
}
func (c FslCodec) Estimate(p *Profile) (int, bool) {
	if p.Bits == 0 || p.Bits%c.Dim != 0 {
		return 0, false
	}
	q := *p
	q.Bits, q.N, q.Fixed = p.Bits/c.Dim, p.N*c.Dim, nil
	n, ok := c.Values.Estimate(&q)
	if c.HasValidity {
		n += (p.N*c.Dim + 7) / 8
	}
	return n, ok
}
func (c FslCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	it, err := c.items(b)
	if err != nil {
		return bufs, err
	}
	bufs = growBufs(bufs, c.NumBuffers())
	rest := bufs
	if c.HasValidity {
		bufs[0] = append(bufs[0], b.ItemValid[0][:(it.N+7)/8]...)
		rest = bufs[1:]
	}
	rest, err = c.Values.AppendChunk(rest, it)
	copy(bufs[len(bufs)-len(rest):], rest)
	return bufs, err
}
func (c FslCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if c.HasValidity {
		return dst, notApplicable("fixed size list", "item validity is a chunk form")
	}
	it, err := c.items(b)
	if err != nil {
		return dst, err
	}
	return c.Values.AppendBlock(dst, it)
}
func (c FslCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{FixedSizeList: &enc21pb.FixedSizeList{
		ItemsPerValue: uint64(c.Dim), HasValidity: c.HasValidity, Values: c.Values.Encoding()}}}
}

// decodeFSLBlock decodes a block of fixed-size lists: the per-value row
// layout when items have validity, else the items decoded as one block.
func decodeFSLBlock(f *enc21pb.FixedSizeList, buf []byte, n, depth int) (Block, error) {
	if fslRowsNeeded(f) {
		// Rows with item validity (or without items): the per-value
		// row layout.
		l, err := ParseFSLRows(f)
		if err != nil {
			return Block{}, err
		}
		return l.Decode(buf, n)
	}
	d := int(f.ItemsPerValue)
	if d == 0 || d > 1<<20 || n > maxDecodeValues/d {
		return Block{}, fmt.Errorf("block fixed-size list of %d items: %w", d, ErrCorrupt)
	}
	inner, err := decodeBlock(f.GetValues(), buf, n*d, depth+1)
	if err != nil {
		return Block{}, err
	}
	if inner.Variable() {
		return Block{}, fmt.Errorf("fixed-size list of variable-width items: %w", ErrUnsupported)
	}
	return Block{Bits: inner.Bits * d, N: n, Data: inner.Data, Dims: append([]int{d}, inner.Dims...), ItemValid: make([][]byte, 1+len(inner.Dims))}, nil
}

// decodeFSLChunk decodes a fixed-size-list mini-block chunk: one validity
// bitmap per list layer that has one (outer first), then the flattened items.
// Block.ItemValid gets one entry per layer (nil for layers without validity);
// layer k's bitmap has one bit per item of that layer (rows times the
// dimensions of layers 0..k).
func decodeFSLChunk(f *enc21pb.FixedSizeList, bufs [][]byte, n int, depth int) (Block, error) {
	var dims []int
	var valid []bool
	e := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{FixedSizeList: f}}
	for e.GetFixedSizeList() != nil {
		l := e.GetFixedSizeList()
		if l.ItemsPerValue == 0 || l.ItemsPerValue > 1<<20 || len(dims) > 8 {
			return Block{}, fmt.Errorf("fixed-size list of %d items: %w", l.ItemsPerValue, ErrCorrupt)
		}
		dims = append(dims, int(l.ItemsPerValue))
		valid = append(valid, l.HasValidity)
		e = l.GetValues()
	}
	out := Block{N: n, Dims: dims, ItemValid: make([][]byte, len(dims))}
	cnt := n
	bi := 0
	for li, d := range dims {
		if cnt > maxDecodeValues/d {
			return Block{}, fmt.Errorf("fixed-size list too large: %w", ErrCorrupt)
		}
		cnt *= d
		if !valid[li] {
			continue
		}
		if bi >= len(bufs) {
			return Block{}, fmt.Errorf("missing validity buffer of list layer %d: %w", li, ErrCorrupt)
		}
		if len(bufs[bi]) < (cnt+7)/8 {
			return Block{}, fmt.Errorf("validity of %d bytes for %d items: %w", len(bufs[bi]), cnt, ErrCorrupt)
		}
		out.ItemValid[li] = bufs[bi][:(cnt+7)/8]
		bi++
	}
	inner, err := decodeMiniBlock(e, bufs[bi:], cnt, depth+1)
	if err != nil {
		return Block{}, err
	}
	if inner.Variable() {
		return Block{}, fmt.Errorf("fixed-size list of variable-width items: %w", ErrUnsupported)
	}
	out.Bits = inner.Bits * (cnt / max(n, 1))
	if n == 0 {
		out.Bits = inner.Bits
		for _, d := range dims {
			out.Bits *= d
		}
	}
	out.Data = inner.Data
	return out, nil
}
