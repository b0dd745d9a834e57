package values

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Block is a decoded block of N values. Fixed-width blocks (Bits > 0) hold
// the values back to back, little endian (bit-packed LSB-first when Bits is
// not a multiple of 8, e.g. booleans). Variable-width blocks (Bits == 0) hold
// N+1 offsets starting at 0 into Data. Fixed-size-list values may carry the
// validity of their items (one bitmap per list layer, outer first, bit i =
// item i of the block).
type Block struct {
	Bits      int
	N         int
	Data      []byte
	Offsets   []uint64
	ItemValid [][]byte
	Dims      []int // fixed-size-list dimensions, outer first (nil otherwise)
	// Children holds the fields of packed struct values decoded from
	// VariablePackedStruct records, one block of N values per field (the
	// block's own Bits, Data and Offsets are then unused).
	Children []Block
	// NullItems marks fixed-size-list values whose innermost items are not
	// stored because every one is null (Data is empty, Bits is 0; the
	// item width comes from the column's type).
	NullItems bool
}

// Variable reports whether the block is variable width.
func (b Block) Variable() bool { return b.Bits == 0 && !b.NullItems }

func fixedLen(bits, n int) int { return (bits*n + 7) / 8 }

func flatBits(enc *enc21pb.CompressiveEncoding) (int, bool) {
	f := enc.GetFlat()
	if f == nil {
		return 0, false
	}
	return int(f.BitsPerValue), true
}

const maxDecodeValues = 1 << 31

func checkWidth(bits int) error {
	switch bits {
	case 8, 16, 32, 64:
		return nil
	}
	return fmt.Errorf("bit width %d: %w", bits, ErrUnsupported)
}

// DecodeMiniBlock decodes the value buffers of one chunk (padding removed)
// into n values, for a chunked page's value_compression.
func DecodeMiniBlock(enc *enc21pb.CompressiveEncoding, bufs [][]byte, n int) (Block, error) {
	return decodeMiniBlock(enc, bufs, n, 0)
}

func decodeMiniBlock(enc *enc21pb.CompressiveEncoding, bufs [][]byte, n int, depth int) (Block, error) {
	if depth > 8 {
		return Block{}, fmt.Errorf("encoding nested too deep: %w", ErrCorrupt)
	}
	if n < 0 || n > maxDecodeValues {
		return Block{}, fmt.Errorf("chunk value count %d: %w", n, ErrCorrupt)
	}
	need := func(k int) error {
		if len(bufs) != k {
			return fmt.Errorf("chunk has %d value buffers, encoding needs %d: %w", len(bufs), k, ErrCorrupt)
		}
		return nil
	}
	switch c := enc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		bits := int(c.Flat.BitsPerValue)
		if bits <= 0 || bits > 1<<16 {
			return Block{}, fmt.Errorf("flat width %d: %w", bits, ErrCorrupt)
		}
		if c.Flat.Data != nil {
			return Block{}, fmt.Errorf("flat with buffer compression: %w", ErrUnsupported)
		}
		if err := need(1); err != nil {
			return Block{}, err
		}
		if want := fixedLen(bits, n); len(bufs[0]) < want {
			return Block{}, fmt.Errorf("flat chunk has %d bytes, %d values of %d bits need %d: %w", len(bufs[0]), n, bits, want, ErrCorrupt)
		}
		return Block{Bits: bits, N: n, Data: bufs[0][:fixedLen(bits, n)]}, nil
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		bits := int(c.InlineBitpacking.UncompressedBitsPerValue)
		if err := checkWidth(bits); err != nil {
			return Block{}, err
		}
		if err := need(1); err != nil {
			return Block{}, err
		}
		out, err := DecodeInlineBitpacked(nil, bits, bufs[0], n)
		if err != nil {
			return Block{}, err
		}
		return Block{Bits: bits, N: n, Data: out}, nil
	case *enc21pb.CompressiveEncoding_Rle:
		if err := need(2); err != nil {
			return Block{}, err
		}
		return decodeRLEChunk(c.Rle, bufs[0], bufs[1], n, depth)
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		bits, ok := flatBits(c.ByteStreamSplit.GetValues())
		if !ok || (bits != 32 && bits != 64) {
			return Block{}, fmt.Errorf("byte stream split over %v: %w", c.ByteStreamSplit.GetValues(), ErrUnsupported)
		}
		if err := need(1); err != nil {
			return Block{}, err
		}
		out, err := DecodeByteStreamSplit(nil, bits, bufs[0], n)
		if err != nil {
			return Block{}, err
		}
		return Block{Bits: bits, N: n, Data: out}, nil
	case *enc21pb.CompressiveEncoding_Variable:
		return decodeVariableChunk(c.Variable, bufs, n)
	case *enc21pb.CompressiveEncoding_Fsst:
		inner, err := decodeMiniBlock(c.Fsst.GetValues(), bufs, n, depth+1)
		if err != nil {
			return Block{}, err
		}
		return FsstDecodeBlock(c.Fsst.SymbolTable, inner)
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		return decodeFSLChunk(c.FixedSizeList, bufs, n, depth)
	case *enc21pb.CompressiveEncoding_PackedStruct:
		// Rows of the children's values back to back: to the page, flat
		// values of the row width.
		bits, err := ParsePackedStruct(enc)
		if err != nil {
			return Block{}, err
		}
		if err := need(1); err != nil {
			return Block{}, err
		}
		sum := 0
		for _, b := range bits {
			sum += b
		}
		if want := fixedLen(sum, n); len(bufs[0]) < want {
			return Block{}, fmt.Errorf("packed struct chunk has %d bytes, %d rows of %d bits need %d: %w", len(bufs[0]), n, sum, want, ErrCorrupt)
		}
		return Block{Bits: sum, N: n, Data: bufs[0][:fixedLen(sum, n)]}, nil
	case *enc21pb.CompressiveEncoding_General:
		if len(bufs) < 1 {
			return Block{}, fmt.Errorf("general chunk without buffers: %w", ErrCorrupt)
		}
		raw, err := Decompress(nil, Scheme(c.General.GetCompression().GetScheme()), bufs[0])
		if err != nil {
			return Block{}, err
		}
		inner := append([][]byte{raw}, bufs[1:]...)
		return decodeMiniBlock(c.General.GetValues(), inner, n, depth+1)
	case nil:
		return Block{}, fmt.Errorf("value encoding missing: %w", ErrCorrupt)
	default:
		return Block{}, fmt.Errorf("mini-block value encoding %T: %w", c, ErrUnsupported)
	}
}

