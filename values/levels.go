package values

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Level streams: the u16 repetition and definition levels of a dense page,
// encoded chunk by chunk (LevelEncoder) and decoded back (DecodeLevels,
// DecodeLevelRuns). Which codec a stream gets is the selector's choice.

// LevelEncoder appends one chunk's slice of a level stream at a time with
// the codec the selector chose for the stream: FlatCodec{16},
// RleCodec{16, 8|16}, BitpackCodec{16} (one inline block per chunk),
// OutOfLineCodec{16, w}, or GeneralCodec over one of them. Its scratch
// buffers are reused from chunk to chunk (and page to page when the
// encoder is kept and only Codec changes).
type LevelEncoder struct {
	Codec        Codec
	raw, scratch []byte
}

// Append appends the encoded levels to dst.
func (e *LevelEncoder) Append(dst []byte, levels []uint16) ([]byte, error) {
	if f, ok := e.Codec.(FlatCodec); ok && f.Bits == 16 {
		return AppendFlatLevels(dst, levels), nil // no copy to make
	}
	e.raw = AppendFlatLevels(e.raw[:0], levels)
	return e.appendRaw(dst, e.Codec, len(levels))
}

// appendRaw encodes the n levels in e.raw with c. Bit packing calls its
// kernels directly: an inline chunk is one block even when empty (the
// block form writes none), and the width is the selector's, taken from the
// stream's statistics (the codec's per-value check would scan it again).
func (e *LevelEncoder) appendRaw(dst []byte, c Codec, n int) ([]byte, error) {
	switch c := c.(type) {
	case BitpackCodec:
		return AppendInlineBitpacked(dst, c.Bits, e.raw, n)
	case OutOfLineCodec:
		return AppendOutOfLineBitpacked(dst, c.Bits, c.Width, e.raw, n)
	case GeneralCodec:
		if _, nested := c.Inner.(GeneralCodec); nested {
			return dst, notApplicable("levels", "general compression over general compression")
		}
		var err error
		if e.scratch, err = e.appendRaw(e.scratch[:0], c.Inner, n); err != nil {
			return dst, err
		}
		return AppendCompressed(dst, c.Scheme, c.Level, e.scratch)
	case nil:
		return dst, fmt.Errorf("values: level stream without a codec: %w", ErrNotApplicable)
	}
	return c.AppendBlock(dst, Block{Bits: 16, N: n, Data: e.raw})
}

// DecodeLevels decodes a block of n u16 levels, appended to dst. Levels
// bit packed out of line (the form chunks store them in, possibly under
// general compression) are unpacked straight into dst on little-endian
// hosts.
func DecodeLevels(enc *enc21pb.CompressiveEncoding, buf []byte, n int, dst []uint16) ([]uint16, error) {
	if out, ok, err := decodeLevelsInPlace(enc, buf, n, dst); ok {
		return out, err
	}
	f, err := DecodeBlock(enc, buf, n)
	if err != nil {
		return dst, err
	}
	if f.Bits != 16 || len(f.Data) < 2*n {
		return dst, fmt.Errorf("levels decoded to %d-bit values: %w", f.Bits, ErrCorrupt)
	}
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	out, data := dst[at:], f.Data[:2*n]
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(data[2*i:])
	}
	return dst, nil
}

// AppendFlatLevels appends raw u16 levels (the Flat{16} block layout).
func AppendFlatLevels(dst []byte, levels []uint16) []byte {
	for _, l := range levels {
		dst = binary.LittleEndian.AppendUint16(dst, l)
	}
	return dst
}

