package values

import (
	"bytes"
	"encoding/binary"
	"fmt"
	mbits "math/bits"
	"slices"

	"github.com/planarlance/planar/proto/enc21pb"
)

// ConstantCodec is a block of one repeated fixed-width value, stored in the
// metadata only.
type ConstantCodec struct{ Value []byte }

func (c ConstantCodec) Name() string    { return fmt.Sprintf("constant(%d bytes)", len(c.Value)) }
func (ConstantCodec) Contexts() Context { return InBlock }
func (ConstantCodec) NumBuffers() int   { return 0 }
func (c ConstantCodec) Check(b Block) error {
	w := len(c.Value)
	if w == 0 {
		return notApplicable("constant", "empty value")
	}
	if err := checkFixed("constant", b, 8*w); err != nil {
		return err
	}
	for i := 0; i < b.N; i++ {
		if !bytes.Equal(b.Data[i*w:(i+1)*w], c.Value) {
			return notApplicable("constant", "value %d differs", i)
		}
	}
	return nil
}
func (c ConstantCodec) Estimate(p *Profile) (int, bool) {
	if p.Fixed == nil || p.Bits != 8*len(c.Value) || p.Fixed.Nulls != 0 || p.Fixed.Runs > 1 {
		return 0, false
	}
	return 0, true
}
func (c ConstantCodec) AppendChunk(bufs [][]byte, _ Block) ([][]byte, error) {
	return bufs, notApplicable("constant", "not a mini-block chunk codec")
}
func (c ConstantCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	return dst, c.Check(b)
}
func (c ConstantCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: &enc21pb.Constant{Value: c.Value}}}
}

// RangeCodec is the arithmetic sequence Start, Start+Step, ... of 32- or
// 64-bit values, stored in the metadata only.
type RangeCodec struct {
	Bits        int
	Start, Step uint64
}

func (c RangeCodec) Name() string    { return fmt.Sprintf("range%d(%d,+%d)", c.Bits, c.Start, c.Step) }
func (RangeCodec) Contexts() Context { return InBlock }
func (RangeCodec) NumBuffers() int   { return 0 }
func (c RangeCodec) Check(b Block) error {
	if c.Bits != 32 && c.Bits != 64 {
		return notApplicable("range", "%d-bit values (32 or 64 only)", c.Bits)
	}
	if err := checkFixed("range", b, c.Bits); err != nil {
		return err
	}
	v := c.Start
	for i := 0; i < b.N; i++ {
		if loadWord(b.Data, c.Bits, i) != v || (c.Bits == 32 && v > 0xFFFFFFFF) {
			return notApplicable("range", "value %d is not %d + %d·%d", i, c.Start, i, c.Step)
		}
		v += c.Step
	}
	return nil
}
func (c RangeCodec) Estimate(p *Profile) (int, bool) {
	st, ok := fixedStats(p, c.Bits)
	if !ok || st.Nulls != 0 || (p.N > 1 && st.Step != c.Step) || st.MinU != c.Start {
		return 0, false
	}
	return 0, true
}
func (c RangeCodec) AppendChunk(bufs [][]byte, _ Block) ([][]byte, error) {
	return bufs, notApplicable("range", "Lance reads it only as a block codec")
}
func (c RangeCodec) AppendBlock(dst []byte, b Block) ([]byte, error) { return dst, c.Check(b) }
func (c RangeCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Range{Range: &enc21pb.Range{
		UncompressedBitsPerValue: uint64(c.Bits), Start: c.Start, Step: c.Step}}}
}

// DeltaCodec stores non-decreasing 32- or 64-bit values as a base (the first
// value) and the n-1 differences, block-encoded by Deltas (typically
// out-of-line bit packing at the widest difference).
type DeltaCodec struct {
	Bits   int
	Base   uint64
	Deltas Codec
}

