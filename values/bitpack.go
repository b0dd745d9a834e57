package values

import (
	"encoding/binary"
	"fmt"
	"math"
	mbits "math/bits"
	"slices"

	"github.com/planarlance/planar/proto/enc21pb"
)

// This file implements the two Lance bit-packing byte layouts on top of the
// FastLanes kernel in fastlanes.go. Values are exchanged as little-endian
// fixed-width byte slices of 8, 16, 32 or 64 bits per value.
//
// InlineBitpacking: values are cut into chunks of 1024 (the last one may be
// shorter and is zero padded to 1024 before packing). Each chunk is one
// T-bit little-endian word holding the chunk's width W (0..T), followed by
// the 1024*W/T FastLanes-packed T-bit words. W is the bit length of the OR of
// the chunk's values.
//
// OutOfLineBitpacking: one width W for the whole block. Every full group of
// 1024 values is FastLanes packed (1024*W/T words). A tail of r = n%1024 > 0
// values is either zero padded and packed (when W*(1024-r) < (T-W)*r, i.e.
// when packing is smaller) or appended as r raw T-bit words. The decoder
// tells the two apart from the buffer length.

// bpMaxValues bounds value counts so that n*8 cannot overflow an int.
const bpMaxValues = math.MaxInt / 8

func bpCheckBits(bits int) error {
	switch bits {
	case 8, 16, 32, 64:
		return nil
	}
	return fmt.Errorf("values: bitpacking: word width %d bits not in {8,16,32,64}: %w", bits, ErrUnsupported)
}

// bpCheckSrc validates an encoder's input: n values of bits each must fit in src.
func bpCheckSrc(what string, bits int, src []byte, n int) error {
	if err := bpCheckBits(bits); err != nil {
		return err
	}
	if n < 0 || n > bpMaxValues || len(src) < n*(bits/8) {
		return fmt.Errorf("values: %s: %d values of %d bits need %d bytes, have %d: %w",
			what, n, bits, n*(bits/8), len(src), ErrCorrupt)
	}
	return nil
}

// bpGrow extends dst by n bytes and returns the extended slice together
// with the new n-byte tail.
func bpGrow(dst []byte, n int) ([]byte, []byte) {
	l := len(dst)
	dst = slices.Grow(dst, n)[:l+n]
	return dst, dst[l:]
}

// bpReadWord reads one little-endian word of bits width from b (len(b) >=
// bits/8) and returns it widened to uint64.
func bpReadWord(bits int, b []byte) uint64 {
	switch bits {
	case 8:
		return uint64(b[0])
	case 16:
		return uint64(binary.LittleEndian.Uint16(b))
	case 32:
		return uint64(binary.LittleEndian.Uint32(b))
	default:
		return binary.LittleEndian.Uint64(b)
	}
}

