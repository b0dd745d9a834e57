package values

// Fuzz targets filling the gaps left by the per-codec test files: the
// encoding-tree entry points (DecodeMiniBlock, DecodeBlock, DecodeLevels,
// FsstDecodeBlock) driven by a fuzzer-chosen tree from a fixed set of valid
// encodings or by arbitrary protobuf bytes, round trips of every encoder with
// fuzzer-chosen data, strict checks of the chunk and zipped framing, and
// allocation bounds for the decoders and general-purpose decompressors.
// Helpers are prefixed fz to stay clear of the other test files.
//
// Seed files under testdata/fuzz/ select decode-only trees by index; those
// trees come first in fzMiniCases and fzBlockCases so that adding cases
// (append them after the decode-only ones) keeps the indices valid.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	mbits "math/bits"
	"runtime/metrics"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/proto/enc21pb"
)

// ---- shared helpers ----

// fzCheckErr fails unless err wraps ErrCorrupt or ErrUnsupported.
func fzCheckErr(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%s: error wraps neither ErrCorrupt nor ErrUnsupported: %v", what, err)
	}
}

var fzAllocSample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

// fzHeapAllocs returns the cumulative bytes allocated on the heap. Large
// allocations are counted when made, small ones when their span is refilled,
// which is precise enough to catch wild allocations.
func fzHeapAllocs() uint64 {
	metrics.Read(fzAllocSample)
	return fzAllocSample[0].Value.Uint64()
}

func fzPut(dst []byte, bits int, v uint64) []byte {
	switch bits {
	case 8:
		return append(dst, byte(v))
	case 16:
		return binary.LittleEndian.AppendUint16(dst, uint16(v))
	case 32:
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	default:
		return binary.LittleEndian.AppendUint64(dst, v)
	}
}

func fzGet(b []byte, bits, i int) uint64 {
	switch bits {
	case 8:
		return uint64(b[i])
	case 16:
		return uint64(binary.LittleEndian.Uint16(b[2*i:]))
	case 32:
		return uint64(binary.LittleEndian.Uint32(b[4*i:]))
	default:
		return binary.LittleEndian.Uint64(b[8*i:])
	}
}

func fzWidth(sel uint8) int { return 8 << (sel % 4) }

// fzFixed derives at most maxN values of bits width from fuzzer bytes. Byte 0
// selects a repeat count and a value mask so that runs and narrow values are
// common; other widths (1, 24, 128) take the remaining bytes verbatim.
func fzFixed(data []byte, bits, maxN int) Block {
	b := Block{Bits: bits}
	if len(data) == 0 {
		return b
	}
	ctl, data := data[0], data[1:]
	if bits != 8 && bits != 16 && bits != 32 && bits != 64 {
		b.N = min(len(data)*8/bits, maxN)
		b.Data = data[:fixedLen(bits, b.N)]
		return b
	}
	rep := [...]int{1, 2, 5, 300}[ctl&3]
	mask := ^uint64(0)
	if w := int(ctl >> 2); w > 0 && w < 64 {
		mask = 1<<uint(w) - 1
	}
	bpw := bits / 8
	for i := 0; i+bpw <= len(data) && b.N < maxN; i += bpw {
		v := fzGet(data[i:], bits, 0) & mask
		for r := 0; r < rep && b.N < maxN; r++ {
			b.Data = fzPut(b.Data, bits, v)
			b.N++
		}
	}
	return b
}

// fzStrings splits fuzzer bytes into at most maxN strings at the separator
// given by byte 0.
func fzStrings(data []byte, maxN int) Block {
	b := Block{Offsets: []uint64{0}, Data: []byte{}}
	if len(data) == 0 {
		return b
	}
	sep, data := data[0], data[1:]
	start := 0
	for i := 0; i <= len(data) && b.N < maxN; i++ {
		if i == len(data) || data[i] == sep {
			b.Data = append(b.Data, data[start:i]...)
			b.Offsets = append(b.Offsets, uint64(len(b.Data)))
			b.N++
			start = i + 1
		}
	}
	return b
}

// fzOffsetBytes lays the offsets out as a flat array of bits-wide words.
func fzOffsetBytes(offs []uint64, bits int) []byte {
	var out []byte
	for _, o := range offs {
		out = fzPut(out, bits, o)
	}
	return out
}

// fzBitmap derives a bitmap of n bits from fuzzer bytes.
func fzBitmap(data []byte, n int) []byte {
	out := make([]byte, (n+7)/8)
	for i := range out {
		if len(data) > 0 {
			out[i] = data[i%len(data)] ^ byte(i*0x5B)
		} else {
			out[i] = byte(i * 0x5B)
		}
	}
	return out
}

// fzCheckBlock checks the structural invariants of a decoded block of n
// values; wantBits < 0 skips the width check.
func fzCheckBlock(t *testing.T, what string, b Block, n, wantBits int) {
	t.Helper()
	if b.N != n {
		t.Fatalf("%s: decoded block has N=%d, want %d", what, b.N, n)
	}
	if wantBits >= 0 && b.Bits != wantBits {
		t.Fatalf("%s: decoded %d-bit values, want %d", what, b.Bits, wantBits)
	}
	if b.Bits < 0 {
		t.Fatalf("%s: negative width %d", what, b.Bits)
	}
	if b.Variable() {
		if len(b.Offsets) != n+1 || b.Offsets[0] != 0 || b.Offsets[n] != uint64(len(b.Data)) {
			t.Fatalf("%s: variable block with %d offsets (first %v) over %d bytes for %d values",
				what, len(b.Offsets), b.Offsets[:min(1, len(b.Offsets))], len(b.Data), n)
		}
		for i := 1; i <= n; i++ {
			if b.Offsets[i] < b.Offsets[i-1] {
				t.Fatalf("%s: offsets decrease at %d", what, i)
			}
		}
		if b.Dims != nil || b.ItemValid != nil {
			t.Fatalf("%s: variable block with list dimensions", what)
		}
		return
	}
	if len(b.Data) != fixedLen(b.Bits, n) {
		t.Fatalf("%s: %d bytes for %d values of %d bits, want %d", what, len(b.Data), n, b.Bits, fixedLen(b.Bits, n))
	}
	if len(b.ItemValid) != len(b.Dims) {
		t.Fatalf("%s: %d validity layers for %d list dimensions", what, len(b.ItemValid), len(b.Dims))
	}
	cnt := n
	for k, d := range b.Dims {
		if d <= 0 {
			t.Fatalf("%s: list dimension %d", what, d)
		}
		cnt *= d
		if v := b.ItemValid[k]; v != nil && len(v) != (cnt+7)/8 {
			t.Fatalf("%s: layer %d validity of %d bytes for %d items", what, k, len(v), cnt)
		}
	}
	if len(b.Dims) > 0 && n > 0 && b.Bits%(cnt/n) != 0 {
		t.Fatalf("%s: width %d not a multiple of the %d items per value", what, b.Bits, cnt/n)
	}
}

// fzEqualBlock compares a decoded block with the encoder's input.
func fzEqualBlock(t *testing.T, what string, got, want Block) {
	t.Helper()
	if got.N != want.N || got.Bits != want.Bits || !slices.Equal(got.Dims, want.Dims) || len(got.ItemValid) != len(want.ItemValid) {
		t.Fatalf("%s: decoded N=%d bits=%d dims=%v layers=%d, want N=%d bits=%d dims=%v layers=%d", what,
			got.N, got.Bits, got.Dims, len(got.ItemValid), want.N, want.Bits, want.Dims, len(want.ItemValid))
	}
	for k := range want.ItemValid {
		if !bytes.Equal(got.ItemValid[k], want.ItemValid[k]) || (got.ItemValid[k] == nil) != (want.ItemValid[k] == nil) {
			t.Fatalf("%s: layer %d validity % x, want % x", what, k, got.ItemValid[k], want.ItemValid[k])
		}
	}
	if want.Variable() {
		if !slices.Equal(got.Offsets, want.Offsets) || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("%s: decoded offsets %v data %q, want %v %q", what, got.Offsets, got.Data, want.Offsets, want.Data)
		}
		return
	}
	if !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("%s: decoded bytes differ from the input (%d vs %d bytes)", what, len(got.Data), len(want.Data))
	}
}

func fzBlockBytes(b Block) int {
	n := len(b.Data) + 8*len(b.Offsets)
	for _, v := range b.ItemValid {
		n += len(v)
	}
	return n
}

// fzCheckAlloc bounds what one decode may allocate: a fixed slack, a
// multiple of the input (as much as the input can legitimately expand to:
// an inline bit-packing width word of 0 stands for 1024 values, general
// compression expands further), the offset arrays of n values, and a
// multiple of the output.
// The heap counter is the process's: a collection in the window can add
// other goroutines' earlier allocations as their spans are flushed, so a
// decode over the limit is measured again (again keeps it, once is a
// wild allocation, which repeats).
func fzCheckAlloc(t *testing.T, what string, alloc uint64, again func() uint64, inBytes, n, outBytes int, general bool) {
	t.Helper()
	perByte := 1024 + 64
	if general {
		// zstd: 128 KiB from a 3-byte block header.
		perByte = 3 * (128 << 10) / 3
	}
	limit := uint64(1<<20 + perByte*inBytes + 32*(n+1) + 8*outBytes)
	if alloc > limit {
		alloc = min(alloc, again())
	}
	if alloc > limit {
		t.Fatalf("%s: allocated %d bytes decoding %d input bytes into %d values (%d output bytes); limit %d",
			what, alloc, inBytes, n, outBytes, limit)
	}
}

// fzUnchanged fails if a decoder wrote into its input.
func fzUnchanged(t *testing.T, what string, got, orig [][]byte) {
	t.Helper()
	for i := range orig {
		if !bytes.Equal(got[i], orig[i]) {
			t.Fatalf("%s: decoder modified input buffer %d", what, i)
		}
	}
}

func fzCloneAll(bufs [][]byte) [][]byte {
	out := make([][]byte, len(bufs))
	for i, b := range bufs {
		out[i] = bytes.Clone(b)
	}
	return out
}

// ---- encoding constructors ----

