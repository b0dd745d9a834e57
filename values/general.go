package values

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Scheme identifies a general-purpose buffer compressor. The numbers are
// those of Lance's CompressionScheme protobuf enum.
type Scheme int

const (
	// SchemeLZ4 is [u32 LE uncompressed length][raw LZ4 block].
	SchemeLZ4 Scheme = 1
	// SchemeZstd is [u64 LE uncompressed length][one zstd frame].
	SchemeZstd Scheme = 2
)

func (s Scheme) String() string {
	switch s {
	case SchemeLZ4:
		return "lz4"
	case SchemeZstd:
		return "zstd"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

const (
	// lz4MaxInput is LZ4_MAX_INPUT_SIZE: liblz4 refuses larger blocks.
	lz4MaxInput = 0x7E000000
	// lz4MaxRatio bounds how many bytes one byte of an LZ4 block can expand
	// to (a 0xFF length-extension byte adds 255 match bytes). Used to refuse
	// absurd length prefixes before allocating.
	lz4MaxRatio = 256
	// zstdMaxLen is the largest length prefix accepted (4 GiB).
	zstdMaxLen = 1 << 32
	// zstdMagic is the zstd frame magic number 28 B5 2F FD.
	zstdMagic = 0xFD2FB528
)

// AppendCompressed appends the compressed form of src under scheme s to dst.
// level is the Lance compression level; it only matters for zstd (0 means the
// default level) and is ignored by LZ4. LZ4 blocks are byte-identical to
// liblz4's LZ4_compress_default (what Lance writes); zstd frames are valid
// standard frames but not byte-identical to libzstd's.
func AppendCompressed(dst []byte, s Scheme, level int, src []byte) ([]byte, error) {
	switch s {
	case SchemeLZ4:
		return appendLZ4(dst, src)
	case SchemeZstd:
		return appendZstd(dst, level, src)
	}
	return dst, fmt.Errorf("values: compression scheme %v: %w", s, ErrUnsupported)
}

// Decompress appends the decompressed form of src (produced under scheme s)
// to dst. On error dst is returned with its original length.
func Decompress(dst []byte, s Scheme, src []byte) ([]byte, error) {
	switch s {
	case SchemeLZ4:
		return decompressLZ4(dst, src)
	case SchemeZstd:
		return decompressZstd(dst, src)
	}
	return dst, fmt.Errorf("values: compression scheme %v: %w", s, ErrUnsupported)
}

// ---- Zstd ----

// zstdSpeeds lists the encoder levels we map Lance levels onto.
var zstdSpeeds = [...]zstd.EncoderLevel{
	zstd.SpeedFastest,
	zstd.SpeedDefault,
	zstd.SpeedBetterCompression,
	zstd.SpeedBestCompression,
}

// zstdEncoders caches encoders, one pool per entry of zstdSpeeds. An encoder
// built with concurrency 1 serializes concurrent EncodeAll calls, so pooling
// gives parallel callers their own encoder.
// Inputs under zstdSmallWindow bytes go to encoders whose window is that
// size: their frames are the same as a default window's (a single segment
// whose matches all lie within the input), and such an encoder's history
// buffer is 1 MiB instead of 8, which a process writing its first pages
// would otherwise allocate (and count toward its next collection) per
// level and goroutine.
// Inputs of at most zstdSmallInput bytes (a third class, the same
// encoders as the small window's) share fewer encoders: a quarter of
// GOMAXPROCS, one at least (encoderLimit).
var zstdEncoders [3][len(zstdSpeeds)]encoderPool

// encoderLimit is the most encoders a pool of window class small makes:
// GOMAXPROCS, and for the smallest inputs a quarter of it, one at least.
// They run at the better level, whose encoder holds a 4 MiB match table
// probed at random, which every new encoder faults in page by page (each
// page mapped to the zero page at its first probe, then copied at its first
// insert, the other cores interrupted to flush their TLBs) while an input
// of 4 KiB holds it for tens of microseconds: a struct write in a fresh
// process on two cores, 8 runs, CPU median 167.6 -> 148.3 ms with one such
// encoder instead of two (wall 88.3 -> 77.8), and streaming it 57.8-58.5 ->
// 56.8-57.1 ms a copy.
func encoderLimit(small int) int {
	n := runtime.GOMAXPROCS(0)
	if small == 2 {
		return max(1, n/4)
	}
	return n
}

// encoderPool hands out at most encoderLimit encoders of one kind, a caller
// waiting for one when all are in use (an encoder is held for one
// EncodeAll, so more could not run at once anyway), and keeps up to
// maxIdleEncoders idle ones across garbage collections. (A sync.Pool
// dropped them at every second collection, and a writer's next pages
// made new ones, each up to 4 MiB of tables faulted in again: the struct
// class, in a fresh process, 196-225 against 187-198 ms of CPU.)
type encoderPool struct {
	once sync.Once
	idle chan *zstd.Encoder
	made chan struct{} // a token per encoder made and not dropped
}

// maxIdleEncoders bounds the idle encoders a pool keeps.
const maxIdleEncoders = 2

func (p *encoderPool) init(n int) {
	p.once.Do(func() {
		p.idle, p.made = make(chan *zstd.Encoder, min(n, maxIdleEncoders)), make(chan struct{}, n)
	})
}

// get returns an idle encoder, else a new one while fewer than
// encoderLimit are out, else the next one returned.
func (p *encoderPool) get(small, i int) (*zstd.Encoder, error) {
	p.init(encoderLimit(small))
	select {
	case e := <-p.idle:
		return e, nil
	default:
	}
	select {
	case e := <-p.idle:
		return e, nil
	case p.made <- struct{}{}:
	}
	e, err := newZstdEncoder(small, i)
	if err != nil {
		<-p.made
	}
	return e, err
}

// put returns e to the pool, or drops it when enough are idle.
func (p *encoderPool) put(e *zstd.Encoder) {
	select {
	case p.idle <- e:
	default:
		<-p.made
	}
}

// zstdSmallWindow is the window of the encoders for small inputs.
const zstdSmallWindow = 1 << 20

// zstdSmallInput is the input size up to which zstd runs at its better
// level whatever the level asked (per-value compression of short values).
const zstdSmallInput = 4 << 10

// zstdSpeedIndex maps a Lance (libzstd) level to an index into zstdSpeeds.
func zstdSpeedIndex(level int) int {
	switch {
	case level == 0:
		return 1 // libzstd default (3)
	case level <= 2: // 1, 2 and the negative "fast" levels
		return 0
	case level <= 6:
		return 1
	case level <= 9:
		return 2
	default:
		return 3
	}
}

func newZstdEncoder(small, i int) (*zstd.Encoder, error) {
	opts := []zstd.EOption{
		zstd.WithEncoderLevel(zstdSpeeds[i]),
		zstd.WithEncoderConcurrency(1),
		zstd.WithZeroFrames(true),
		zstd.WithEncoderCRC(false), // libzstd's default: no content checksum
		zstd.WithLowerEncoderMem(true),
		// Entropy-code the literals of blocks where no match is found
		// (klauspost's fast levels store them raw by default): bit-packed
		// or FSST-coded values and small numbers have few matches but
		// skewed bytes (packed decimal digits: 0.84 of their size instead
		// of 1.0; the URL class under the cost policy: 4% smaller).
		zstd.WithAllLitEntropyCompression(true),
	}
	if small > 0 {
		// After the level, which sets the block size (64 KiB at the
		// fastest) unless a window was set before it.
		opts = append(opts, zstd.WithWindowSize(zstdSmallWindow))
	}
	return zstd.NewWriter(nil, opts...)
}

var (
	zstdDecOnce sync.Once
	zstdDec     *zstd.Decoder
	zstdDecErr  error
)

func zstdDecoder() (*zstd.Decoder, error) {
	zstdDecOnce.Do(func() {
		zstdDec, zstdDecErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecoderMaxMemory(zstdMaxLen),
		)
	})
	return zstdDec, zstdDecErr
}

func appendZstd(dst []byte, level int, src []byte) ([]byte, error) {
	i := zstdSpeedIndex(level)
	if i < 2 && len(src) <= zstdSmallInput {
		// Small inputs (short values compressed one by one) get the
		// better level, at a cost that does not matter at this size
		// (chosen when the fast levels did not entropy-code literals).
		i = 2
	}
	small := 0
	switch {
	case len(src) <= zstdSmallInput:
		small = 2
	case len(src) < zstdSmallWindow:
		small = 1
	}
	enc, err := zstdEncoders[small][i].get(small, i)
	if err != nil {
		return dst, fmt.Errorf("values: zstd encoder: %w", err)
	}
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(src)))
	dst = enc.EncodeAll(src, dst)
	zstdEncoders[small][i].put(enc)
	return dst, nil
}

