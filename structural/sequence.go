package structural

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/values"
)

// The u64 sequences of a sparse structure (positions and counts) are block
// encoded and chosen the way Lance 14 chooses them
// (encodings/physical/sequence.rs, select_block_codec with the structural
// block cost), so that planar writes the same codec and the same bytes for
// the same set:
//
//   - two or more values with one non-negative step: Constant (step 0) or
//     Range, metadata only; a single value: Constant{value};
//   - otherwise the candidate of least estimated wire cost among Flat,
//     out-of-line bit packing, General (zstd, only above 32 KiB raw), Delta
//     over a leaf child, generic block RLE and block Dictionary; ties go to
//     the shallower, then cheaper-to-decode, then earlier-ranked candidate.
//
// The wire cost of a candidate is its descriptor's serialized size plus, for
// a payload, the payload rounded up to 8 bytes and 16 bytes of buffer
// overhead (STRUCTURAL_BLOCK_COST). Leaf children are compared without
// that overhead.
//
// Lance's shortcut for sequences of more than 64 Ki values whose prefix has a
// value of 64 significant bits never applies to sparse sets (positions and
// counts are below 2^32), so it is not reproduced. General compression is
// zstd at Lance's default level; its size is estimated with planar's zstd
// encoder (not byte-identical to libzstd), so on the rare set where General
// and another candidate are within a few bytes planar may choose differently.

const (
	structBufferOverhead = 16 // bytes per payload buffer
	structAlignment      = 8  // payloads are padded to this
	generalSampleBytes   = 64 * 1024
	generalMinRawBytes   = 32 * 1024
	maxBlockDictItems    = 4096
	rleHeaderBytes       = 8
	dictHeaderBytes      = 16
)

// seqStats are the statistics of one sequence that the codec choice reads
// (Lance's SequenceStats).
type seqStats struct {
	bits     int
	n        uint64
	first    uint64
	min, max uint64
	step     uint64
	hasStep  bool // every step (so far) is step, non-negative
	prev     uint64
}

func newStats(bitWidth int) seqStats { return seqStats{bits: bitWidth, min: math.MaxUint64} }

func (s *seqStats) push(v uint64) {
	if s.n == 0 {
		s.first = v
	} else {
		d, neg := v-s.prev, v < s.prev
		switch {
		case s.n == 1:
			s.step, s.hasStep = d, !neg
		case s.hasStep && (neg || d != s.step):
			s.hasStep = false
		}
	}
	s.prev = v
	s.min = min(s.min, v)
	s.max = max(s.max, v)
	s.n++
}

func (s *seqStats) rawBytes() uint64 { return s.n * uint64(s.bits/8) }

// requiredBits is the bit width of the largest value, at least 1.
func (s *seqStats) requiredBits() int { return max(1, bits.Len64(s.max)) }

// isConstant: every value is the first (Lance's common_constant).
func (s *seqStats) isConstant() bool { return s.n > 0 && s.min == s.first && s.max == s.first }

// isRange: two or more values with one positive step (common_range).
func (s *seqStats) isRange() bool { return s.n >= 2 && s.hasStep && s.step != 0 }

// seqAnalysis is everything the codec choice reads from a sequence.
type seqAnalysis struct {
	values    seqStats
	deltas    seqStats // valid when monotonic and two values or more
	monotonic bool
	runs      uint64   // runs of equal values (their stats are taken by rleCandidate)
	dict      []uint64 // sorted distinct values; nil beyond maxBlockDictItems
	ranks     *distinctSet
}

func analyze(xs []uint64) *seqAnalysis {
	a := &seqAnalysis{values: newStats(64), deltas: newStats(64), monotonic: true}
	distinct := newDistinctSet(len(xs))
	for i, x := range xs {
		if i > 0 {
			p := xs[i-1]
			switch {
			case !a.monotonic:
			case x >= p:
				a.deltas.push(x - p)
			default:
				a.monotonic = false // the deltas are read only while monotonic
			}
			if x != p {
				a.runs++
			}
		} else {
			a.runs = 1
		}
		a.values.push(x)
		if distinct != nil && (i == 0 || x != xs[i-1]) && !distinct.add(x) {
			distinct = nil // more than maxBlockDictItems
		}
	}
	if distinct != nil {
		a.dict = distinct.sorted()
		a.ranks = distinct
	}
	return a
}