// rleChild decodes one child of an Rle node (values or run lengths) of a
// chunk. count is the number of runs if already known (-1 otherwise).
func rleChild(enc *enc21pb.CompressiveEncoding, buf []byte, count int, depth int) (bits int, raw []byte, err error) {
	switch c := enc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		bits = int(c.Flat.BitsPerValue)
		if err := checkWidth(bits); err != nil {
			return 0, nil, err
		}
		return bits, buf, nil
	case *enc21pb.CompressiveEncoding_General:
		if depth > 4 {
			return 0, nil, fmt.Errorf("rle child nested too deep: %w", ErrCorrupt)
		}
		raw, err := Decompress(nil, Scheme(c.General.GetCompression().GetScheme()), buf)
		if err != nil {
			return 0, nil, err
		}
		return rleChild(c.General.GetValues(), raw, count, depth+1)
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		bits = int(c.OutOfLineBitpacking.UncompressedBitsPerValue)
		w, ok := flatBits(c.OutOfLineBitpacking.GetValues())
		if !ok {
			return 0, nil, fmt.Errorf("out-of-line bitpacking values must be flat: %w", ErrCorrupt)
		}
		if count < 0 {
			return 0, nil, fmt.Errorf("both rle children bitpacked: %w", ErrCorrupt)
		}
		out, err := DecodeOutOfLineBitpacked(nil, bits, w, buf, count)
		return bits, out, err
	}
	return 0, nil, fmt.Errorf("rle child %T: %w", enc.GetCompression(), ErrUnsupported)
}

func isBitpacked(enc *enc21pb.CompressiveEncoding) bool {
	return enc.GetOutOfLineBitpacking() != nil
}

func decodeRLEChunk(r *enc21pb.Rle, vbuf, lbuf []byte, n int, depth int) (Block, error) {
	var (
		vbits, lbits int
		vraw, lraw   []byte
		err          error
	)
	if isBitpacked(r.GetValues()) {
		if lbits, lraw, err = rleChild(r.GetRunLengths(), lbuf, -1, depth); err != nil {
			return Block{}, err
		}
		if vbits, vraw, err = rleChild(r.GetValues(), vbuf, len(lraw)/(lbits/8), depth); err != nil {
			return Block{}, err
		}
	} else {
		if vbits, vraw, err = rleChild(r.GetValues(), vbuf, -1, depth); err != nil {
			return Block{}, err
		}
		if lbits, lraw, err = rleChild(r.GetRunLengths(), lbuf, len(vraw)/(vbits/8), depth); err != nil {
			return Block{}, err
		}
	}
	if lbits > 32 {
		return Block{}, fmt.Errorf("rle run lengths of %d bits: %w", lbits, ErrUnsupported)
	}
	out, err := DecodeRLE(nil, vbits, lbits, vraw, lraw, n)
	if err != nil {
		return Block{}, err
	}
	return Block{Bits: vbits, N: n, Data: out}, nil
}

