package values

import (
	"bytes"
	"encoding/binary"
	"fmt"
	mbits "math/bits"
	"sync"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/stats"
)

// Context is a set of places a compressive codec may appear in a page
// (compression.md §1.3–§1.4). Lance's reader accepts each codec only in some
// of them; Contexts reports which, and the selector never places a codec
// elsewhere.
type Context uint8

// Codec contexts.
const (
	// InChunk: the values of one mini-block chunk (at most 4096 values,
	// stored as one or more chunk buffers).
	InChunk Context = 1 << iota
	// InBlock: one whole buffer decoded at once: page dictionary items,
	// sparse position/count sets, level streams, variable offsets.
	InBlock
)

// Codec is one node of a compressive encoding tree. Codecs are small values
// parameterised per page (a bit width, a symbol table, a child codec); the
// selector builds them, the writer runs them, and Encoding describes them in
// the page metadata so that DecodeMiniBlock / DecodeBlock read the bytes back.
//
// The input of every codec is a Block: fixed-width values (Bits > 0, little
// endian; LSB-first bits for Bits == 1) or variable-width values (Bits == 0,
// N+1 offsets into Data).
type Codec interface {
	// Name is a short human-readable form of the tree, e.g. "bitpack32" or
	// "general(zstd,flat64)".
	Name() string
	// Contexts reports where the codec may be used.
	Contexts() Context
	// Check returns nil when the codec can encode b, else an error wrapping
	// ErrNotApplicable that says why.
	Check(b Block) error
	// Estimate returns the encoded size in bytes of the values p describes,
	// from their statistics alone; false when the codec does not apply.
	Estimate(p *Profile) (int, bool)
	// NumBuffers is the number of chunk buffers AppendChunk produces.
	NumBuffers() int
	// AppendChunk encodes b as the buffers of one mini-block chunk,
	// appending buffer i to bufs[i] (bufs is grown to NumBuffers entries;
	// pass the previous result truncated to reuse its memory).
	AppendChunk(bufs [][]byte, b Block) ([][]byte, error)
	// AppendBlock encodes b as one block buffer appended to dst. Codecs
	// that store nothing (Constant, Range) append nothing.
	AppendBlock(dst []byte, b Block) ([]byte, error)
	// Encoding describes the codec as Lance's CompressiveEncoding proto.
	Encoding() *enc21pb.CompressiveEncoding
}

// Profile is what a codec may look at to estimate its size: the page's
// measured statistics and, for codecs whose size cannot be derived from
// statistics (general compression, FSST), a sample of the values to
// trial-encode.
type Profile struct {
	N     int
	Bits  int               // 0 for variable-width values
	Fixed *stats.FixedStats // fixed-width values of 8, 16, 32 or 64 bits
	Var   *stats.VarStats   // variable-width values
	// OffBits is the offset width of variable-width values (32 or 64).
	OffBits int
	// Sample is a prefix of the values (at most SampleValues of them), for
	// trial encoding. Estimates scale the sample's result to N.
	Sample Block
	// Data, when set, is every value of the page, for the few estimates
	// that count exactly (RLE entries); results are cached per profile.
	Data     Block
	runScans map[[2]int][2]int
	// fsstCoded is the sample coded with fsstTable (cached: every FSST
	// candidate of a page estimates from it).
	fsstTable *FsstTable
	fsstCoded Block
}

// fsstSample returns the sample coded with t, coding it once per profile
// and table.
func (p *Profile) fsstSample(t *FsstTable) Block {
	if p.fsstTable != t || p.fsstCoded.Offsets == nil {
		p.fsstTable, p.fsstCoded = t, FsstCodec{Table: t}.Code(p.Sample)
	}
	return p.fsstCoded
}

// runScan is RunScan over the page's values, cached per (maxRun, segment);
// ok is false without Data.
func (p *Profile) runScan(maxRun, segment int) (entries, longest int, ok bool) {
	if p.Data.N == 0 || p.Data.Variable() {
		return 0, 0, false
	}
	k := [2]int{maxRun, segment}
	r, hit := p.runScans[k]
	if !hit {
		if p.runScans == nil {
			p.runScans = map[[2]int][2]int{}
		}
		r[0], r[1] = RunScan(p.Data.Bits, p.Data.Data, p.Data.N, maxRun, segment)
		p.runScans[k] = r
	}
	return r[0], r[1], true
}

// MaxRunPiece is the longest RLE entry over the page's values (runs cut
// every segment values and split at maxRun), or -1 without Data.
func (p *Profile) MaxRunPiece(maxRun, segment int) int {
	if _, l, ok := p.runScan(maxRun, segment); ok {
		return l
	}
	return -1
}

// runEntries is the RLE entry count over the page's values, or -1 without
// Data.
func (p *Profile) runEntries(maxRun, segment int) int {
	if e, _, ok := p.runScan(maxRun, segment); ok {
		return e
	}
	return -1
}

// SampleValues bounds the sample a Profile carries.
const SampleValues = 4096

// RawBytes is the flat size of the profiled values: fixed width values
// packed, variable width values plus their offsets.
func (p *Profile) RawBytes() int {
	if p.Bits > 0 {
		return fixedLen(p.Bits, p.N)
	}
	b := 0
	if p.Var != nil {
		b = p.Var.Bytes
	}
	return b + (p.N+1)*p.OffBits/8
}

// notApplicable builds the error codecs return for data they cannot encode.
func notApplicable(codec, format string, args ...any) error {
	return fmt.Errorf("values: %s: %s: %w", codec, fmt.Sprintf(format, args...), ErrNotApplicable)
}