func (c DeltaCodec) Name() string    { return fmt.Sprintf("delta%d(%s)", c.Bits, c.Deltas.Name()) }
func (DeltaCodec) Contexts() Context { return InBlock }
func (c DeltaCodec) NumBuffers() int {
	return b2i(HasPayload(c.Deltas.Encoding()))
}
func (c DeltaCodec) Check(b Block) error {
	if err := c.checkBase(b); err != nil {
		return err
	}
	for i := 1; i < b.N; i++ {
		if loadWord(b.Data, c.Bits, i) < loadWord(b.Data, c.Bits, i-1) {
			return notApplicable("delta", "value %d decreases", i)
		}
	}
	return nil
}

// checkBase is Check but for the values' order (AppendBlock checks it as it
// takes the differences).
func (c DeltaCodec) checkBase(b Block) error {
	if c.Bits != 32 && c.Bits != 64 {
		return notApplicable("delta", "%d-bit values (32 or 64 only)", c.Bits)
	}
	if err := checkFixed("delta", b, c.Bits); err != nil {
		return err
	}
	if b.N > 0 && loadWord(b.Data, c.Bits, 0) != c.Base {
		return notApplicable("delta", "first value is not the base %d", c.Base)
	}
	return nil
}
func (c DeltaCodec) Estimate(p *Profile) (int, bool) {
	st, ok := fixedStats(p, c.Bits)
	if !ok || st.Nulls != 0 || !st.Sorted || p.N == 0 {
		return 0, false
	}
	if oc, ok := c.Deltas.(OutOfLineCodec); ok {
		if st.DeltaWidth > oc.Width {
			return 0, false
		}
		return outOfLineBitpackedSize(c.Bits, oc.Width, p.N-1), true
	}
	return fixedLen(c.Bits, p.N-1), true
}

// deltasOf appends to dst the differences of b's consecutive values (32 or
// 64 bits) and returns them as a block, or the first value smaller than
// the one before it (decrease > 0; the block is then unset).
func deltasOf(b Block, bits int, dst []byte) (d Block, decrease int) {
	n := max(0, b.N-1)
	dst = slices.Grow(dst, n*bits/8)
	if bits == 32 {
		v := b.Data[:4*b.N]
		for i := 4; i < len(v); i += 4 {
			cur, prev := binary.LittleEndian.Uint32(v[i:]), binary.LittleEndian.Uint32(v[i-4:])
			if cur < prev {
				return Block{}, i / 4
			}
			dst = binary.LittleEndian.AppendUint32(dst, cur-prev)
		}
	} else {
		v := b.Data[:8*b.N]
		for i := 8; i < len(v); i += 8 {
			cur, prev := binary.LittleEndian.Uint64(v[i:]), binary.LittleEndian.Uint64(v[i-8:])
			if cur < prev {
				return Block{}, i / 8
			}
			dst = binary.LittleEndian.AppendUint64(dst, cur-prev)
		}
	}
	return Block{Bits: bits, N: n, Data: dst}, 0
}
func (c DeltaCodec) AppendChunk(bufs [][]byte, _ Block) ([][]byte, error) {
	return bufs, notApplicable("delta", "Lance reads it only as a block codec")
}
func (c DeltaCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if err := c.checkBase(b); err != nil {
		return dst, err
	}
	scratch := getScratch()
	defer putScratch(scratch)
	d, decrease := deltasOf(b, c.Bits, scratch.b[:0])
	if decrease > 0 {
		return dst, notApplicable("delta", "value %d decreases", decrease)
	}
	scratch.b = d.Data
	return c.Deltas.AppendBlock(dst, d)
}
func (c DeltaCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Delta{Delta: &enc21pb.Delta{
		UncompressedBitsPerValue: uint64(c.Bits), Base: c.Base, Deltas: c.Deltas.Encoding()}}}
}

// newDelta returns the delta codec of sorted values b: base the first value,
// the differences out-of-line bit packed at the widest difference (one bit
// at least).
func newDelta(b Block) (DeltaCodec, error) {
	c := DeltaCodec{Bits: b.Bits}
	if b.Bits != 32 && b.Bits != 64 {
		return c, notApplicable("delta", "%d-bit values (32 or 64 only)", b.Bits)
	}
	if err := checkFixed("delta", b, b.Bits); err != nil {
		return c, err
	}
	var or uint64
	for i := 1; i < b.N; i++ {
		cur, prev := loadWord(b.Data, b.Bits, i), loadWord(b.Data, b.Bits, i-1)
		if cur < prev {
			return c, notApplicable("delta", "value %d decreases", i)
		}
		or |= cur - prev
	}
	if b.N > 0 {
		c.Base = loadWord(b.Data, b.Bits, 0)
	}
	// (Lance's reader takes widths 1..bits-1: differences all zero, or none,
	// are packed at one bit.)
	c.Deltas = OutOfLineCodec{Bits: b.Bits, Width: max(1, mbits.Len64(or))}
	return c, nil
}