func fzCE(c any) *enc21pb.CompressiveEncoding {
	e := &enc21pb.CompressiveEncoding{}
	switch x := c.(type) {
	case *enc21pb.Flat:
		e.Compression = &enc21pb.CompressiveEncoding_Flat{Flat: x}
	case *enc21pb.Variable:
		e.Compression = &enc21pb.CompressiveEncoding_Variable{Variable: x}
	case *enc21pb.Constant:
		e.Compression = &enc21pb.CompressiveEncoding_Constant{Constant: x}
	case *enc21pb.OutOfLineBitpacking:
		e.Compression = &enc21pb.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: x}
	case *enc21pb.InlineBitpacking:
		e.Compression = &enc21pb.CompressiveEncoding_InlineBitpacking{InlineBitpacking: x}
	case *enc21pb.Fsst:
		e.Compression = &enc21pb.CompressiveEncoding_Fsst{Fsst: x}
	case *enc21pb.Dictionary:
		e.Compression = &enc21pb.CompressiveEncoding_Dictionary{Dictionary: x}
	case *enc21pb.Rle:
		e.Compression = &enc21pb.CompressiveEncoding_Rle{Rle: x}
	case *enc21pb.ByteStreamSplit:
		e.Compression = &enc21pb.CompressiveEncoding_ByteStreamSplit{ByteStreamSplit: x}
	case *enc21pb.General:
		e.Compression = &enc21pb.CompressiveEncoding_General{General: x}
	case *enc21pb.FixedSizeList:
		e.Compression = &enc21pb.CompressiveEncoding_FixedSizeList{FixedSizeList: x}
	case *enc21pb.Range:
		e.Compression = &enc21pb.CompressiveEncoding_Range{Range: x}
	case *enc21pb.Delta:
		e.Compression = &enc21pb.CompressiveEncoding_Delta{Delta: x}
	default:
		panic(fmt.Sprintf("fzCE: %T", c))
	}
	return e
}

func fzInline(bits int) *enc21pb.CompressiveEncoding {
	return fzCE(&enc21pb.InlineBitpacking{UncompressedBitsPerValue: uint64(bits)})
}

func fzOOL(bits, w int) *enc21pb.CompressiveEncoding {
	return fzCE(&enc21pb.OutOfLineBitpacking{UncompressedBitsPerValue: uint64(bits), Values: FlatEncoding(w)})
}

func fzRle(v, l *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
	return fzCE(&enc21pb.Rle{Values: v, RunLengths: l})
}

func fzGeneral(s Scheme, inner *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
	return fzCE(&enc21pb.General{Compression: &enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme(s)}, Values: inner})
}

func fzBSS(bits int) *enc21pb.CompressiveEncoding {
	return fzCE(&enc21pb.ByteStreamSplit{Values: FlatEncoding(bits)})
}

func fzVariable(off *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
	return fzCE(&enc21pb.Variable{Offsets: off})
}

func fzFsst(table []byte, inner *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
	return fzCE(&enc21pb.Fsst{SymbolTable: table, Values: inner})
}

func fzFSL(d int, valid bool, inner *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
	return fzCE(&enc21pb.FixedSizeList{ItemsPerValue: uint64(d), HasValidity: valid, Values: inner})
}

// fzHasGeneral reports whether a tree contains general compression (whose
// legitimate expansion the allocation bound must allow for).
func fzHasGeneral(e *enc21pb.CompressiveEncoding) bool {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_General:
		return true
	case *enc21pb.CompressiveEncoding_Rle:
		return fzHasGeneral(c.Rle.GetValues()) || fzHasGeneral(c.Rle.GetRunLengths())
	case *enc21pb.CompressiveEncoding_Fsst:
		return fzHasGeneral(c.Fsst.GetValues())
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		return fzHasGeneral(c.FixedSizeList.GetValues())
	case *enc21pb.CompressiveEncoding_Variable:
		return fzHasGeneral(c.Variable.GetOffsets())
	case *enc21pb.CompressiveEncoding_Delta:
		return fzHasGeneral(c.Delta.GetDeltas())
	}
	return false
}

// ---- encoding-tree cases ----

// fzCase is one encoding tree. build encodes values derived from fuzzer bytes
// and returns the tree (which may depend on the data: bit widths, symbol
// tables), the expected decoded block and the buffers (a block case returns
// one buffer, or none when the encoding has no payload). ErrNotApplicable
// means the data does not suit the tree. Decode-only cases set e instead.
type fzCase struct {
	name  string
	build func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error)
	e     *enc21pb.CompressiveEncoding
	bits  int // expected width of decode-only cases (-1: unknown)
}

const (
	fzMaxValues  = 1 << 12
	fzMaxStrings = 1 << 10
)

var errFzSkip = fmt.Errorf("fuzz input does not fit the tree: %w", ErrNotApplicable)

func fzFixedCase(name string, bits int, enc func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error)) fzCase {
	return fzCase{name: name, build: func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error) {
		b := fzFixed(data, bits, fzMaxValues)
		e, bufs, err := enc(b)
		return e, b, bufs, err
	}}
}

func fzStringCase(name string, enc func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error)) fzCase {
	return fzCase{name: name, build: func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error) {
		b := fzStrings(data, fzMaxStrings)
		e, bufs, err := enc(b)
		return e, b, bufs, err
	}}
}

// fzChild encodes one part of an RLE chunk (count values of bits width) as
// flat, general-compressed or out-of-line bit-packed.
func fzChild(kind string, bits int, part []byte, count int) (*enc21pb.CompressiveEncoding, []byte, error) {
	switch kind {
	case "lz4", "zstd":
		s := SchemeLZ4
		if kind == "zstd" {
			s = SchemeZstd
		}
		comp, err := AppendCompressed(nil, s, 0, part)
		return fzGeneral(s, FlatEncoding(bits)), comp, err
	case "ool":
		w := bitLength(bits, part, count)
		out, err := AppendOutOfLineBitpacked(nil, bits, w, part, count)
		return fzOOL(bits, w), out, err
	}
	return FlatEncoding(bits), part, nil
}

func fzRleCase(vbits, lbits int, vkind, lkind string) fzCase {
	name := fmt.Sprintf("rle(%s%d,%s%d)", vkind, vbits, lkind, lbits)
	return fzFixedCase(name, vbits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
		v, l, err := appendRLE(nil, nil, vbits, lbits, b.Data, b.N)
		if err != nil {
			return nil, nil, err
		}
		runs := len(v) / (vbits / 8)
		if lbits == 32 && RunCount(vbits, b.Data, b.N) != runs {
			return nil, nil, fmt.Errorf("RunCount %d, appendRLE wrote %d runs", RunCount(vbits, b.Data, b.N), runs)
		}
		ve, vb, err := fzChild(vkind, vbits, v, runs)
		if err != nil {
			return nil, nil, err
		}
		le, lb, err := fzChild(lkind, lbits, l, runs)
		if err != nil {
			return nil, nil, err
		}
		return fzRle(ve, le), [][]byte{vb, lb}, nil
	})
}

func fzCompress(s Scheme, b []byte) []byte {
	out, err := AppendCompressed(nil, s, 0, b)
	if err != nil {
		panic(err)
	}
	return out
}

// fzFsstEncode builds a table from the strings and codes every one of them.
func fzFsstEncode(b Block) ([]byte, Block) {
	sample := make([][]byte, b.N)
	for i := range sample {
		sample[i] = b.Data[b.Offsets[i]:b.Offsets[i+1]]
	}
	tab := BuildFsstTable(sample)
	enc := Block{N: b.N, Offsets: []uint64{0}, Data: []byte{}}
	for _, s := range sample {
		enc.Data = tab.AppendEncoded(enc.Data, s)
		enc.Offsets = append(enc.Offsets, uint64(len(enc.Data)))
	}
	// The page coder (in pieces and lanes) codes them the same.
	if got := (FsstCodec{Table: tab}).Code(b); !bytes.Equal(got.Data, enc.Data) || !slices.Equal(got.Offsets, enc.Offsets) {
		panic("FsstCodec.Code codes differently from AppendEncoded")
	}
	return tab.AppendBytes(nil), enc
}

// fzFSLCase flattens fixed-size-list values over items of itemBits: dims
// are the list dimensions (outer first), valid says which layers carry a
// validity bitmap; inner encodes the flattened items and returns its
// encoding and buffers.
func fzFSLCase(name string, itemBits int, dims []int, valid []bool, inner func(items Block) (*enc21pb.CompressiveEncoding, [][]byte, error)) fzCase {
	return fzCase{name: name, build: func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error) {
		per := 1
		for _, d := range dims {
			per *= d
		}
		items := fzFixed(data, itemBits, fzMaxValues)
		n := items.N / per
		items.N = n * per
		items.Data = items.Data[:fixedLen(itemBits, items.N)]
		e, bufs, err := inner(items)
		if err != nil {
			return nil, Block{}, nil, err
		}
		want := Block{Bits: itemBits * per, N: n, Data: items.Data, Dims: dims, ItemValid: make([][]byte, len(dims))}
		var vbufs [][]byte
		cnt := n
		for k, d := range dims {
			cnt *= d
			if valid[k] {
				want.ItemValid[k] = fzBitmap(data, cnt)
				vbufs = append(vbufs, want.ItemValid[k])
			}
		}
		for k := len(dims) - 1; k >= 0; k-- {
			e = fzFSL(dims[k], valid[k], e)
		}
		return e, want, append(vbufs, bufs...), nil
	}}
}