func growBufs(bufs [][]byte, n int) [][]byte {
	for len(bufs) < n {
		bufs = append(bufs, nil)
	}
	return bufs[:n]
}

func checkFixed(codec string, b Block, bits int) error {
	if b.Variable() || b.Bits != bits {
		return notApplicable(codec, "block of %d-bit values, codec takes %d-bit values", b.Bits, bits)
	}
	if len(b.Data) < fixedLen(bits, b.N) {
		return notApplicable(codec, "%d values need %d bytes, block has %d", b.N, fixedLen(bits, b.N), len(b.Data))
	}
	return nil
}

func checkWord(codec string, bits int) error {
	switch bits {
	case 8, 16, 32, 64:
		return nil
	}
	return notApplicable(codec, "%d-bit values (8, 16, 32 or 64 only)", bits)
}

func fixedStats(p *Profile, bits int) (*stats.FixedStats, bool) {
	if p.Bits != bits || p.Fixed == nil || p.Fixed.Bits != bits {
		return nil, false
	}
	return p.Fixed, true
}

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

// BitpackCodec is FastLanes inline bit packing: per 1024 values a width word
// and the values packed to that width. In a chunk it holds at most 1024
// values; as a block any number.
type BitpackCodec struct{ Bits int }

func (c BitpackCodec) Name() string    { return fmt.Sprintf("bitpack%d", c.Bits) }
func (BitpackCodec) Contexts() Context { return InChunk | InBlock }
func (BitpackCodec) NumBuffers() int   { return 1 }
func (c BitpackCodec) Check(b Block) error {
	if err := checkWord("inline bitpacking", c.Bits); err != nil {
		return err
	}
	return checkFixed("inline bitpacking", b, c.Bits)
}

// Estimate sums, per 1024-value window, the width word and the packed words
// (a short last window is padded to a full one).
func (c BitpackCodec) Estimate(p *Profile) (int, bool) {
	st, ok := fixedStats(p, c.Bits)
	if !ok || checkWord("", c.Bits) != nil {
		return 0, false
	}
	return InlineBitpackedSize(c.Bits, st.WindowWidths), true
}

// InlineBitpackedSize is the size of inline bit-packed values whose
// 1024-value windows have the given bit widths.
func InlineBitpackedSize(bits int, windowWidths []int) int {
	total := 0
	for _, w := range windowWidths {
		total += (1 + flBlock*w/bits) * bits / 8
	}
	return total
}

func (c BitpackCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	if b.N > flBlock {
		return bufs, notApplicable("inline bitpacking", "chunk of %d values exceeds %d", b.N, flBlock)
	}
	bufs = growBufs(bufs, 1)
	if b.N == 0 {
		return bufs, nil // no block: nothing to decode either
	}
	var err error
	bufs[0], err = AppendInlineBitpacked(bufs[0], c.Bits, b.Data, b.N)
	return bufs, err
}
func (c BitpackCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if err := c.Check(b); err != nil {
		return dst, err
	}
	return AppendInlineBitpackedAll(dst, c.Bits, b.Data, b.N)
}
func (c BitpackCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{
		InlineBitpacking: &enc21pb.InlineBitpacking{UncompressedBitsPerValue: uint64(c.Bits)}}}
}

// OutOfLineCodec is out-of-line bit packing at one width for the whole
// block (Lance allows it only as a block codec).
type OutOfLineCodec struct{ Bits, Width int }

func (c OutOfLineCodec) Name() string    { return fmt.Sprintf("bitpack%d(w=%d)", c.Bits, c.Width) }
func (OutOfLineCodec) Contexts() Context { return InBlock }
func (OutOfLineCodec) NumBuffers() int   { return 1 }
func (c OutOfLineCodec) Check(b Block) error {
	if err := checkWord("out-of-line bitpacking", c.Bits); err != nil {
		return err
	}
	if c.Width < 1 || c.Width >= c.Bits {
		// Lance's reader refuses width 0 and full width.
		return notApplicable("out-of-line bitpacking", "width %d outside 1..%d", c.Width, c.Bits-1)
	}
	if err := checkFixed("out-of-line bitpacking", b, c.Bits); err != nil {
		return err
	}
	for i := 0; i < b.N; i++ {
		if v := loadWord(b.Data, c.Bits, i); v>>uint(c.Width) != 0 {
			return notApplicable("out-of-line bitpacking", "value %d needs %d bits, width is %d", i, mbits.Len64(v), c.Width)
		}
	}
	return nil
}
func (c OutOfLineCodec) Estimate(p *Profile) (int, bool) {
	st, ok := fixedStats(p, c.Bits)
	if !ok || checkWord("", c.Bits) != nil || st.BitWidth > c.Width {
		return 0, false
	}
	return OutOfLineBitpackedSize(c.Bits, c.Width, p.N), true
}

// OutOfLineBitpackedSize is the size of n values out-of-line bit packed from
// bits to w bits.
func OutOfLineBitpackedSize(bits, w, n int) int {
	lay := bpOOLLayout{full: n / flBlock, tail: n % flBlock, wpc: flPackedWords(bits, w)}
	lay.rawTail = !(w*(flBlock-lay.tail) < (bits-w)*lay.tail)
	return lay.words() * bits / 8
}