// DecodeBlock decodes one opaque block buffer (levels, dictionaries, sets)
// holding n values. bits is the expected value width when the encoding does
// not say (0 if unknown).
func DecodeBlock(enc *enc21pb.CompressiveEncoding, buf []byte, n int) (Block, error) {
	return decodeBlock(enc, buf, n, 0)
}

func decodeBlock(enc *enc21pb.CompressiveEncoding, buf []byte, n int, depth int) (Block, error) {
	if depth > 8 {
		return Block{}, fmt.Errorf("encoding nested too deep: %w", ErrCorrupt)
	}
	if n < 0 || n > maxDecodeValues {
		return Block{}, fmt.Errorf("block value count %d: %w", n, ErrCorrupt)
	}
	switch c := enc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		bits := int(c.Flat.BitsPerValue)
		if bits <= 0 || bits > 1<<16 {
			return Block{}, fmt.Errorf("flat width %d: %w", bits, ErrCorrupt)
		}
		if want := fixedLen(bits, n); len(buf) < want {
			return Block{}, fmt.Errorf("flat block has %d bytes, want %d: %w", len(buf), want, ErrCorrupt)
		}
		return Block{Bits: bits, N: n, Data: buf[:fixedLen(bits, n)]}, nil
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		bits := int(c.InlineBitpacking.UncompressedBitsPerValue)
		if err := checkWidth(bits); err != nil {
			return Block{}, err
		}
		out, err := DecodeInlineBitpacked(nil, bits, buf, n)
		return Block{Bits: bits, N: n, Data: out}, err
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		bits := int(c.OutOfLineBitpacking.UncompressedBitsPerValue)
		if err := checkWidth(bits); err != nil {
			return Block{}, err
		}
		w, ok := flatBits(c.OutOfLineBitpacking.GetValues())
		if !ok {
			return Block{}, fmt.Errorf("out-of-line bitpacking values must be flat: %w", ErrCorrupt)
		}
		out, err := DecodeOutOfLineBitpacked(nil, bits, w, buf, n)
		return Block{Bits: bits, N: n, Data: out}, err
	case *enc21pb.CompressiveEncoding_Rle:
		vbits, ok1 := flatBits(c.Rle.GetValues())
		lbits, ok2 := flatBits(c.Rle.GetRunLengths())
		if !ok1 || !ok2 {
			return decodeGenericRLEBlock(c.Rle, buf, n, depth)
		}
		if err := checkWidth(vbits); err != nil {
			return Block{}, err
		}
		out, err := DecodeRLEBlock(nil, vbits, lbits, buf, n)
		return Block{Bits: vbits, N: n, Data: out}, err
	case *enc21pb.CompressiveEncoding_Dictionary:
		return decodeDictionaryBlock(c.Dictionary, buf, n, depth)
	case *enc21pb.CompressiveEncoding_General:
		raw, err := Decompress(nil, Scheme(c.General.GetCompression().GetScheme()), buf)
		if err != nil {
			return Block{}, err
		}
		return decodeBlock(c.General.GetValues(), raw, n, depth+1)
	case *enc21pb.CompressiveEncoding_Variable:
		_, offs, data, err := DecodeVariableBlock(buf, n)
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
	case *enc21pb.CompressiveEncoding_Constant:
		v := c.Constant.GetValue()
		if len(v) == 0 {
			return Block{}, fmt.Errorf("typed constant block without a value: %w", ErrUnsupported)
		}
		if n > 0 && len(v) > maxDecodeValues/n {
			return Block{}, fmt.Errorf("constant block too large: %w", ErrCorrupt)
		}
		out := make([]byte, 0, len(v)*n)
		for i := 0; i < n; i++ {
			out = append(out, v...)
		}
		return Block{Bits: 8 * len(v), N: n, Data: out}, nil
	case *enc21pb.CompressiveEncoding_Range:
		bits := int(c.Range.UncompressedBitsPerValue)
		if bits != 32 && bits != 64 {
			return Block{}, fmt.Errorf("range of %d bits: %w", bits, ErrCorrupt)
		}
		out := make([]byte, 0, n*bits/8)
		v := c.Range.Start
		for i := 0; i < n; i++ {
			if bits == 32 {
				if v > 0xFFFFFFFF {
					return Block{}, fmt.Errorf("range overflows u32: %w", ErrCorrupt)
				}
				out = binary.LittleEndian.AppendUint32(out, uint32(v))
			} else {
				out = binary.LittleEndian.AppendUint64(out, v)
			}
			v += c.Range.Step
		}
		return Block{Bits: bits, N: n, Data: out}, nil
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		f := c.FixedSizeList
		if fslRowsNeeded(f) {
			// Rows with item validity (or without items): the per-value
			// row layout.
			l, err := ParseFSLRows(f)
			if err != nil {
				return Block{}, err
			}
			return l.Decode(buf, n)
		}
		d := int(f.ItemsPerValue)
		if d == 0 || d > 1<<20 || n > maxDecodeValues/d {
			return Block{}, fmt.Errorf("block fixed-size list of %d items: %w", d, ErrCorrupt)
		}
		inner, err := decodeBlock(f.GetValues(), buf, n*d, depth+1)
		if err != nil {
			return Block{}, err
		}
		if inner.Variable() {
			return Block{}, fmt.Errorf("fixed-size list of variable-width items: %w", ErrUnsupported)
		}
		return Block{Bits: inner.Bits * d, N: n, Data: inner.Data, Dims: append([]int{d}, inner.Dims...), ItemValid: make([][]byte, 1+len(inner.Dims))}, nil
	case *enc21pb.CompressiveEncoding_Delta:
		bits := int(c.Delta.UncompressedBitsPerValue)
		if bits != 32 && bits != 64 {
			return Block{}, fmt.Errorf("delta of %d bits: %w", bits, ErrCorrupt)
		}
		if n == 0 {
			return Block{Bits: bits}, nil
		}
		d, err := decodeBlock(c.Delta.GetDeltas(), buf, n-1, depth+1)
		if err != nil {
			return Block{}, err
		}
		if d.Bits != bits {
			return Block{}, fmt.Errorf("delta child width %d, want %d: %w", d.Bits, bits, ErrCorrupt)
		}
		out := make([]byte, 0, n*bits/8)
		v := c.Delta.Base
		for i := 0; i < n; i++ {
			if i > 0 {
				var dv uint64
				if bits == 32 {
					dv = uint64(binary.LittleEndian.Uint32(d.Data[4*(i-1):]))
				} else {
					dv = binary.LittleEndian.Uint64(d.Data[8*(i-1):])
				}
				if v+dv < v {
					return Block{}, fmt.Errorf("delta overflows: %w", ErrCorrupt)
				}
				v += dv
			}
			if bits == 32 {
				if v > 0xFFFFFFFF {
					return Block{}, fmt.Errorf("delta overflows u32: %w", ErrCorrupt)
				}
				out = binary.LittleEndian.AppendUint32(out, uint32(v))
			} else {
				out = binary.LittleEndian.AppendUint64(out, v)
			}
		}
		return Block{Bits: bits, N: n, Data: out}, nil
	case nil:
		return Block{}, fmt.Errorf("block encoding missing: %w", ErrCorrupt)
	default:
		return Block{}, fmt.Errorf("block encoding %T: %w", c, ErrUnsupported)
	}
}