func fzMiniCases() []fzCase {
	one := func(e *enc21pb.CompressiveEncoding, b ...[]byte) (*enc21pb.CompressiveEncoding, [][]byte, error) {
		return e, b, nil
	}
	deep := FlatEncoding(8)
	for range 10 {
		deep = fzGeneral(SchemeLZ4, deep)
	}
	// Valid but unusual or unsupported trees, decode only; they come first so
	// that their selector values (used by seed files) stay stable.
	cs := []fzCase{
		{name: "fsl1024(inline64)", e: fzFSL(1024, false, fzInline(64)), bits: 64 * 1024},
		{name: "fsl256(rle(flat64,flat8))", e: fzFSL(256, false, fzRle(FlatEncoding(64), FlatEncoding(8))), bits: 64 * 256},
		{name: "fsl0(flat8)", e: fzFSL(0, false, FlatEncoding(8)), bits: -1},
		{name: "fsl2(var32)", e: fzFSL(2, true, fzVariable(FlatEncoding(32))), bits: -1},
		{name: "fsst(flat32)", e: fzFsst(make([]byte, FsstTableSize), FlatEncoding(32)), bits: -1},
		{name: "delta(mini)", e: fzCE(&enc21pb.Delta{UncompressedBitsPerValue: 32, Deltas: FlatEncoding(32)}), bits: -1},
		{name: "constant(mini)", e: fzCE(&enc21pb.Constant{Value: []byte{1, 2}}), bits: -1},
		{name: "flat32+data", e: fzCE(&enc21pb.Flat{BitsPerValue: 32, Data: &enc21pb.BufferCompression{}}), bits: -1},
		{name: "bss16", e: fzBSS(16), bits: -1},
		{name: "inline12", e: fzInline(12), bits: -1},
		{name: "rle(ool,ool)", e: fzRle(fzOOL(32, 3), fzOOL(8, 2)), bits: -1},
		{name: "general(unspecified)", e: fzGeneral(0, FlatEncoding(8)), bits: -1},
		{name: "var(values compressed)", e: fzCE(&enc21pb.Variable{Offsets: FlatEncoding(32), Values: &enc21pb.BufferCompression{}}), bits: -1},
		{name: "dictionary", e: fzCE(&enc21pb.Dictionary{}), bits: -1},
		{name: "missing", e: &enc21pb.CompressiveEncoding{}, bits: -1},
		{name: "nested too deep", e: deep, bits: -1},
		{name: "lz4(flat8)", e: fzGeneral(SchemeLZ4, FlatEncoding(8)), bits: 8},
	}
	for _, bits := range []int{1, 8, 128} {
		cs = append(cs, fzFixedCase(fmt.Sprintf("flat%d", bits), bits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(FlatEncoding(bits), b.Data)
		}))
	}
	for _, bits := range []int{8, 16, 32, 64} {
		cs = append(cs, fzFixedCase(fmt.Sprintf("inline%d", bits), bits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			out, err := appendInlineBitpackedAll(nil, bits, b.Data, b.N)
			return fzInline(bits), [][]byte{out}, err
		}))
	}
	cs = append(cs,
		fzRleCase(32, 8, "flat", "flat"),
		fzRleCase(64, 16, "flat", "flat"),
		fzRleCase(8, 32, "flat", "flat"),
		fzRleCase(16, 8, "zstd", "flat"),
		fzRleCase(32, 8, "flat", "lz4"),
		fzRleCase(32, 8, "ool", "flat"),
		fzRleCase(16, 8, "flat", "ool"),
		fzRleCase(64, 16, "lz4", "ool"),
	)
	for _, bits := range []int{32, 64} {
		cs = append(cs, fzFixedCase(fmt.Sprintf("bss%d", bits), bits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(fzBSS(bits), appendByteStreamSplit(nil, bits, b.Data, b.N))
		}))
	}
	cs = append(cs,
		fzFixedCase("lz4(inline32)", 32, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			out, err := appendInlineBitpackedAll(nil, 32, b.Data, b.N)
			return fzGeneral(SchemeLZ4, fzInline(32)), [][]byte{fzCompress(SchemeLZ4, out)}, err
		}),
		fzFixedCase("zstd(bss64)", 64, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(fzGeneral(SchemeZstd, fzBSS(64)), fzCompress(SchemeZstd, appendByteStreamSplit(nil, 64, b.Data, b.N)))
		}),
		fzFixedCase("zstd(flat8)", 8, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(fzGeneral(SchemeZstd, FlatEncoding(8)), fzCompress(SchemeZstd, b.Data))
		}),
		fzFixedCase("zstd(rle(flat16,flat8))", 16, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			v, l, err := appendRLE(nil, nil, 16, 8, b.Data, b.N)
			return fzGeneral(SchemeZstd, fzRle(FlatEncoding(16), FlatEncoding(8))), [][]byte{fzCompress(SchemeZstd, v), l}, err
		}),
	)
	for _, bits := range []int{32, 64} {
		cs = append(cs, fzStringCase(fmt.Sprintf("var(flat%d)", bits), func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(fzVariable(FlatEncoding(bits)), appendVariableChunk(nil, bits, b.Offsets, b.Data))
		}))
	}
	cs = append(cs,
		fzStringCase("var(inline32)", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			off, err := appendInlineBitpackedAll(nil, 32, fzOffsetBytes(b.Offsets, 32), b.N+1)
			return fzVariable(fzInline(32)), [][]byte{off, b.Data}, err
		}),
		fzStringCase("var(lz4(flat64))", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			off := fzCompress(SchemeLZ4, fzOffsetBytes(b.Offsets, 64))
			return one(fzVariable(fzGeneral(SchemeLZ4, FlatEncoding(64))), off, b.Data)
		}),
		fzStringCase("var(ool32)", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			raw := fzOffsetBytes(b.Offsets, 32)
			w := bitLength(32, raw, b.N+1)
			off, err := AppendOutOfLineBitpacked(nil, 32, w, raw, b.N+1)
			return fzVariable(fzOOL(32, w)), [][]byte{off, b.Data}, err
		}),
		fzStringCase("var(rle64 block)", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			off, err := appendRLEBlock(nil, 64, 8, fzOffsetBytes(b.Offsets, 64), b.N+1)
			return fzVariable(fzRle(FlatEncoding(64), FlatEncoding(8))), [][]byte{off, b.Data}, err
		}),
		fzStringCase("var(delta32(flat32))", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			var deltas []byte
			for i := 1; i <= b.N; i++ {
				deltas = fzPut(deltas, 32, b.Offsets[i]-b.Offsets[i-1])
			}
			e := fzVariable(fzCE(&enc21pb.Delta{UncompressedBitsPerValue: 32, Deltas: FlatEncoding(32)}))
			return e, [][]byte{deltas, b.Data}, nil
		}),
		// Equal-length strings: offsets as a Range, no offsets payload.
		fzCase{name: "var(range32)", build: func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error) {
			if len(data) == 0 {
				return nil, Block{}, nil, errFzSkip
			}
			k, rest := 1+int(data[0]%8), data[1:]
			n := min(len(rest)/k, fzMaxStrings)
			b := Block{N: n, Offsets: make([]uint64, n+1), Data: rest[:n*k]}
			for i := range b.Offsets {
				b.Offsets[i] = uint64(i * k)
			}
			e := fzVariable(fzCE(&enc21pb.Range{UncompressedBitsPerValue: 32, Step: uint64(k)}))
			return e, b, [][]byte{b.Data}, nil
		}},
		fzStringCase("fsst(var(flat32))", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			tab, enc := fzFsstEncode(b)
			return one(fzFsst(tab, fzVariable(FlatEncoding(32))), appendVariableChunk(nil, 32, enc.Offsets, enc.Data))
		}),
		fzStringCase("fsst(var(inline64))", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			tab, enc := fzFsstEncode(b)
			off, err := appendInlineBitpackedAll(nil, 64, fzOffsetBytes(enc.Offsets, 64), enc.N+1)
			return fzFsst(tab, fzVariable(fzInline(64))), [][]byte{off, enc.Data}, err
		}),
		fzStringCase("fsst(zstd(var(flat32)))", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			tab, enc := fzFsstEncode(b)
			ch := appendVariableChunk(nil, 32, enc.Offsets, enc.Data)
			return one(fzFsst(tab, fzGeneral(SchemeZstd, fzVariable(FlatEncoding(32)))), fzCompress(SchemeZstd, ch))
		}),
		// The cost policy's windows: general compression over FSST-coded
		// values in the legacy layout (offsets and codes in one buffer).
		fzStringCase("zstd(fsst(var(flat32)))", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			tab, enc := fzFsstEncode(b)
			ch := appendVariableChunk(nil, 32, enc.Offsets, enc.Data)
			return one(fzGeneral(SchemeZstd, fzFsst(tab, fzVariable(FlatEncoding(32)))), fzCompress(SchemeZstd, ch))
		}),
		fzStringCase("lz4(var(flat32))", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			ch := appendVariableChunk(nil, 32, b.Offsets, b.Data)
			return one(fzGeneral(SchemeLZ4, fzVariable(FlatEncoding(32))), fzCompress(SchemeLZ4, ch))
		}),
		fzFSLCase("fsl3v(flat32)", 32, []int{3}, []bool{true}, func(items Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(FlatEncoding(32), items.Data)
		}),
		fzFSLCase("fsl2(fsl2v(inline16))", 16, []int{2, 2}, []bool{false, true}, func(items Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			out, err := appendInlineBitpackedAll(nil, 16, items.Data, items.N)
			return fzInline(16), [][]byte{out}, err
		}),
		fzFSLCase("fsl4(bss32)", 32, []int{4}, []bool{false}, func(items Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(fzBSS(32), appendByteStreamSplit(nil, 32, items.Data, items.N))
		}),
		fzFSLCase("fsl2v(rle(flat8,flat8))", 8, []int{2}, []bool{true}, func(items Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			v, l, err := appendRLE(nil, nil, 8, 8, items.Data, items.N)
			return fzRle(FlatEncoding(8), FlatEncoding(8)), [][]byte{v, l}, err
		}),
		fzFSLCase("fsl5(flat1)", 1, []int{5}, []bool{false}, func(items Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(FlatEncoding(1), items.Data)
		}),
	)
	return cs
}

