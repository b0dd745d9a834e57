package values

import (
	"encoding/binary"
	"fmt"

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
		if err := need(1); err != nil {
			return Block{}, err
		}
		return decodeFlatChunk(c.Flat, bufs[0], n)
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		bits := int(c.InlineBitpacking.UncompressedBitsPerValue)
		if err := checkWidth(bits); err != nil {
			return Block{}, err
		}
		if err := need(1); err != nil {
			return Block{}, err
		}
		out, err := decodeInlineBitpacked(nil, bits, bufs[0], n)
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
		out, err := decodeByteStreamSplit(nil, bits, bufs[0], n)
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
		if err := need(1); err != nil {
			return Block{}, err
		}
		return decodePackedStructChunk(enc, bufs[0], n)
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
		return decodeFlatBlock(c.Flat, buf, n)
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		bits := int(c.InlineBitpacking.UncompressedBitsPerValue)
		if err := checkWidth(bits); err != nil {
			return Block{}, err
		}
		out, err := decodeInlineBitpacked(nil, bits, buf, n)
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
		out, err := decodeOutOfLineBitpacked(nil, bits, w, buf, n)
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
		out, err := decodeRLEBlock(nil, vbits, lbits, buf, n)
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
		return decodeVariableBlockValues(buf, n)
	case *enc21pb.CompressiveEncoding_Constant:
		return decodeConstantBlock(c.Constant, n)
	case *enc21pb.CompressiveEncoding_Range:
		return decodeRangeBlock(c.Range, n)
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		return decodeFSLBlock(c.FixedSizeList, buf, n, depth)
	case *enc21pb.CompressiveEncoding_Delta:
		return decodeDeltaBlock(c.Delta, buf, n, depth)
	case nil:
		return Block{}, fmt.Errorf("block encoding missing: %w", ErrCorrupt)
	default:
		return Block{}, fmt.Errorf("block encoding %T: %w", c, ErrUnsupported)
	}
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
	case *enc21pb.CompressiveEncoding_Dictionary:
		// (pylance 14 stores a chunk's offsets so when few distinct ones
		// repeat: nulls and values of one length.)
		return offsetBits(c.Dictionary.GetItems(), depth+1)
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