func (c OutOfLineCodec) AppendChunk(bufs [][]byte, _ Block) ([][]byte, error) {
	return bufs, notApplicable("out-of-line bitpacking", "not allowed inside a mini-block chunk")
}
func (c OutOfLineCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if err := c.Check(b); err != nil {
		return dst, err
	}
	return AppendOutOfLineBitpacked(dst, c.Bits, c.Width, b.Data, b.N)
}
func (c OutOfLineCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_OutOfLineBitpacking{
		OutOfLineBitpacking: &enc21pb.OutOfLineBitpacking{UncompressedBitsPerValue: uint64(c.Bits), Values: FlatEncoding(c.Width)}}}
}

// RleCodec is run-length encoding with LenBits-wide run lengths (8, the
// default, or 16; longer runs split) and run values stored flat or, with
// ValueWidth > 0, out-of-line bit packed to ValueWidth bits; or, with
// LenWidth > 0, the run lengths out-of-line bit packed to LenWidth bits
// (Lance's composite RLE: one child packed at most). In a chunk it stores
// two buffers (values, lengths); as a block one buffer with a u64 prefix
// (flat children only).
type RleCodec struct{ Bits, LenBits, ValueWidth, LenWidth int }

func (c RleCodec) lenBits() int {
	if c.LenBits == 0 {
		return 8
	}
	return c.LenBits
}

// MaxChunkValues is the most values the writer puts in one RLE chunk: 4096
// with u8 run lengths, 2048 with u16 lengths (Lance's composite limit).
func (c RleCodec) MaxChunkValues() int {
	if c.lenBits() == 16 {
		return 2 * flBlock
	}
	return 4 * flBlock
}

func (c RleCodec) valuesEncoding() *enc21pb.CompressiveEncoding {
	if c.ValueWidth > 0 {
		return OutOfLineCodec{Bits: c.Bits, Width: c.ValueWidth}.Encoding()
	}
	return FlatEncoding(c.Bits)
}

func (c RleCodec) lengthsEncoding() *enc21pb.CompressiveEncoding {
	if c.LenWidth > 0 {
		return OutOfLineCodec{Bits: c.lenBits(), Width: c.LenWidth}.Encoding()
	}
	return FlatEncoding(c.lenBits())
}

func (c RleCodec) Name() string {
	return "rle(" + EncodingName(c.valuesEncoding()) + "," + EncodingName(c.lengthsEncoding()) + ")"
}
func (c RleCodec) Contexts() Context {
	if c.ValueWidth > 0 || c.LenWidth > 0 {
		return InChunk
	}
	return InChunk | InBlock
}
func (RleCodec) NumBuffers() int { return 2 }
func (c RleCodec) Check(b Block) error {
	if err := checkWord("rle", c.Bits); err != nil {
		return err
	}
	if l := c.lenBits(); l != 8 && l != 16 {
		return notApplicable("rle", "%d-bit run lengths (8 or 16 only)", l)
	}
	if c.ValueWidth < 0 || c.ValueWidth > c.Bits || c.LenWidth < 0 || c.LenWidth > c.lenBits() || (c.ValueWidth > 0 && c.LenWidth > 0) {
		return notApplicable("rle", "run values packed to %d bits, lengths to %d", c.ValueWidth, c.LenWidth)
	}
	if err := checkFixed("rle", b, c.Bits); err != nil {
		return err
	}
	if c.ValueWidth > 0 && c.ValueWidth < c.Bits {
		for i := 0; i < b.N; i++ {
			if loadWord(b.Data, c.Bits, i)>>uint(c.ValueWidth) != 0 {
				return notApplicable("rle", "value %d does not fit %d bits", i, c.ValueWidth)
			}
		}
	}
	if c.LenWidth > 0 {
		if m := MaxRunPiece(c.Bits, b.Data, b.N, 1<<c.lenBits()-1, b.N); m>>uint(c.LenWidth) != 0 {
			return notApplicable("rle", "a run of %d does not fit %d-bit lengths", m, c.LenWidth)
		}
	}
	return nil
}

// Estimate is the chunk-form size: per run its value and length, runs
// longer than the length width allows split (assuming runs of the average
// length), and one more run per chunk boundary a run may cross; packed run
// values cost their width, padded per chunk as out-of-line packing pads.
func (c RleCodec) Estimate(p *Profile) (int, bool) {
	st, ok := fixedStats(p, c.Bits)
	if !ok || checkWord("", c.Bits) != nil || (c.ValueWidth > 0 && st.BitWidth > c.ValueWidth) || (c.LenWidth > 0 && p.Data.N == 0) {
		return 0, false
	}
	runs := -1
	// Count exactly only when RLE can compete: the run count is a lower
	// bound on the entries, and at that bound RLE must beat flat values.
	if st.Runs*(c.Bits/8+c.lenBits()/8) < p.RawBytes() {
		if (c.ValueWidth > 0 || c.LenWidth > 0) && p.Data.N > 0 {
			return c.packedSize(p.Data), true
		}
		runs = p.runEntries(1<<c.lenBits()-1, c.MaxChunkValues())
	}
	return c.size(st, runs), true
}

// size is the estimated chunk-form size; runs is the exact entry count, or
// negative to estimate it from the stats.
func (c RleCodec) size(st *stats.FixedStats, runs int) int {
	if st.N == 0 {
		return 0
	}
	maxRun := 1<<c.lenBits() - 1
	if runs < 0 {
		avg := (st.N + st.Runs - 1) / max(st.Runs, 1)
		runs = st.Runs*((avg+maxRun-1)/maxRun) + (st.N-1)/c.MaxChunkValues()
	}
	if c.ValueWidth == 0 {
		return runs * (st.Bits/8 + c.lenBits()/8)
	}
	chunks := max(1, (st.N+c.MaxChunkValues()-1)/c.MaxChunkValues())
	per := (runs + chunks - 1) / chunks
	return chunks*OutOfLineBitpackedSize(c.Bits, c.ValueWidth, per) + runs*c.lenBits()/8
}