func fzBlockCases() []fzCase {
	one := func(e *enc21pb.CompressiveEncoding, b []byte, err error) (*enc21pb.CompressiveEncoding, [][]byte, error) {
		return e, [][]byte{b}, err
	}
	// Valid but unusual or unsupported trees, decode only; they come first so
	// that their selector values (used by seed files) stay stable.
	cs := []fzCase{
		{name: "ool32(w=0)", e: fzOOL(32, 0), bits: 32},
		{name: "ool64(w=64)", e: fzOOL(64, 64), bits: 64},
		{name: "fsl1024(inline64)", e: fzFSL(1024, false, fzInline(64)), bits: 64 * 1024},
		{name: "fsl1M(flat8)", e: fzFSL(1<<20, false, FlatEncoding(8)), bits: 8 << 20},
		{name: "fsl2v(flat8)", e: fzFSL(2, true, FlatEncoding(8)), bits: -1},
		{name: "fsl2(var32)", e: fzFSL(2, false, fzVariable(FlatEncoding(32))), bits: -1},
		{name: "delta64(constant)", e: fzCE(&enc21pb.Delta{UncompressedBitsPerValue: 64, Base: 5, Deltas: fzCE(&enc21pb.Constant{Value: []byte{1, 0, 0, 0, 0, 0, 0, 0}})}), bits: 64},
		{name: "delta32(range32)", e: fzCE(&enc21pb.Delta{UncompressedBitsPerValue: 32, Base: 1 << 31, Deltas: fzCE(&enc21pb.Range{UncompressedBitsPerValue: 32, Start: 1, Step: 3})}), bits: 32},
		{name: "delta16", e: fzCE(&enc21pb.Delta{UncompressedBitsPerValue: 16, Deltas: FlatEncoding(16)}), bits: -1},
		{name: "range16", e: fzCE(&enc21pb.Range{UncompressedBitsPerValue: 16}), bits: -1},
		{name: "constant(empty)", e: fzCE(&enc21pb.Constant{}), bits: -1},
		{name: "rle(inline,flat)", e: fzRle(fzInline(32), FlatEncoding(8)), bits: -1},
		{name: "inline12", e: fzInline(12), bits: -1},
		{name: "bss32(block)", e: fzBSS(32), bits: -1},
		{name: "general(unspecified)", e: fzGeneral(0, FlatEncoding(8)), bits: -1},
		{name: "missing", e: &enc21pb.CompressiveEncoding{}, bits: -1},
		{name: "lz4(flat8)", e: fzGeneral(SchemeLZ4, FlatEncoding(8)), bits: 8},
	}
	for _, bits := range []int{1, 16, 24} {
		cs = append(cs, fzFixedCase(fmt.Sprintf("flat%d", bits), bits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(FlatEncoding(bits), b.Data, nil)
		}))
	}
	for _, bits := range []int{8, 16, 32, 64} {
		cs = append(cs, fzFixedCase(fmt.Sprintf("inline%d", bits), bits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			out, err := appendInlineBitpackedAll(nil, bits, b.Data, b.N)
			return one(fzInline(bits), out, err)
		}))
	}
	for _, bits := range []int{8, 16, 64} {
		cs = append(cs, fzFixedCase(fmt.Sprintf("ool%d", bits), bits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			w := bitLength(bits, b.Data, b.N)
			out, err := AppendOutOfLineBitpacked(nil, bits, w, b.Data, b.N)
			return one(fzOOL(bits, w), out, err)
		}))
	}
	for _, wl := range [][2]int{{32, 8}, {16, 32}, {64, 16}, {8, 8}} {
		cs = append(cs, fzFixedCase(fmt.Sprintf("rle(flat%d,flat%d)", wl[0], wl[1]), wl[0], func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			out, err := appendRLEBlock(nil, wl[0], wl[1], b.Data, b.N)
			return one(fzRle(FlatEncoding(wl[0]), FlatEncoding(wl[1])), out, err)
		}))
	}
	cs = append(cs,
		fzFixedCase("zstd(flat32)", 32, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(fzGeneral(SchemeZstd, FlatEncoding(32)), fzCompress(SchemeZstd, b.Data), nil)
		}),
		fzFixedCase("lz4(rle(flat16,flat8))", 16, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			out, err := appendRLEBlock(nil, 16, 8, b.Data, b.N)
			return one(fzGeneral(SchemeLZ4, fzRle(FlatEncoding(16), FlatEncoding(8))), fzCompress(SchemeLZ4, out), err)
		}),
		fzFixedCase("lz4(inline64)", 64, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			out, err := appendInlineBitpackedAll(nil, 64, b.Data, b.N)
			return one(fzGeneral(SchemeLZ4, fzInline(64)), fzCompress(SchemeLZ4, out), err)
		}),
	)
	for _, bits := range []int{32, 64} {
		cs = append(cs, fzStringCase(fmt.Sprintf("var%d", bits), func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(fzVariable(FlatEncoding(bits)), AppendVariableBlock(nil, bits, b.Offsets, b.Data), nil)
		}))
	}
	cs = append(cs,
		fzStringCase("zstd(var64)", func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(fzGeneral(SchemeZstd, fzVariable(FlatEncoding(64))), fzCompress(SchemeZstd, AppendVariableBlock(nil, 64, b.Offsets, b.Data)), nil)
		}),
		fzCase{name: "constant", build: func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error) {
			if len(data) < 2 {
				return nil, Block{}, nil, errFzSkip
			}
			k := min(1+int(data[0]%8), len(data)-1)
			v := data[1 : 1+k]
			n := len(data) * 7 % 3000
			b := Block{Bits: 8 * k, N: n, Data: bytes.Repeat(v, n)}
			return fzCE(&enc21pb.Constant{Value: v}), b, nil, nil
		}},
	)
	for _, bits := range []int{32, 64} {
		cs = append(cs, fzCase{name: fmt.Sprintf("range%d", bits), build: func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error) {
			if len(data) < 17 {
				return nil, Block{}, nil, errFzSkip
			}
			start, step := binary.LittleEndian.Uint64(data), binary.LittleEndian.Uint64(data[8:])
			if bits == 32 {
				start, step = start&0xFFFFFFFF, step&0xFFFF
			}
			n := int(data[16]) * 11
			b := Block{Bits: bits, N: n}
			v := start
			for range n {
				if bits == 32 && v > 0xFFFFFFFF {
					return nil, Block{}, nil, errFzSkip
				}
				b.Data = fzPut(b.Data, bits, v)
				v += step
			}
			return fzCE(&enc21pb.Range{UncompressedBitsPerValue: uint64(bits), Start: start, Step: step}), b, nil, nil
		}})
	}
	deltaCase := func(name string, bits int, child func(deltas []byte, n int) (*enc21pb.CompressiveEncoding, []byte, error)) fzCase {
		return fzCase{name: name, build: func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error) {
			if len(data) < 8 {
				return nil, Block{}, nil, errFzSkip
			}
			base := binary.LittleEndian.Uint64(data)
			if bits == 32 {
				base &= 0xFFFFFFFF
			}
			ds := data[8:min(len(data), 8+fzMaxValues)]
			b := Block{Bits: bits, N: len(ds) + 1}
			var deltas []byte
			v := base
			b.Data = fzPut(b.Data, bits, v)
			for _, d := range ds {
				if v+uint64(d) < v || (bits == 32 && v+uint64(d) > 0xFFFFFFFF) {
					return nil, Block{}, nil, errFzSkip
				}
				v += uint64(d)
				b.Data = fzPut(b.Data, bits, v)
				deltas = fzPut(deltas, bits, uint64(d))
			}
			ce, buf, err := child(deltas, len(ds))
			e := fzCE(&enc21pb.Delta{UncompressedBitsPerValue: uint64(bits), Base: base, Deltas: ce})
			return e, b, [][]byte{buf}, err
		}}
	}
	cs = append(cs,
		deltaCase("delta32(flat32)", 32, func(d []byte, n int) (*enc21pb.CompressiveEncoding, []byte, error) {
			return FlatEncoding(32), d, nil
		}),
		deltaCase("delta64(inline64)", 64, func(d []byte, n int) (*enc21pb.CompressiveEncoding, []byte, error) {
			out, err := appendInlineBitpackedAll(nil, 64, d, n)
			return fzInline(64), out, err
		}),
		deltaCase("delta64(zstd(flat64))", 64, func(d []byte, n int) (*enc21pb.CompressiveEncoding, []byte, error) {
			return fzGeneral(SchemeZstd, FlatEncoding(64)), fzCompress(SchemeZstd, d), nil
		}),
		fzFSLCase("fsl4(flat16)", 16, []int{4}, []bool{false}, func(items Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			return one(FlatEncoding(16), items.Data, nil)
		}),
		fzFSLCase("fsl2(fsl3(inline8))", 8, []int{2, 3}, []bool{false, false}, func(items Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
			out, err := appendInlineBitpackedAll(nil, 8, items.Data, items.N)
			return one(fzInline(8), out, err)
		}),
	)
	// The 2.3 generic block codecs (RLE with any children, Dictionary) come
	// last, so the selectors of earlier trees stay stable.
	cs = append(cs, fzGenericBlockCases()...)
	return cs
}

// fzSeedInputs are the canned values the decode trees and seeds are built
// from: separated text, a narrow ramp and long runs.
func fzSeedInputs() [][]byte {
	text := []byte(",alpha,beta,,gamma,delta,alpha,alpha,epsilon,beta,https://example.com/a,https://example.com/b")
	ramp := []byte{0x10}
	for i := range 700 {
		ramp = append(ramp, byte(i/3), byte(i/300), 0, 0)
	}
	runs := append([]byte{0x17}, bytes.Repeat([]byte{7, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}, 6)...)
	return [][]byte{text, ramp, runs}
}

// fzTree is a concrete decode tree with the expected width of its values.
type fzTree struct {
	name    string
	e       *enc21pb.CompressiveEncoding
	bits    int
	general bool
	seed    [][]byte // valid buffers (nil for decode-only trees)
	n       int
}

// fzTrees instantiates every case on every seed input.
func fzTrees(cases []fzCase) []fzTree {
	var trees []fzTree
	for _, c := range cases {
		if c.build == nil {
			trees = append(trees, fzTree{name: c.name, e: c.e, bits: c.bits, general: fzHasGeneral(c.e), n: 3})
			continue
		}
		for i, in := range fzSeedInputs() {
			e, want, bufs, err := c.build(in)
			if err != nil {
				continue
			}
			trees = append(trees, fzTree{name: fmt.Sprintf("%s#%d", c.name, i), e: e, bits: want.Bits, general: fzHasGeneral(e), seed: bufs, n: want.N})
		}
	}
	if len(trees) > 256 {
		panic("too many fuzz trees for a uint8 selector")
	}
	return trees
}

// fzWarmZstd initializes the shared zstd decoders so their one-time
// allocations do not count against a measured decode.
func fzWarmZstd() {
	comp := fzCompress(SchemeZstd, bytes.Repeat([]byte("warm up "), 4096))
	for range 8 {
		_, _ = Decompress(nil, SchemeZstd, comp)
	}
}

// ---- DecodeMiniBlock / DecodeBlock / DecodeLevels on fuzzer bytes ----

// FuzzDecodeMiniBlockTree decodes fuzzer buffers under a fuzzer-chosen
// mini-block encoding tree: no panic, errors classified, a successful decode
// is structurally sound, inputs are not modified and allocation stays
// bounded by the input and output sizes.
func FuzzDecodeMiniBlockTree(f *testing.F) {
	trees := fzTrees(fzMiniCases())
	for i, tr := range trees {
		b := append(slices.Clone(tr.seed), nil, nil, nil)
		f.Add(uint8(i), uint16(tr.n), uint8(len(tr.seed)), b[0], b[1], b[2])
		if tr.seed == nil {
			f.Add(uint8(i), uint16(2), uint8(1), []byte{1, 0, 0, 0, 2, 0, 0, 0}, []byte(nil), []byte(nil))
			f.Add(uint8(i), uint16(10), uint8(2), []byte{}, []byte{0x0A}, []byte(nil))
		}
	}
	fzWarmZstd()
	f.Fuzz(func(t *testing.T, which uint8, n uint16, nbuf uint8, b0, b1, b2 []byte) {
		tr := trees[int(which)%len(trees)]
		bufs := [][]byte{b0, b1, b2}[:nbuf%4]
		orig := fzCloneAll(bufs)
		before := fzHeapAllocs()
		got, err := DecodeMiniBlock(tr.e, bufs, int(n))
		alloc := fzHeapAllocs() - before
		again := func() uint64 {
			before := fzHeapAllocs()
			_, _ = DecodeMiniBlock(tr.e, bufs, int(n))
			return fzHeapAllocs() - before
		}
		fzUnchanged(t, tr.name, bufs, orig)
		in := len(b0) + len(b1) + len(b2)
		// The in-place decode agrees, error for error, value for value.
		bits, fixed := FixedChunkBits(tr.e)
		var dst []byte
		if fixed {
			dst = make([]byte, 0, int(n)*bits/8)
		}
		into, _, ierr := DecodeMiniBlockInto(tr.e, bufs, int(n), dst, []byte{1, 2, 3})
		fzUnchanged(t, tr.name+" into", bufs, orig)
		if (err == nil) != (ierr == nil) {
			t.Fatalf("%s: DecodeMiniBlock error %v, DecodeMiniBlockInto %v", tr.name, err, ierr)
		}
		if err != nil {
			fzCheckErr(t, tr.name, err)
			fzCheckErr(t, tr.name+" into", ierr)
			fzCheckAlloc(t, tr.name, alloc, again, in, int(n), 0, tr.general)
			return
		}
		if fixed && (into.Bits != got.Bits || into.N != got.N || !bytes.Equal(into.Data[:len(got.Data)], got.Data) || len(into.Data) != len(got.Data)) {
			t.Fatalf("%s: in place %d %d-bit values (%d bytes), DecodeMiniBlock %d %d-bit (%d bytes)", tr.name, into.N, into.Bits, len(into.Data), got.N, got.Bits, len(got.Data))
		}
		fzCheckBlock(t, tr.name, got, int(n), tr.bits)
		fzCheckAlloc(t, tr.name, alloc, again, in, int(n), fzBlockBytes(got), tr.general)
	})
}

