// Package bitmap expands Arrow validity bitmaps into per-slot forms (null
// flags, definition levels) and visits their nulls, eight slots a step
// rather than one bit test per slot. It is a leaf package: plain loops over
// slices, no Arrow types.
package bitmap

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// flags[b] is the eight null flags (true where the bit is clear) of one
// validity byte b, slot 0 in bit 0.
var flags = func() (t [256][8]bool) {
	for b := range 256 {
		for j := range 8 {
			t[b][j] = b>>j&1 == 0
		}
	}
	return t
}()

// masks[b] is flags[b] as 16-bit masks: all ones for a null slot.
var masks = func() (t [256][8]uint16) {
	for b := range 256 {
		for j := range 8 {
			if b>>j&1 == 0 {
				t[b][j] = 0xFFFF
			}
		}
	}
	return t
}()

// bit reports whether bit i of bm is set.
func bit(bm []byte, i int) bool { return bm[i>>3]>>(i&7)&1 != 0 }

// head is how many slots from bit off on come before the next byte
// boundary, at most n.
func head(off, n int) int { return min(n, (8-off&7)&7) }

// Nulls sets dst[i] to whether slot off+i of bm is null (its bit clear),
// for every i < len(dst), and returns how many are.
func Nulls(dst []bool, bm []byte, off int) int {
	n, i, nulls := len(dst), 0, 0
	for h := head(off, n); i < h; i++ {
		dst[i] = !bit(bm, off+i)
		nulls += b2i(dst[i])
	}
	at := (off + i) >> 3
	for ; i+64 <= n; i, at = i+64, at+8 {
		w := binary.LittleEndian.Uint64(bm[at:])
		if w == ^uint64(0) {
			clear(dst[i : i+64])
			continue
		}
		nulls += 64 - bits.OnesCount64(w)
		for k := range 8 {
			*(*[8]bool)(dst[i+8*k:]) = flags[byte(w>>(8*k))]
		}
	}
	for ; i+8 <= n; i, at = i+8, at+1 {
		*(*[8]bool)(dst[i:]) = flags[bm[at]]
		nulls += 8 - bits.OnesCount8(bm[at])
	}
	for ; i < n; i++ {
		dst[i] = !bit(bm, off+i)
		nulls += b2i(dst[i])
	}
	return nulls
}

// Valid sets dst[i] to whether slot off+i of bm is valid (its bit set),
// for every i < len(dst), and returns how many are null: Nulls' flags,
// flipped eight at a time.
func Valid(dst []bool, bm []byte, off int) int {
	nulls := Nulls(dst, bm, off)
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst))
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^0x0101010101010101)
		b = b[8:]
	}
	for i := range b {
		b[i] ^= 1
	}
	return nulls
}

// Levels sets dst[i] to code where slot off+i of bm is null and to 0 where
// it is valid, for every i < len(dst), and returns how many are null.
func Levels(dst []uint16, bm []byte, off int, code uint16) int {
	n, i, nulls := len(dst), 0, 0
	level := func(null bool) uint16 {
		if null {
			nulls++
			return code
		}
		return 0
	}
	for h := head(off, n); i < h; i++ {
		dst[i] = level(!bit(bm, off+i))
	}
	at := (off + i) >> 3
	for ; i+8 <= n; i, at = i+8, at+1 {
		b := bm[at]
		d := (*[8]uint16)(dst[i:])
		if b == 0xFF {
			*d = [8]uint16{}
			continue
		}
		nulls += 8 - bits.OnesCount8(b)
		m := &masks[b]
		for j := range d {
			d[j] = m[j] & code
		}
	}
	for ; i < n; i++ {
		dst[i] = level(!bit(bm, off+i))
	}
	return nulls
}

// ClearNulls zeroes the width-byte slot i of dst for every null slot off+i
// of bm, i < n.
func ClearNulls(dst []byte, width int, bm []byte, off, n int) {
	i := 0
	for h := head(off, n); i < h; i++ {
		if !bit(bm, off+i) {
			clear(dst[i*width : (i+1)*width])
		}
	}
	at := (off + i) >> 3
	for ; i+8 <= n; i, at = i+8, at+1 {
		z := uint(^bm[at])
		if z == 0 {
			continue
		}
		// One store a null for the common widths, a clear for others.
		switch width {
		case 4:
			s := dst[i*4 : (i+8)*4]
			for ; z != 0; z &= z - 1 {
				binary.LittleEndian.PutUint32(s[bits.TrailingZeros(z)*4:], 0)
			}
		case 8:
			s := dst[i*8 : (i+8)*8]
			for ; z != 0; z &= z - 1 {
				binary.LittleEndian.PutUint64(s[bits.TrailingZeros(z)*8:], 0)
			}
		default:
			for ; z != 0; z &= z - 1 {
				j := i + bits.TrailingZeros(z)
				clear(dst[j*width : (j+1)*width])
			}
		}
	}
	for ; i < n; i++ {
		if !bit(bm, off+i) {
			clear(dst[i*width : (i+1)*width])
		}
	}
}

// Pack sets bit i of dst (LSB first) for every true flags[i] and clears
// it for every false one, eight flags a step, and returns how many are
// true. dst must hold len(flags) bits.
func Pack(dst []byte, flags []bool) int {
	n, set := len(flags), 0
	// A bool is one byte, 0 or 1: eight of them read as a word and
	// gathered into one byte by a multiply.
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(flags))), n)
	i := 0
	for ; i+8 <= n; i += 8 {
		x := binary.LittleEndian.Uint64(raw[i:])
		b := byte((x * 0x0102040810204080) >> 56)
		dst[i>>3] = b
		set += bits.OnesCount8(b)
	}
	if i < n {
		var b byte
		for j := i; j < n; j++ {
			if flags[j] {
				b |= 1 << (j - i)
				set++
			}
		}
		dst[i>>3] = b
	}
	return set
}

// CountTrue counts the set flags, eight at a time (a bool is one byte
// holding 0 or 1, so a multiply sums eight of them).
func CountTrue(flags []bool) int {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(flags))), len(flags))
	c := 0
	for len(b) >= 8 {
		c += int(binary.LittleEndian.Uint64(b) * 0x0101010101010101 >> 56)
		b = b[8:]
	}
	for _, x := range b {
		c += int(x)
	}
	return c
}

// FillTrue sets every flag, by doubling copies.
func FillTrue(flags []bool) {
	if len(flags) == 0 {
		return
	}
	flags[0] = true
	for k := 1; k < len(flags); k *= 2 {
		copy(flags[k:], flags[:k])
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
