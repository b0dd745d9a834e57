package values

import (
	"encoding/binary"
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Random access into a mini-block chunk: a take that needs a few values of
// a chunk reads just those, where the codec allows it (flat values and
// FastLanes inline bit packing), instead of decoding the chunk whole.

// flSlot[b][i] locates value i of a 1024-value FastLanes block of b-bit
// words (b = 8, 16, 32, 64 at 0..3): its row in the high byte, its lane in
// the low one.
var flSlot = func() (t [4][flBlock]uint16) {
	for wi, bits := range []int{8, 16, 32, 64} {
		lanes := flBlock / bits
		for r := range bits {
			base := 16*flOrder[r/8] + 128*(r%8)
			for l := range lanes {
				t[wi][base+l] = uint16(r)<<8 | uint16(l)
			}
		}
	}
	return t
}()

// wordIndex is the index of a word width in flSlot.
func wordIndex(bits int) int {
	switch bits {
	case 8:
		return 0
	case 16:
		return 1
	case 32:
		return 2
	}
	return 3
}

// CanGather reports whether GatherMiniBlock reads single values of chunks
// under enc: flat values, inline bit packing (one 1024-value block: a
// chunk's values), out-of-line bit packing (level streams), byte stream
// split (a value's bytes, one from each stream), and any of these under
// general compression (the chunk is decompressed, not decoded).
func CanGather(enc *enc21pb.CompressiveEncoding) bool {
	if g, ok := enc.GetCompression().(*enc21pb.CompressiveEncoding_General); ok {
		inner := g.General.GetValues()
		_, nested := inner.GetCompression().(*enc21pb.CompressiveEncoding_General)
		return !nested && CanGather(inner)
	}
	switch c := enc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		b := c.Flat.BitsPerValue
		return b == 8 || b == 16 || b == 32 || b == 64
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		return checkWidth(int(c.InlineBitpacking.UncompressedBitsPerValue)) == nil
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		_, ok := flatBits(c.OutOfLineBitpacking.GetValues())
		return ok && checkWidth(int(c.OutOfLineBitpacking.UncompressedBitsPerValue)) == nil
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		bits, ok := flatBits(c.ByteStreamSplit.GetValues())
		return ok && (bits == 32 || bits == 64)
	}
	return false
}

