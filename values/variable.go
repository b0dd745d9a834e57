package values

import (
	"encoding/binary"
	"fmt"
	mbits "math/bits"
	"slices"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Variable-width values (strings, binaries) as offsets + bytes.
//
// Block form (dictionary items, block context), for n values:
//
//	32-bit: [u32 32][u32 bytes_start = 8+4(n+1)][n+1 u32 offsets from 0][data]
//	64-bit: [u64 64][u64 bytes_start = 16+8(n+1)][n+1 u64 offsets from 0][data]
//
// Legacy block form (recognised by a non-zero byte among bytes 1..3):
//
//	32-bit: [u8 32][u32 n][u32 bytes_start][offsets from byte 9][data]
//	64-bit: [u8 64][u64 n][u64 bytes_start][offsets from byte 17][data]
//
// Mini-block chunk form, for m values: m+1 offsets of w = 4 or 8 bytes that
// are positions inside the chunk (the first is (m+1)·w), then the value bytes,
// then 0x48 padding to a multiple of w.

// variablePad is the padding byte of mini-block chunks.
const variablePad = 0x48

func varOffsetWidth(offBits int) (int, error) {
	switch offBits {
	case 32, 64:
		return offBits / 8, nil
	}
	return 0, fmt.Errorf("values: %d-bit offsets: %w", offBits, ErrUnsupported)
}

func varPutOffset(b []byte, w int, v uint64) {
	if w == 4 {
		binary.LittleEndian.PutUint32(b, uint32(v))
	} else {
		binary.LittleEndian.PutUint64(b, v)
	}
}

func varGetOffset(b []byte, w int) uint64 {
	if w == 4 {
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// varCheckEncode panics on offsets an encoder cannot represent: a caller
// bug, not a data error.
func varCheckEncode(offBits int, offsets []uint64, data []byte) int {
	w, err := varOffsetWidth(offBits)
	if err != nil {
		panic(err)
	}
	if len(offsets) == 0 {
		panic("values: variable-width encode needs at least one offset")
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			panic(fmt.Sprintf("values: variable-width offsets decrease at %d (%d < %d)", i, offsets[i], offsets[i-1]))
		}
	}
	if last := offsets[len(offsets)-1]; last > uint64(len(data)) {
		panic(fmt.Sprintf("values: variable-width offset %d beyond %d data bytes", last, len(data)))
	}
	return w
}

// AppendVariableBlock appends the block form of n = len(offsets)-1 values
// to dst. offsets index into data; they are rebased so the stored offsets
// start at 0 and only data[offsets[0]:offsets[n]] is written. It panics if
// offBits is not 32 or 64, the offsets are not monotonic or exceed data, or
// (32-bit) the block does not fit 32-bit positions.
func AppendVariableBlock(dst []byte, offBits int, offsets []uint64, data []byte) []byte {
	w := varCheckEncode(offBits, offsets, data)
	n := len(offsets) - 1
	base := offsets[0]
	hdr := 2 * w
	bytesStart := uint64(hdr + w*(n+1))
	size := offsets[n] - base
	if w == 4 && bytesStart+size > 1<<32-1 {
		panic(fmt.Sprintf("values: %d-byte variable block does not fit 32-bit offsets", bytesStart+size))
	}
	start := len(dst)
	total := int(bytesStart) + int(size)
	dst = slices.Grow(dst, total)
	dst = dst[:start+total]
	out := dst[start:]
	varPutOffset(out, w, uint64(offBits))
	varPutOffset(out[w:], w, bytesStart)
	for i, o := range offsets {
		varPutOffset(out[hdr+w*i:], w, o-base)
	}
	copy(out[bytesStart:], data[base:offsets[n]])
	return dst
}

// decodeVariableBlock parses the block form of n values (current or legacy
// layout). It returns the offset width, the n+1 offsets as stored (relative
// to data) and data, the value bytes up to the last offset; data aliases src.
func decodeVariableBlock(src []byte, n int) (offBits int, offsets []uint64, data []byte, err error) {
	if n < 0 {
		return 0, nil, nil, fmt.Errorf("values: variable block value count %d: %w", n, ErrCorrupt)
	}
	if len(src) < 4 {
		return 0, nil, nil, fmt.Errorf("values: variable block of %d bytes is too short for its header: %w", len(src), ErrCorrupt)
	}
	if src[1] != 0 || src[2] != 0 || src[3] != 0 {
		return decodeVariableLegacy(src, n)
	}
	offBits, offsets, data, err = decodeVariableCurrent(src, n)
	if err != nil && n%(1<<24) == 0 {
		// A legacy block whose value count has zero low bytes 1..3 (n = 0,
		// 2^24, ...) looks like the current layout; accept it if it parses.
		if b2, o2, d2, err2 := decodeVariableLegacy(src, n); err2 == nil {
			return b2, o2, d2, nil
		}
	}
	return offBits, offsets, data, err
}

func decodeVariableCurrent(src []byte, n int) (int, []uint64, []byte, error) {
	bits := binary.LittleEndian.Uint32(src)
	w, err := varOffsetWidth(int(bits))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("values: variable block with %d-bit offsets: %w", bits, ErrCorrupt)
	}
	hdr := 2 * w
	if len(src) < hdr {
		return 0, nil, nil, fmt.Errorf("values: variable block of %d bytes is too short for its %d-byte header: %w", len(src), hdr, ErrCorrupt)
	}
	if w == 8 && binary.LittleEndian.Uint32(src[4:]) != 0 {
		return 0, nil, nil, fmt.Errorf("values: variable block offset width field % x: %w", src[:8], ErrCorrupt)
	}
	bytesStart := varGetOffset(src[w:], w)
	offsets, data, err := variableOffsets(src, w, hdr, bytesStart, n)
	return int(bits), offsets, data, err
}

func decodeVariableLegacy(src []byte, n int) (int, []uint64, []byte, error) {
	var w, hdr int
	switch src[0] {
	case 32:
		w, hdr = 4, 9
	case 64:
		w, hdr = 8, 17
	default:
		return 0, nil, nil, fmt.Errorf("values: legacy variable block with %d-bit offsets: %w", src[0], ErrCorrupt)
	}
	if len(src) < hdr {
		return 0, nil, nil, fmt.Errorf("values: legacy variable block of %d bytes is too short for its %d-byte header: %w", len(src), hdr, ErrCorrupt)
	}
	count := varGetOffset(src[1:], w)
	if count != uint64(n) {
		return 0, nil, nil, fmt.Errorf("values: legacy variable block holds %d values, expected %d: %w", count, n, ErrCorrupt)
	}
	bytesStart := varGetOffset(src[1+w:], w)
	offsets, data, err := variableOffsets(src, w, hdr, bytesStart, n)
	return 8 * w, offsets, data, err
}

// variableOffsets reads n+1 w-byte offsets at src[at:], which must end by
// bytesStart, and validates them against the bytes from bytesStart.
func variableOffsets(src []byte, w, at int, bytesStart uint64, n int) ([]uint64, []byte, error) {
	if n > (len(src)-at)/w-1 {
		return nil, nil, fmt.Errorf("values: variable block of %d bytes cannot hold %d offsets of %d bytes from byte %d: %w", len(src), n+1, w, at, ErrCorrupt)
	}
	end := at + (n+1)*w
	if bytesStart < uint64(end) || bytesStart > uint64(len(src)) {
		return nil, nil, fmt.Errorf("values: variable block bytes start %d outside [%d, %d]: %w", bytesStart, end, len(src), ErrCorrupt)
	}
	data := src[bytesStart:]
	offsets := make([]uint64, n+1)
	prev := uint64(0)
	for i := range offsets {
		o := varGetOffset(src[at+w*i:], w)
		if o < prev {
			return nil, nil, fmt.Errorf("values: variable block offset %d decreases (%d < %d): %w", i, o, prev, ErrCorrupt)
		}
		offsets[i] = o
		prev = o
	}
	if prev > uint64(len(data)) {
		return nil, nil, fmt.Errorf("values: variable block last offset %d beyond %d data bytes: %w", prev, len(data), ErrCorrupt)
	}
	return offsets, data[:prev], nil
}

// appendVariableChunk appends the mini-block chunk form of m = len(offsets)-1
// values to dst: offsets rebased to positions inside the chunk, the bytes
// data[offsets[0]:offsets[m]], then 0x48 padding to a multiple of the offset
// width (counted from the chunk start). It panics if offBits is not 32 or 64,
// the offsets are not monotonic or exceed data, or (32-bit) the chunk does
// not fit 32-bit positions.
func appendVariableChunk(dst []byte, offBits int, offsets []uint64, data []byte) []byte {
	w := varCheckEncode(offBits, offsets, data)
	m := len(offsets) - 1
	base := offsets[0]
	head := uint64(w * (m + 1))
	size := offsets[m] - base
	if w == 4 && head+size > 1<<32-1 {
		panic(fmt.Sprintf("values: %d-byte variable chunk does not fit 32-bit offsets", head+size))
	}
	total := int(head + size)
	padded := (total + w - 1) / w * w
	start := len(dst)
	dst = slices.Grow(dst, padded)
	dst = dst[:start+padded]
	out := dst[start:]
	for j, o := range offsets {
		varPutOffset(out[w*j:], w, head+(o-base))
	}
	copy(out[head:], data[base:offsets[m]])
	for i := total; i < padded; i++ {
		out[i] = variablePad
	}
	return dst
}

// DecodeVariableChunk parses a mini-block chunk of m values with offBits-wide
// offsets. It returns m+1 offsets rebased to 0 and the value bytes (aliasing
// src). Trailing padding is ignored.
func DecodeVariableChunk(src []byte, offBits int, m int) (offsets []uint64, data []byte, err error) {
	w, err := varOffsetWidth(offBits)
	if err != nil {
		return nil, nil, err
	}
	if m < 0 || m > len(src)/w-1 {
		return nil, nil, fmt.Errorf("values: variable chunk of %d bytes cannot hold %d offsets of %d bytes: %w", len(src), m+1, w, ErrCorrupt)
	}
	head := uint64((m + 1) * w)
	first := varGetOffset(src, w)
	if first < head {
		return nil, nil, fmt.Errorf("values: variable chunk data starts at %d, inside its %d-byte offsets: %w", first, head, ErrCorrupt)
	}
	offsets = make([]uint64, m+1)
	prev := first
	for j := range offsets {
		o := varGetOffset(src[w*j:], w)
		if o < prev {
			return nil, nil, fmt.Errorf("values: variable chunk offset %d decreases (%d < %d): %w", j, o, prev, ErrCorrupt)
		}
		offsets[j] = o - first
		prev = o
	}
	if prev > uint64(len(src)) {
		return nil, nil, fmt.Errorf("values: variable chunk offset %d beyond the %d-byte chunk: %w", prev, len(src), ErrCorrupt)
	}
	return offsets, src[first:prev], nil
}

// VariableCodec stores variable-width values with OffBits-wide offsets. With
// Offsets nil it writes Lance's classic forms (offsets inside the chunk
// buffer; the Variable block); with an Offsets codec it writes the 2.3
// generic chunk form: the chunk's n+1 offsets (relative to the chunk, from 0)
// block-encoded by Offsets in their own buffer (none when the codec stores
// nothing, as Range does), then the value bytes.
type VariableCodec struct {
	OffBits int
	Offsets Codec
}

func (c VariableCodec) Name() string {
	if c.Offsets == nil {
		return fmt.Sprintf("variable(flat%d)", c.OffBits)
	}
	return "variable(" + c.Offsets.Name() + ")"
}

// OffsetBits is about how many bits one offset takes: the offset width, or
// the width its codec packs it to (0 for Range, which stores none).
func (c VariableCodec) OffsetBits() int {
	switch oc := c.Offsets.(type) {
	case RangeCodec:
		return 0
	case DeltaCodec:
		if ool, ok := oc.Deltas.(OutOfLineCodec); ok {
			return ool.Width
		}
	}
	return c.OffBits
}

func (c VariableCodec) Contexts() Context {
	if c.Offsets != nil {
		return InChunk
	}
	return InChunk | InBlock
}
func (c VariableCodec) NumBuffers() int {
	if c.Offsets != nil && HasPayload(c.Offsets.Encoding()) {
		return 2
	}
	return 1
}
func (c VariableCodec) Check(b Block) error {
	if err := c.checkShape(b); err != nil {
		return err
	}
	if c.Offsets != nil {
		s := getScratch()
		defer putScratch(s)
		ob := c.offsetBlock(b, s)
		return c.Offsets.Check(ob)
	}
	return nil
}

// checkShape is Check but for the offsets' codec (which AppendChunk leaves
// to the codec's own AppendBlock).
func (c VariableCodec) checkShape(b Block) error {
	if c.OffBits != 32 && c.OffBits != 64 {
		return notApplicable("variable", "%d-bit offsets (32 or 64 only)", c.OffBits)
	}
	if !b.Variable() || len(b.Offsets) != b.N+1 {
		return notApplicable("variable", "not a variable-width block of %d values", b.N)
	}
	if b.Offsets[b.N] > uint64(len(b.Data)) || b.Offsets[0] > b.Offsets[b.N] {
		return notApplicable("variable", "offsets beyond the %d value bytes", len(b.Data))
	}
	if c.OffBits == 32 && b.Offsets[b.N]-b.Offsets[0]+uint64(4*(b.N+1)) > 1<<32-1 {
		return notApplicable("variable", "block does not fit 32-bit offsets")
	}
	return nil
}

// offsetBlock is the n+1 offsets of b relative to its first value, as
// OffBits-wide words staged in s.
func (c VariableCodec) offsetBlock(b Block, s *scratch) Block {
	w := c.OffBits / 8
	raw := s.b[:0]
	base := b.Offsets[0]
	var word [8]byte
	for _, o := range b.Offsets {
		binary.LittleEndian.PutUint64(word[:], o-base)
		raw = append(raw, word[:w]...)
	}
	s.b = raw
	return Block{Bits: c.OffBits, N: b.N + 1, Data: raw}
}

// VariableChunkBytes is the value bytes a variable-width mini-block chunk
// aims at (Lance's default mini-chunk size).
const VariableChunkBytes = 4096

func (c VariableCodec) Estimate(p *Profile) (int, bool) {
	if p.Bits != 0 || p.Var == nil || p.OffBits != c.OffBits {
		return 0, false
	}
	if c.Offsets == nil {
		return p.RawBytes(), true
	}
	// Generic offsets are encoded per chunk: chunks hold a power-of-two
	// count of values (at most 4096) of about VariableChunkBytes of data
	// and packed offsets, each chunk with its own offsets block.
	perValue := float64(p.Var.Bytes)/float64(max(p.N, 1)) + float64(c.OffsetBits())/8
	vals := 2
	for vals < 4096 && float64(2*vals)*perValue <= VariableChunkBytes {
		vals *= 2
	}
	chunks := max(1, (p.N+vals-1)/vals)
	per := min(vals, p.N) + 1
	var offs int
	switch oc := c.Offsets.(type) {
	case RangeCodec, ConstantCodec:
		offs = 0
	case DeltaCodec:
		if ool, ok := oc.Deltas.(OutOfLineCodec); ok && ool.Width >= mbits.Len64(uint64(p.Var.MaxLen)) {
			offs = outOfLineBitpackedSize(oc.Bits, ool.Width, per-1)
		} else {
			offs = per * c.OffBits / 8
		}
	case BitpackCodec:
		w := mbits.Len64(uint64(min(p.Var.Bytes, VariableChunkBytes)))
		offs = inlineBitpackedSize(oc.Bits, make([]int, (per+flBlock-1)/flBlock)) + ((per+flBlock-1)/flBlock)*flBlock*w/8
	default:
		offs = per * c.OffBits / 8
	}
	return p.Var.Bytes + chunks*offs, true
}
func (c VariableCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.checkShape(b); err != nil {
		return bufs, err
	}
	nb := c.NumBuffers()
	bufs = growBufs(bufs, nb)
	if c.Offsets == nil {
		bufs[0] = appendVariableChunk(bufs[0], c.OffBits, b.Offsets, b.Data)
		return bufs, nil
	}
	scratch := getScratch()
	defer putScratch(scratch)
	ob := c.offsetBlock(b, scratch)
	base := b.Offsets[0]
	// The offsets' codec checks them as it encodes them (or, storing no
	// buffer, here).
	var err error
	if nb == 2 {
		bufs[0], err = c.Offsets.AppendBlock(bufs[0], ob)
	} else {
		err = c.Offsets.Check(ob)
	}
	if err != nil {
		return bufs, err
	}
	bufs[nb-1] = append(bufs[nb-1], b.Data[base:b.Offsets[b.N]]...)
	return bufs, nil
}
func (c VariableCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if c.Offsets != nil {
		return dst, notApplicable("variable", "generic offsets are a chunk form")
	}
	if err := c.Check(b); err != nil {
		return dst, err
	}
	return AppendVariableBlock(dst, c.OffBits, b.Offsets, b.Data), nil
}
func (c VariableCodec) Encoding() *enc21pb.CompressiveEncoding {
	off := FlatEncoding(c.OffBits)
	if c.Offsets != nil {
		off = c.Offsets.Encoding()
	}
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: off}}}
}

