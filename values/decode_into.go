package values

import (
	"github.com/planarlance/planar/proto/enc21pb"
)

// A page of fixed-width chunked values is decoded chunk by chunk into one
// buffer of the page's size: the leaf codec of each chunk writes its values
// straight into the chunk's part of it, and general compression
// decompresses into a scratch buffer reused from chunk to chunk, so a page
// costs one output allocation and no join.

// FixedChunkBits returns the width of the values a mini-block encoding tree
// decodes to when it is a whole number of bytes and the tree can decode in
// place (DecodeMiniBlockInto): flat, bit packing, byte stream split or RLE
// values, possibly under general compression. ok is false otherwise.
func FixedChunkBits(enc *enc21pb.CompressiveEncoding) (int, bool) {
	for depth := 0; depth < 4; depth++ {
		var bits int
		switch c := enc.GetCompression().(type) {
		case *enc21pb.CompressiveEncoding_General:
			enc = c.General.GetValues()
			continue
		case *enc21pb.CompressiveEncoding_Flat:
			if c.Flat.Data != nil {
				return 0, false
			}
			bits = int(c.Flat.BitsPerValue)
		case *enc21pb.CompressiveEncoding_InlineBitpacking:
			bits = int(c.InlineBitpacking.UncompressedBitsPerValue)
		case *enc21pb.CompressiveEncoding_ByteStreamSplit:
			bits, _ = flatBits(c.ByteStreamSplit.GetValues())
		default:
			return 0, false
		}
		return bits, bits >= 8 && bits <= 64 && bits%8 == 0
	}
	return 0, false
}

// DecodeMiniBlockInto is DecodeMiniBlock for a tree FixedChunkBits
// accepts: the values are appended to dst (room for n values, so they land
// in place) and general compression decompresses into scratch, returned
// for reuse. Other trees decode as DecodeMiniBlock does, into memory of
// their own.
func DecodeMiniBlockInto(enc *enc21pb.CompressiveEncoding, bufs [][]byte, n int, dst, scratch []byte) (Block, []byte, error) {
	return decodeMiniBlockInto(enc, bufs, n, dst, scratch, 0)
}

func decodeMiniBlockInto(enc *enc21pb.CompressiveEncoding, bufs [][]byte, n int, dst, scratch []byte, depth int) (Block, []byte, error) {
	if _, ok := FixedChunkBits(enc); !ok || len(bufs) != 1 || n < 0 || n > maxDecodeValues || depth > 4 {
		b, err := DecodeMiniBlock(enc, bufs, n)
		return b, scratch, err
	}
	switch c := enc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_General:
		raw, err := Decompress(scratch[:0], Scheme(c.General.GetCompression().GetScheme()), bufs[0])
		if err != nil {
			return Block{}, scratch, err
		}
		// The leaves below copy or unpack out of raw: it is scratch again.
		b, _, err := decodeMiniBlockInto(c.General.GetValues(), [][]byte{raw}, n, dst, nil, depth+1)
		return b, raw, err
	case *enc21pb.CompressiveEncoding_Flat:
		b, err := decodeFlatChunk(c.Flat, bufs[0], n)
		if err != nil {
			return b, scratch, err
		}
		b.Data = append(dst, b.Data[:n*b.Bits/8]...)
		return b, scratch, nil
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		bits := int(c.InlineBitpacking.UncompressedBitsPerValue)
		if err := checkWidth(bits); err != nil {
			return Block{}, scratch, err
		}
		out, err := decodeInlineBitpacked(dst, bits, bufs[0], n)
		return Block{Bits: bits, N: n, Data: out}, scratch, err
	default: // byte stream split (FixedChunkBits has checked the rest)
		bits, _ := flatBits(c.(*enc21pb.CompressiveEncoding_ByteStreamSplit).ByteStreamSplit.GetValues())
		if bits != 32 && bits != 64 {
			b, err := DecodeMiniBlock(enc, bufs, n)
			return b, scratch, err
		}
		out, err := decodeByteStreamSplit(dst, bits, bufs[0], n)
		return Block{Bits: bits, N: n, Data: out}, scratch, err
	}
}