// packedSize is the exact chunk-form size of composite RLE over d, chunk by
// chunk (out-of-line packing pads each chunk's run values).
func (c RleCodec) packedSize(d Block) int {
	total := 0
	per := c.MaxChunkValues()
	w := c.Bits / 8
	for start := 0; start < d.N; start += per {
		cnt := min(per, d.N-start)
		runs := RunEntries(c.Bits, d.Data[start*w:(start+cnt)*w], cnt, 1<<c.lenBits()-1, cnt)
		if c.LenWidth > 0 {
			total += runs*w + OutOfLineBitpackedSize(c.lenBits(), c.LenWidth, runs)
		} else {
			total += OutOfLineBitpackedSize(c.Bits, c.ValueWidth, runs) + runs*c.lenBits()/8
		}
	}
	return total
}

func (c RleCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	bufs = growBufs(bufs, 2)
	if c.LenWidth > 0 {
		s := getScratch()
		defer putScratch(s)
		v, l, err := AppendRLE(bufs[0], s.b[:0], c.Bits, c.lenBits(), b.Data, b.N)
		bufs[0], s.b = v, l
		if err != nil {
			return bufs, err
		}
		bufs[1], err = AppendOutOfLineBitpacked(bufs[1], c.lenBits(), c.LenWidth, l, len(l)/(c.lenBits()/8))
		return bufs, err
	}
	if c.ValueWidth == 0 {
		v, l, err := AppendRLE(bufs[0], bufs[1], c.Bits, c.lenBits(), b.Data, b.N)
		bufs[0], bufs[1] = v, l
		return bufs, err
	}
	s := getScratch()
	defer putScratch(s)
	v, l, err := AppendRLE(s.b[:0], bufs[1], c.Bits, c.lenBits(), b.Data, b.N)
	s.b = v
	if err != nil {
		return bufs, err
	}
	bufs[1] = l
	bufs[0], err = AppendOutOfLineBitpacked(bufs[0], c.Bits, c.ValueWidth, v, len(v)/(c.Bits/8))
	return bufs, err
}
func (c RleCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if c.ValueWidth > 0 || c.LenWidth > 0 {
		return dst, notApplicable("rle", "bit-packed run values or lengths are a chunk form")
	}
	if err := c.Check(b); err != nil {
		return dst, err
	}
	return AppendRLEBlock(dst, c.Bits, c.lenBits(), b.Data, b.N)
}
func (c RleCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Rle{Rle: &enc21pb.Rle{
		Values: c.valuesEncoding(), RunLengths: c.lengthsEncoding()}}}
}

// BssCodec is byte stream split of 32- or 64-bit values: alone it does not
// shrink anything; it groups like bytes for a General codec above it.
type BssCodec struct{ Bits int }

func (c BssCodec) Name() string    { return fmt.Sprintf("bss%d", c.Bits) }
func (BssCodec) Contexts() Context { return InChunk }
func (BssCodec) NumBuffers() int   { return 1 }
func (c BssCodec) Check(b Block) error {
	if c.Bits != 32 && c.Bits != 64 {
		return notApplicable("byte stream split", "%d-bit values (32 or 64 only)", c.Bits)
	}
	return checkFixed("byte stream split", b, c.Bits)
}
func (c BssCodec) Estimate(p *Profile) (int, bool) {
	if p.Bits != c.Bits || (c.Bits != 32 && c.Bits != 64) {
		return 0, false
	}
	return fixedLen(c.Bits, p.N), true
}
func (c BssCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	bufs = growBufs(bufs, 1)
	bufs[0] = AppendByteStreamSplit(bufs[0], c.Bits, b.Data, b.N)
	return bufs, nil
}
func (c BssCodec) AppendBlock(dst []byte, _ Block) ([]byte, error) {
	return dst, notApplicable("byte stream split", "Lance reads it only inside mini-block chunks")
}
func (c BssCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_ByteStreamSplit{
		ByteStreamSplit: &enc21pb.ByteStreamSplit{Values: FlatEncoding(c.Bits)}}}
}

// GeneralCodec compresses the first buffer its child produces with LZ4 or
// Zstd (u32 / u64 length prefix), in a chunk or over a whole block.
type GeneralCodec struct {
	Scheme Scheme
	Level  int // zstd level; 0 is the default
	Inner  Codec
	// ChunkValues, when set, is the value count of the chunks the writer
	// cuts for this codec (instead of the inner codec's): larger chunks
	// over fixed-width values compress better and cost fewer calls.
	ChunkValues int
}

func (c GeneralCodec) Name() string {
	return fmt.Sprintf("general(%v,%s)", c.Scheme, c.Inner.Name())
}
func (c GeneralCodec) Contexts() Context { return c.Inner.Contexts() }
func (c GeneralCodec) NumBuffers() int   { return c.Inner.NumBuffers() }
func (c GeneralCodec) Check(b Block) error {
	if c.Scheme != SchemeLZ4 && c.Scheme != SchemeZstd {
		return notApplicable("general", "scheme %v", c.Scheme)
	}
	return c.Inner.Check(b)
}