// distinctSet collects the distinct values of a sequence, up to
// maxBlockDictItems, in an open-addressing table keyed by value+1 (0 marks
// an empty slot; 2^64-1, whose key would be 0, is flagged apart) that
// doubles when half full; once sorted it gives each value's rank.
type distinctSet struct {
	keys  []uint64
	ranks []uint32 // by slot, once sorted
	n     int
	top   bool // 2^64-1 is in the set
	topR  uint32
	shift uint
}

func newDistinctSet(n int) *distinctSet {
	d := &distinctSet{}
	d.resize(max(16, min(1<<bits.Len(uint(2*n)), 64)))
	return d
}

func (d *distinctSet) resize(size int) {
	old := d.keys
	d.keys = bulk.Table[uint64](size)
	d.shift = uint(64 - bits.TrailingZeros(uint(size)))
	d.n = 0
	for _, k := range old {
		if k != 0 {
			d.insert(k)
		}
	}
}

// slot is where key is, or the empty slot where it would go.
func (d *distinctSet) slot(key uint64) uint64 {
	mask := uint64(len(d.keys) - 1)
	j := key * 0x9e3779b97f4a7c15 >> d.shift
	for d.keys[j] != 0 && d.keys[j] != key {
		j = (j + 1) & mask
	}
	return j
}

func (d *distinctSet) insert(key uint64) {
	if j := d.slot(key); d.keys[j] == 0 {
		d.keys[j] = key
		d.n++
	}
}

// add puts x in the set; false when that makes more than
// maxBlockDictItems values.
func (d *distinctSet) add(x uint64) bool {
	if x == math.MaxUint64 {
		d.top = true
	} else {
		if 2*(d.n+1) > len(d.keys) {
			d.resize(2 * len(d.keys))
		}
		d.insert(x + 1)
	}
	return d.n+b2i(d.top) <= maxBlockDictItems
}

// sorted returns the values in increasing order and ranks them.
func (d *distinctSet) sorted() []uint64 {
	out := make([]uint64, 0, d.n+b2i(d.top))
	for _, k := range d.keys {
		if k != 0 {
			out = append(out, k-1)
		}
	}
	slices.Sort(out)
	d.ranks = make([]uint32, len(d.keys))
	for r, v := range out {
		d.ranks[d.slot(v+1)] = uint32(r)
	}
	if d.top {
		d.topR = uint32(len(out))
		out = append(out, math.MaxUint64)
	}
	return out
}