// zstdIsBareFrame reports whether src is a legacy buffer with no length
// prefix: shorter than 8 bytes, or starting with the zstd magic followed by a
// frame header descriptor whose reserved bit (0x10) is clear.
func zstdIsBareFrame(src []byte) bool {
	if len(src) < 8 {
		return true
	}
	return binary.LittleEndian.Uint32(src) == zstdMagic && src[4]&0x10 == 0
}

func decompressZstd(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst, nil
	}
	dec, err := zstdDecoder()
	if err != nil {
		return dst, fmt.Errorf("values: zstd decoder: %w", err)
	}
	start := len(dst)
	if zstdIsBareFrame(src) {
		bound, err := zstdScan(src)
		if err != nil {
			return dst, err
		}
		if bound > zstdMaxLen {
			return dst, fmt.Errorf("values: zstd frames of %d bytes may decode to %d bytes, over the %d limit: %w", len(src), bound, uint64(zstdMaxLen), ErrCorrupt)
		}
		out, err := dec.DecodeAll(src, dst)
		if err != nil {
			return dst[:start], fmt.Errorf("values: zstd frame of %d bytes: %w: %v", len(src), ErrCorrupt, err)
		}
		return out, nil
	}
	n := binary.LittleEndian.Uint64(src)
	frame := src[8:]
	bound, err := zstdScan(frame)
	if err != nil {
		return dst, err
	}
	if n > zstdMaxLen || n > bound {
		return dst, fmt.Errorf("values: zstd length prefix %d is impossible for %d bytes of frames (at most %d decoded): %w", n, len(frame), bound, ErrCorrupt)
	}
	dst = slices.Grow(dst, int(n))
	out, err := dec.DecodeAll(frame, dst)
	if err != nil {
		return dst[:start], fmt.Errorf("values: zstd frame of %d bytes (want %d decoded): %w: %v", len(frame), n, ErrCorrupt, err)
	}
	if got := len(out) - start; uint64(got) != n {
		return dst[:start], fmt.Errorf("values: zstd frame decoded to %d bytes, length prefix says %d: %w", got, n, ErrCorrupt)
	}
	return out, nil
}