// FuzzDecodeBlockTree decodes a fuzzer buffer under a fuzzer-chosen block
// encoding tree, and cross-checks DecodeLevels against DecodeBlock.
func FuzzDecodeBlockTree(f *testing.F) {
	trees := fzTrees(fzBlockCases())
	for i, tr := range trees {
		var b []byte
		if len(tr.seed) > 0 {
			b = tr.seed[0]
		}
		f.Add(uint8(i), uint16(tr.n), b)
		if tr.seed == nil {
			f.Add(uint8(i), uint16(2), []byte{1, 0, 0, 0, 2, 0, 0, 0})
			f.Add(uint8(i), uint16(10), []byte{})
		}
	}
	fzWarmZstd()
	f.Fuzz(func(t *testing.T, which uint8, n uint16, buf []byte) {
		tr := trees[int(which)%len(trees)]
		orig := bytes.Clone(buf)
		before := fzHeapAllocs()
		got, err := DecodeBlock(tr.e, buf, int(n))
		alloc := fzHeapAllocs() - before
		again := func() uint64 {
			before := fzHeapAllocs()
			_, _ = DecodeBlock(tr.e, buf, int(n))
			return fzHeapAllocs() - before
		}
		fzUnchanged(t, tr.name, [][]byte{buf}, [][]byte{orig})
		lv, lerr := DecodeLevels(tr.e, buf, int(n), []uint16{7})
		if err != nil {
			fzCheckErr(t, tr.name, err)
			fzCheckAlloc(t, tr.name, alloc, again, len(buf), int(n), 0, tr.general)
			if lerr == nil {
				t.Fatalf("%s: DecodeLevels succeeded where DecodeBlock failed: %v", tr.name, err)
			}
			fzCheckErr(t, tr.name+" levels", lerr)
			return
		}
		fzCheckBlock(t, tr.name, got, int(n), tr.bits)
		fzCheckAlloc(t, tr.name, alloc, again, len(buf), int(n), fzBlockBytes(got), tr.general)
		if got.Bits != 16 {
			if lerr == nil {
				t.Fatalf("%s: DecodeLevels accepted %d-bit values", tr.name, got.Bits)
			}
			fzCheckErr(t, tr.name+" levels", lerr)
			return
		}
		if lerr != nil || len(lv) != 1+int(n) || lv[0] != 7 {
			t.Fatalf("%s: DecodeLevels: %d levels, %v", tr.name, len(lv), lerr)
		}
		for i := range int(n) {
			if lv[1+i] != binary.LittleEndian.Uint16(got.Data[2*i:]) {
				t.Fatalf("%s: level %d = %d, block says %d", tr.name, i, lv[1+i], binary.LittleEndian.Uint16(got.Data[2*i:]))
			}
		}
	})
}

// ---- encoding-tree round trips ----

func fzSeedRoundTrip(f *testing.F, cases []fzCase) {
	for i, c := range cases {
		if c.build == nil {
			continue
		}
		for _, in := range fzSeedInputs() {
			f.Add(uint8(i), in)
		}
	}
}

// FuzzMiniBlockRoundTrip encodes fuzzer-chosen values with the encoders of
// a fuzzer-chosen mini-block tree (bit-packing, RLE with flat, general and
// bit-packed children, byte stream split, general, variable in the legacy
// and generic layouts, FSST, fixed-size lists with validity) and checks
// DecodeMiniBlock returns them unchanged.
func FuzzMiniBlockRoundTrip(f *testing.F) {
	cases := slices.DeleteFunc(fzMiniCases(), func(c fzCase) bool { return c.build == nil })
	fzSeedRoundTrip(f, cases)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		c := cases[int(which)%len(cases)]
		e, want, bufs, err := c.build(data)
		if errors.Is(err, ErrNotApplicable) {
			return
		}
		if err != nil {
			t.Fatalf("%s: encode: %v", c.name, err)
		}
		got, err := DecodeMiniBlock(e, bufs, want.N)
		if err != nil {
			t.Fatalf("%s: decode of %d values: %v", c.name, want.N, err)
		}
		fzCheckBlock(t, c.name, got, want.N, want.Bits)
		fzEqualBlock(t, c.name, got, want)
	})
}

// FuzzBlockRoundTrip is FuzzMiniBlockRoundTrip for block encodings (flat,
// bit-packing, RLE blocks, general, variable blocks, constant, range, delta,
// fixed-size lists) and DecodeLevels for 16-bit trees.
func FuzzBlockRoundTrip(f *testing.F) {
	cases := slices.DeleteFunc(fzBlockCases(), func(c fzCase) bool { return c.build == nil })
	fzSeedRoundTrip(f, cases)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		c := cases[int(which)%len(cases)]
		e, want, bufs, err := c.build(data)
		if errors.Is(err, ErrNotApplicable) {
			return
		}
		if err != nil {
			t.Fatalf("%s: encode: %v", c.name, err)
		}
		var buf []byte
		if len(bufs) > 0 {
			buf = bufs[0]
		}
		if HasPayload(e) != (bufs != nil) {
			t.Fatalf("%s: HasPayload = %v with %d buffers", c.name, HasPayload(e), len(bufs))
		}
		got, err := DecodeBlock(e, buf, want.N)
		if err != nil {
			t.Fatalf("%s: decode of %d values: %v", c.name, want.N, err)
		}
		fzCheckBlock(t, c.name, got, want.N, want.Bits)
		fzEqualBlock(t, c.name, got, want)
		if want.Bits == 16 && want.Dims == nil {
			lv, err := DecodeLevels(e, buf, want.N, nil)
			if err != nil || len(lv) != want.N {
				t.Fatalf("%s: DecodeLevels: %d levels, %v", c.name, len(lv), err)
			}
			if !bytes.Equal(AppendFlatLevels(nil, lv), want.Data) {
				t.Fatalf("%s: levels differ", c.name)
			}
		}
	})
}

// ---- FSST blocks ----

// FuzzFsstDecodeBlock runs FsstDecodeBlock on a fuzzer table (overlaid on a
// table-sized buffer, or taken as is) and a fuzzer block whose offsets may be
// out of order or out of range.
func FuzzFsstDecodeBlock(f *testing.F) {
	vals := fzStrings([]byte(" hello world hello fuzz worldwide"), 100)
	tab, enc := fzFsstEncode(vals)
	offs := make([]byte, len(enc.Offsets))
	for i, o := range enc.Offsets {
		offs[i] = byte(o)
	}
	f.Add(tab, true, offs, enc.Data, false)
	f.Add(tab[:64], true, offs, enc.Data, false)
	f.Add(tab, true, []byte{0, 3, 1}, enc.Data, false)
	f.Add(tab, true, []byte{0, 200}, enc.Data, false)
	f.Add(tab, true, []byte{0, 2}, []byte{0, 0xFF}, false)
	f.Add(tab, true, offs, enc.Data, true)
	verbatim := slices.Clone(tab)
	verbatim[3] = 0
	f.Add(verbatim, true, []byte{0, 2, 5}, []byte("abcde"), false)
	f.Add([]byte{}, false, []byte{0}, []byte{}, false)
	f.Fuzz(func(t *testing.T, head []byte, overlay bool, offs, data []byte, fixed bool) {
		table := head
		if overlay {
			table = make([]byte, FsstTableSize)
			copy(table, head)
		}
		in := Block{Data: data}
		if fixed {
			in.Bits, in.N = 8, len(data)
		} else {
			in.Offsets = make([]uint64, max(len(offs), 1))
			for i, o := range offs {
				in.Offsets[i] = uint64(o)
			}
			in.N = len(in.Offsets) - 1
		}
		orig := bytes.Clone(data)
		out, err := FsstDecodeBlock(table, in)
		fzUnchanged(t, "fsst", [][]byte{data}, [][]byte{orig})
		if err != nil {
			fzCheckErr(t, "fsst", err)
			return
		}
		fzCheckBlock(t, "fsst", out, in.N, 0)
		tb, err := ParseFsstTable(table)
		if err != nil {
			t.Fatalf("FsstDecodeBlock accepted a table ParseFsstTable rejects: %v", err)
		}
		for i := range in.N {
			want, err := tb.AppendDecoded(nil, data[in.Offsets[i]:in.Offsets[i+1]])
			if err != nil || !bytes.Equal(want, out.Data[out.Offsets[i]:out.Offsets[i+1]]) {
				t.Fatalf("value %d decodes to %q, AppendDecoded gives %q (%v)", i, out.Data[out.Offsets[i]:out.Offsets[i+1]], want, err)
			}
		}
	})
}

// ---- byte stream split ----

// FuzzBSSRoundTrip splits fuzzer values (32 or 64 bits) and joins them back,
// appending to non-empty buffers.
func FuzzBSSRoundTrip(f *testing.F) {
	f.Add(false, []byte{0, 0, 0x80, 0x3F, 0, 0, 0, 0x40, 0xAA})
	f.Add(true, []byte("0123456789abcdefXYZ"))
	f.Add(true, []byte{})
	f.Fuzz(func(t *testing.T, wide bool, data []byte) {
		bits := 32
		if wide {
			bits = 64
		}
		b := bits / 8
		n := len(data) / b
		src := data[:n*b]
		enc := appendByteStreamSplit([]byte("pre"), bits, src, n)
		if len(enc) != 3+len(src) || string(enc[:3]) != "pre" {
			t.Fatalf("split appended %d bytes for %d", len(enc)-3, len(src))
		}
		for i := range n {
			for j := range b {
				if enc[3+j*n+i] != src[b*i+j] {
					t.Fatalf("byte %d of value %d misplaced", j, i)
				}
			}
		}
		dec, err := decodeByteStreamSplit([]byte("x"), bits, enc[3:], n)
		if err != nil || string(dec[:1]) != "x" || !bytes.Equal(dec[1:], src) {
			t.Fatalf("join: %v", err)
		}
	})
}

// ---- general compression ----