// Estimate trial-compresses the child's encoding of the sample, cut in
// pieces of about one chunk (compression works per chunk), and scales the
// child's estimate by the ratio found.
func (c GeneralCodec) Estimate(p *Profile) (int, bool) {
	inner, ok := c.Inner.Estimate(p)
	if !ok || p.Sample.N == 0 {
		return 0, false
	}
	per := trialChunkValues(c.Inner, p)
	if c.ChunkValues > 0 {
		per = c.ChunkValues
	}
	if c.Inner.Contexts()&InChunk == 0 {
		per = p.Sample.N // block codecs compress the whole block
	}
	var raw, packed int
	s := getScratch()
	defer putScratch(s)
	var bufs [][]byte
	sample, child := p.Sample, c.Inner
	if fc, ok := c.Inner.(FsstCodec); ok && fc.Table != nil && p.Sample.Variable() {
		// FSST codes value by value: pieces of the coded sample are the
		// coded pieces, and the sample is coded once per page.
		sample, child = p.fsstSample(fc.Table), fc.Values
	}
	// At most trialPieces chunk-sized pieces, spread over the sample: each
	// compression call has a fixed cost, and a few chunks give the ratio.
	stride := per
	if pieces := (p.Sample.N + per - 1) / per; pieces > trialPieces {
		stride = per * (pieces / trialPieces)
	}
	for start := 0; start < p.Sample.N; start += stride {
		piece := sliceBlock(sample, start, min(per, sample.N-start))
		var b []byte
		if c.Inner.Contexts()&InChunk != 0 {
			for i := range bufs {
				bufs[i] = bufs[i][:0]
			}
			var err error
			if bufs, err = child.AppendChunk(bufs, piece); err != nil {
				return 0, false
			}
			b = bufs[0]
			for _, o := range bufs[1:] {
				raw += len(o) // buffers general compression leaves alone
				packed += len(o)
			}
		} else {
			var err error
			if s.b, err = c.Inner.AppendBlock(s.b[:0], piece); err != nil {
				return 0, false
			}
			b = s.b
		}
		z := getScratch()
		var err error
		z.b, err = AppendCompressed(z.b[:0], c.Scheme, c.Level, b)
		n := len(z.b)
		putScratch(z)
		if err != nil {
			return 0, false
		}
		raw += len(b)
		packed += n
	}
	if raw == 0 {
		return inner, true
	}
	return int(int64(inner) * int64(packed) / int64(raw)), true
}

// trialPieces bounds the chunk-sized pieces a general-compression estimate
// compresses.
const trialPieces = 3

// trialChunkValues is about how many values the writer puts in one chunk
// for codec c (the unit general compression sees).
func trialChunkValues(c Codec, p *Profile) int {
	b := p.Sample
	switch x := c.(type) {
	case BitpackCodec:
		return flBlock
	case RleCodec:
		// Chunks are cut at the byte budget: about budget/(bytes per run)
		// runs, rounded down to a power of two of values.
		if p.Fixed == nil || p.Fixed.Runs == 0 {
			return x.MaxChunkValues()
		}
		perValue := float64(x.Bits/8+x.lenBits()/8) * float64(p.Fixed.Runs) / float64(p.N)
		n := x.MaxChunkValues()
		for n > 1 && float64(n)*perValue > maxChunkBytes {
			n /= 2
		}
		return n
	}
	if b.Variable() {
		if b.N == 0 {
			return 1
		}
		avg := int(b.Offsets[b.N]-b.Offsets[0])/b.N + 4
		return max(1, VariableChunkBytes/max(avg, 1))
	}
	return 1 << FlatChunkLog2(max(b.Bits, 1))
}

// sliceBlock returns values [start, start+n) of b.
func sliceBlock(b Block, start, n int) Block {
	if b.Variable() {
		return Block{N: n, Data: b.Data, Offsets: b.Offsets[start : start+n+1]}
	}
	if b.Bits%8 != 0 {
		if start%8 != 0 {
			return Block{Bits: b.Bits, N: 0}
		}
		return Block{Bits: b.Bits, N: n, Data: b.Data[start*b.Bits/8:]}
	}
	w := b.Bits / 8
	return Block{Bits: b.Bits, N: n, Data: b.Data[start*w : (start+n)*w]}
}

func (c GeneralCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	// The child writes its first buffer into scratch; the compressed form
	// goes to the caller's first buffer.
	bufs = growBufs(bufs, c.NumBuffers())
	out := bufs[0]
	scratch := getScratch()
	defer putScratch(scratch)
	bufs[0] = scratch.b[:0]
	bufs, err := c.Inner.AppendChunk(bufs, b)
	if err != nil {
		bufs[0] = out
		return bufs, err
	}
	scratch.b = bufs[0]
	bufs[0], err = AppendCompressed(out, c.Scheme, c.Level, scratch.b)
	return bufs, err
}
func (c GeneralCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if err := c.Check(b); err != nil {
		return dst, err
	}
	scratch := getScratch()
	defer putScratch(scratch)
	raw, err := c.Inner.AppendBlock(scratch.b[:0], b)
	scratch.b = raw
	if err != nil {
		return dst, err
	}
	return AppendCompressed(dst, c.Scheme, c.Level, raw)
}
func (c GeneralCodec) Encoding() *enc21pb.CompressiveEncoding {
	bc := &enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme(c.Scheme)}
	if c.Level != 0 {
		l := int32(c.Level)
		bc.Level = &l
	}
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_General{General: &enc21pb.General{
		Compression: bc, Values: c.Inner.Encoding()}}}
}