// rank is the place of set value x among the sorted values.
func (d *distinctSet) rank(x uint64) uint32 {
	if x == math.MaxUint64 {
		return d.topR
	}
	return d.ranks[d.slot(x+1)]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// seqCandidate is one way to store a sequence, with its estimated cost and
// what breaks ties (Lance's Candidate).
type seqCandidate struct {
	enc        *enc21pb.CompressiveEncoding
	hasPayload bool
	payload    uint64 // estimated payload bytes
	wire       uint64
	depth      uint8 // transform depth
	cpu        uint8 // decode CPU rank
	stable     uint8 // stable rank
	// write appends the payload of the sequence (the values the candidate
	// was chosen for; 32-bit children get their own values).
	write func(dst []byte) ([]byte, error)
	// fromWords, for Flat and out-of-line bit packing, appends the payload
	// of values given as little-endian words of the candidate's width (a
	// Delta parent hands its deltas so, never listed as values).
	fromWords func(dst, words []byte) ([]byte, error)
}

func (c *seqCandidate) betterThan(o *seqCandidate) bool {
	if c.wire != o.wire {
		return c.wire < o.wire
	}
	if c.depth != o.depth {
		return c.depth < o.depth
	}
	if c.cpu != o.cpu {
		return c.cpu < o.cpu
	}
	return c.stable < o.stable
}

// blockCost is a container's cost of one payload: its padding to align and
// the overhead of its buffer.
type blockCost struct{ overhead, align uint64 }

var (
	structCost = blockCost{structBufferOverhead, structAlignment}
	leafCost   = blockCost{0, 1}
)

func (b blockCost) wire(enc *enc21pb.CompressiveEncoding, hasPayload bool, payload uint64) uint64 {
	w := uint64(proto.Size(enc)) + (payload+b.align-1)/b.align*b.align
	if hasPayload {
		w += b.overhead
	}
	return w
}

// outOfLineBytes is the payload estimate of out-of-line bit packing: the
// smaller of a raw and a padded tail.
func outOfLineBytes(n uint64, bitWidth, w int) uint64 {
	word := uint64(bitWidth / 8)
	perChunk := (1024*uint64(w) + uint64(bitWidth) - 1) / uint64(bitWidth) * word
	full := n / 1024 * perChunk
	tail := n % 1024
	raw, padded := full+tail*word, full
	if tail > 0 {
		padded += perChunk
	}
	return min(raw, padded)
}

func constantEncoding(bitWidth int, v uint64) *enc21pb.CompressiveEncoding {
	b := binary.LittleEndian.AppendUint64(nil, v)
	return values.ConstantCodec{Value: b[:bitWidth/8]}.Encoding()
}

// emptyEncoding is the encoding of an empty sequence: Constant without a
// value.
func emptyEncoding() *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: &enc21pb.Constant{}}}
}

func rangeEncoding(bitWidth int, start, step uint64) *enc21pb.CompressiveEncoding {
	return values.RangeCodec{Bits: bitWidth, Start: start, Step: step}.Encoding()
}

func metadataCandidate(enc *enc21pb.CompressiveEncoding, cost blockCost, stable uint8) *seqCandidate {
	return &seqCandidate{enc: enc, wire: cost.wire(enc, false, 0), stable: stable, write: func(dst []byte) ([]byte, error) { return dst, nil }}
}

// appendWords appends a sequence as little-endian words of its width.
func appendWords(dst []byte, xs []uint64, bitWidth int) []byte {
	if bitWidth == 64 {
		for _, x := range xs {
			dst = binary.LittleEndian.AppendUint64(dst, x)
		}
		return dst
	}
	for _, x := range xs {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(x))
	}
	return dst
}

// words is a sequence as little-endian bytes of its width.
func words(xs []uint64, bitWidth int) []byte {
	return appendWords(make([]byte, 0, len(xs)*bitWidth/8), xs, bitWidth)
}

// wordScratch holds the words a payload is written from (megabytes for a
// large page's sets: fresh memory each time cost page faults).
var wordScratch sync.Pool

// withWords calls f with xs as little-endian words of their width, in
// scratch memory that must not outlive the call.
func withWords(xs []uint64, bitWidth int, f func(words []byte) ([]byte, error)) ([]byte, error) {
	return inScratch(len(xs)*bitWidth/8, func(b []byte) { appendWords(b[:0], xs, bitWidth) }, f)
}

// inScratch fills n bytes of pooled scratch (fill) and calls use with
// them; the scratch must not outlive the call.
func inScratch(n int, fill func(b []byte), use func(b []byte) ([]byte, error)) ([]byte, error) {
	var b []byte
	if p, ok := wordScratch.Get().(*[]byte); ok {
		b = (*p)[:0]
	}
	b = slices.Grow(b, n)[:n]
	fill(b)
	out, err := use(b)
	wordScratch.Put(&b)
	return out, err
}