// FuzzGeneralRoundTrip compresses fuzzer bytes (optionally stretched past
// LZ4's 64 KiB table switch) with LZ4 or zstd at a fuzzer level and checks
// Decompress restores them, appending to a non-empty buffer.
func FuzzGeneralRoundTrip(f *testing.F) {
	f.Add(false, int8(0), uint8(0), []byte("hello hello hello"))
	f.Add(true, int8(3), uint8(1), []byte("abcdefgh"))
	f.Add(false, int8(0), uint8(3), bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 50))
	f.Add(true, int8(-5), uint8(2), []byte{})
	f.Add(true, int8(22), uint8(0), fzMixedBytes())
	f.Fuzz(func(t *testing.T, zstd bool, level int8, stretch uint8, data []byte) {
		s := SchemeLZ4
		if zstd {
			s = SchemeZstd
		}
		if k := int(stretch % 4); k > 0 && len(data) > 0 {
			target := []int{0, 4 << 10, 70 << 10, 200 << 10}[k]
			reps := target/len(data) + 1
			var buf []byte
			for i := range reps {
				buf = append(buf, data...)
				buf = append(buf, byte(i)) // keep it from being one long match
			}
			data = buf
		}
		comp, err := AppendCompressed([]byte("pre"), s, int(level), data)
		if err != nil {
			t.Fatalf("%v: compress %d bytes: %v", s, len(data), err)
		}
		if string(comp[:3]) != "pre" {
			t.Fatal("compress clobbered dst")
		}
		if s == SchemeLZ4 && len(comp)-3 > 4+len(data)+len(data)/255+16 {
			t.Fatalf("lz4: %d bytes compressed to %d, beyond the LZ4 bound", len(data), len(comp)-3)
		}
		dec, err := Decompress([]byte("x"), s, comp[3:])
		if err != nil || string(dec[:1]) != "x" || !bytes.Equal(dec[1:], data) {
			t.Fatalf("%v: round trip of %d bytes: %v", s, len(data), err)
		}
	})
}

// fzMixedBytes is a small mixed-content input.
func fzMixedBytes() []byte {
	var b []byte
	for i := range 2000 {
		b = append(b, byte(i*i>>3), byte(i%7), 'a'+byte(i%26))
	}
	return b
}

// FuzzDecompressAlloc checks that Decompress on arbitrary bytes never
// allocates much more than the input can legitimately decode to, and that a
// successful decode matches its length prefix.
func FuzzDecompressAlloc(f *testing.F) {
	for _, s := range []Scheme{SchemeLZ4, SchemeZstd} {
		for _, in := range [][]byte{nil, []byte("hello"), bytes.Repeat([]byte("abc"), 1000)} {
			f.Add(s == SchemeZstd, fzCompress(s, in))
		}
	}
	// Length prefixes far beyond the data.
	f.Add(false, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x10, 0x61})
	f.Add(false, append([]byte{0xFF, 0xFF, 0x00, 0x00}, bytes.Repeat([]byte{0x1F, 0x61, 0x01, 0x00, 0xFF, 0xFF}, 40)...))
	// zstd: prefix of 1 MiB, frame of eight empty compressed blocks.
	z := []byte{0, 0, 0x10, 0, 0, 0, 0, 0, 0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x58}
	for i := range 8 {
		last := byte(0)
		if i == 7 {
			last = 1
		}
		z = append(z, 0x04|last, 0, 0)
	}
	f.Add(true, z)
	// Bare frame declaring a large content size.
	f.Add(true, []byte{0x28, 0xB5, 0x2F, 0xFD, 0xA0, 0, 0, 0, 0x40, 0x01, 0, 0, 0x61})
	fzWarmZstd()
	f.Fuzz(func(t *testing.T, zstd bool, data []byte) {
		s, ratio := SchemeLZ4, 256
		if zstd {
			s, ratio = SchemeZstd, (128<<10)/3+1
		}
		before := fzHeapAllocs()
		out, err := Decompress(nil, s, data)
		alloc := fzHeapAllocs() - before
		if err != nil {
			fzCheckErr(t, s.String(), err)
		}
		if limit := uint64(2<<20 + 4*len(out) + 3*ratio*len(data)); alloc > limit {
			t.Fatalf("%v: allocated %d bytes for %d input bytes (%d decoded, err %v); limit %d", s, alloc, len(data), len(out), err, limit)
		}
		if err != nil {
			return
		}
		if len(out) > ratio*len(data)+16 {
			t.Fatalf("%v: %d bytes decoded to %d", s, len(data), len(out))
		}
		switch {
		case s == SchemeLZ4:
			if len(out) != int(binary.LittleEndian.Uint32(data)) {
				t.Fatalf("lz4: decoded %d bytes, prefix says %d", len(out), binary.LittleEndian.Uint32(data))
			}
		case len(data) >= 8 && !(binary.LittleEndian.Uint32(data) == 0xFD2FB528 && data[4]&0x10 == 0):
			if uint64(len(out)) != binary.LittleEndian.Uint64(data) {
				t.Fatalf("zstd: decoded %d bytes, prefix says %d", len(out), binary.LittleEndian.Uint64(data))
			}
		}
	})
}

// ---- bit-packing widths ----

// FuzzBitpackWidthRoundTrip packs fuzzer values out of line at a fuzzer
// width (which must be refused when too narrow), checks the layout size, and
// packs single inline chunks, appending to non-empty buffers.
func FuzzBitpackWidthRoundTrip(f *testing.F) {
	f.Add(uint8(2), uint8(5), []byte{0x14, 1, 0, 0, 0, 31, 0, 0, 0, 7, 0, 0, 0})
	f.Add(uint8(0), uint8(8), bytes.Repeat([]byte{0x03, 0xFF, 0x10}, 400))
	f.Add(uint8(3), uint8(0), []byte{0})
	f.Add(uint8(1), uint8(16), bytes.Repeat([]byte{0x3C, 0xAB, 0xCD}, 800))
	f.Fuzz(func(t *testing.T, sel, wsel uint8, data []byte) {
		bits := fzWidth(sel)
		bpw := bits / 8
		b := fzFixed(data, bits, 5000)
		n := b.N
		var or uint64
		for i := range n {
			or |= fzGet(b.Data, bits, i)
		}
		bl := bitLength(bits, b.Data, n)
		if bl != mbits.Len64(or) {
			t.Fatalf("bitLength = %d, want %d", bl, mbits.Len64(or))
		}
		w := int(wsel) % (bits + 1)
		enc, err := AppendOutOfLineBitpacked([]byte("pre"), bits, w, b.Data, n)
		if w < bl {
			if !errors.Is(err, ErrNotApplicable) || string(enc) != "pre" {
				t.Fatalf("width %d below bit length %d: %v, %d bytes", w, bl, err, len(enc))
			}
		} else {
			if err != nil || string(enc[:3]) != "pre" {
				t.Fatalf("out-of-line width %d: %v", w, err)
			}
			wpc := 1024 * w / bits
			words := n / 1024 * wpc
			if r := n % 1024; r > 0 {
				if w*(1024-r) < (bits-w)*r {
					words += wpc
				} else {
					words += r
				}
			}
			if len(enc)-3 != words*bpw {
				t.Fatalf("out-of-line %d values at width %d: %d bytes, want %d", n, w, len(enc)-3, words*bpw)
			}
			dec, err := decodeOutOfLineBitpacked([]byte("x"), bits, w, enc[3:], n)
			if err != nil || string(dec[:1]) != "x" || !bytes.Equal(dec[1:], b.Data) {
				t.Fatalf("out-of-line round trip at width %d: %v", w, err)
			}
		}
		one, err := AppendInlineBitpacked([]byte("pre"), bits, b.Data, n)
		if n > 1024 {
			if !errors.Is(err, ErrNotApplicable) || string(one) != "pre" {
				t.Fatalf("inline chunk of %d values: %v", n, err)
			}
			return
		}
		if err != nil || len(one)-3 != bpw*(1+1024*bl/bits) {
			t.Fatalf("inline chunk of %d values at width %d: %d bytes, %v", n, bl, len(one)-3, err)
		}
		if binary.LittleEndian.Uint64(append(slices.Clone(one[3:3+bpw]), make([]byte, 8)...)) != uint64(bl) {
			t.Fatalf("inline width word % x, want %d", one[3:3+bpw], bl)
		}
		if n == 0 {
			return
		}
		all, err := appendInlineBitpackedAll(nil, bits, b.Data, n)
		if err != nil || !bytes.Equal(all, one[3:]) {
			t.Fatalf("single chunk differs from appendInlineBitpackedAll: %v", err)
		}
		dec, err := decodeInlineBitpacked([]byte("x"), bits, one[3:], n)
		if err != nil || string(dec[:1]) != "x" || !bytes.Equal(dec[1:], b.Data) {
			t.Fatalf("inline round trip: %v", err)
		}
	})
}

// ---- variable-width blocks and chunks ----

// FuzzVariableRoundTrip writes fuzzer values (offsets that need not start
// at 0) as a variable block and a mini-block chunk and reads them back.
func FuzzVariableRoundTrip(f *testing.F) {
	f.Add([]byte("hello world"), []byte{0, 5, 1, 5}, false)
	f.Add([]byte("abcdef"), []byte{2, 0, 3}, true)
	f.Add([]byte{}, []byte{}, false)
	f.Add([]byte("x"), []byte{9, 9, 9}, true)
	f.Fuzz(func(t *testing.T, data, cuts []byte, wide bool) {
		bits := 32
		if wide {
			bits = 64
		}
		w := bits / 8
		offs := []uint64{0}
		if len(cuts) > 0 {
			offs[0] = min(uint64(cuts[0]), uint64(len(data)))
			for _, c := range cuts[1:] {
				offs = append(offs, min(offs[len(offs)-1]+uint64(c), uint64(len(data))))
			}
		}
		n := len(offs) - 1
		base, span := offs[0], offs[n]-offs[0]
		vals := data[base:offs[n]]

		blk := AppendVariableBlock([]byte("pre"), bits, offs, data)
		if string(blk[:3]) != "pre" || len(blk)-3 != 2*w+w*(n+1)+int(span) {
			t.Fatalf("block of %d values: %d bytes", n, len(blk)-3)
		}
		gb, go1, gd, err := decodeVariableBlock(blk[3:], n)
		if err != nil || gb != bits || !bytes.Equal(gd, vals) || len(go1) != n+1 {
			t.Fatalf("block: %v (bits %d, %d offsets)", err, gb, len(go1))
		}
		for i := range offs {
			if go1[i] != offs[i]-base {
				t.Fatalf("block offset %d = %d, want %d", i, go1[i], offs[i]-base)
			}
		}

		ch := appendVariableChunk([]byte("pre"), bits, offs, data)
		body := ch[3:]
		if string(ch[:3]) != "pre" || len(body)%w != 0 {
			t.Fatalf("chunk of %d bytes is not padded to %d", len(body), w)
		}
		end := w*(n+1) + int(span)
		if len(body)-end >= w || len(bytes.Trim(body[end:], "\x48")) != 0 {
			t.Fatalf("chunk padding % x", body[end:])
		}
		co, cd, err := DecodeVariableChunk(body, bits, n)
		if err != nil || !bytes.Equal(cd, vals) || len(co) != n+1 {
			t.Fatalf("chunk: %v", err)
		}
		for i := range offs {
			if co[i] != offs[i]-base {
				t.Fatalf("chunk offset %d = %d, want %d", i, co[i], offs[i]-base)
			}
		}
	})
}

