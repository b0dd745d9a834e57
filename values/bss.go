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
		s0, s1, s2, s3 := out[:n], out[n:2*n], out[2*n:3*n], out[3*n:4*n]
		for i := range n {
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
			var w [8]uint64
			for k := range w {
				w[k] = le.Uint64(v[8*k:])
			}
			transpose8(&w)
			for j := range w {
				le.PutUint64(out[j*n+i:], w[j])
			}
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

// transpose8 transposes the 8×8 byte matrix whose row k is w[k] (byte j of
// row k at bits 8j): afterwards byte k of w[j] is what byte j of w[k] was.
// Three rounds swap 1-, 2- and 4-byte blocks between rows 1, 2 and 4
// apart.
func transpose8(w *[8]uint64) {
	const m1, m2, m4 = 0x00ff00ff00ff00ff, 0x0000ffff0000ffff, 0x00000000ffffffff
	for k := 0; k < 8; k += 2 {
		t := (w[k]>>8 ^ w[k+1]) & m1
		w[k+1] ^= t
		w[k] ^= t << 8
	}
	for _, k := range [4]int{0, 1, 4, 5} {
		t := (w[k]>>16 ^ w[k+2]) & m2
		w[k+2] ^= t
		w[k] ^= t << 16
	}
	for k := 0; k < 4; k++ {
		t := (w[k]>>32 ^ w[k+4]) & m4
		w[k+4] ^= t
		w[k] ^= t << 32
	}
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
		s0, s1, s2, s3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		for i := range n {
			v := out[4*i : 4*i+4]
			v[0], v[1], v[2], v[3] = s0[i], s1[i], s2[i], s3[i]
		}
	default:
		le := binary.LittleEndian
		i := 0
		for ; i+8 <= n; i += 8 {
			var w [8]uint64
			for j := range w {
				w[j] = le.Uint64(src[j*n+i:])
			}
			transpose8(&w)
			v := out[8*i : 8*i+64]
			for k := range w {
				le.PutUint64(v[8*k:], w[k])
			}
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
