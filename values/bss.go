package values

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Byte stream split: for m values of b bytes, output byte j·m+i is byte j of
// value i, so the j-th bytes of all values form a contiguous stream.

func bssWidth(bits int) (int, error) {
	switch bits {
	case 32, 64:
		return bits / 8, nil
	}
	return 0, fmt.Errorf("values: byte stream split of %d-bit values: %w", bits, ErrUnsupported)
}

// appendByteStreamSplit appends the byte-stream-split form of the first n
// bits-wide values of src (bits = 32 or 64) to dst. It panics if bits is
// unsupported or src holds fewer than n values.
func appendByteStreamSplit(dst []byte, bits int, src []byte, n int) []byte {
	b, err := bssWidth(bits)
	if err != nil {
		panic(err)
	}
	if n < 0 || n > len(src)/b {
		panic(fmt.Sprintf("values: byte stream split of %d %d-bit values from a %d-byte buffer", n, bits, len(src)))
	}
	start := len(dst)
	dst = slices.Grow(dst, n*b)
	out := dst[start : start+n*b]
	src = src[:n*b]
	switch b {
	case 4:
		// Eight values at a time, each the low half of a row of the 8×8
		// transpose: its first four results are the four streams' bytes.
		le := binary.LittleEndian
		i := 0
		for ; i+8 <= n; i += 8 {
			v := src[4*i : 4*i+32]
			w0, w1, w2, w3, _, _, _, _ := transpose8(uint64(le.Uint32(v)), uint64(le.Uint32(v[4:])), uint64(le.Uint32(v[8:])), uint64(le.Uint32(v[12:])),
				uint64(le.Uint32(v[16:])), uint64(le.Uint32(v[20:])), uint64(le.Uint32(v[24:])), uint64(le.Uint32(v[28:])))
			le.PutUint64(out[i:], w0)
			le.PutUint64(out[n+i:], w1)
			le.PutUint64(out[2*n+i:], w2)
			le.PutUint64(out[3*n+i:], w3)
		}
		s0, s1, s2, s3 := out[:n], out[n:2*n], out[2*n:3*n], out[3*n:4*n]
		for ; i < n; i++ {
			v := src[4*i : 4*i+4]
			s0[i], s1[i], s2[i], s3[i] = v[0], v[1], v[2], v[3]
		}
	default:
		// Eight values at a time: an 8×8 byte transpose in registers,
		// then one 8-byte store per stream.
		le := binary.LittleEndian
		i := 0
		for ; i+8 <= n; i += 8 {
			v := src[8*i : 8*i+64]
			w0, w1, w2, w3, w4, w5, w6, w7 := transpose8(le.Uint64(v), le.Uint64(v[8:]), le.Uint64(v[16:]), le.Uint64(v[24:]),
				le.Uint64(v[32:]), le.Uint64(v[40:]), le.Uint64(v[48:]), le.Uint64(v[56:]))
			le.PutUint64(out[i:], w0)
			le.PutUint64(out[n+i:], w1)
			le.PutUint64(out[2*n+i:], w2)
			le.PutUint64(out[3*n+i:], w3)
			le.PutUint64(out[4*n+i:], w4)
			le.PutUint64(out[5*n+i:], w5)
			le.PutUint64(out[6*n+i:], w6)
			le.PutUint64(out[7*n+i:], w7)
		}
		for ; i < n; i++ {
			v := src[8*i : 8*i+8]
			for j := range 8 {
				out[j*n+i] = v[j]
			}
		}
	}
	return dst[:start+n*b]
}

// transpose8 transposes the 8×8 byte matrix whose row k is wk (byte j of
// row k at bits 8j): byte k of the j-th result is byte j of wk. Three rounds
// swap 1-, 2- and 4-byte blocks between rows 1, 2 and 4 apart, in
// registers.
func transpose8(w0, w1, w2, w3, w4, w5, w6, w7 uint64) (uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64) {
	const m1, m2, m4 = 0x00ff00ff00ff00ff, 0x0000ffff0000ffff, 0x00000000ffffffff
	t := (w0>>8 ^ w1) & m1
	w1, w0 = w1^t, w0^t<<8
	t = (w2>>8 ^ w3) & m1
	w3, w2 = w3^t, w2^t<<8
	t = (w4>>8 ^ w5) & m1
	w5, w4 = w5^t, w4^t<<8
	t = (w6>>8 ^ w7) & m1
	w7, w6 = w7^t, w6^t<<8

	t = (w0>>16 ^ w2) & m2
	w2, w0 = w2^t, w0^t<<16
	t = (w1>>16 ^ w3) & m2
	w3, w1 = w3^t, w1^t<<16
	t = (w4>>16 ^ w6) & m2
	w6, w4 = w6^t, w4^t<<16
	t = (w5>>16 ^ w7) & m2
	w7, w5 = w7^t, w5^t<<16

	t = (w0>>32 ^ w4) & m4
	w4, w0 = w4^t, w0^t<<32
	t = (w1>>32 ^ w5) & m4
	w5, w1 = w5^t, w1^t<<32
	t = (w2>>32 ^ w6) & m4
	w6, w2 = w6^t, w2^t<<32
	t = (w3>>32 ^ w7) & m4
	w7, w3 = w7^t, w3^t<<32
	return w0, w1, w2, w3, w4, w5, w6, w7
}