// decodeVariableBlockValues decodes a block of variable-width values, its
// offsets rebased to 0.
func decodeVariableBlockValues(buf []byte, n int) (Block, error) {
	_, offs, data, err := decodeVariableBlock(buf, n)
	if err != nil {
		return Block{}, err
	}
	base := uint64(0)
	if len(offs) > 0 {
		base = offs[0]
	}
	for i := range offs {
		offs[i] -= base
	}
	return Block{N: n, Data: data[base:], Offsets: offs}, nil
}

// deltaOffsets32 decodes the n+1 offsets of a variable chunk stored as
// 32-bit differences from base, out-of-line bit packed at width w (the
// writer's form for strings): the differences are unpacked into pooled
// scratch and summed straight into the offsets, with the general path's
// checks (from 0, under 2^32, ending at the value bytes' size).
func deltaOffsets32(base uint64, w int, payload []byte, n, dataLen int) ([]uint64, error) {
	s := getScratch()
	defer putScratch(s)
	d, err := decodeOutOfLineBitpacked(s.b[:0], 32, w, payload, n)
	if err != nil {
		return nil, err
	}
	s.b = d
	if len(d) < 4*n {
		return nil, fmt.Errorf("%d deltas in %d bytes: %w", n, len(d), ErrCorrupt)
	}
	if base != 0 {
		return nil, fmt.Errorf("offset 0 = %d not increasing from 0: %w", base, ErrCorrupt)
	}
	offs := make([]uint64, n+1)
	var v uint64
	for i := range n {
		v += uint64(binary.LittleEndian.Uint32(d[4*i:]))
		offs[i+1] = v
	}
	// (Sums of fewer than 2^32 differences under 2^32 cannot wrap; they only
	// grow, so the last is the largest.)
	if v > 0xFFFFFFFF {
		return nil, fmt.Errorf("delta offsets overflow 32 bits: %w", ErrCorrupt)
	}
	if v != uint64(dataLen) {
		return nil, fmt.Errorf("final offset %d, value buffer %d bytes: %w", v, dataLen, ErrCorrupt)
	}
	return offs, nil
}

