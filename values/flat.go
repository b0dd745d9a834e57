package values

import (
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
)

// FlatCodec stores fixed-width values as they are.
type FlatCodec struct{ Bits int }

func (c FlatCodec) Name() string    { return fmt.Sprintf("flat%d", c.Bits) }
func (FlatCodec) Contexts() Context { return InChunk | InBlock }
func (FlatCodec) NumBuffers() int   { return 1 }
func (c FlatCodec) Check(b Block) error {
	if c.Bits <= 0 {
		return notApplicable("flat", "width %d", c.Bits)
	}
	return checkFixed("flat", b, c.Bits)
}
func (c FlatCodec) Estimate(p *Profile) (int, bool) {
	if p.Bits != c.Bits {
		return 0, false
	}
	return fixedLen(c.Bits, p.N), true
}
func (c FlatCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	bufs = growBufs(bufs, 1)
	var err error
	bufs[0], err = c.AppendBlock(bufs[0], b)
	return bufs, err
}
func (c FlatCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if err := c.Check(b); err != nil {
		return dst, err
	}
	return append(dst, b.Data[:fixedLen(c.Bits, b.N)]...), nil
}
func (c FlatCodec) Encoding() *enc21pb.CompressiveEncoding { return FlatEncoding(c.Bits) }

// decodeFlatChunk decodes a chunk's flat values.
func decodeFlatChunk(f *enc21pb.Flat, buf []byte, n int) (Block, error) {
	if f.Data != nil && f.BitsPerValue > 0 && f.BitsPerValue <= 1<<16 {
		return Block{}, fmt.Errorf("flat with buffer compression: %w", ErrUnsupported)
	}
	return flatValues(f, buf, n, "chunk")
}

// decodeFlatBlock decodes a block's flat values.
func decodeFlatBlock(f *enc21pb.Flat, buf []byte, n int) (Block, error) {
	return flatValues(f, buf, n, "block")
}

// flatValues is the n values of f's width at the start of buf.
func flatValues(f *enc21pb.Flat, buf []byte, n int, what string) (Block, error) {
	bits := int(f.BitsPerValue)
	if bits <= 0 || bits > 1<<16 {
		return Block{}, fmt.Errorf("flat width %d: %w", bits, ErrCorrupt)
	}
	want := fixedLen(bits, n)
	if len(buf) < want {
		return Block{}, fmt.Errorf("flat %s has %d bytes, %d values of %d bits need %d: %w", what, len(buf), n, bits, want, ErrCorrupt)
	}
	return Block{Bits: bits, N: n, Data: buf[:want]}, nil
}