// directCandidates are Flat, out-of-line bit packing and (with general)
// zstd over Flat, for the values xs of stats s.
func directCandidates(xs []uint64, s *seqStats, cost blockCost, general bool) []*seqCandidate {
	raw := s.rawBytes()
	flat := values.FlatEncoding(s.bits)
	out := []*seqCandidate{{
		enc: flat, hasPayload: true, payload: raw, wire: cost.wire(flat, true, raw),
		write:     func(dst []byte) ([]byte, error) { return appendWords(dst, xs, s.bits), nil },
		fromWords: func(dst, words []byte) ([]byte, error) { return append(dst, words...), nil },
	}}
	if w := s.requiredBits(); s.n > 0 && w < s.bits {
		c := values.OutOfLineCodec{Bits: s.bits, Width: w}
		p := outOfLineBytes(s.n, s.bits, w)
		fromWords := func(dst, words []byte) ([]byte, error) {
			return c.AppendBlock(dst, values.Block{Bits: s.bits, N: len(words) / (s.bits / 8), Data: words})
		}
		out = append(out, &seqCandidate{
			enc: c.Encoding(), hasPayload: true, payload: p, wire: cost.wire(c.Encoding(), true, p),
			depth: 1, cpu: 1, stable: 1,
			write: func(dst []byte) ([]byte, error) {
				return withWords(xs, s.bits, func(words []byte) ([]byte, error) { return fromWords(dst, words) })
			},
			fromWords: fromWords,
		})
	}
	if general && raw > generalMinRawBytes {
		if c := generalCandidate(xs, s, cost); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// generalCandidate is zstd (Lance's default level) over Flat values, its size
// estimated by compressing the first 64 KiB of the values.
func generalCandidate(xs []uint64, s *seqStats, cost blockCost) *seqCandidate {
	sampleN := min(len(xs), generalSampleBytes/(s.bits/8))
	sample := words(xs[:sampleN], s.bits)
	z, err := values.AppendCompressed(nil, values.SchemeZstd, 0, sample)
	if err != nil {
		return nil
	}
	raw := s.rawBytes()
	est := uint64(len(z))
	if uint64(len(sample)) != raw {
		hi, lo := bits.Mul64(est, raw)
		if hi != 0 {
			est = math.MaxUint64
		} else {
			est = (lo + uint64(len(sample)) - 1) / uint64(len(sample))
		}
	}
	level := int32(0)
	enc := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_General{General: &enc21pb.General{
		Compression: &enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD, Level: &level},
		Values:      values.FlatEncoding(s.bits),
	}}}
	return &seqCandidate{
		enc: enc, hasPayload: true, payload: est, wire: cost.wire(enc, true, est),
		depth: 1, cpu: 4, stable: 2,
		write: func(dst []byte) ([]byte, error) {
			return values.AppendCompressed(dst, values.SchemeZstd, 0, words(xs, s.bits))
		},
	}
}

// leafCandidate is the best child of a composite (Delta, RLE, Dictionary):
// Constant, Range, or the cheaper of Flat and out-of-line bit packing,
// compared without buffer overhead. The choice reads s alone; xs only the
// winner's write (deltaCandidate chooses with xs nil).
func leafCandidate(xs []uint64, s *seqStats) *seqCandidate {
	if s.isConstant() {
		return metadataCandidate(constantEncoding(s.bits, s.first), leafCost, 0)
	}
	if s.isRange() {
		return metadataCandidate(rangeEncoding(s.bits, s.first, s.step), leafCost, 1)
	}
	return best(directCandidates(xs, s, leafCost, false))
}

func best(cs []*seqCandidate) *seqCandidate {
	var b *seqCandidate
	for _, c := range cs {
		if c != nil && (b == nil || c.betterThan(b)) {
			b = c
		}
	}
	return b
}

// chooseSequence is Lance's select_analyzed_codec for one u64 sequence
// under the structural block cost.
func chooseSequence(xs []uint64) *seqCandidate {
	if len(xs) == 0 {
		return metadataCandidate(emptyEncoding(), structCost, 0)
	}
	a := analyze(xs)
	if a.values.isConstant() {
		return metadataCandidate(constantEncoding(64, a.values.first), structCost, 0)
	}
	if a.values.isRange() {
		return metadataCandidate(rangeEncoding(64, a.values.first, a.values.step), structCost, 1)
	}
	cs := directCandidates(xs, &a.values, structCost, true)
	cs = append(cs, deltaCandidate(xs, a), rleCandidate(xs, a), dictCandidate(xs, a))
	return best(cs)
}