// VariableCodec stores variable-width values with OffBits-wide offsets. With
// Offsets nil it writes Lance's classic forms (offsets inside the chunk
// buffer; the Variable block); with an Offsets codec it writes the 2.3
// generic chunk form: the chunk's n+1 offsets (relative to the chunk, from 0)
// block-encoded by Offsets in their own buffer (none when the codec stores
// nothing, as Range does), then the value bytes.
type VariableCodec struct {
	OffBits int
	Offsets Codec
}

func (c VariableCodec) Name() string {
	if c.Offsets == nil {
		return fmt.Sprintf("variable(flat%d)", c.OffBits)
	}
	return "variable(" + c.Offsets.Name() + ")"
}

// OffsetBits is about how many bits one offset takes: the offset width, or
// the width its codec packs it to (0 for Range, which stores none).
func (c VariableCodec) OffsetBits() int {
	switch oc := c.Offsets.(type) {
	case RangeCodec:
		return 0
	case DeltaCodec:
		if ool, ok := oc.Deltas.(OutOfLineCodec); ok {
			return ool.Width
		}
	}
	return c.OffBits
}

func (c VariableCodec) Contexts() Context {
	if c.Offsets != nil {
		return InChunk
	}
	return InChunk | InBlock
}
func (c VariableCodec) NumBuffers() int {
	if c.Offsets != nil && HasPayload(c.Offsets.Encoding()) {
		return 2
	}
	return 1
}
func (c VariableCodec) Check(b Block) error {
	if c.OffBits != 32 && c.OffBits != 64 {
		return notApplicable("variable", "%d-bit offsets (32 or 64 only)", c.OffBits)
	}
	if !b.Variable() || len(b.Offsets) != b.N+1 {
		return notApplicable("variable", "not a variable-width block of %d values", b.N)
	}
	if b.Offsets[b.N] > uint64(len(b.Data)) || b.Offsets[0] > b.Offsets[b.N] {
		return notApplicable("variable", "offsets beyond the %d value bytes", len(b.Data))
	}
	if c.OffBits == 32 && b.Offsets[b.N]-b.Offsets[0]+uint64(4*(b.N+1)) > 1<<32-1 {
		return notApplicable("variable", "block does not fit 32-bit offsets")
	}
	if c.Offsets != nil {
		s := getScratch()
		defer putScratch(s)
		ob := c.offsetBlock(b, s)
		return c.Offsets.Check(ob)
	}
	return nil
}

// offsetBlock is the n+1 offsets of b relative to its first value, as
// OffBits-wide words staged in s.
func (c VariableCodec) offsetBlock(b Block, s *scratch) Block {
	w := c.OffBits / 8
	raw := s.b[:0]
	base := b.Offsets[0]
	var word [8]byte
	for _, o := range b.Offsets {
		binary.LittleEndian.PutUint64(word[:], o-base)
		raw = append(raw, word[:w]...)
	}
	s.b = raw
	return Block{Bits: c.OffBits, N: b.N + 1, Data: raw}
}

// VariableChunkBytes is the value bytes a variable-width mini-block chunk
// aims at (Lance's default mini-chunk size).
const VariableChunkBytes = 4096

func (c VariableCodec) Estimate(p *Profile) (int, bool) {
	if p.Bits != 0 || p.Var == nil || p.OffBits != c.OffBits {
		return 0, false
	}
	if c.Offsets == nil {
		return p.RawBytes(), true
	}
	// Generic offsets are encoded per chunk: chunks hold a power-of-two
	// count of values (at most 4096) of about VariableChunkBytes of data
	// and packed offsets, each chunk with its own offsets block.
	perValue := float64(p.Var.Bytes)/float64(max(p.N, 1)) + float64(c.OffsetBits())/8
	vals := 2
	for vals < 4096 && float64(2*vals)*perValue <= VariableChunkBytes {
		vals *= 2
	}
	chunks := max(1, (p.N+vals-1)/vals)
	per := min(vals, p.N) + 1
	var offs int
	switch oc := c.Offsets.(type) {
	case RangeCodec, ConstantCodec:
		offs = 0
	case DeltaCodec:
		if ool, ok := oc.Deltas.(OutOfLineCodec); ok && ool.Width >= mbits.Len64(uint64(p.Var.MaxLen)) {
			offs = OutOfLineBitpackedSize(oc.Bits, ool.Width, per-1)
		} else {
			offs = per * c.OffBits / 8
		}
	case BitpackCodec:
		w := mbits.Len64(uint64(min(p.Var.Bytes, VariableChunkBytes)))
		offs = InlineBitpackedSize(oc.Bits, make([]int, (per+flBlock-1)/flBlock)) + ((per+flBlock-1)/flBlock)*flBlock*w/8
	default:
		offs = per * c.OffBits / 8
	}
	return p.Var.Bytes + chunks*offs, true
}
func (c VariableCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	nb := c.NumBuffers()
	bufs = growBufs(bufs, nb)
	if c.Offsets == nil {
		bufs[0] = AppendVariableChunk(bufs[0], c.OffBits, b.Offsets, b.Data)
		return bufs, nil
	}
	scratch := getScratch()
	defer putScratch(scratch)
	ob := c.offsetBlock(b, scratch)
	base := b.Offsets[0]
	if nb == 2 {
		var err error
		if bufs[0], err = c.Offsets.AppendBlock(bufs[0], ob); err != nil {
			return bufs, err
		}
	}
	bufs[nb-1] = append(bufs[nb-1], b.Data[base:b.Offsets[b.N]]...)
	return bufs, nil
}
func (c VariableCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if c.Offsets != nil {
		return dst, notApplicable("variable", "generic offsets are a chunk form")
	}
	if err := c.Check(b); err != nil {
		return dst, err
	}
	return AppendVariableBlock(dst, c.OffBits, b.Offsets, b.Data), nil
}
func (c VariableCodec) Encoding() *enc21pb.CompressiveEncoding {
	off := FlatEncoding(c.OffBits)
	if c.Offsets != nil {
		off = c.Offsets.Encoding()
	}
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: off}}}
}

