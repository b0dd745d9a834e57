package values

import (
	"encoding/binary"
	"unsafe"
)

// This file holds the FastLanes 1024-value bit-packing kernel used by the
// Lance bitpacking layouts.
//
// A block of exactly 1024 values of word width T (8, 16, 32 or 64 bits) is
// viewed as L = 1024/T lanes of T rows each. Row r of lane l is the value at
// index 16*order[r/8] + 128*(r%8) + l. Each lane's T values, masked to W
// bits, are concatenated LSB first into a T*W bit stream that is cut into W
// words of T bits; word k of lane l is stored at output index k*L + l. The
// packed block is therefore 1024*W/T words (128*W bytes).

// flWord is the set of word types the kernel is instantiated for.
type flWord interface {
	uint8 | uint16 | uint32 | uint64
}

// flBlock is the number of values one FastLanes kernel call works on.
const flBlock = 1024

// flOrder is the FastLanes row interleaving order.
var flOrder = [8]int{0, 4, 2, 6, 1, 5, 3, 7}

// flWordBits returns the width in bits of T.
func flWordBits[T flWord]() int {
	var z T
	return int(unsafe.Sizeof(z)) * 8
}

// flPackedWords returns the number of T-bit words a packed 1024-value block
// of width w occupies.
func flPackedWords(bits, w int) int {
	return flBlock * w / bits
}

// flPack packs the 1024 values of in into w bits each and writes the
// 1024*w/T packed words to out, which must hold at least that many words.
// Values are masked to w bits; 0 <= w <= T must hold.
func flPack[T flWord](in *[flBlock]T, out []T, w int) {
	if w == 0 {
		return
	}
	bits := flWordBits[T]()
	lanes := flBlock / bits
	out = out[:flBlock*w/bits]
	mask := T(1)<<uint(w) - 1
	for r := 0; r < bits; r++ {
		base := 16*flOrder[r/8] + 128*(r%8)
		src := in[base : base+lanes]
		bit := r * w
		k := bit / bits
		// Shift counts are < bits; masking says so to the compiler, which
		// then drops the oversized-shift guards.
		sh := uint(bit%bits) & uint(bits-1)
		lo := out[k*lanes : k*lanes+lanes]
		lo = lo[:len(src)]
		switch {
		case int(sh)+w > bits:
			// The value straddles words k and k+1. This is the first write to
			// word k+1 of every lane.
			hi := out[(k+1)*lanes : (k+1)*lanes+lanes]
			hi = hi[:len(src)]
			hs := (uint(bits) - sh) & uint(bits-1)
			for l, x := range src {
				x &= mask
				lo[l] |= x << sh
				hi[l] = x >> hs
			}
		case sh == 0:
			// First write to word k of every lane.
			for l, x := range src {
				lo[l] = x & mask
			}
		default:
			for l, x := range src {
				lo[l] |= (x & mask) << sh
			}
		}
	}
}

// flUnpack is the inverse of flPack: it reads 1024*w/T packed words from in
// and writes the 1024 unpacked values to out. 0 <= w <= T must hold.
func flUnpack[T flWord](in []T, out *[flBlock]T, w int) {
	if w == 0 {
		clear(out[:])
		return
	}
	bits := flWordBits[T]()
	lanes := flBlock / bits
	in = in[:flBlock*w/bits]
	mask := T(1)<<uint(w) - 1
	for r := 0; r < bits; r++ {
		base := 16*flOrder[r/8] + 128*(r%8)
		dst := out[base : base+lanes]
		bit := r * w
		k := bit / bits
		sh := uint(bit%bits) & uint(bits-1)
		lo := in[k*lanes : k*lanes+lanes]
		lo = lo[:len(dst)]
		if int(sh)+w > bits {
			hi := in[(k+1)*lanes : (k+1)*lanes+lanes]
			hi = hi[:len(dst)]
			hs := (uint(bits) - sh) & uint(bits-1)
			for l := range dst {
				dst[l] = (lo[l]>>sh | hi[l]<<hs) & mask
			}
		} else {
			for l := range dst {
				dst[l] = (lo[l] >> sh) & mask
			}
		}
	}
}

// flNativeLE reports whether the host stores integers little endian, in which
// case word slices and their byte encoding share one memory layout.
var flNativeLE = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// flWordBytes views a word slice as its raw bytes.
func flWordBytes[T flWord](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// flOr returns the OR of all words in s.
func flOr[T flWord](s []T) T {
	var a0, a1, a2, a3 T
	for len(s) >= 4 {
		a0 |= s[0]
		a1 |= s[1]
		a2 |= s[2]
		a3 |= s[3]
		s = s[4:]
	}
	for _, x := range s {
		a0 |= x
	}
	return a0 | a1 | a2 | a3
}

// flLoadLE decodes len(dst) little-endian words of T from src into dst. src
// must hold at least len(dst)*sizeof(T) bytes.
func flLoadLE[T flWord](dst []T, src []byte) {
	if flNativeLE {
		b := flWordBytes(dst)
		copy(b, src[:len(b)])
		return
	}
	switch d := any(dst).(type) {
	case []uint8:
		copy(d, src[:len(d)])
	case []uint16:
		src = src[:2*len(d)]
		for i := range d {
			d[i] = binary.LittleEndian.Uint16(src[2*i:])
		}
	case []uint32:
		src = src[:4*len(d)]
		for i := range d {
			d[i] = binary.LittleEndian.Uint32(src[4*i:])
		}
	case []uint64:
		src = src[:8*len(d)]
		for i := range d {
			d[i] = binary.LittleEndian.Uint64(src[8*i:])
		}
	}
}

// flStoreLE encodes the words of src as little-endian bytes into dst, which
// must hold at least len(src)*sizeof(T) bytes.
func flStoreLE[T flWord](dst []byte, src []T) {
	if flNativeLE {
		b := flWordBytes(src)
		copy(dst[:len(b)], b)
		return
	}
	switch s := any(src).(type) {
	case []uint8:
		copy(dst, s)
	case []uint16:
		dst = dst[:2*len(s)]
		for i, v := range s {
			binary.LittleEndian.PutUint16(dst[2*i:], v)
		}
	case []uint32:
		dst = dst[:4*len(s)]
		for i, v := range s {
			binary.LittleEndian.PutUint32(dst[4*i:], v)
		}
	case []uint64:
		dst = dst[:8*len(s)]
		for i, v := range s {
			binary.LittleEndian.PutUint64(dst[8*i:], v)
		}
	}
}