// bitLength returns the bit length (0..bits) of the OR of the first n
// little-endian values of bits width in src, i.e. the smallest width that
// bit-packs all of them losslessly. It returns 0 for an unsupported width;
// n is clamped to the number of whole values src holds.
func bitLength(bits int, src []byte, n int) int {
	if bpCheckBits(bits) != nil || n <= 0 {
		return 0
	}
	bpw := bits / 8
	if m := len(src) / bpw; n > m {
		n = m
	}
	b := src[:n*bpw]
	// Every supported width divides 64, so 8-byte groups start on value
	// boundaries and can be ORed as uint64s and folded afterwards.
	var a0, a1, a2, a3 uint64
	for len(b) >= 32 {
		a0 |= binary.LittleEndian.Uint64(b)
		a1 |= binary.LittleEndian.Uint64(b[8:])
		a2 |= binary.LittleEndian.Uint64(b[16:])
		a3 |= binary.LittleEndian.Uint64(b[24:])
		b = b[32:]
	}
	for len(b) >= 8 {
		a0 |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for i, x := range b {
		a0 |= uint64(x) << (8 * uint(i))
	}
	acc := a0 | a1 | a2 | a3
	if bits <= 32 {
		acc = (acc | acc>>32) & 0xFFFFFFFF
	}
	if bits <= 16 {
		acc = (acc | acc>>16) & 0xFFFF
	}
	if bits <= 8 {
		acc = (acc | acc>>8) & 0xFF
	}
	return mbits.Len64(acc)
}

// AppendInlineBitpacked appends one InlineBitpacking chunk holding the first
// n (0 <= n <= 1024) little-endian values of bits width from src: a bits-wide
// width word followed by the FastLanes-packed, zero-padded chunk.
func AppendInlineBitpacked(dst []byte, bits int, src []byte, n int) ([]byte, error) {
	if err := bpCheckSrc("inline bitpacking", bits, src, n); err != nil {
		return dst, err
	}
	if n > flBlock {
		return dst, fmt.Errorf("values: inline bitpacking: chunk of %d values exceeds %d: %w", n, flBlock, ErrNotApplicable)
	}
	return appendInlineDispatch(dst, bits, src, n, true), nil
}

// appendInlineBitpackedAll appends ceil(n/1024) InlineBitpacking chunks for
// the first n little-endian values of bits width in src. n == 0 appends
// nothing.
func appendInlineBitpackedAll(dst []byte, bits int, src []byte, n int) ([]byte, error) {
	if err := bpCheckSrc("inline bitpacking", bits, src, n); err != nil {
		return dst, err
	}
	return appendInlineDispatch(dst, bits, src, n, false), nil
}

func appendInlineDispatch(dst []byte, bits int, src []byte, n int, single bool) []byte {
	switch bits {
	case 8:
		return appendInline[uint8](dst, src, n, single)
	case 16:
		return appendInline[uint16](dst, src, n, single)
	case 32:
		return appendInline[uint32](dst, src, n, single)
	default:
		return appendInline[uint64](dst, src, n, single)
	}
}

// appendInline writes the chunks; with single set a zero-value input still
// yields one (empty, W=0) chunk.
func appendInline[T flWord](dst, src []byte, n int, single bool) []byte {
	bits := flWordBits[T]()
	bpw := bits / 8
	var vals, words [flBlock]T
	for off := 0; off < n || (single && off == 0); off += flBlock {
		m := min(flBlock, n-off)
		flLoadLE(vals[:m], src[off*bpw:])
		or := flOr(vals[:m])
		clear(vals[m:])
		w := mbits.Len64(uint64(or))
		wpc := flPackedWords(bits, w)
		flPack(&vals, words[:], w)
		var out []byte
		dst, out = bpGrow(dst, (1+wpc)*bpw)
		words0 := [1]T{T(w)}
		flStoreLE(out, words0[:])
		flStoreLE(out[bpw:], words[:wpc])
	}
	return dst
}

// decodeInlineBitpacked decodes InlineBitpacking chunks from src until n
// values have been produced (each chunk holds min(1024, remaining) values)
// and appends them to dst as little-endian values of bits width. src must be
// consumed exactly. On error dst is returned unchanged.
func decodeInlineBitpacked(dst []byte, bits int, src []byte, n int) ([]byte, error) {
	if err := bpCheckBits(bits); err != nil {
		return dst, err
	}
	if n < 0 || n > bpMaxValues {
		return dst, fmt.Errorf("values: inline bitpacking: invalid value count %d: %w", n, ErrCorrupt)
	}
	// Every chunk holds at least its width word; reject impossible counts
	// before allocating the output.
	chunks := n/flBlock + bpBool(n%flBlock != 0)
	if chunks > len(src)/(bits/8) {
		return dst, fmt.Errorf("values: inline bitpacking: %d values need %d chunks, only %d bytes of input: %w",
			n, chunks, len(src), ErrCorrupt)
	}
	switch bits {
	case 8:
		return decodeInline[uint8](dst, src, n)
	case 16:
		return decodeInline[uint16](dst, src, n)
	case 32:
		return decodeInline[uint32](dst, src, n)
	default:
		return decodeInline[uint64](dst, src, n)
	}
}

func bpBool(b bool) int {
	if b {
		return 1
	}
	return 0
}

func decodeInline[T flWord](dst, src []byte, n int) ([]byte, error) {
	bits := flWordBits[T]()
	bpw := bits / 8
	orig := dst
	dst, out := bpGrow(dst, n*bpw)
	var words, vals [flBlock]T
	pos := 0
	for c, off := 0, 0; off < n; c, off = c+1, off+flBlock {
		m := min(flBlock, n-off)
		if len(src)-pos < bpw {
			return orig, fmt.Errorf("values: inline bitpacking: chunk %d: width word needs %d bytes at offset %d, have %d: %w",
				c, bpw, pos, len(src)-pos, ErrCorrupt)
		}
		wv := bpReadWord(bits, src[pos:])
		if wv > uint64(bits) {
			return orig, fmt.Errorf("values: inline bitpacking: chunk %d: width %d exceeds %d-bit words: %w",
				c, wv, bits, ErrCorrupt)
		}
		pos += bpw
		w := int(wv)
		wpc := flPackedWords(bits, w)
		if body := wpc * bpw; len(src)-pos < body {
			return orig, fmt.Errorf("values: inline bitpacking: chunk %d: width %d needs %d body bytes, have %d: %w",
				c, w, body, len(src)-pos, ErrCorrupt)
		}
		flLoadLE(words[:wpc], src[pos:])
		pos += wpc * bpw
		flUnpack(words[:wpc], &vals, w)
		flStoreLE(out[off*bpw:], vals[:m])
	}
	if pos != len(src) {
		return orig, fmt.Errorf("values: inline bitpacking: %d values consumed %d of %d input bytes: %w",
			n, pos, len(src), ErrCorrupt)
	}
	return dst, nil
}

// bpOOLLayout describes an OutOfLineBitpacking buffer of n values of width w.
type bpOOLLayout struct {
	full    int  // number of full 1024-value groups
	tail    int  // r = n % 1024
	wpc     int  // packed words per 1024-value group
	rawTail bool // tail stored as r raw words (only meaningful when tail > 0)
}

func (l bpOOLLayout) words() int {
	w := l.full * l.wpc
	if l.tail > 0 {
		if l.rawTail {
			w += l.tail
		} else {
			w += l.wpc
		}
	}
	return w
}

// AppendOutOfLineBitpacked appends the OutOfLineBitpacking encoding of the
// first n little-endian values of bits width in src, packed to w bits each
// (0 <= w <= bits). It returns ErrNotApplicable if any value is >= 2^w.
// w == 0 appends nothing. On error dst is returned unchanged.
func AppendOutOfLineBitpacked(dst []byte, bits, w int, src []byte, n int) ([]byte, error) {
	if err := bpCheckSrc("out-of-line bitpacking", bits, src, n); err != nil {
		return dst, err
	}
	if w < 0 || w > bits {
		return dst, fmt.Errorf("values: out-of-line bitpacking: width %d outside 0..%d: %w", w, bits, ErrNotApplicable)
	}
	switch bits {
	case 8:
		return appendOOL[uint8](dst, src, w, n)
	case 16:
		return appendOOL[uint16](dst, src, w, n)
	case 32:
		return appendOOL[uint32](dst, src, w, n)
	default:
		return appendOOL[uint64](dst, src, w, n)
	}
}

func appendOOL[T flWord](dst, src []byte, w, n int) ([]byte, error) {
	bits := flWordBits[T]()
	bpw := bits / 8
	lay := bpOOLLayout{full: n / flBlock, tail: n % flBlock, wpc: flPackedWords(bits, w)}
	lay.rawTail = !(w*(flBlock-lay.tail) < (bits-w)*lay.tail)
	orig := dst
	dst, out := bpGrow(dst, lay.words()*bpw)
	tooWide := func(or T, at int) error {
		return fmt.Errorf("values: out-of-line bitpacking: value in group at %d needs %d bits, width is %d: %w",
			at, mbits.Len64(uint64(or)), w, ErrNotApplicable)
	}
	var vals, words [flBlock]T
	for g := 0; g < lay.full; g++ {
		flLoadLE(vals[:], src[g*flBlock*bpw:])
		or := flOr(vals[:])
		if or>>uint(w) != 0 {
			return orig, tooWide(or, g*flBlock)
		}
		flPack(&vals, words[:], w)
		flStoreLE(out, words[:lay.wpc])
		out = out[lay.wpc*bpw:]
	}
	if r := lay.tail; r > 0 {
		off := lay.full * flBlock
		flLoadLE(vals[:r], src[off*bpw:])
		or := flOr(vals[:r])
		if or>>uint(w) != 0 {
			return orig, tooWide(or, off)
		}
		if lay.rawTail {
			copy(out, src[off*bpw:(off+r)*bpw])
		} else {
			clear(vals[r:])
			flPack(&vals, words[:], w)
			flStoreLE(out, words[:lay.wpc])
		}
	}
	return dst, nil
}

// decodeOutOfLineBitpacked decodes an OutOfLineBitpacking buffer of n values
// packed to w bits each and appends them to dst as little-endian values of
// bits width. Whether a partial tail is raw or packed is inferred from
// len(src), which must match one of the two layouts exactly. On error dst is
// returned unchanged.
func decodeOutOfLineBitpacked(dst []byte, bits, w int, src []byte, n int) ([]byte, error) {
	lay, err := oolLayout(bits, w, src, n)
	if err != nil {
		return dst, err
	}
	switch bits {
	case 8:
		return decodeOOL[uint8](dst, src, w, n, lay), nil
	case 16:
		return decodeOOL[uint16](dst, src, w, n, lay), nil
	case 32:
		return decodeOOL[uint32](dst, src, w, n, lay), nil
	default:
		return decodeOOL[uint64](dst, src, w, n, lay), nil
	}
}

// oolLayout checks an OutOfLineBitpacking buffer of n values of bits width
// packed to w bits and returns its layout.
func oolLayout(bits, w int, src []byte, n int) (bpOOLLayout, error) {
	if err := bpCheckBits(bits); err != nil {
		return bpOOLLayout{}, err
	}
	if w < 0 || w > bits {
		return bpOOLLayout{}, fmt.Errorf("values: out-of-line bitpacking: width %d outside 0..%d: %w", w, bits, ErrCorrupt)
	}
	if n < 0 || n > bpMaxValues {
		return bpOOLLayout{}, fmt.Errorf("values: out-of-line bitpacking: invalid value count %d: %w", n, ErrCorrupt)
	}
	bpw := bits / 8
	if len(src)%bpw != 0 {
		return bpOOLLayout{}, fmt.Errorf("values: out-of-line bitpacking: %d bytes is not a whole number of %d-bit words: %w",
			len(src), bits, ErrCorrupt)
	}
	words := len(src) / bpw
	lay := bpOOLLayout{full: n / flBlock, tail: n % flBlock, wpc: flPackedWords(bits, w)}
	lay.rawTail = lay.tail > 0 && words == lay.full*lay.wpc+lay.tail
	if want := lay.words(); words != want {
		return bpOOLLayout{}, fmt.Errorf("values: out-of-line bitpacking: %d values of width %d need %d %d-bit words, have %d: %w",
			n, w, want, bits, words, ErrCorrupt)
	}
	return lay, nil
}

// decodeOOL decodes a buffer already validated against lay.
func decodeOOL[T flWord](dst, src []byte, w, n int, lay bpOOLLayout) []byte {
	bits := flWordBits[T]()
	bpw := bits / 8
	dst, out := bpGrow(dst, n*bpw)
	var words, vals [flBlock]T
	groupBytes := lay.wpc * bpw
	if w == 0 {
		// Full groups (and a packed tail) occupy no bytes and are all zero;
		// a raw tail, if the length says so, is still copied below.
		clear(out)
		if !lay.rawTail {
			return dst
		}
	}
	for g := 0; w > 0 && g < lay.full; g++ {
		flLoadLE(words[:lay.wpc], src[g*groupBytes:])
		flUnpack(words[:lay.wpc], &vals, w)
		flStoreLE(out[g*flBlock*bpw:], vals[:])
	}
	if r := lay.tail; r > 0 {
		tail := src[lay.full*groupBytes:]
		o := out[lay.full*flBlock*bpw:]
		if lay.rawTail {
			copy(o, tail[:r*bpw])
		} else {
			flLoadLE(words[:lay.wpc], tail)
			flUnpack(words[:lay.wpc], &vals, w)
			flStoreLE(o, vals[:r])
		}
	}
	return dst
}

// BitpackCodec is FastLanes inline bit packing: per 1024 values a width word
// and the values packed to that width. In a chunk it holds at most 1024
// values; as a block any number.
type BitpackCodec struct{ Bits int }

func (c BitpackCodec) Name() string    { return fmt.Sprintf("bitpack%d", c.Bits) }
func (BitpackCodec) Contexts() Context { return InChunk | InBlock }
func (BitpackCodec) NumBuffers() int   { return 1 }
func (c BitpackCodec) Check(b Block) error {
	if err := checkWord("inline bitpacking", c.Bits); err != nil {
		return err
	}
	return checkFixed("inline bitpacking", b, c.Bits)
}

// Estimate sums, per 1024-value window, the width word and the packed words
// (a short last window is padded to a full one).
func (c BitpackCodec) Estimate(p *Profile) (int, bool) {
	st, ok := fixedStats(p, c.Bits)
	if !ok || checkWord("", c.Bits) != nil {
		return 0, false
	}
	return inlineBitpackedSize(c.Bits, st.WindowWidths), true
}

// inlineBitpackedSize is the size of inline bit-packed values whose
// 1024-value windows have the given bit widths.
func inlineBitpackedSize(bits int, windowWidths []int) int {
	total := 0
	for _, w := range windowWidths {
		total += (1 + flBlock*w/bits) * bits / 8
	}
	return total
}

func (c BitpackCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	if b.N > flBlock {
		return bufs, notApplicable("inline bitpacking", "chunk of %d values exceeds %d", b.N, flBlock)
	}
	bufs = growBufs(bufs, 1)
	if b.N == 0 {
		return bufs, nil // no block: nothing to decode either
	}
	var err error
	bufs[0], err = AppendInlineBitpacked(bufs[0], c.Bits, b.Data, b.N)
	return bufs, err
}
func (c BitpackCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if err := c.Check(b); err != nil {
		return dst, err
	}
	return appendInlineBitpackedAll(dst, c.Bits, b.Data, b.N)
}
func (c BitpackCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{
		InlineBitpacking: &enc21pb.InlineBitpacking{UncompressedBitsPerValue: uint64(c.Bits)}}}
}

