package values

import (
	"fmt"
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
