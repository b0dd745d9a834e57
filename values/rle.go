package values

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/stats"
)

// Run-length encoding of fixed-width values.
//
// A run of identical values is stored as one entry in a values part (same
// width as the input) and one entry in a lengths part (an unsigned LE integer
// of lenBits ∈ {8, 16, 32} bits). Runs longer than 2^lenBits-1 are split into
// maximum-length entries followed by the remainder, so no length is zero.
//
// Mini-block form: the two parts are separate buffers.
// Block form: [u64 LE byte length of the values part][values part][lengths part].

// rleWidths validates the value and run-length widths and returns them in
// bytes.
func rleWidths(bits, lenBits int) (w, lw int, err error) {
	switch bits {
	case 8, 16, 32, 64:
	default:
		return 0, 0, fmt.Errorf("values: rle value width %d bits: %w", bits, ErrUnsupported)
	}
	switch lenBits {
	case 8, 16, 32:
	default:
		return 0, 0, fmt.Errorf("values: rle run length width %d bits: %w", lenBits, ErrUnsupported)
	}
	return bits / 8, lenBits / 8, nil
}

// rleLoad reads the i-th w-byte little-endian value of src as a uint64.
func rleLoad(src []byte, w, i int) uint64 {
	switch w {
	case 1:
		return uint64(src[i])
	case 2:
		return uint64(binary.LittleEndian.Uint16(src[2*i:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(src[4*i:]))
	default:
		return binary.LittleEndian.Uint64(src[8*i:])
	}
}

// appendLE appends the low w bytes of v, little-endian.
func appendLE(dst []byte, w int, v uint64) []byte {
	switch w {
	case 1:
		return append(dst, byte(v))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(v))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	default:
		return binary.LittleEndian.AppendUint64(dst, v)
	}
}

// RunCount returns the number of maximal runs of identical values among the
// first n bits-wide values of src (before any splitting of long runs). It
// returns 0 if bits is not 8, 16, 32 or 64; n is clamped to the values src
// holds.
func RunCount(bits int, src []byte, n int) int {
	if bits != 8 && bits != 16 && bits != 32 && bits != 64 {
		return 0
	}
	w := bits / 8
	n = min(max(n, 0), len(src)/w)
	if n == 0 {
		return 0
	}
	runs := 1
	switch w {
	case 1:
		s := src[:n]
		for i := 1; i < n; i++ {
			if s[i] != s[i-1] {
				runs++
			}
		}
	default:
		prev := rleLoad(src, w, 0)
		for i := 1; i < n; i++ {
			v := rleLoad(src, w, i)
			if v != prev {
				runs++
				prev = v
			}
		}
	}
	return runs
}

// RunScan walks the first n bits-wide values of src as RLE writes them,
// runs cut every segment values (chunk boundaries) and split into pieces of
// at most maxRun values. It returns the number of (value, length) entries
// and the longest entry; zeros if bits is not 8, 16, 32 or 64.
func RunScan(bits int, src []byte, n, maxRun, segment int) (entries, longest int) {
	if (bits != 8 && bits != 16 && bits != 32 && bits != 64) || maxRun < 1 || segment < 1 {
		return 0, 0
	}
	w := bits / 8
	n = min(max(n, 0), len(src)/w)
	end := func(run int) {
		entries += (run + maxRun - 1) / maxRun
		longest = max(longest, run)
	}
	for start := 0; start < n; start += segment {
		stop := min(n, start+segment)
		run := 1
		prev := rleLoad(src, w, start)
		for i := start + 1; i < stop; i++ {
			if v := rleLoad(src, w, i); v != prev {
				end(run)
				run, prev = 1, v
				continue
			}
			run++
		}
		end(run)
	}
	return entries, min(longest, maxRun)
}

// RunEntries is the entry count of RunScan.
func RunEntries(bits int, src []byte, n, maxRun, segment int) int {
	e, _ := RunScan(bits, src, n, maxRun, segment)
	return e
}

// MaxRunPiece is the longest entry of RunScan.
func MaxRunPiece(bits int, src []byte, n, maxRun, segment int) int {
	_, l := RunScan(bits, src, n, maxRun, segment)
	return l
}

// appendRLE appends the runs of the first n bits-wide values of src to the
// values and lengths buffers, using lenBits-wide run lengths.
func appendRLE(values, lengths []byte, bits, lenBits int, src []byte, n int) (v, l []byte, err error) {
	w, lw, err := rleWidths(bits, lenBits)
	if err != nil {
		return values, lengths, err
	}
	if n < 0 || n > len(src)/w {
		return values, lengths, fmt.Errorf("values: rle of %d %d-bit values from a %d-byte buffer: %w", n, bits, len(src), ErrNotApplicable)
	}
	if n == 0 {
		return values, lengths, nil
	}
	maxRun := uint64(1)<<lenBits - 1
	emit := func(val, run uint64) {
		for run > maxRun {
			values = appendLE(values, w, val)
			lengths = appendLE(lengths, lw, maxRun)
			run -= maxRun
		}
		values = appendLE(values, w, val)
		lengths = appendLE(lengths, lw, run)
	}
	cur := rleLoad(src, w, 0)
	run := uint64(1)
	for i := 1; i < n; i++ {
		x := rleLoad(src, w, i)
		if x == cur {
			run++
			continue
		}
		emit(cur, run)
		cur, run = x, 1
	}
	emit(cur, run)
	return values, lengths, nil
}

// rleRuns validates the two parts and returns the number of runs.
func rleRuns(w, lw int, values, lengths []byte) (int, error) {
	if len(values)%w != 0 {
		return 0, fmt.Errorf("values: rle values part of %d bytes is not a multiple of %d: %w", len(values), w, ErrCorrupt)
	}
	if len(lengths)%lw != 0 {
		return 0, fmt.Errorf("values: rle lengths part of %d bytes is not a multiple of %d: %w", len(lengths), lw, ErrCorrupt)
	}
	runs := len(values) / w
	if runs != len(lengths)/lw {
		return 0, fmt.Errorf("values: rle has %d run values but %d run lengths: %w", runs, len(lengths)/lw, ErrCorrupt)
	}
	return runs, nil
}

// DecodeRLE appends n bits-wide values expanded from the runs in values and
// lengths to dst (mini-block semantics). The runs may cover more than n
// values: expansion stops after n values. Covering fewer is an error.
func DecodeRLE(dst []byte, bits, lenBits int, values, lengths []byte, n int) ([]byte, error) {
	return decodeRLE(dst, bits, lenBits, values, lengths, n, true)
}

func decodeRLE(dst []byte, bits, lenBits int, values, lengths []byte, n int, clamp bool) ([]byte, error) {
	w, lw, err := rleWidths(bits, lenBits)
	if err != nil {
		return dst, err
	}
	if n < 0 {
		return dst, fmt.Errorf("values: rle value count %d: %w", n, ErrCorrupt)
	}
	if n == 0 {
		return dst, nil
	}
	runs, err := rleRuns(w, lw, values, lengths)
	if err != nil {
		return dst, err
	}
	// First pass: validate the run lengths against n before allocating.
	var covered uint64
	for r := 0; r < runs && covered < uint64(n); r++ {
		run := rleLoad(lengths, lw, r)
		if run == 0 {
			return dst, fmt.Errorf("values: rle run %d has length 0: %w", r, ErrCorrupt)
		}
		covered += run
		if !clamp && (covered > uint64(n) || (covered == uint64(n) && r != runs-1)) {
			return dst, fmt.Errorf("values: rle runs cover more than the %d expected values (%d runs, overflow at run %d): %w", n, runs, r, ErrCorrupt)
		}
	}
	if covered < uint64(n) {
		return dst, fmt.Errorf("values: rle runs cover %d values, expected %d: %w", covered, n, ErrCorrupt)
	}
	size := n * w
	if size/w != n {
		return dst, fmt.Errorf("values: rle value count %d overflows: %w", n, ErrCorrupt)
	}
	start := len(dst)
	dst = slices.Grow(dst, size)
	out := dst[start : start+size]
	pos := 0 // values written so far
	for r := 0; pos < n; r++ {
		k := int(min(rleLoad(lengths, lw, r), uint64(n-pos)))
		rleFill(out[pos*w:(pos+k)*w], values[r*w:(r+1)*w])
		pos += k
	}
	return dst[:start+size], nil
}

// rleFill fills out with copies of the w-byte pattern v (len(out) is a
// multiple of len(v)).
func rleFill(out, v []byte) {
	if len(out) == 0 {
		return
	}
	if len(v) == 1 {
		b := v[0]
		for i := range out {
			out[i] = b
		}
		return
	}
	// Doubling copy.
	k := copy(out, v)
	for k < len(out) {
		k += copy(out[k:], out[:k])
	}
}

// appendRLEBlock appends the block form of the runs of the first n bits-wide
// values of src: [u64 LE values part length][values part][lengths part].
func appendRLEBlock(dst []byte, bits, lenBits int, src []byte, n int) ([]byte, error) {
	if _, _, err := rleWidths(bits, lenBits); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = binary.LittleEndian.AppendUint64(dst, 0)
	w, lw := bits/8, lenBits/8
	runs := RunCount(bits, src, n)
	// Values go straight into dst; lengths into a side buffer appended after.
	valStart := len(dst)
	dst = slices.Grow(dst, runs*(w+lw))
	vals, lens, err := appendRLE(dst, nil, bits, lenBits, src, n)
	if err != nil {
		return dst[:start], err
	}
	binary.LittleEndian.PutUint64(vals[start:], uint64(len(vals)-valStart))
	return append(vals, lens...), nil
}

// decodeRLEBlock appends the n values of an RLE block (see appendRLEBlock) to
// dst. The runs must cover exactly n values.
func decodeRLEBlock(dst []byte, bits, lenBits int, src []byte, n int) ([]byte, error) {
	if _, _, err := rleWidths(bits, lenBits); err != nil {
		return dst, err
	}
	if len(src) < 8 {
		return dst, fmt.Errorf("values: rle block of %d bytes is shorter than its 8-byte header: %w", len(src), ErrCorrupt)
	}
	vlen := binary.LittleEndian.Uint64(src)
	if vlen > uint64(len(src)-8) {
		return dst, fmt.Errorf("values: rle block values part of %d bytes exceeds the %d bytes available: %w", vlen, len(src)-8, ErrCorrupt)
	}
	values := src[8 : 8+int(vlen)]
	lengths := src[8+int(vlen):]
	return decodeRLE(dst, bits, lenBits, values, lengths, n, false)
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
	return chunks*outOfLineBitpackedSize(c.Bits, c.ValueWidth, per) + runs*c.lenBits()/8
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
			total += runs*w + outOfLineBitpackedSize(c.lenBits(), c.LenWidth, runs)
		} else {
			total += outOfLineBitpackedSize(c.Bits, c.ValueWidth, runs) + runs*c.lenBits()/8
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
		v, l, err := appendRLE(bufs[0], s.b[:0], c.Bits, c.lenBits(), b.Data, b.N)
		bufs[0], s.b = v, l
		if err != nil {
			return bufs, err
		}
		bufs[1], err = AppendOutOfLineBitpacked(bufs[1], c.lenBits(), c.LenWidth, l, len(l)/(c.lenBits()/8))
		return bufs, err
	}
	if c.ValueWidth == 0 {
		v, l, err := appendRLE(bufs[0], bufs[1], c.Bits, c.lenBits(), b.Data, b.N)
		bufs[0], bufs[1] = v, l
		return bufs, err
	}
	s := getScratch()
	defer putScratch(s)
	v, l, err := appendRLE(s.b[:0], bufs[1], c.Bits, c.lenBits(), b.Data, b.N)
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
	return appendRLEBlock(dst, c.Bits, c.lenBits(), b.Data, b.N)
}
func (c RleCodec) Encoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Rle{Rle: &enc21pb.Rle{
		Values: c.valuesEncoding(), RunLengths: c.lengthsEncoding()}}}
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
		out, err := decodeOutOfLineBitpacked(nil, bits, w, buf, count)
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