// OutOfLineCodec is out-of-line bit packing at one width for the whole
// block (Lance allows it only as a block codec).
type OutOfLineCodec struct{ Bits, Width int }

func (c OutOfLineCodec) Name() string    { return fmt.Sprintf("bitpack%d(w=%d)", c.Bits, c.Width) }
func (OutOfLineCodec) Contexts() Context { return InBlock }
func (OutOfLineCodec) NumBuffers() int   { return 1 }
func (c OutOfLineCodec) Check(b Block) error {
	if err := checkWord("out-of-line bitpacking", c.Bits); err != nil {
		return err
	}
	if c.Width < 1 || c.Width >= c.Bits {
		// Lance's reader refuses width 0 and full width.
		return notApplicable("out-of-line bitpacking", "width %d outside 1..%d", c.Width, c.Bits-1)
	}
	if err := checkFixed("out-of-line bitpacking", b, c.Bits); err != nil {
		return err
	}
	if orWords(b.Data, c.Bits, b.N)>>uint(c.Width) == 0 {
		return nil
	}
	for i := 0; i < b.N; i++ {
		if v := loadWord(b.Data, c.Bits, i); v>>uint(c.Width) != 0 {
			return notApplicable("out-of-line bitpacking", "value %d needs %d bits, width is %d", i, mbits.Len64(v), c.Width)
		}
	}
	return nil
}