// ---- mini-block chunk framing ----

// FuzzChunkRoundTrip writes a page of fuzzer-shaped chunks with AppendChunk
// and parses it back with ParseChunkMeta and ParseChunk.
func FuzzChunkRoundTrip(f *testing.F) {
	f.Add(uint8(0x0F), uint16(5), []byte{1, 2, 3}, []byte{4, 5}, []byte("values!"), []byte{3, 1})
	f.Add(uint8(0x08), uint16(0), []byte(nil), []byte(nil), []byte{}, []byte{})
	f.Add(uint8(0x1E), uint16(300), []byte("r"), []byte("dd"), bytes.Repeat([]byte{9}, 100), []byte{15, 15, 0x80})
	f.Fuzz(func(t *testing.T, flags uint8, nlev uint16, rep, def, vals, counts []byte) {
		l := ChunkLayout{HasRep: flags&1 != 0, HasDef: flags&2 != 0, Large: flags&4 != 0, NumBuffers: int(flags>>3) % 5}
		k := min(max(len(counts), 1), 8)
		var meta, data []byte
		var want []ChunkParts
		var nums []int
		total := 0
		for i := range k {
			c := ChunkParts{NumLevels: int(nlev)}
			if l.HasRep {
				c.Rep = rep[min(i, len(rep)):]
			}
			if l.HasDef {
				c.Def = def[min(i, len(def)):]
			}
			c.Values = make([][]byte, l.NumBuffers)
			for j := range c.Values {
				part := vals[j*len(vals)/l.NumBuffers : (j+1)*len(vals)/l.NumBuffers]
				c.Values[j] = part[min(i, len(part)):]
			}
			var cnt int
			if i < k-1 {
				c.LogNumValues = 1 + counts[i]%MaxChunkValuesLog2
				cnt = 1 << c.LogNumValues
			} else {
				cnt = 1 + int(nlev)%(1<<MaxChunkValuesLog2)
				if len(counts) > 0 && counts[k-1]&0x80 != 0 {
					c.LogNumValues = counts[k-1] % (MaxChunkValuesLog2 + 1)
					cnt = 1 << c.LogNumValues
				}
			}
			var err error
			meta, data, err = AppendChunk(meta, data, l, c)
			if errors.Is(err, ErrNotApplicable) {
				return
			}
			if err != nil {
				t.Fatalf("chunk %d: %v", i, err)
			}
			want = append(want, c)
			nums = append(nums, cnt)
			total += cnt
		}
		refs, err := ParseChunkMeta(meta, l.Large, len(data), uint64(total))
		if err != nil || len(refs) != k {
			t.Fatalf("ParseChunkMeta: %d refs, %v", len(refs), err)
		}
		off, first := 0, 0
		for i, r := range refs {
			if r.Offset != off || r.Size%8 != 0 || r.NumValues != nums[i] || r.FirstValue != first {
				t.Fatalf("chunk %d: ref %+v, want offset %d, %d values from %d", i, r, off, nums[i], first)
			}
			off += r.Size
			first += r.NumValues
			got, err := ParseChunk(data[r.Offset:r.Offset+r.Size], l)
			if err != nil {
				t.Fatalf("chunk %d: ParseChunk: %v", i, err)
			}
			fzEqualParts(t, i, got, want[i], l)
		}
	})
}

func fzEqualParts(t *testing.T, i int, got, want ChunkParts, l ChunkLayout) {
	t.Helper()
	if got.NumLevels != want.NumLevels || !bytes.Equal(got.Rep, want.Rep) || !bytes.Equal(got.Def, want.Def) ||
		(got.Rep != nil) != l.HasRep || (got.Def != nil) != l.HasDef || len(got.Values) != len(want.Values) {
		t.Fatalf("chunk %d: parsed levels %d rep %q def %q (%d buffers), want %d %q %q (%d)", i,
			got.NumLevels, got.Rep, got.Def, len(got.Values), want.NumLevels, want.Rep, want.Def, len(want.Values))
	}
	for j := range want.Values {
		if !bytes.Equal(got.Values[j], want.Values[j]) {
			t.Fatalf("chunk %d: value buffer %d = %q, want %q", i, j, got.Values[j], want.Values[j])
		}
	}
}

// FuzzParseChunkMeta checks ParseChunkMeta on arbitrary metadata: errors
// wrap ErrCorrupt, accepted chunks tile the data and hold the page's items,
// and re-encoding the chunk sizes and counts reproduces the metadata.
func FuzzParseChunkMeta(f *testing.F) {
	var meta, data []byte
	l := ChunkLayout{HasDef: true, NumBuffers: 1}
	meta, data, _ = AppendChunk(meta, data, l, ChunkParts{LogNumValues: 2, NumLevels: 4, Def: []byte{1, 2}, Values: [][]byte{make([]byte, 30)}})
	meta, data, _ = AppendChunk(meta, data, l, ChunkParts{NumLevels: 3, Def: []byte{1}, Values: [][]byte{make([]byte, 9)}})
	f.Add(meta, false, uint32(len(data)), uint32(7))
	lmeta := binary.LittleEndian.AppendUint32(nil, 3<<4|15)
	lmeta = binary.LittleEndian.AppendUint32(lmeta, 0<<4)
	f.Add(lmeta, true, uint32(40), uint32(1<<15+5))
	f.Add([]byte{}, false, uint32(0), uint32(0))
	f.Add([]byte{0x11, 0x00}, false, uint32(16), uint32(2))
	f.Fuzz(func(t *testing.T, meta []byte, large bool, dataLen, numItems uint32) {
		refs, err := ParseChunkMeta(meta, large, int(dataLen), uint64(numItems))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		w := 2
		if large {
			w = 4
		}
		if len(refs) != len(meta)/w {
			t.Fatalf("%d refs for %d metadata bytes", len(refs), len(meta))
		}
		off, first := 0, 0
		for i, r := range refs {
			if r.Offset != off || r.Size <= 0 || r.Size%8 != 0 || r.FirstValue != first ||
				r.NumValues < 0 || r.NumValues > 1<<MaxChunkValuesLog2 || (numItems > 0 && r.NumValues == 0) {
				t.Fatalf("chunk %d: bad ref %+v (offset %d, first %d)", i, r, off, first)
			}
			var word uint32
			if large {
				word = binary.LittleEndian.Uint32(meta[4*i:])
			} else {
				word = uint32(binary.LittleEndian.Uint16(meta[2*i:]))
			}
			lg := word & 0xF
			if int(word>>4) != r.Size/8-1 {
				t.Fatalf("chunk %d: size %d from word %#x", i, r.Size, word)
			}
			if i < len(refs)-1 || lg != 0 {
				if r.NumValues != 1<<lg {
					t.Fatalf("chunk %d: %d values from log %d", i, r.NumValues, lg)
				}
			}
			off += r.Size
			first += r.NumValues
		}
		if off != int(dataLen) || uint64(first) != uint64(numItems) {
			t.Fatalf("chunks cover %d of %d bytes and %d of %d items", off, dataLen, first, numItems)
		}
	})
}

// FuzzParseChunkStrict parses arbitrary chunk bytes under a fuzzer layout:
// errors wrap ErrCorrupt, and an accepted chunk re-encodes (AppendChunk) to
// a chunk that parses to the same parts.
func FuzzParseChunkStrict(f *testing.F) {
	l := ChunkLayout{HasRep: true, HasDef: true, NumBuffers: 2, Large: true}
	_, data, _ := AppendChunk(nil, nil, l, ChunkParts{NumLevels: 3, Rep: []byte{1}, Def: []byte{2, 3}, Values: [][]byte{[]byte("abc"), make([]byte, 9)}})
	f.Add(data, uint8(0x17))
	l = ChunkLayout{HasDef: true, NumBuffers: 1}
	_, data, _ = AppendChunk(nil, nil, l, ChunkParts{NumLevels: 1, Def: []byte{2}, Values: [][]byte{[]byte("xy")}})
	f.Add(data, uint8(0x0A))
	f.Add([]byte{}, uint8(0xFF))
	f.Fuzz(func(t *testing.T, chunk []byte, flags uint8) {
		l := ChunkLayout{HasRep: flags&1 != 0, HasDef: flags&2 != 0, Large: flags&4 != 0, NumBuffers: int(flags>>3)*3 - 3}
		got, err := ParseChunk(chunk, l)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		if len(got.Values) != l.NumBuffers {
			t.Fatalf("%d value buffers, layout says %d", len(got.Values), l.NumBuffers)
		}
		_, re, err := AppendChunk(nil, nil, l, got)
		if errors.Is(err, ErrNotApplicable) {
			return
		}
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if len(re)%8 != 0 || len(re) > len(chunk)+8 {
			t.Fatalf("re-encoded chunk of %d bytes from %d", len(re), len(chunk))
		}
		again, err := ParseChunk(re, l)
		if err != nil {
			t.Fatalf("re-encoded chunk rejected: %v", err)
		}
		fzEqualParts(t, 0, again, got, l)
	})
}

// ---- zipped pages ----