// decodeConstantBlock expands a constant block: n copies of its value.
func decodeConstantBlock(c *enc21pb.Constant, n int) (Block, error) {
	v := c.GetValue()
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
}

// decodeRangeBlock expands a range block: start, start+step, ...
func decodeRangeBlock(c *enc21pb.Range, n int) (Block, error) {
	bits := int(c.UncompressedBitsPerValue)
	if bits != 32 && bits != 64 {
		return Block{}, fmt.Errorf("range of %d bits: %w", bits, ErrCorrupt)
	}
	out := make([]byte, 0, n*bits/8)
	v := c.Start
	for i := 0; i < n; i++ {
		var ok bool
		if out, ok = appendWord(out, v, bits); !ok {
			return Block{}, fmt.Errorf("range overflows u32: %w", ErrCorrupt)
		}
		v += c.Step
	}
	return Block{Bits: bits, N: n, Data: out}, nil
}

// decodeDeltaBlock adds up a delta block: the base, then each delta.
func decodeDeltaBlock(c *enc21pb.Delta, buf []byte, n, depth int) (Block, error) {
	bits := int(c.UncompressedBitsPerValue)
	if bits != 32 && bits != 64 {
		return Block{}, fmt.Errorf("delta of %d bits: %w", bits, ErrCorrupt)
	}
	if n == 0 {
		return Block{Bits: bits}, nil
	}
	d, err := decodeBlock(c.GetDeltas(), buf, n-1, depth+1)
	if err != nil {
		return Block{}, err
	}
	if d.Bits != bits {
		return Block{}, fmt.Errorf("delta child width %d, want %d: %w", d.Bits, bits, ErrCorrupt)
	}
	if len(d.Data) < (n-1)*bits/8 {
		return Block{}, fmt.Errorf("delta of %d values from %d delta bytes: %w", n, len(d.Data), ErrCorrupt)
	}
	// Summed with the overflow tests folded into one flag, checked once.
	out := make([]byte, n*bits/8)
	v, bad := c.Base, false
	if bits == 32 {
		bad = v > 0xFFFFFFFF
		binary.LittleEndian.PutUint32(out, uint32(v))
		ds, o := d.Data[:4*(n-1)], out[4:]
		for i := range n - 1 {
			v += uint64(binary.LittleEndian.Uint32(ds[4*i:])) // both under 2^32: no wrap
			bad = bad || v > 0xFFFFFFFF
			binary.LittleEndian.PutUint32(o[4*i:], uint32(v))
		}
		if bad {
			return Block{}, fmt.Errorf("delta overflows u32: %w", ErrCorrupt)
		}
		return Block{Bits: bits, N: n, Data: out}, nil
	}
	binary.LittleEndian.PutUint64(out, v)
	ds, o := d.Data[:8*(n-1)], out[8:]
	for i := range n - 1 {
		nv := v + binary.LittleEndian.Uint64(ds[8*i:])
		bad = bad || nv < v
		v = nv
		binary.LittleEndian.PutUint64(o[8*i:], v)
	}
	if bad {
		return Block{}, fmt.Errorf("delta overflows: %w", ErrCorrupt)
	}
	return Block{Bits: bits, N: n, Data: out}, nil
}

// appendWord appends v as a little-endian word of bits (32 or 64); false
// when it does not fit 32 bits.
func appendWord(out []byte, v uint64, bits int) ([]byte, bool) {
	if bits == 32 {
		if v > 0xFFFFFFFF {
			return out, false
		}
		return binary.LittleEndian.AppendUint32(out, uint32(v)), true
	}
	return binary.LittleEndian.AppendUint64(out, v), true
}