// FsstCodec codes strings with an FSST symbol table, then stores the coded
// values with a Variable codec. AppendChunk takes the values uncoded; a
// writer that coded the page up front (to cut chunks on coded sizes) calls
// Values directly.
type FsstCodec struct {
	Table  *FsstTable
	Values VariableCodec
}

func (c FsstCodec) Name() string    { return "fsst(" + c.Values.Name() + ")" }
func (FsstCodec) Contexts() Context { return InChunk }
func (c FsstCodec) NumBuffers() int { return c.Values.NumBuffers() }
func (c FsstCodec) Check(b Block) error {
	if c.Table == nil {
		return notApplicable("fsst", "no symbol table")
	}
	return c.Values.Check(b)
}

// Estimate codes the sample and scales the coded bytes to the page.
func (c FsstCodec) Estimate(p *Profile) (int, bool) {
	if c.Table == nil || p.Var == nil || p.Sample.N == 0 || p.Sample.Variable() == false {
		return 0, false
	}
	s := p.Sample
	raw := int(s.Offsets[s.N] - s.Offsets[0])
	if raw == 0 {
		return 0, false
	}
	cs := p.fsstSample(c.Table)
	coded := int(cs.Offsets[cs.N] - cs.Offsets[0])
	bytes := int(int64(p.Var.Bytes) * int64(coded) / int64(raw))
	if c.Values.Offsets == nil {
		return bytes + (p.N+1)*c.Values.OffBits/8 + FsstTableSize, true
	}
	// Generic offsets: the Variable estimate over the coded bytes.
	vs := *p.Var
	vs.Bytes = bytes
	vs.MaxLen = min(2*vs.MaxLen, vs.MaxLen*coded/raw+1)
	q := *p
	q.Var = &vs
	n, ok := c.Values.Estimate(&q)
	return n + FsstTableSize, ok
}

// Code returns the FSST-coded form of a variable block.
func (c FsstCodec) Code(b Block) Block {
	out := Block{N: b.N, Offsets: make([]uint64, 1, b.N+1)}
	if b.N > 0 {
		out.Data = make([]byte, 0, b.Offsets[b.N]-b.Offsets[0]+uint64(b.N))
	}
	for i := 0; i < b.N; i++ {
		out.Data = c.Table.appendEncodedIn(out.Data, b.Data, int(b.Offsets[i]), int(b.Offsets[i+1]))
		out.Offsets = append(out.Offsets, uint64(len(out.Data)))
	}
	return out
}
func (c FsstCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	return c.Values.AppendChunk(bufs, c.Code(b))
}
func (c FsstCodec) AppendBlock(dst []byte, _ Block) ([]byte, error) {
	return dst, notApplicable("fsst", "Lance reads it only inside mini-block chunks and zipped records")
}
func (c FsstCodec) Encoding() *enc21pb.CompressiveEncoding {
	var tb []byte
	if c.Table != nil {
		tb = c.Table.AppendBytes(nil)
	}
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Fsst{Fsst: &enc21pb.Fsst{
		SymbolTable: tb, Values: c.Values.Encoding()}}}
}

// FslCodec stores fixed-size lists of Dim items: with HasValidity, first a
// buffer with the items' validity bitmap, then the items through Values.
// The block's Data holds N·Dim items of Values' width and ItemValid[0] the
// item validity.
type FslCodec struct {
	Dim         int
	HasValidity bool
	Values      Codec
}