func deltaCandidate(xs []uint64, a *seqAnalysis) *seqCandidate {
	if !a.monotonic || len(xs) < 2 {
		return nil
	}
	// The leaf codec of the deltas is chosen from their stats alone; the
	// deltas are listed only when this candidate's payload is written.
	child := leafCandidate(nil, &a.deltas)
	write := child.write
	if child.hasPayload {
		// (A leaf with a payload is Flat or bit packing, at 64 bits.)
		write = func(dst []byte) ([]byte, error) {
			return inScratch(8*(len(xs)-1), func(b []byte) {
				for i := 1; i < len(xs); i++ {
					binary.LittleEndian.PutUint64(b[8*(i-1):], xs[i]-xs[i-1])
				}
			}, func(b []byte) ([]byte, error) { return child.fromWords(dst, b) })
		}
	}
	enc := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Delta{Delta: &enc21pb.Delta{
		UncompressedBitsPerValue: 64, Base: xs[0], Deltas: child.enc,
	}}}
	return &seqCandidate{
		enc: enc, hasPayload: child.hasPayload, payload: child.payload,
		wire:  structCost.wire(enc, child.hasPayload, child.payload),
		depth: child.depth + 1, cpu: 2, stable: 5,
		write: write,
	}
}

// rleCandidate is Lance's generic block RLE: run values (64-bit) and run
// lengths (32-bit) under leaf children, framed as [u64 LE values payload
// length][values payload][lengths payload] when either has a payload.
func rleCandidate(xs []uint64, a *seqAnalysis) *seqCandidate {
	runs := a.runs
	if runs == 0 || runs >= a.values.n {
		return nil
	}
	// The children are chosen from the runs' stats alone; the runs are
	// listed only when this candidate's payload is written.
	runValues, runLengths := newStats(64), newStats(32)
	eachRun(xs, func(v, n uint64) { runValues.push(v); runLengths.push(n) })
	if runLengths.max > math.MaxUint32 {
		return nil
	}
	children := func(rv, rl []uint64) (vals, lens *seqCandidate) {
		vals = leafCandidate(rv, &runValues)
		lens = leafCandidate(rl, &runLengths)
		if !isMetadata(lens.enc) && !isFlat(vals.enc) && !isFlat(lens.enc) {
			lens = directCandidates(rl, &runLengths, leafCost, false)[0]
		}
		return vals, lens
	}
	vals, lens := children(nil, nil)
	has := vals.hasPayload || lens.hasPayload
	var p uint64
	if has {
		p = rleHeaderBytes + vals.payload + lens.payload
	}
	enc := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Rle{Rle: &enc21pb.Rle{Values: vals.enc, RunLengths: lens.enc}}}
	return &seqCandidate{
		enc: enc, hasPayload: has, payload: p, wire: structCost.wire(enc, has, p),
		depth: 1, cpu: 3, stable: 3,
		write: func(dst []byte) ([]byte, error) {
			if !has {
				return dst, nil
			}
			vals, lens := children(listRuns(xs, runs))
			start := len(dst)
			dst = binary.LittleEndian.AppendUint64(dst, 0)
			dst, err := vals.write(dst)
			if err != nil {
				return dst, err
			}
			binary.LittleEndian.PutUint64(dst[start:], uint64(len(dst)-start-rleHeaderBytes))
			return lens.write(dst)
		},
	}
}

// eachRun calls f with the value and length of each run of equal values
// of xs, in order.
func eachRun(xs []uint64, f func(v, n uint64)) {
	for i := 0; i < len(xs); {
		j := i + 1
		for j < len(xs) && xs[j] == xs[i] {
			j++
		}
		f(xs[i], uint64(j-i))
		i = j
	}
}