// DecodeLevels decodes a block of n u16 levels.
func DecodeLevels(enc *enc21pb.CompressiveEncoding, buf []byte, n int, dst []uint16) ([]uint16, error) {
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

// FlatEncoding returns the Flat{bits} encoding descriptor.
func FlatEncoding(bits int) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: uint64(bits)}}}
}

// offsetBits infers the width of a block encoding of offsets.
func offsetBits(e *enc21pb.CompressiveEncoding, depth int) int {
	if depth > 3 {
		return 0
	}
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		return int(c.Flat.BitsPerValue)
	case *enc21pb.CompressiveEncoding_Constant:
		return 8 * len(c.Constant.GetValue())
	case *enc21pb.CompressiveEncoding_Range:
		return int(c.Range.UncompressedBitsPerValue)
	case *enc21pb.CompressiveEncoding_Delta:
		return int(c.Delta.UncompressedBitsPerValue)
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		return int(c.InlineBitpacking.UncompressedBitsPerValue)
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		return int(c.OutOfLineBitpacking.UncompressedBitsPerValue)
	case *enc21pb.CompressiveEncoding_General:
		return offsetBits(c.General.GetValues(), depth+1)
	case *enc21pb.CompressiveEncoding_Rle:
		return offsetBits(c.Rle.GetValues(), depth+1)
	}
	return 0
}

// HasPayload reports whether a block encoding stores a buffer (Constant and
// Range are metadata only, and so are Delta, Rle and Dictionary when all
// their children are).
func HasPayload(e *enc21pb.CompressiveEncoding) bool {
	return hasPayload(e, 0)
}