// DecodeLevelRuns decodes a block of n u16 levels stored as block RLE
// (Rle{Flat16, Flat8|16|32}, possibly under General) into its runs without
// expanding them: a read of a few rows of a page whose levels are long runs
// then costs the runs, not the levels. ok is false (and nothing is decoded)
// for other encodings. The runs cover exactly n levels, none is empty.
func DecodeLevelRuns(enc *enc21pb.CompressiveEncoding, buf []byte, n int) (vals []uint16, lens []uint32, ok bool, err error) {
	for depth := 0; enc.GetGeneral() != nil; depth++ {
		if depth > 4 {
			return nil, nil, true, fmt.Errorf("level encoding nested too deep: %w", ErrCorrupt)
		}
		g := enc.GetGeneral()
		if !isLevelRLE(g.GetValues()) {
			return nil, nil, false, nil
		}
		if buf, err = Decompress(nil, Scheme(g.GetCompression().GetScheme()), buf); err != nil {
			return nil, nil, true, err
		}
		enc = g.GetValues()
	}
	if !isLevelRLE(enc) {
		return nil, nil, false, nil
	}
	lbits := int(enc.GetRle().GetRunLengths().GetFlat().GetBitsPerValue())
	w, lw, err := rleWidths(16, lbits)
	if err != nil {
		return nil, nil, true, err
	}
	if len(buf) < 8 {
		return nil, nil, true, fmt.Errorf("values: rle block of %d bytes is shorter than its 8-byte header: %w", len(buf), ErrCorrupt)
	}
	vlen := binary.LittleEndian.Uint64(buf)
	if vlen > uint64(len(buf)-8) {
		return nil, nil, true, fmt.Errorf("values: rle block values part of %d bytes exceeds the %d bytes available: %w", vlen, len(buf)-8, ErrCorrupt)
	}
	vp, lp := buf[8:8+int(vlen)], buf[8+int(vlen):]
	runs, err := rleRuns(w, lw, vp, lp)
	if err != nil {
		return nil, nil, true, err
	}
	vals, lens = make([]uint16, runs), make([]uint32, runs)
	var total uint64
	for r := range runs {
		vals[r] = binary.LittleEndian.Uint16(vp[2*r:])
		l := rleLoad(lp, lw, r)
		if l == 0 {
			return nil, nil, true, fmt.Errorf("values: rle run %d has length 0: %w", r, ErrCorrupt)
		}
		lens[r] = uint32(l)
		total += l
	}
	if total != uint64(n) {
		return nil, nil, true, fmt.Errorf("values: rle runs cover %d levels, expected %d: %w", total, n, ErrCorrupt)
	}
	return vals, lens, true, nil
}

func isLevelRLE(e *enc21pb.CompressiveEncoding) bool {
	r := e.GetRle()
	if r == nil {
		return false
	}
	v, l := r.GetValues().GetFlat(), r.GetRunLengths().GetFlat()
	return v != nil && l != nil && v.BitsPerValue == 16 && v.Data == nil && l.Data == nil
}

// decodeLevelsInPlace is DecodeLevels for OutOfLineBitpacking{16} and
// Rle{Flat16, Flat8|16|32}, alone or under General: the levels are
// written over dst's new levels, seen as bytes. ok is false (nothing done)
// for other encodings and on big-endian hosts.
func decodeLevelsInPlace(enc *enc21pb.CompressiveEncoding, buf []byte, n int, dst []uint16) ([]uint16, bool, error) {
	if !flNativeLE || n <= 0 || n > maxDecodeValues {
		return dst, false, nil
	}
	inner := enc
	if g := enc.GetGeneral(); g != nil {
		inner = g.GetValues()
	}
	var decode func(view, buf []byte) ([]byte, error)
	switch {
	case inner.GetOutOfLineBitpacking() != nil:
		o := inner.GetOutOfLineBitpacking()
		w, ok := flatBits(o.GetValues())
		if !ok || o.UncompressedBitsPerValue != 16 {
			return dst, false, nil
		}
		decode = func(view, buf []byte) ([]byte, error) { return decodeOutOfLineBitpacked(view, 16, w, buf, n) }
	case inner.GetRle() != nil:
		vbits, ok1 := flatBits(inner.GetRle().GetValues())
		lbits, ok2 := flatBits(inner.GetRle().GetRunLengths())
		if !ok1 || !ok2 || vbits != 16 {
			return dst, false, nil
		}
		decode = func(view, buf []byte) ([]byte, error) { return decodeRLEBlock(view, 16, lbits, buf, n) }
	default:
		return dst, false, nil
	}
	if g := enc.GetGeneral(); g != nil {
		raw, err := Decompress(nil, Scheme(g.GetCompression().GetScheme()), buf)
		if err != nil {
			return dst, true, err
		}
		buf = raw
	}
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	view := flWordBytes(dst[at:])
	out, err := decode(view[:0], buf)
	if err != nil {
		return dst[:at], true, err
	}
	if len(out) != 2*n || &out[0] != &view[0] {
		return dst[:at], true, fmt.Errorf("levels decoded to %d bytes, want %d: %w", len(out), 2*n, ErrCorrupt)
	}
	return dst, true, nil
}