// FuzzZippedRoundTrip writes fuzzer levels and values as fixed-width and
// variable-width zipped pages and parses them back, including the
// repetition index.
func FuzzZippedRoundTrip(f *testing.F) {
	f.Add(uint8(1), uint8(2), uint8(0), uint8(1), []byte{1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 3, 0, 0, 0, 0, 0}, []byte("abcdefgh"), uint8(2), false)
	f.Add(uint8(0), uint8(0), uint8(0), uint8(0), bytes.Repeat([]byte{0}, 12), []byte("xyz"), uint8(3), true)
	f.Add(uint8(4), uint8(9), uint8(9), uint8(3), []byte{0x09, 0, 0, 0, 0x09, 0, 12, 0, 0, 0, 3, 0}, []byte{0xAA, 0xBB, 0xCC}, uint8(1), false)
	f.Add(uint8(16), uint8(16), uint8(200), uint8(255), []byte{0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4}, []byte{}, uint8(8), true)
	f.Fuzz(func(t *testing.T, br, bd, maxRep, maxVis uint8, levels, vals []byte, width uint8, wide bool) {
		l := ZipLevels{BitsRep: int(br % 17), BitsDef: int(bd % 17), MaxVisibleDef: int(maxVis)}
		if l.BitsRep > 0 {
			l.MaxRep = 1 + int(maxRep)%(1<<l.BitsRep-1)
		}
		n := min(len(levels)/4, 4096)
		var rep, def []uint16
		if l.BitsRep > 0 {
			rep = make([]uint16, n)
		}
		if l.BitsDef > 0 {
			def = make([]uint16, n)
		}
		rows, visible := 0, 0
		var starts []int // entry index of every row start
		for i := range n {
			r := binary.LittleEndian.Uint16(levels[4*i:])
			d := binary.LittleEndian.Uint16(levels[4*i+2:])
			if rep != nil {
				r = uint16(int(r) % (l.MaxRep + 1))
				if i == 0 {
					r = uint16(l.MaxRep)
				}
				rep[i] = r
			}
			if def != nil {
				d &= uint16(1<<l.BitsDef - 1)
				def[i] = d
			} else {
				d = 0
			}
			if rep == nil || int(r) == l.MaxRep {
				rows++
				starts = append(starts, i)
			}
			if rep == nil || int(d) <= l.MaxVisibleDef {
				visible++
			}
		}
		count := 0
		if rep == nil && def == nil {
			count = n
		}
		cw := l.WordBytes()

		// Fixed width.
		wd := 1 + int(width%16)
		fv := make([]byte, visible*wd)
		for i := range fv {
			if len(vals) > 0 {
				fv[i] = vals[i%len(vals)]
			}
		}
		data, idx, err := AppendZippedFixed([]byte("pre"), l, rep, def, fv, wd, count)
		if err != nil || string(data[:3]) != "pre" {
			t.Fatalf("AppendZippedFixed: %v", err)
		}
		data = data[3:]
		if cw == 0 && LegacyPhantomControlWords(len(data), n, wd) {
			t.Fatal("genuine page without control words looks like a legacy phantom page")
		}
		z, err := ParseZippedFixed(data, l, n, visible, wd)
		if err != nil {
			t.Fatalf("ParseZippedFixed: %v", err)
		}
		if !slices.Equal(z.Rep, rep) || !slices.Equal(z.Def, def) || (z.Rep == nil) != (rep == nil) || (z.Def == nil) != (def == nil) ||
			!bytes.Equal(z.Values, fv) || z.NumRows != rows {
			t.Fatalf("fixed page parsed to %d rows, rep %v def %v, want %d rows", z.NumRows, z.Rep, z.Def, rows)
		}
		if l.BitsRep > 0 && len(data) > 0 {
			x, err := ParseZipRepIndex(idx, rows, len(data))
			if err != nil {
				t.Fatalf("fixed repetition index: %v", err)
			}
			pos, r := 0, 0
			for i := range n {
				if r < rows && starts[r] == i {
					if x.Offset(r) != uint64(pos) {
						t.Fatalf("row %d starts at %d, index says %d", r, pos, x.Offset(r))
					}
					r++
				}
				pos += cw
				if int(fzDef(def, i)) <= l.MaxVisibleDef {
					pos += wd
				}
			}
			if x.Offset(rows) != uint64(len(data)) {
				t.Fatalf("index ends at %d of %d bytes", x.Offset(rows), len(data))
			}
		} else if idx != nil {
			t.Fatalf("repetition index of %d bytes without repetition", len(idx))
		}

		// Variable width.
		offBits := 32
		if wide {
			offBits = 64
		}
		offs := make([]uint64, visible+1)
		wantOffs := []uint64{0}
		var wantData []byte
		v := 0
		for i := range n {
			d := fzDef(def, i)
			if rep != nil && int(d) > l.MaxVisibleDef {
				continue
			}
			ln := 0
			if len(vals) > 0 {
				ln = int(vals[v%len(vals)] % 7)
			}
			offs[v+1] = offs[v] + uint64(ln)
			if d == 0 {
				for j := range ln {
					wantData = append(wantData, fzZipByte(vals, int(offs[v])+j))
				}
			}
			wantOffs = append(wantOffs, uint64(len(wantData)))
			v++
		}
		vb := make([]byte, offs[visible])
		for i := range vb {
			vb[i] = fzZipByte(vals, i)
		}
		vdata, vidx, err := AppendZippedVariable(nil, l, rep, def, offs, vb, offBits)
		if err != nil {
			t.Fatalf("AppendZippedVariable: %v", err)
		}
		z, err = ParseZippedVariable(vdata, vidx, l, n, visible, rows, offBits)
		if err != nil {
			t.Fatalf("ParseZippedVariable: %v", err)
		}
		if !slices.Equal(z.Rep, rep) || !slices.Equal(z.Def, def) || z.NumRows != rows ||
			!slices.Equal(z.Offsets, wantOffs) || !bytes.Equal(z.VarData, wantData) {
			t.Fatalf("variable page parsed to offsets %v data %q, want %v %q", z.Offsets, z.VarData, wantOffs, wantData)
		}
	})
}

func fzDef(def []uint16, i int) uint16 {
	if def == nil {
		return 0
	}
	return def[i]
}

func fzZipByte(vals []byte, i int) byte {
	if len(vals) == 0 {
		return byte(i)
	}
	return vals[i%len(vals)] ^ byte(i)
}

// FuzzParseZipRepIndex checks ParseZipRepIndex on arbitrary bytes: errors
// wrap ErrCorrupt, and an accepted index has a legal width, non-decreasing
// entries within the data, and re-serializes to the same bytes.
func FuzzParseZipRepIndex(f *testing.F) {
	f.Add([]byte{0, 12, 13, 14, 15, 22}, uint16(5), uint32(22))
	f.Add([]byte{0, 0, 30, 0, 40, 0}, uint16(2), uint32(40))
	f.Add([]byte{}, uint16(0), uint32(0))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, uint16(1), uint32(9))
	f.Fuzz(func(t *testing.T, index []byte, rows uint16, dataLen uint32) {
		x, err := ParseZipRepIndex(index, int(rows), int(dataLen))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		w := x.Width()
		if x.NumRows() != int(rows) || (w != 0 && w != 1 && w != 2 && w != 4 && w != 8) || (w == 0) != (len(index) == 0) {
			t.Fatalf("index of width %d for %d rows", w, x.NumRows())
		}
		var re []byte
		for r := 0; w > 0 && r <= int(rows); r++ {
			o := x.Offset(r)
			if o > uint64(dataLen) || (r > 0 && o < x.Offset(r-1)) {
				t.Fatalf("entry %d = %d", r, o)
			}
			re = fzPut(re, 8*w, o)
		}
		if !bytes.Equal(re, index) {
			t.Fatalf("index re-serializes to % x, was % x", re, index)
		}
	})
}

// ---- arbitrary encoding trees ----

// fzTreeSize bounds the values an arbitrary tree can expand n values to
// (fixed-size-list dimensions multiply, constants repeat their value), so
// that legitimately huge decodes are skipped rather than run.
func fzTreeSize(e *enc21pb.CompressiveEncoding, depth int) int {
	if depth > 16 {
		return 1
	}
	sub := func(es ...*enc21pb.CompressiveEncoding) int {
		m := 8
		for _, x := range es {
			m = max(m, fzTreeSize(x, depth+1))
		}
		return m
	}
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		return int(min(c.FixedSizeList.ItemsPerValue, 1<<21)) * sub(c.FixedSizeList.Values)
	case *enc21pb.CompressiveEncoding_Constant:
		return max(8, len(c.Constant.Value))
	case *enc21pb.CompressiveEncoding_General:
		return sub(c.General.Values)
	case *enc21pb.CompressiveEncoding_Rle:
		return sub(c.Rle.Values, c.Rle.RunLengths)
	case *enc21pb.CompressiveEncoding_Fsst:
		return sub(c.Fsst.Values)
	case *enc21pb.CompressiveEncoding_Variable:
		return sub(c.Variable.Offsets)
	case *enc21pb.CompressiveEncoding_Delta:
		return sub(c.Delta.Deltas)
	case *enc21pb.CompressiveEncoding_Flat:
		return max(8, int(min(c.Flat.BitsPerValue, 1<<20)/8))
	}
	return 8
}

// FuzzDecodeProtoTree unmarshals fuzzer bytes as a CompressiveEncoding (any
// tree a file could carry) and runs every descriptor consumer on it:
// EncodingName, ParsePackedStruct, ParseVariablePackedStruct, DecodeMiniBlock
// and DecodeBlock over fuzzer buffers. Nothing may panic, errors must be
// classified and successful decodes structurally sound.
func FuzzDecodeProtoTree(f *testing.F) {
	add := func(e *enc21pb.CompressiveEncoding, n int, bufs [][]byte) {
		pb, err := proto.Marshal(e)
		if err != nil {
			f.Fatal(err)
		}
		b := append(slices.Clone(bufs), nil, nil, nil)
		f.Add(pb, uint16(n), uint8(len(bufs)), b[0], b[1], b[2])
	}
	for _, tr := range append(fzTrees(fzMiniCases()), fzTrees(fzBlockCases())...) {
		if len(tr.seed) <= 3 {
			add(tr.e, tr.n, tr.seed)
		}
	}
	add(PackedStructEncoding([]int{32, 8, 64}), 2, [][]byte{make([]byte, 26)})
	add(VariablePackedStructEncoding([]VarPackedFieldEncoding{
		{PackedLayout: PackedLayout{Bits: 32}},
		{PackedLayout: PackedLayout{Variable: true, Bits: 32}},
	}), 2, [][]byte{{1, 0, 0, 0, 1, 0, 0, 0, 'a'}})
	f.Fuzz(func(t *testing.T, pb []byte, n uint16, nbuf uint8, b0, b1, b2 []byte) {
		e := &enc21pb.CompressiveEncoding{}
		if err := proto.Unmarshal(pb, e); err != nil {
			return
		}
		_ = EncodingName(e)
		if bits, err := ParsePackedStruct(e); err != nil {
			fzCheckErr(t, "ParsePackedStruct", err)
		} else if again, err := ParsePackedStruct(PackedStructEncoding(bits)); err != nil || !slices.Equal(again, bits) {
			t.Fatalf("packed struct widths %v do not survive PackedStructEncoding: %v %v", bits, again, err)
		}
		if fields, err := ParseVariablePackedStruct(e); err != nil {
			fzCheckErr(t, "ParseVariablePackedStruct", err)
		} else if len(VarPackedLayouts(fields)) != len(fields) {
			t.Fatal("VarPackedLayouts lost fields")
		}
		if int(n)*fzTreeSize(e, 0) > 1<<26 {
			return
		}
		bufs := [][]byte{b0, b1, b2}[:nbuf%4]
		orig := fzCloneAll(bufs)
		name := EncodingName(e)
		if got, err := DecodeMiniBlock(e, bufs, int(n)); err != nil {
			fzCheckErr(t, name, err)
		} else {
			fzCheckBlock(t, name, got, int(n), -1)
		}
		if got, err := DecodeBlock(e, b0, int(n)); err != nil {
			fzCheckErr(t, name, err)
		} else {
			fzCheckBlock(t, name, got, int(n), -1)
		}
		fzUnchanged(t, name, bufs, orig)
	})
}