// orWords is the bitwise or of the first n bits-wide (8, 16, 32 or 64)
// values of data.
func orWords(data []byte, bits, n int) uint64 {
	var or uint64
	switch bits {
	case 8:
		for _, v := range data[:n] {
			or |= uint64(v)
		}
	case 16:
		for i := 0; i < 2*n; i += 2 {
			or |= uint64(binary.LittleEndian.Uint16(data[i:]))
		}
	case 32:
		for i := 0; i < 4*n; i += 4 {
			or |= uint64(binary.LittleEndian.Uint32(data[i:]))
		}
	default:
		for i := 0; i < 8*n; i += 8 {
			or |= binary.LittleEndian.Uint64(data[i:])
		}
	}
	return or
}
func (c OutOfLineCodec) Estimate(p *Profile) (int, bool) {
	st, ok := fixedStats(p, c.Bits)
	if !ok || checkWord("", c.Bits) != nil || st.BitWidth > c.Width {
		return 0, false
	}
	return outOfLineBitpackedSize(c.Bits, c.Width, p.N), true
}

// outOfLineBitpackedSize is the size of n values out-of-line bit packed from
// bits to w bits.
func outOfLineBitpackedSize(bits, w, n int) int {
	lay := bpOOLLayout{full: n / flBlock, tail: n % flBlock, wpc: flPackedWords(bits, w)}
	lay.rawTail = !(w*(flBlock-lay.tail) < (bits-w)*lay.tail)
	return lay.words() * bits / 8
}

func (c OutOfLineCodec) AppendChunk(bufs [][]byte, _ Block) ([][]byte, error) {
	return bufs, notApplicable("out-of-line bitpacking", "not allowed inside a mini-block chunk")
}
func (c OutOfLineCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if err := c.Check(b); err != nil {
		return dst, err
	}
	return AppendOutOfLineBitpacked(dst, c.Bits, c.Width, b.Data, b.N)
}
func (c OutOfLineCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_OutOfLineBitpacking{
		OutOfLineBitpacking: &enc21pb.OutOfLineBitpacking{UncompressedBitsPerValue: uint64(c.Bits), Values: FlatEncoding(c.Width)}}}
}
