package values

import (
	"encoding/binary"
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Structural sets (the positions and counts of a sparse page) are blocks of
// 64-bit values that a valid page keeps under 2^31. DecodeUint32s decodes
// them straight into 32-bit words: position sets, delta coded over
// out-of-line bit packing, are unpacked a 1024-value group at a time and
// summed into the output, with no 64-bit copy of the block or of its
// deltas.

// DecodeUint32s decodes a block of len(dst) 64-bit values into dst; a value
// past 32 bits is an error (ErrCorrupt).
func DecodeUint32s(e *enc21pb.CompressiveEncoding, buf []byte, dst []uint32) error {
	n := len(dst)
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		if o := c.OutOfLineBitpacking; o.UncompressedBitsPerValue == 64 {
			w, ok := flatBits(o.GetValues())
			if !ok {
				break
			}
			k := 0
			var wide uint64
			err := oolEach64(buf, w, n, func(vals []uint64) {
				for i, v := range vals {
					dst[k+i] = uint32(v)
					wide |= v
				}
				k += len(vals)
			})
			if err != nil {
				return err
			}
			if wide>>32 != 0 {
				return fmt.Errorf("values: a 64-bit value past 32 bits: %w", ErrCorrupt)
			}
			return nil
		}
	case *enc21pb.CompressiveEncoding_Delta:
		d := c.Delta
		o := d.GetDeltas().GetOutOfLineBitpacking()
		if d.UncompressedBitsPerValue != 64 || n == 0 || o == nil || o.UncompressedBitsPerValue != 64 {
			break
		}
		w, ok := flatBits(o.GetValues())
		if !ok {
			break
		}
		v, wide := d.Base, d.Base
		dst[0] = uint32(v)
		k := 1
		err := oolEach64(buf, w, n-1, func(ds []uint64) {
			out := dst[k : k+len(ds)]
			for i, dv := range ds {
				// Both under 2^32, the sum cannot wrap; wide keeps
				// whether either ever was not.
				wide |= dv
				v += dv
				wide |= v
				out[i] = uint32(v)
			}
			k += len(ds)
		})
		if err != nil {
			return err
		}
		if wide>>32 != 0 {
			return fmt.Errorf("values: delta values past 32 bits: %w", ErrCorrupt)
		}
		return nil
	}
	b, err := DecodeBlock(e, buf, n)
	if err != nil {
		return err
	}
	if b.Bits != 64 || len(b.Data) < 8*n {
		return fmt.Errorf("values: a 64-bit block decoded to %d %d-bit values: %w", b.N, b.Bits, ErrCorrupt)
	}
	var wide uint64
	for i := range dst {
		v := binary.LittleEndian.Uint64(b.Data[8*i:])
		wide |= v
		dst[i] = uint32(v)
	}
	if wide>>32 != 0 {
		return fmt.Errorf("values: a 64-bit value past 32 bits: %w", ErrCorrupt)
	}
	return nil
}

// oolEach64 checks an OutOfLineBitpacking buffer of n 64-bit values packed
// to w bits and hands its values to f in order, up to 1024 at a time, from
// one scratch group.
func oolEach64(src []byte, w, n int, f func([]uint64)) error {
	lay, err := oolLayout(64, w, src, n)
	if err != nil {
		return err
	}
	var words, vals [flBlock]uint64
	groupBytes := lay.wpc * 8
	for g := 0; g < lay.full; g++ {
		if w > 0 {
			flLoadLE(words[:lay.wpc], src[g*groupBytes:])
			flUnpack(words[:lay.wpc], &vals, w)
		}
		f(vals[:])
	}
	if r := lay.tail; r > 0 {
		tail := src[lay.full*groupBytes:]
		switch {
		case lay.rawTail:
			for i := range r {
				vals[i] = binary.LittleEndian.Uint64(tail[8*i:])
			}
		case w > 0:
			flLoadLE(words[:lay.wpc], tail)
			flUnpack(words[:lay.wpc], &vals, w)
		default:
			clear(vals[:r])
		}
		f(vals[:r])
	}
	return nil
}