func hasPayload(e *enc21pb.CompressiveEncoding, depth int) bool {
	if depth > 8 {
		return true // too deep to decode anyway; the decoder says so
	}
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Constant, *enc21pb.CompressiveEncoding_Range:
		return false
	case *enc21pb.CompressiveEncoding_Delta:
		return hasPayload(c.Delta.GetDeltas(), depth+1)
	case *enc21pb.CompressiveEncoding_Rle:
		return hasPayload(c.Rle.GetValues(), depth+1) || hasPayload(c.Rle.GetRunLengths(), depth+1)
	case *enc21pb.CompressiveEncoding_Dictionary:
		return hasPayload(c.Dictionary.GetIndices(), depth+1) || hasPayload(c.Dictionary.GetItems(), depth+1)
	}
	return true
}

// splitFrame splits the payload of a two-child block codec: with children
// a and b both metadata-only there is no payload; otherwise the payload is
// framed by a header of u64 LE lengths (header bytes: 8 for RLE, where the
// second child takes the rest, 16 for Dictionary, where both are given).
// A metadata-only child owns zero bytes.
func splitFrame(what string, buf []byte, hasA, hasB bool, header int) (a, b []byte, err error) {
	if !hasA && !hasB {
		if len(buf) != 0 {
			return nil, nil, fmt.Errorf("metadata-only %s with a %d-byte payload: %w", what, len(buf), ErrCorrupt)
		}
		return nil, nil, nil
	}
	if len(buf) < header {
		return nil, nil, fmt.Errorf("%s payload of %d bytes is shorter than its %d-byte header: %w", what, len(buf), header, ErrCorrupt)
	}
	rest := uint64(len(buf) - header)
	la := binary.LittleEndian.Uint64(buf)
	if la > rest {
		return nil, nil, fmt.Errorf("%s first child of %d bytes overruns the %d-byte payload: %w", what, la, rest, ErrCorrupt)
	}
	lb := rest - la
	if header == 16 {
		if binary.LittleEndian.Uint64(buf[8:]) != lb {
			return nil, nil, fmt.Errorf("%s frame says %d + %d bytes, payload has %d: %w", what, la, binary.LittleEndian.Uint64(buf[8:]), rest, ErrCorrupt)
		}
	}
	if !hasA && la != 0 || !hasB && lb != 0 {
		return nil, nil, fmt.Errorf("%s metadata-only child with framed bytes (%d, %d): %w", what, la, lb, ErrCorrupt)
	}
	a = buf[header : header+int(la)]
	b = buf[header+int(la):]
	return a, b, nil
}

// decodeGenericRLEBlock decodes the 2.3 generic block RLE: any block codec
// for the run values (of the block's width) and for the u32 run lengths,
// framed as [u64 LE values payload length][values payload][lengths
// payload] unless both children are metadata only. The run count comes from
// a metadata-only run-length child (Constant: n / length; Range: the count
// whose lengths sum to n) or from a Flat child's payload size.
func decodeGenericRLEBlock(r *enc21pb.Rle, buf []byte, n, depth int) (Block, error) {
	if n == 0 {
		return Block{}, fmt.Errorf("rle block of no values: %w", ErrCorrupt)
	}
	venc, lenc := r.GetValues(), r.GetRunLengths()
	if venc == nil || lenc == nil {
		return Block{}, fmt.Errorf("rle block without both children: %w", ErrCorrupt)
	}
	vbits := offsetBits(venc, 0)
	if vbits != 32 && vbits != 64 {
		return Block{}, fmt.Errorf("generic rle block of %d-bit values: %w", vbits, ErrUnsupported)
	}
	if lb := offsetBits(lenc, 0); lb != 32 {
		return Block{}, fmt.Errorf("generic rle block run lengths of %d bits: %w", lb, ErrCorrupt)
	}
	vbuf, lbuf, err := splitFrame("rle block", buf, HasPayload(venc), HasPayload(lenc), 8)
	if err != nil {
		return Block{}, err
	}
	var runs uint64
	switch c := lenc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Constant:
		v := c.Constant.GetValue()
		if len(v) != 4 {
			return Block{}, fmt.Errorf("rle constant run length of %d bytes: %w", len(v), ErrCorrupt)
		}
		l := uint64(binary.LittleEndian.Uint32(v))
		if l == 0 || uint64(n)%l != 0 {
			return Block{}, fmt.Errorf("rle constant run length %d does not divide %d values: %w", l, n, ErrCorrupt)
		}
		runs = uint64(n) / l
	case *enc21pb.CompressiveEncoding_Range:
		if runs, err = rangeRunCount(c.Range.Start, c.Range.Step, uint64(n)); err != nil {
			return Block{}, err
		}
	default:
		if b, ok := flatBits(venc); ok && venc.GetFlat().Data == nil {
			if len(vbuf)%(b/8) != 0 {
				return Block{}, fmt.Errorf("rle values payload of %d bytes: %w", len(vbuf), ErrCorrupt)
			}
			runs = uint64(len(vbuf) / (b / 8))
		} else if b, ok := flatBits(lenc); ok && lenc.GetFlat().Data == nil {
			if len(lbuf)%(b/8) != 0 {
				return Block{}, fmt.Errorf("rle run-lengths payload of %d bytes: %w", len(lbuf), ErrCorrupt)
			}
			runs = uint64(len(lbuf) / (b / 8))
		} else {
			return Block{}, fmt.Errorf("rle block whose run count no child gives: %w", ErrCorrupt)
		}
	}
	if runs == 0 || runs > uint64(n) {
		return Block{}, fmt.Errorf("rle block of %d runs for %d values: %w", runs, n, ErrCorrupt)
	}
	vals, err := decodeBlock(venc, vbuf, int(runs), depth+1)
	if err != nil {
		return Block{}, fmt.Errorf("rle values: %w", err)
	}
	lens, err := decodeBlock(lenc, lbuf, int(runs), depth+1)
	if err != nil {
		return Block{}, fmt.Errorf("rle run lengths: %w", err)
	}
	if vals.Bits != vbits || lens.Bits != 32 || len(vals.Data) < int(runs)*vbits/8 || len(lens.Data) < int(runs)*4 {
		return Block{}, fmt.Errorf("rle children decoded to %d- and %d-bit values: %w", vals.Bits, lens.Bits, ErrCorrupt)
	}
	out, err := decodeRLE(nil, vbits, 32, vals.Data[:int(runs)*vbits/8], lens.Data[:int(runs)*4], n, false)
	if err != nil {
		return Block{}, err
	}
	return Block{Bits: vbits, N: n, Data: out}, nil
}

