package values

import (
	"encoding/binary"
	"fmt"
	"slices"
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

// DecodeVariableBlock parses the block form of n values (current or legacy
// layout). It returns the offset width, the n+1 offsets as stored (relative
// to data) and data, the value bytes up to the last offset; data aliases src.
func DecodeVariableBlock(src []byte, n int) (offBits int, offsets []uint64, data []byte, err error) {
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

// AppendVariableChunk appends the mini-block chunk form of m = len(offsets)-1
// values to dst: offsets rebased to positions inside the chunk, the bytes
// data[offsets[0]:offsets[m]], then 0x48 padding to a multiple of the offset
// width (counted from the chunk start). It panics if offBits is not 32 or 64,
// the offsets are not monotonic or exceed data, or (32-bit) the chunk does
// not fit 32-bit positions.
func AppendVariableChunk(dst []byte, offBits int, offsets []uint64, data []byte) []byte {
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
