package values

import (
	"fmt"
	"slices"
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

// AppendByteStreamSplit appends the byte-stream-split form of the first n
// bits-wide values of src (bits = 32 or 64) to dst. It panics if bits is
// unsupported or src holds fewer than n values.
func AppendByteStreamSplit(dst []byte, bits int, src []byte, n int) []byte {
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
		for i := range n {
			v := src[8*i : 8*i+8]
			for j := range 8 {
				out[j*n+i] = v[j]
			}
		}
	}
	return dst[:start+n*b]
}

// DecodeByteStreamSplit appends the n bits-wide values (bits = 32 or 64)
// recovered from the byte-stream-split buffer src to dst. src must be exactly
// n·bits/8 bytes.
func DecodeByteStreamSplit(dst []byte, bits int, src []byte, n int) ([]byte, error) {
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
		for i := range n {
			v := out[8*i : 8*i+8]
			for j := range 8 {
				v[j] = src[j*n+i]
			}
		}
	}
	return dst[:start+n*b], nil
}