// rangeRunCount returns the k with start + (start+step) + ... (k terms) = n.
func rangeRunCount(start, step, n uint64) (uint64, error) {
	if start == 0 || step == 0 {
		return 0, fmt.Errorf("rle range run lengths start %d step %d: %w", start, step, ErrCorrupt)
	}
	sum := func(k uint64) (uint64, bool) {
		// k*start + step*k*(k-1)/2, without overflow.
		hi, lo := bits.Mul64(k, start)
		if hi != 0 {
			return 0, false
		}
		t := k * (k - 1) / 2 // k <= n <= 2^31 here
		hi2, lo2 := bits.Mul64(t, step)
		if hi2 != 0 {
			return 0, false
		}
		s, c := bits.Add64(lo, lo2, 0)
		return s, c == 0
	}
	lo, hi := uint64(1), min(n, maxDecodeValues)
	for lo <= hi {
		k := lo + (hi-lo)/2
		s, ok := sum(k)
		switch {
		case ok && s == n:
			return k, nil
		case ok && s < n:
			lo = k + 1
		default:
			hi = k - 1
		}
	}
	return 0, fmt.Errorf("rle range run lengths start %d step %d do not sum to %d: %w", start, step, n, ErrCorrupt)
}

// decodeDictionaryBlock decodes a 2.3 block dictionary: u32 indices and
// num_dictionary_items items (of the block's width), each under any block
// codec, framed as [u64 LE indices length][u64 LE items length][indices
// payload][items payload] unless both children are metadata only.
func decodeDictionaryBlock(d *enc21pb.Dictionary, buf []byte, n, depth int) (Block, error) {
	ienc, venc := d.GetIndices(), d.GetItems()
	if ienc == nil || venc == nil {
		return Block{}, fmt.Errorf("dictionary block without both children: %w", ErrCorrupt)
	}
	items := int(d.NumDictionaryItems)
	if items < 1 || items > maxBlockDictionaryItems {
		return Block{}, fmt.Errorf("block dictionary of %d items: %w", items, ErrCorrupt)
	}
	ibuf, vbuf, err := splitFrame("dictionary block", buf, HasPayload(ienc), HasPayload(venc), 16)
	if err != nil {
		return Block{}, err
	}
	dict, err := decodeBlock(venc, vbuf, items, depth+1)
	if err != nil {
		return Block{}, fmt.Errorf("dictionary items: %w", err)
	}
	if dict.Bits != 32 && dict.Bits != 64 || len(dict.Data) < items*dict.Bits/8 {
		return Block{}, fmt.Errorf("dictionary items of %d bits: %w", dict.Bits, ErrCorrupt)
	}
	idx, err := decodeBlock(ienc, ibuf, n, depth+1)
	if err != nil {
		return Block{}, fmt.Errorf("dictionary indices: %w", err)
	}
	if idx.Bits != 32 || len(idx.Data) < 4*n {
		return Block{}, fmt.Errorf("dictionary indices of %d bits: %w", idx.Bits, ErrCorrupt)
	}
	w := dict.Bits / 8
	out := make([]byte, 0, n*w)
	for i := 0; i < n; i++ {
		k := binary.LittleEndian.Uint32(idx.Data[4*i:])
		if int(k) >= items {
			return Block{}, fmt.Errorf("dictionary index %d at %d of %d items: %w", k, i, items, ErrCorrupt)
		}
		out = append(out, dict.Data[int(k)*w:int(k+1)*w]...)
	}
	return Block{Bits: dict.Bits, N: n, Data: out}, nil
}