func (c FslCodec) Name() string {
	v := ""
	if c.HasValidity {
		v = ",validity"
	}
	return fmt.Sprintf("fsl%d%s(%s)", c.Dim, v, c.Values.Name())
}
func (c FslCodec) Contexts() Context {
	if c.HasValidity {
		return InChunk
	}
	return c.Values.Contexts()
}
func (c FslCodec) NumBuffers() int { return c.Values.NumBuffers() + b2i(c.HasValidity) }
func (c FslCodec) items(b Block) (Block, error) {
	if c.Dim <= 0 || b.Variable() || b.Bits%c.Dim != 0 {
		return Block{}, notApplicable("fixed size list", "%d-bit rows do not hold %d items", b.Bits, c.Dim)
	}
	if c.HasValidity && (len(b.ItemValid) == 0 || len(b.ItemValid[0]) < (b.N*c.Dim+7)/8) {
		return Block{}, notApplicable("fixed size list", "item validity missing")
	}
	return Block{Bits: b.Bits / c.Dim, N: b.N * c.Dim, Data: b.Data, ItemValid: b.ItemValid[min(1, len(b.ItemValid)):], Dims: b.Dims[min(1, len(b.Dims)):]}, nil
}
func (c FslCodec) Check(b Block) error {
	it, err := c.items(b)
	if err != nil {
		return err
	}
	return c.Values.Check(it)
}
func (c FslCodec) Estimate(p *Profile) (int, bool) {
	if p.Bits == 0 || p.Bits%c.Dim != 0 {
		return 0, false
	}
	q := *p
	q.Bits, q.N, q.Fixed = p.Bits/c.Dim, p.N*c.Dim, nil
	n, ok := c.Values.Estimate(&q)
	if c.HasValidity {
		n += (p.N*c.Dim + 7) / 8
	}
	return n, ok
}
func (c FslCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	it, err := c.items(b)
	if err != nil {
		return bufs, err
	}
	bufs = growBufs(bufs, c.NumBuffers())
	rest := bufs
	if c.HasValidity {
		bufs[0] = append(bufs[0], b.ItemValid[0][:(it.N+7)/8]...)
		rest = bufs[1:]
	}
	rest, err = c.Values.AppendChunk(rest, it)
	copy(bufs[len(bufs)-len(rest):], rest)
	return bufs, err
}
func (c FslCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if c.HasValidity {
		return dst, notApplicable("fixed size list", "item validity is a chunk form")
	}
	it, err := c.items(b)
	if err != nil {
		return dst, err
	}
	return c.Values.AppendBlock(dst, it)
}
func (c FslCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{FixedSizeList: &enc21pb.FixedSizeList{
		ItemsPerValue: uint64(c.Dim), HasValidity: c.HasValidity, Values: c.Values.Encoding()}}}
}

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
	if c.Bits != 32 && c.Bits != 64 {
		return notApplicable("delta", "%d-bit values (32 or 64 only)", c.Bits)
	}
	if err := checkFixed("delta", b, c.Bits); err != nil {
		return err
	}
	if b.N > 0 && loadWord(b.Data, c.Bits, 0) != c.Base {
		return notApplicable("delta", "first value is not the base %d", c.Base)
	}
	for i := 1; i < b.N; i++ {
		if loadWord(b.Data, c.Bits, i) < loadWord(b.Data, c.Bits, i-1) {
			return notApplicable("delta", "value %d decreases", i)
		}
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
		return OutOfLineBitpackedSize(c.Bits, oc.Width, p.N-1), true
	}
	return fixedLen(c.Bits, p.N-1), true
}

// Deltas returns the n-1 adjacent differences of b as a block.
func deltasOf(b Block, bits int, dst []byte) Block {
	w := bits / 8
	for i := 1; i < b.N; i++ {
		d := loadWord(b.Data, bits, i) - loadWord(b.Data, bits, i-1)
		var word [8]byte
		binary.LittleEndian.PutUint64(word[:], d)
		dst = append(dst, word[:w]...)
	}
	return Block{Bits: bits, N: max(0, b.N-1), Data: dst}
}
func (c DeltaCodec) AppendChunk(bufs [][]byte, _ Block) ([][]byte, error) {
	return bufs, notApplicable("delta", "Lance reads it only as a block codec")
}
func (c DeltaCodec) AppendBlock(dst []byte, b Block) ([]byte, error) {
	if err := c.Check(b); err != nil {
		return dst, err
	}
	scratch := getScratch()
	defer putScratch(scratch)
	d := deltasOf(b, c.Bits, scratch.b[:0])
	scratch.b = d.Data
	return c.Deltas.AppendBlock(dst, d)
}
func (c DeltaCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Delta{Delta: &enc21pb.Delta{
		UncompressedBitsPerValue: uint64(c.Bits), Base: c.Base, Deltas: c.Deltas.Encoding()}}}
}

// NewDelta returns the delta codec of sorted values b: base the first value,
// the differences out-of-line bit packed at the widest difference.
func NewDelta(b Block) (DeltaCodec, error) {
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
	c.Deltas = OutOfLineCodec{Bits: b.Bits, Width: mbits.Len64(or)}
	return c, nil
}

// loadWord is value i of little-endian bits-wide values (8..64).
func loadWord(b []byte, bits, i int) uint64 { return rleLoad(b, bits/8, i) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scratch is a reusable byte buffer for codecs that stage a child's output.
type scratch struct{ b []byte }

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) {
	if cap(s.b) <= 16<<20 {
		scratchPool.Put(s)
	}
}

// PackedStructCodec stores packed struct rows (each child's fixed-width value
// back to back, Bits per child) as they are: one chunk buffer of rows.
type PackedStructCodec struct{ Bits []int }

func (c PackedStructCodec) sum() int {
	n := 0
	for _, b := range c.Bits {
		n += b
	}
	return n
}

func (c PackedStructCodec) Name() string    { return fmt.Sprintf("packed-struct%v", c.Bits) }
func (PackedStructCodec) Contexts() Context { return InChunk }
func (PackedStructCodec) NumBuffers() int   { return 1 }
func (c PackedStructCodec) Check(b Block) error {
	if len(c.Bits) == 0 {
		return notApplicable("packed struct", "no children")
	}
	for _, w := range c.Bits {
		if w <= 0 || w%8 != 0 {
			return notApplicable("packed struct", "%d-bit child", w)
		}
	}
	return checkFixed("packed struct", b, c.sum())
}
func (c PackedStructCodec) Estimate(p *Profile) (int, bool) {
	if p.Bits != c.sum() {
		return 0, false
	}
	return fixedLen(p.Bits, p.N), true
}
func (c PackedStructCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	bufs = growBufs(bufs, 1)
	bufs[0] = append(bufs[0], b.Data[:fixedLen(b.Bits, b.N)]...)
	return bufs, nil
}
func (c PackedStructCodec) AppendBlock(dst []byte, _ Block) ([]byte, error) {
	return dst, notApplicable("packed struct", "Lance reads it only in chunks and zipped records")
}
func (c PackedStructCodec) Encoding() *enc21pb.CompressiveEncoding {
	return PackedStructEncoding(c.Bits)
}