// listRuns lists the values and lengths of the runs of equal values of
// xs (runs of them).
func listRuns(xs []uint64, runs uint64) (rv, rl []uint64) {
	rv, rl = make([]uint64, 0, runs), make([]uint64, 0, runs)
	eachRun(xs, func(v, n uint64) { rv, rl = append(rv, v), append(rl, n) })
	return rv, rl
}

// dictCandidate is Lance's block dictionary: u32 indices into the sorted
// distinct values, each under a leaf child, framed as [u64 LE indices
// length][u64 LE items length][indices][items] when either has a payload.
func dictCandidate(xs []uint64, a *seqAnalysis) *seqCandidate {
	k := len(a.dict)
	if a.dict == nil || k < 2 || k > maxBlockDictItems || uint64(k) >= (a.values.n+1)/2 {
		return nil
	}
	items := newStats(64)
	for _, v := range a.dict {
		items.push(v)
	}
	idxStats := seqStats{bits: 32, n: a.values.n, first: 0, min: 0, max: uint64(k - 1)}
	// The indices' codec is chosen from their stats alone; they are
	// listed only when this candidate's payload is written.
	ic := leafCandidate(nil, &idxStats)
	vc := leafCandidate(a.dict, &items)
	has := ic.hasPayload || vc.hasPayload
	var p uint64
	if has {
		p = dictHeaderBytes + ic.payload + vc.payload
	}
	enc := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Dictionary{Dictionary: &enc21pb.Dictionary{
		Indices: ic.enc, Items: vc.enc, NumDictionaryItems: uint32(k),
	}}}
	return &seqCandidate{
		enc: enc, hasPayload: has, payload: p, wire: structCost.wire(enc, has, p),
		depth: 1, cpu: 3, stable: 4,
		write: func(dst []byte) ([]byte, error) {
			if !has {
				return dst, nil
			}
			idx := make([]uint64, len(xs))
			for i, x := range xs {
				idx[i] = uint64(a.ranks.rank(x))
			}
			ib, err := leafCandidate(idx, &idxStats).write(nil)
			if err != nil {
				return dst, err
			}
			vb, err := vc.write(nil)
			if err != nil {
				return dst, err
			}
			dst = binary.LittleEndian.AppendUint64(dst, uint64(len(ib)))
			dst = binary.LittleEndian.AppendUint64(dst, uint64(len(vb)))
			return append(append(dst, ib...), vb...), nil
		},
	}
}

func isFlat(e *enc21pb.CompressiveEncoding) bool { return e.GetFlat() != nil }

func isMetadata(e *enc21pb.CompressiveEncoding) bool {
	return e.GetConstant() != nil || e.GetRange() != nil
}

// encodeSequence encodes a u64 sequence (positions, counts) as Lance's
// select_block_codec does for a standalone sequence under the structural
// block cost: its encoding, and its payload (nil when metadata only).
func encodeSequence(xs []uint64) (*enc21pb.CompressiveEncoding, []byte, error) {
	if s, ok := symbolic(xs); ok {
		return s, nil, nil
	}
	c := chooseSequence(xs)
	if !c.hasPayload {
		return c.enc, nil, nil
	}
	p, err := c.write(nil)
	return c.enc, p, err
}

// symbolic recognises two or more values with one non-negative step:
// Constant or Range (Lance's symbolic_family).
func symbolic(xs []uint64) (*enc21pb.CompressiveEncoding, bool) {
	if len(xs) < 2 || xs[1] < xs[0] {
		return nil, false
	}
	step := xs[1] - xs[0]
	for i := 2; i < len(xs); i++ {
		if xs[i] < xs[i-1] || xs[i]-xs[i-1] != step {
			return nil, false
		}
	}
	if step == 0 {
		return constantEncoding(64, xs[0]), true
	}
	return rangeEncoding(64, xs[0], step), true
}