// maxBlockDictionaryItems is Lance's limit on a block dictionary.
const maxBlockDictionaryItems = 4096

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

// FsstDecodeBlock expands every FSST-coded value of a variable block.
func FsstDecodeBlock(table []byte, in Block) (Block, error) {
	if !in.Variable() {
		return Block{}, fmt.Errorf("fsst over a fixed-width block: %w", ErrCorrupt)
	}
	t, err := parsedFsstTable(table)
	if err != nil {
		return Block{}, err
	}
	return t.DecodeBlock(in)
}

// fsstTables remembers the last few symbol tables parsed for decoding: a
// page's chunks all carry the same table, parsed once instead of per chunk.
// Entries hold a copy of the table bytes and match by content.
var fsstTables struct {
	sync.Mutex
	raw  [4][]byte
	tab  [4]*FsstTable
	next int
}

// parsedFsstTable is ParseFsstTable through fsstTables. The tables it
// returns are shared and only decode (they never build an encoder index).
func parsedFsstTable(table []byte) (*FsstTable, error) {
	c := &fsstTables
	c.Lock()
	for i, r := range c.raw {
		if r != nil && bytes.Equal(r, table) {
			t := c.tab[i]
			c.Unlock()
			return t, nil
		}
	}
	c.Unlock()
	t, err := ParseFsstTable(table)
	if err != nil {
		return nil, err
	}
	c.Lock()
	c.raw[c.next], c.tab[c.next] = bytes.Clone(table), t
	c.next = (c.next + 1) % len(c.raw)
	c.Unlock()
	return t, nil
}

// DecodeBlock decodes every value of a variable-width block of FSST codes
// with the table (parsed once by the caller, for many blocks).
func (t *FsstTable) DecodeBlock(in Block) (Block, error) {
	if !in.Variable() {
		return Block{}, fmt.Errorf("fsst over a fixed-width block: %w", ErrCorrupt)
	}
	for i := 0; i < in.N; i++ {
		if a, b := in.Offsets[i], in.Offsets[i+1]; a > b || b > uint64(len(in.Data)) {
			return Block{}, fmt.Errorf("fsst value %d range [%d, %d): %w", i, a, b, ErrCorrupt)
		}
	}
	out := Block{N: in.N, Offsets: make([]uint64, 1, in.N+1)}
	if in.N == 0 {
		return out, nil
	}
	codes := in.Data[in.Offsets[0]:in.Offsets[in.N]]
	if !t.coded {
		out.Data = append([]byte(nil), codes...)
		for i := 1; i <= in.N; i++ {
			out.Offsets = append(out.Offsets, in.Offsets[i]-in.Offsets[0])
		}
		return out, nil
	}
	// One pass over the chunk's codes, values back to back: every symbol
	// is written as a whole 8-byte word into a buffer sized exactly (plus
	// 8 bytes of slack), and each value's end is noted as its codes end.
	return t.decodeInto(make([]byte, t.decodedLen(codes)+8), in)
}

// DecodedLen returns the bytes the values of FSST-coded block in expand to.
func (t *FsstTable) DecodedLen(in Block) int {
	if in.N == 0 || len(in.Offsets) <= in.N || in.Offsets[0] > in.Offsets[in.N] || in.Offsets[in.N] > uint64(len(in.Data)) {
		return 0
	}
	return t.decodedLen(in.Data[in.Offsets[0]:in.Offsets[in.N]])
}