// decodeVariableChunk decodes a binary mini-block chunk: the legacy layout
// (Flat offsets inside the one buffer) or the 2.3 generic layout (an optional
// offsets payload buffer, then the value bytes).
func decodeVariableChunk(v *enc21pb.Variable, bufs [][]byte, n int) (Block, error) {
	if v.Values != nil {
		return Block{}, fmt.Errorf("variable with buffer compression: %w", ErrUnsupported)
	}
	off := v.GetOffsets()
	if f := off.GetFlat(); f != nil {
		if f.Data != nil || (f.BitsPerValue != 32 && f.BitsPerValue != 64) {
			return Block{}, fmt.Errorf("variable offsets flat %d: %w", f.BitsPerValue, ErrCorrupt)
		}
		if len(bufs) != 1 {
			return Block{}, fmt.Errorf("legacy variable chunk has %d buffers: %w", len(bufs), ErrCorrupt)
		}
		offs, data, err := DecodeVariableChunk(bufs[0], int(f.BitsPerValue), n)
		if err != nil {
			return Block{}, err
		}
		return Block{N: n, Data: data, Offsets: offs}, nil
	}
	bits := offsetBits(off, 0)
	if bits != 32 && bits != 64 {
		return Block{}, fmt.Errorf("variable offsets of %d bits: %w", bits, ErrCorrupt)
	}
	want := 1
	if HasPayload(off) {
		want = 2
	}
	if len(bufs) != want {
		return Block{}, fmt.Errorf("generic variable chunk has %d buffers, want %d: %w", len(bufs), want, ErrCorrupt)
	}
	var payload []byte
	if want == 2 {
		payload = bufs[0]
	}
	data := bufs[want-1]
	if d := off.GetDelta(); d != nil && d.UncompressedBitsPerValue == 32 && n > 0 {
		if o := d.GetDeltas().GetOutOfLineBitpacking(); o != nil && o.UncompressedBitsPerValue == 32 {
			if w, ok := flatBits(o.GetValues()); ok {
				offs, err := deltaOffsets32(d.Base, w, payload, n, len(data))
				if err != nil {
					return Block{}, fmt.Errorf("variable offsets: %w", err)
				}
				return Block{N: n, Data: data, Offsets: offs}, nil
			}
		}
	}
	ob, err := DecodeBlock(off, payload, n+1)
	if err != nil {
		return Block{}, fmt.Errorf("variable offsets: %w", err)
	}
	if ob.Bits != bits {
		return Block{}, fmt.Errorf("offsets decoded to %d bits, want %d: %w", ob.Bits, bits, ErrCorrupt)
	}
	offs := make([]uint64, n+1)
	var prev uint64
	for i := range offs {
		var o uint64
		if bits == 32 {
			o = uint64(binary.LittleEndian.Uint32(ob.Data[4*i:]))
		} else {
			o = binary.LittleEndian.Uint64(ob.Data[8*i:])
		}
		if (i == 0 && o != 0) || o < prev {
			return Block{}, fmt.Errorf("offset %d = %d not increasing from 0: %w", i, o, ErrCorrupt)
		}
		offs[i], prev = o, o
	}
	if prev != uint64(len(data)) {
		return Block{}, fmt.Errorf("final offset %d, value buffer %d bytes: %w", prev, len(data), ErrCorrupt)
	}
	return Block{N: n, Data: data, Offsets: offs}, nil
}