// decodeByteStreamSplit appends the n bits-wide values (bits = 32 or 64)
// recovered from the byte-stream-split buffer src to dst. src must be exactly
// n·bits/8 bytes.
func decodeByteStreamSplit(dst []byte, bits int, src []byte, n int) ([]byte, error) {
	b, err := bssWidth(bits)
	if err != nil {
		return dst, err
	}
	if n < 0 || n > len(src)/b || len(src) != n*b {
		return dst, fmt.Errorf("values: byte stream split buffer of %d bytes for %d %d-bit values: %w", len(src), n, bits, ErrCorrupt)
	}
	start := len(dst)
	dst = slices.Grow(dst, n*b)
	out := dst[start : start+n*b]
	switch b {
	case 4:
		// Eight values at a time: four streams' words are the first rows
		// of the 8×8 transpose, whose results hold a value each.
		le := binary.LittleEndian
		i := 0
		for ; i+8 <= n; i += 8 {
			w0, w1, w2, w3, w4, w5, w6, w7 := transpose8(le.Uint64(src[i:]), le.Uint64(src[n+i:]), le.Uint64(src[2*n+i:]), le.Uint64(src[3*n+i:]), 0, 0, 0, 0)
			v := out[4*i : 4*i+32]
			le.PutUint32(v, uint32(w0))
			le.PutUint32(v[4:], uint32(w1))
			le.PutUint32(v[8:], uint32(w2))
			le.PutUint32(v[12:], uint32(w3))
			le.PutUint32(v[16:], uint32(w4))
			le.PutUint32(v[20:], uint32(w5))
			le.PutUint32(v[24:], uint32(w6))
			le.PutUint32(v[28:], uint32(w7))
		}
		s0, s1, s2, s3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		for ; i < n; i++ {
			v := out[4*i : 4*i+4]
			v[0], v[1], v[2], v[3] = s0[i], s1[i], s2[i], s3[i]
		}
	default:
		le := binary.LittleEndian
		i := 0
		for ; i+8 <= n; i += 8 {
			w0, w1, w2, w3, w4, w5, w6, w7 := transpose8(le.Uint64(src[i:]), le.Uint64(src[n+i:]), le.Uint64(src[2*n+i:]), le.Uint64(src[3*n+i:]),
				le.Uint64(src[4*n+i:]), le.Uint64(src[5*n+i:]), le.Uint64(src[6*n+i:]), le.Uint64(src[7*n+i:]))
			v := out[8*i : 8*i+64]
			le.PutUint64(v, w0)
			le.PutUint64(v[8:], w1)
			le.PutUint64(v[16:], w2)
			le.PutUint64(v[24:], w3)
			le.PutUint64(v[32:], w4)
			le.PutUint64(v[40:], w5)
			le.PutUint64(v[48:], w6)
			le.PutUint64(v[56:], w7)
		}
		for ; i < n; i++ {
			v := out[8*i : 8*i+8]
			for j := range 8 {
				v[j] = src[j*n+i]
			}
		}
	}
	return dst[:start+n*b], nil
}

// BssCodec is byte stream split of 32- or 64-bit values: alone it does not
// shrink anything; it groups like bytes for a General codec above it.
type BssCodec struct{ Bits int }

func (c BssCodec) Name() string    { return fmt.Sprintf("bss%d", c.Bits) }
func (BssCodec) Contexts() Context { return InChunk }
func (BssCodec) NumBuffers() int   { return 1 }
func (c BssCodec) Check(b Block) error {
	if c.Bits != 32 && c.Bits != 64 {
		return notApplicable("byte stream split", "%d-bit values (32 or 64 only)", c.Bits)
	}
	return checkFixed("byte stream split", b, c.Bits)
}
func (c BssCodec) Estimate(p *Profile) (int, bool) {
	if p.Bits != c.Bits || (c.Bits != 32 && c.Bits != 64) {
		return 0, false
	}
	return fixedLen(c.Bits, p.N), true
}
func (c BssCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	bufs = growBufs(bufs, 1)
	bufs[0] = appendByteStreamSplit(bufs[0], c.Bits, b.Data, b.N)
	return bufs, nil
}
func (c BssCodec) AppendBlock(dst []byte, _ Block) ([]byte, error) {
	return dst, notApplicable("byte stream split", "Lance reads it only inside mini-block chunks")
}
func (c BssCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_ByteStreamSplit{
		ByteStreamSplit: &enc21pb.ByteStreamSplit{Values: FlatEncoding(c.Bits)}}}
}