// GatherMiniBlock appends to dst (of the encoding's width) the values at
// positions at of a chunk of n values under enc (CanGather), reading only
// their bits.
func GatherMiniBlock(enc *enc21pb.CompressiveEncoding, buf []byte, n int, at []int, dst Block) (Block, error) {
	if g, ok := enc.GetCompression().(*enc21pb.CompressiveEncoding_General); ok {
		inner := g.General.GetValues()
		if _, nested := inner.GetCompression().(*enc21pb.CompressiveEncoding_General); nested {
			return dst, fmt.Errorf("gather under nested general compression: %w", ErrUnsupported)
		}
		sc := getScratch()
		defer putScratch(sc)
		raw, err := Decompress(sc.b[:0], Scheme(g.General.GetCompression().GetScheme()), buf)
		sc.b = raw
		if err != nil {
			return dst, err
		}
		return GatherMiniBlock(inner, raw, n, at, dst)
	}
	var bits, w int
	kind := 0 // 0 flat, 1 inline, 2 out of line, 3 byte stream split
	switch c := enc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		bits = int(c.Flat.BitsPerValue)
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		bits, kind = int(c.InlineBitpacking.UncompressedBitsPerValue), 1
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		var ok bool
		if w, ok = flatBits(c.OutOfLineBitpacking.GetValues()); !ok {
			return dst, fmt.Errorf("out-of-line bitpacking values must be flat: %w", ErrCorrupt)
		}
		bits, kind = int(c.OutOfLineBitpacking.UncompressedBitsPerValue), 2
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		var ok bool
		if bits, ok = flatBits(c.ByteStreamSplit.GetValues()); !ok || bits != 32 && bits != 64 {
			return dst, fmt.Errorf("byte stream split over %v: %w", c.ByteStreamSplit.GetValues(), ErrUnsupported)
		}
		kind = 3
	default:
		return dst, fmt.Errorf("gather under %s: %w", EncodingName(enc), ErrUnsupported)
	}
	if err := checkWidth(bits); err != nil {
		return dst, err
	}
	if dst.N > 0 && dst.Bits != bits {
		return dst, fmt.Errorf("gathering %d-bit values after %d-bit ones: %w", bits, dst.Bits, ErrCorrupt)
	}
	if n < 0 || n > bpMaxValues || n > flBlock && kind == 1 {
		return dst, fmt.Errorf("chunk of %d values: %w", n, ErrCorrupt)
	}
	for _, i := range at {
		if i < 0 || i >= n {
			return dst, fmt.Errorf("value %d of a %d-value chunk: %w", i, n, ErrCorrupt)
		}
	}
	bw := bits / 8
	dst.Bits = bits
	dst.N += len(at)
	switch kind {
	case 3:
		if len(buf) != n*bw {
			return dst, fmt.Errorf("byte stream split chunk of %d %d-bit values in %d bytes: %w", n, bits, len(buf), ErrCorrupt)
		}
		for _, i := range at {
			for k := range bw {
				dst.Data = append(dst.Data, buf[k*n+i])
			}
		}
		return dst, nil
	case 0:
		if len(buf) < n*bw {
			return dst, fmt.Errorf("flat chunk of %d %d-bit values in %d bytes: %w", n, bits, len(buf), ErrCorrupt)
		}
		for _, i := range at {
			dst.Data = append(dst.Data, buf[i*bw:(i+1)*bw]...)
		}
		return dst, nil
	case 1:
		if n == 0 {
			return dst, nil
		}
		if len(buf) < bw {
			return dst, fmt.Errorf("inline bitpacking: width word needs %d bytes, have %d: %w", bw, len(buf), ErrCorrupt)
		}
		w = int(bpReadWord(bits, buf))
		if w > bits {
			return dst, fmt.Errorf("inline bitpacking: width %d exceeds %d-bit words: %w", w, bits, ErrCorrupt)
		}
		if body := buf[bw:]; len(body) != flPackedWords(bits, w)*bw {
			return dst, fmt.Errorf("inline bitpacking: width %d needs %d body bytes, have %d: %w", w, flPackedWords(bits, w)*bw, len(body), ErrCorrupt)
		}
		for _, i := range at {
			dst.Data = appendLE(dst.Data, bw, flValue(buf[bw:], bits, w, i))
		}
		return dst, nil
	}
	if w < 0 || w > bits || len(buf)%bw != 0 {
		return dst, fmt.Errorf("out-of-line bitpacking: width %d of %d-bit words over %d bytes: %w", w, bits, len(buf), ErrCorrupt)
	}
	lay := bpOOLLayout{full: n / flBlock, tail: n % flBlock, wpc: flPackedWords(bits, w)}
	lay.rawTail = lay.tail > 0 && len(buf)/bw == lay.full*lay.wpc+lay.tail
	if len(buf)/bw != lay.words() {
		return dst, fmt.Errorf("out-of-line bitpacking: %d values of width %d need %d words, have %d: %w", n, w, lay.words(), len(buf)/bw, ErrCorrupt)
	}
	group := lay.wpc * bw
	for _, i := range at {
		g, j := i/flBlock, i%flBlock
		var v uint64
		switch {
		case g == lay.full && lay.rawTail:
			v = bpReadWord(bits, buf[g*group+j*bw:])
		default:
			v = flValue(buf[g*group:], bits, w, j)
		}
		dst.Data = appendLE(dst.Data, bw, v)
	}
	return dst, nil
}

// flValue reads value i of a FastLanes block of bits-bit words packed to w
// bits (its packed words, little-endian, from the start of words).
func flValue(words []byte, bits, w, i int) uint64 {
	if w == 0 {
		return 0
	}
	bw := bits / 8
	lanes := flBlock / bits
	slot := flSlot[wordIndex(bits)][i]
	r, l := int(slot>>8), int(slot&0xFF)
	bit := r * w
	k, sh := bit/bits, uint(bit%bits)
	v := bpReadWord(bits, words[(k*lanes+l)*bw:]) >> sh
	if int(sh)+w > bits {
		v |= bpReadWord(bits, words[((k+1)*lanes+l)*bw:]) << (uint(bits) - sh)
	}
	if w < 64 {
		v &= 1<<uint(w) - 1
	}
	return v
}

// GatherLevels appends to dst the levels at positions at of a chunk's n
// 16-bit levels under enc: read one by one where CanGather, else decoded
// whole (run-length levels, say) and picked.
func GatherLevels(enc *enc21pb.CompressiveEncoding, buf []byte, n int, at []int, dst []uint16) ([]uint16, error) {
	if !CanGather(enc) {
		// Run-length levels and other block forms: the chunk's levels
		// are few and cheap to expand; the positions are picked after.
		for _, i := range at {
			if i < 0 || i >= n {
				return dst, fmt.Errorf("level %d of a %d-level chunk: %w", i, n, ErrCorrupt)
			}
		}
		all, err := DecodeLevels(enc, buf, n, nil)
		if err != nil {
			return dst, err
		}
		for _, i := range at {
			dst = append(dst, all[i])
		}
		return dst, nil
	}
	b, err := GatherMiniBlock(enc, buf, n, at, Block{})
	if err != nil {
		return dst, err
	}
	if b.Bits != 16 {
		return dst, fmt.Errorf("levels of %d bits: %w", b.Bits, ErrCorrupt)
	}
	for k := range b.N {
		dst = append(dst, binary.LittleEndian.Uint16(b.Data[2*k:]))
	}
	return dst, nil
}