// zstdScan walks the frames of src (RFC 8878) without decoding them and
// returns the most bytes they can decode to: a frame's content size if it
// declares one, else 128 KiB per compressed block plus the sizes of raw and
// RLE blocks. It rejects truncated or malformed frame and block headers and
// content sizes larger than the blocks can produce, so the decoder never
// allocates for a size the input cannot back.
func zstdScan(src []byte) (uint64, error) {
	const maxBlock = 128 << 10
	corrupt := func(what string, at int) error {
		return fmt.Errorf("values: zstd %s at byte %d of %d: %w", what, at, len(src), ErrCorrupt)
	}
	var total uint64
	for p := 0; p < len(src); {
		if len(src)-p < 4 {
			return 0, corrupt("truncated frame magic", p)
		}
		magic := binary.LittleEndian.Uint32(src[p:])
		if magic&0xFFFFFFF0 == 0x184D2A50 { // skippable frame
			if len(src)-p < 8 {
				return 0, corrupt("truncated skippable frame", p)
			}
			size := binary.LittleEndian.Uint32(src[p+4:])
			if uint64(size) > uint64(len(src)-p-8) {
				return 0, corrupt("truncated skippable frame", p)
			}
			p += 8 + int(size)
			continue
		}
		if magic != zstdMagic {
			return 0, corrupt(fmt.Sprintf("bad frame magic %08x", magic), p)
		}
		p += 4
		if p >= len(src) {
			return 0, corrupt("truncated frame header", p)
		}
		fhd := src[p]
		p++
		if fhd&0x08 != 0 {
			return 0, corrupt("reserved frame header bit", p-1)
		}
		single := fhd&0x20 != 0
		if !single {
			p++ // window descriptor
		}
		p += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
		fcsSize := [4]int{0, 2, 4, 8}[fhd>>6]
		if fcsSize == 0 && single {
			fcsSize = 1
		}
		if p+fcsSize > len(src) {
			return 0, corrupt("truncated frame header", p)
		}
		known := fcsSize > 0
		var fcs uint64
		switch fcsSize {
		case 1:
			fcs = uint64(src[p])
		case 2:
			fcs = uint64(binary.LittleEndian.Uint16(src[p:])) + 256
		case 4:
			fcs = uint64(binary.LittleEndian.Uint32(src[p:]))
		case 8:
			fcs = binary.LittleEndian.Uint64(src[p:])
		}
		p += fcsSize
		var bound uint64
		for {
			if len(src)-p < 3 {
				return 0, corrupt("truncated block header", p)
			}
			h := uint32(src[p]) | uint32(src[p+1])<<8 | uint32(src[p+2])<<16
			p += 3
			size := int(h >> 3)
			if size > maxBlock {
				return 0, corrupt(fmt.Sprintf("block of %d bytes", size), p-3)
			}
			switch (h >> 1) & 3 {
			case 0: // raw
				if size > len(src)-p {
					return 0, corrupt("truncated raw block", p)
				}
				p += size
				bound += uint64(size)
			case 1: // RLE
				if len(src)-p < 1 {
					return 0, corrupt("truncated RLE block", p)
				}
				p++
				bound += uint64(size)
			case 2: // compressed
				if size > len(src)-p {
					return 0, corrupt("truncated compressed block", p)
				}
				if size == 0 {
					// A compressed block holds at least its literals header.
					return 0, corrupt("empty compressed block", p-3)
				}
				p += size
				bound += maxBlock
			default:
				return 0, corrupt("reserved block type", p-3)
			}
			if h&1 != 0 {
				break
			}
		}
		if fhd&0x04 != 0 { // content checksum
			if len(src)-p < 4 {
				return 0, corrupt("truncated checksum", p)
			}
			p += 4
		}
		if known {
			if fcs > bound {
				return 0, corrupt(fmt.Sprintf("content size %d larger than its blocks allow (%d)", fcs, bound), p)
			}
			bound = fcs
		}
		total += bound
	}
	return total, nil
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