// DecodeBlockInto is DecodeBlock writing the values into buf, which must
// hold DecodedLen(in) bytes and 8 more (whole 8-byte words are written; the
// 8 bytes past the values are left overwritten): the result's Data is
// buf's start. Several blocks decoded in order into one buffer, each after
// the last one's values, lie back to back.
func (t *FsstTable) DecodeBlockInto(buf []byte, in Block) (Block, error) {
	if !in.Variable() {
		return Block{}, fmt.Errorf("fsst over a fixed-width block: %w", ErrCorrupt)
	}
	for i := 0; i < in.N; i++ {
		if a, b := in.Offsets[i], in.Offsets[i+1]; a > b || b > uint64(len(in.Data)) {
			return Block{}, fmt.Errorf("fsst value %d range [%d, %d): %w", i, a, b, ErrCorrupt)
		}
	}
	if in.N == 0 {
		return Block{Offsets: []uint64{0}}, nil
	}
	if need := t.decodedLen(in.Data[in.Offsets[0]:in.Offsets[in.N]]) + 8; len(buf) < need {
		return Block{}, fmt.Errorf("fsst values need %d bytes, buffer holds %d: %w", need, len(buf), ErrCorrupt)
	}
	if !t.coded {
		out := Block{N: in.N, Offsets: make([]uint64, 1, in.N+1)}
		out.Data = buf[:copy(buf, in.Data[in.Offsets[0]:in.Offsets[in.N]])]
		for i := 1; i <= in.N; i++ {
			out.Offsets = append(out.Offsets, in.Offsets[i]-in.Offsets[0])
		}
		return out, nil
	}
	return t.decodeInto(buf, in)
}

// decodeInto expands the checked, non-empty coded block in into buf (sized
// for its values and 8 bytes of slack).
func (t *FsstTable) decodeInto(buf []byte, in Block) (Block, error) {
	out := Block{N: in.N, Offsets: make([]uint64, 1, in.N+1)}
	pos, i := 0, int(in.Offsets[0])
	data, n := in.Data, t.n
	for v := 0; v < in.N; v++ {
		end := int(in.Offsets[v+1])
		for i < end {
			c := data[i]
			if c == fsstEscape {
				if i+1 >= end {
					return Block{}, fmt.Errorf("values: fsst value %d ends with an escape: %w", v, ErrCorrupt)
				}
				buf[pos] = data[i+1]
				pos++
				i += 2
				continue
			}
			if int(c) >= n {
				return Block{}, fmt.Errorf("values: fsst code %d in value %d but the table has %d symbols: %w", c, v, n, ErrCorrupt)
			}
			binary.LittleEndian.PutUint64(buf[pos:], t.sym[c])
			pos += int(t.lens[c])
			i++
		}
		out.Offsets = append(out.Offsets, uint64(pos))
	}
	out.Data = buf[:pos]
	return out, nil
}

// decodeFSLChunk decodes a fixed-size-list mini-block chunk: one validity
// bitmap per list layer that has one (outer first), then the flattened items.
// Block.ItemValid gets one entry per layer (nil for layers without validity);
// layer k's bitmap has one bit per item of that layer (rows times the
// dimensions of layers 0..k).
func decodeFSLChunk(f *enc21pb.FixedSizeList, bufs [][]byte, n int, depth int) (Block, error) {
	var dims []int
	var valid []bool
	e := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{FixedSizeList: f}}
	for e.GetFixedSizeList() != nil {
		l := e.GetFixedSizeList()
		if l.ItemsPerValue == 0 || l.ItemsPerValue > 1<<20 || len(dims) > 8 {
			return Block{}, fmt.Errorf("fixed-size list of %d items: %w", l.ItemsPerValue, ErrCorrupt)
		}
		dims = append(dims, int(l.ItemsPerValue))
		valid = append(valid, l.HasValidity)
		e = l.GetValues()
	}
	out := Block{N: n, Dims: dims, ItemValid: make([][]byte, len(dims))}
	cnt := n
	bi := 0
	for li, d := range dims {
		if cnt > maxDecodeValues/d {
			return Block{}, fmt.Errorf("fixed-size list too large: %w", ErrCorrupt)
		}
		cnt *= d
		if !valid[li] {
			continue
		}
		if bi >= len(bufs) {
			return Block{}, fmt.Errorf("missing validity buffer of list layer %d: %w", li, ErrCorrupt)
		}
		if len(bufs[bi]) < (cnt+7)/8 {
			return Block{}, fmt.Errorf("validity of %d bytes for %d items: %w", len(bufs[bi]), cnt, ErrCorrupt)
		}
		out.ItemValid[li] = bufs[bi][:(cnt+7)/8]
		bi++
	}
	inner, err := decodeMiniBlock(e, bufs[bi:], cnt, depth+1)
	if err != nil {
		return Block{}, err
	}
	if inner.Variable() {
		return Block{}, fmt.Errorf("fixed-size list of variable-width items: %w", ErrUnsupported)
	}
	out.Bits = inner.Bits * (cnt / max(n, 1))
	if n == 0 {
		out.Bits = inner.Bits
		for _, d := range dims {
			out.Bits *= d
		}
	}
	out.Data = inner.Data
	return out, nil
}
