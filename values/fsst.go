package values

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/planarlance/planar/proto/enc21pb"
)

// FSST (Fast Static Symbol Table) string compression.
//
// Serialized symbol table, always FsstTableSize bytes:
//
//	byte 0        number of symbols n (0..255)
//	byte 1        terminator (ignored)
//	byte 2        suffix limit (ignored)
//	byte 3        1 = strings are FSST coded, 0 = strings are stored verbatim
//	bytes 4..8    magic 54 53 53 46
//	8 .. 8+8n     symbol i as u64 LE (its bytes in the low len_i bytes, rest 0)
//	8+8n .. 8+9n  len_i (1..8), one byte per symbol
//	rest          zero
//
// A compressed string is a sequence of codes: a code c != 0xFF emits the first
// len_c bytes of symbol c; the escape code 0xFF emits the next byte literally.

const (
	// FsstTableSize is the size of a serialized FSST symbol table.
	FsstTableSize = 8 + 8*256 + 256
	// fsstEscape is the escape code.
	fsstEscape = 0xFF
	// fsstMaxSymbols is the largest symbol count (code 255 is the escape).
	fsstMaxSymbols = 255
)

var fsstMagic = [4]byte{0x54, 0x53, 0x53, 0x46}

// FsstTable is a parsed (or built) FSST symbol table.
type FsstTable struct {
	n      int
	coded  bool // switch byte: 1 = FSST coded, 0 = verbatim
	term   byte
	suffix byte
	sym    [256]uint64 // symbol bytes, little-endian, zero beyond len
	lens   [256]uint8

	// Encoder index: the one-byte symbol of each byte (-1: none), the
	// best symbol of at most two bytes for each two-byte prefix (code |
	// length<<8: the two-byte symbol, else the first byte's, else
	// fsstEscape with length 1), and the longer
	// symbols in buckets of a hash of their first three bytes, longest
	// first (first3[h]..first3[h+1] indexes long3), so that a position
	// looks at one or two candidates.
	single [256]int16
	short  []uint16 // 1<<16 entries; nil until the index is built
	first3 [fsstBuckets + 1]uint16
	long3  [256]fsstEntry
	// head[h] is bucket h's first (longest) entry, looked up straight
	// from the hash: most positions need no other. An empty bucket's head
	// matches no word (mask 0, sym 1); a head with more set has more
	// entries after it in long3.
	head [fsstBuckets]fsstEntry
	// A crowded bucket (more than fsstScanMax symbols: URL tables put
	// most of their symbols under a few prefixes such as "em-" and
	// "ite") is not scanned: it holds one stand-in entry that matches any
	// word (length 0, code fsstEscape, which no symbol has), lenBits[h]
	// has bit l-3 set for each length l of its symbols, and each of those
	// lengths is looked up, longest first, in exact (keyed by the
	// symbol's bytes and length). The scan loop stays as it is for the
	// other buckets.
	lenBits [fsstBuckets]uint8
	exact   []fsstEntry // fsstExactSlots entries, code 0 and len 0 when empty
}

// NumSymbols returns the number of symbols in the table.
func (t *FsstTable) NumSymbols() int { return t.n }

// Coded reports whether strings under this table are FSST coded (switch byte
// 1) rather than verbatim.
func (t *FsstTable) Coded() bool { return t.coded }

// Symbol returns the bytes of symbol c (appended to dst).
func (t *FsstTable) Symbol(dst []byte, c int) []byte {
	if c < 0 || c >= t.n {
		return dst
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], t.sym[c])
	return append(dst, b[:t.lens[c]]...)
}

// ParseFsstTable parses a serialized FSST symbol table.
func ParseFsstTable(b []byte) (*FsstTable, error) {
	if len(b) != FsstTableSize {
		return nil, fmt.Errorf("values: fsst symbol table of %d bytes, want %d: %w", len(b), FsstTableSize, ErrCorrupt)
	}
	if [4]byte(b[4:8]) != fsstMagic {
		return nil, fmt.Errorf("values: fsst symbol table magic % x, want % x: %w", b[4:8], fsstMagic[:], ErrCorrupt)
	}
	t := &FsstTable{n: int(b[0]), term: b[1], suffix: b[2]}
	switch b[3] {
	case 0:
	case 1:
		t.coded = true
	default:
		return nil, fmt.Errorf("values: fsst symbol table switch byte %d: %w", b[3], ErrCorrupt)
	}
	if t.n > fsstMaxSymbols {
		return nil, fmt.Errorf("values: fsst symbol table with %d symbols (max %d): %w", t.n, fsstMaxSymbols, ErrCorrupt)
	}
	lens := b[8+8*t.n : 8+9*t.n]
	for i := range t.n {
		l := lens[i]
		if l < 1 || l > 8 {
			return nil, fmt.Errorf("values: fsst symbol %d has length %d: %w", i, l, ErrCorrupt)
		}
		v := binary.LittleEndian.Uint64(b[8+8*i:])
		if l < 8 {
			v &= 1<<(8*uint(l)) - 1
		}
		t.sym[i] = v
		t.lens[i] = l
	}
	return t, nil // the encoder index is built on first use
}

// AppendBytes appends the FsstTableSize-byte serialized form of t to dst.
func (t *FsstTable) AppendBytes(dst []byte) []byte {
	start := len(dst)
	dst = slices.Grow(dst, FsstTableSize)
	dst = dst[:start+FsstTableSize]
	out := dst[start:]
	clear(out)
	out[0] = byte(t.n)
	out[1] = t.term
	out[2] = t.suffix
	if t.coded {
		out[3] = 1
	}
	copy(out[4:8], fsstMagic[:])
	for i := range t.n {
		binary.LittleEndian.PutUint64(out[8+8*i:], t.sym[i])
		out[8+8*t.n+i] = t.lens[i]
	}
	return dst
}

// AppendDecoded appends the decoding of one compressed string src to dst.
func (t *FsstTable) AppendDecoded(dst, src []byte) ([]byte, error) {
	if !t.coded {
		return append(dst, src...), nil
	}
	// Every code emits at most 8 bytes; start with a guess of 3x and write
	// whole 8-byte symbols, growing when fewer than 8 bytes of room remain.
	return t.appendDecodedIn(slices.Grow(dst, 3*len(src)+8), src)
}

// decodedLen is the decoded size of a run of codes (the input size for a
// verbatim table); codes outside the table count nothing (decoding them
// fails).
func (t *FsstTable) decodedLen(codes []byte) int {
	if !t.coded {
		return len(codes)
	}
	lens := &t.lens
	n, i := 0, 0
	// Eight codes at a time while none is an escape (a zero byte of the
	// word's complement).
	for i+8 <= len(codes) {
		w := binary.LittleEndian.Uint64(codes[i:])
		if x := ^w; (x-0x0101010101010101)&^x&0x8080808080808080 != 0 {
			for end := i + 8; i < end; i++ {
				if c := codes[i]; c == fsstEscape {
					i++
					n++
				} else {
					n += int(lens[c])
				}
			}
			continue
		}
		n += int(lens[byte(w)]) + int(lens[byte(w>>8)]) + int(lens[byte(w>>16)]) + int(lens[byte(w>>24)]) +
			int(lens[byte(w>>32)]) + int(lens[byte(w>>40)]) + int(lens[byte(w>>48)]) + int(lens[byte(w>>56)])
		i += 8
	}
	for ; i < len(codes); i++ {
		if c := codes[i]; c == fsstEscape {
			i++
			n++
		} else {
			n += int(lens[c])
		}
	}
	return n
}

// appendDecodedIn is AppendDecoded into dst's capacity as it is, grown only
// when fewer than 8 bytes of room remain (DecodeBlock sizes it exactly).
func (t *FsstTable) appendDecodedIn(dst, src []byte) ([]byte, error) {
	start := len(dst)
	out := dst[:cap(dst)]
	pos := start
	n := t.n
	for i := 0; i < len(src); i++ {
		if len(out)-pos < 8 {
			out = slices.Grow(out[:pos], 8+2*(len(src)-i))
			out = out[:cap(out)]
		}
		c := src[i]
		if c == fsstEscape {
			i++
			if i >= len(src) {
				return dst[:start], fmt.Errorf("values: fsst string of %d bytes ends with an escape: %w", len(src), ErrCorrupt)
			}
			out[pos] = src[i]
			pos++
			continue
		}
		if int(c) >= n {
			return dst[:start], fmt.Errorf("values: fsst code %d at byte %d but the table has %d symbols: %w", c, i, n, ErrCorrupt)
		}
		binary.LittleEndian.PutUint64(out[pos:], t.sym[c])
		pos += int(t.lens[c])
	}
	return out[:pos], nil
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

// FsstCoded returns, for a chunk encoding whose values are FSST-coded
// (Fsst, or General over Fsst as in windows of coded strings), the FSST
// node and the encoding that decodes a chunk to its values still coded:
// the Fsst node's child, under the same General when there is one. A
// reader keeps values coded this way and expands only those it returns.
// It returns nil, nil for other encodings.
func FsstCoded(enc *enc21pb.CompressiveEncoding) (*enc21pb.Fsst, *enc21pb.CompressiveEncoding) {
	if fs := enc.GetFsst(); fs != nil {
		return fs, fs.GetValues()
	}
	g := enc.GetGeneral()
	fs := g.GetValues().GetFsst()
	if fs == nil {
		return nil, nil
	}
	return fs, &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_General{General: &enc21pb.General{
		Compression: g.GetCompression(), Values: fs.GetValues()}}}
}

// FsstDecodeBlock expands every FSST-coded value of a variable block.
func FsstDecodeBlock(table []byte, in Block) (Block, error) {
	if !in.Variable() {
		return Block{}, fmt.Errorf("fsst over a fixed-width block: %w", ErrCorrupt)
	}
	t, err := parsedFsstTable(table)
	if err != nil {
		return Block{}, err
	}
	return t.DecodeBlock(in)
}

// parsedFsstTable is ParseFsstTable through fsstTables. The tables it
// returns are shared and only decode (they never build an encoder index).
func parsedFsstTable(table []byte) (*FsstTable, error) {
	c := &fsstTables
	c.Lock()
	for i, r := range c.raw {
		if r != nil && bytes.Equal(r, table) {
			t := c.tab[i]
			c.Unlock()
			return t, nil
		}
	}
	c.Unlock()
	t, err := ParseFsstTable(table)
	if err != nil {
		return nil, err
	}
	c.Lock()
	c.raw[c.next], c.tab[c.next] = bytes.Clone(table), t
	c.next = (c.next + 1) % len(c.raw)
	c.Unlock()
	return t, nil
}

// DecodedLen returns the bytes the values of FSST-coded block in expand to.
func (t *FsstTable) DecodedLen(in Block) int {
	if in.N == 0 || len(in.Offsets) <= in.N || in.Offsets[0] > in.Offsets[in.N] || in.Offsets[in.N] > uint64(len(in.Data)) {
		return 0
	}
	return t.decodedLen(in.Data[in.Offsets[0]:in.Offsets[in.N]])
}

// DecodeBlockInto is DecodeBlock writing the values into buf, which must
// hold DecodedLen(in) bytes and 8 more (whole 8-byte words are written; the
// 8 bytes past the values are left overwritten): the result's Data is
// buf's start. Several blocks decoded in order into one buffer, each after
// the last one's values, lie back to back.
func (t *FsstTable) DecodeBlockInto(buf []byte, in Block) (Block, error) {
	if err := checkCodes(in); err != nil {
		return Block{}, err
	}
	if in.N == 0 {
		return Block{Offsets: []uint64{0}}, nil
	}
	if need := t.decodedLen(in.Data[in.Offsets[0]:in.Offsets[in.N]]) + 8; len(buf) < need {
		return Block{}, fmt.Errorf("fsst values need %d bytes, buffer holds %d: %w", need, len(buf), ErrCorrupt)
	}
	if !t.coded {
		return verbatim(buf, in), nil
	}
	return t.decodeInto(buf, in)
}

// checkCodes checks that a block of FSST codes is variable width with
// every value's range inside its data.
func checkCodes(in Block) error {
	if !in.Variable() || len(in.Offsets) <= in.N {
		return fmt.Errorf("fsst over a block that is not variable width: %w", ErrCorrupt)
	}
	for i := 0; i < in.N; i++ {
		if a, b := in.Offsets[i], in.Offsets[i+1]; a > b || b > uint64(len(in.Data)) {
			return fmt.Errorf("fsst value %d range [%d, %d): %w", i, a, b, ErrCorrupt)
		}
	}
	return nil
}

// verbatim lays the values of in, stored verbatim, into buf (large enough)
// from its start.
func verbatim(buf []byte, in Block) Block {
	out := Block{N: in.N, Offsets: make([]uint64, 1, in.N+1)}
	out.Data = buf[:copy(buf, in.Data[in.Offsets[0]:in.Offsets[in.N]])]
	for i := 1; i <= in.N; i++ {
		out.Offsets = append(out.Offsets, in.Offsets[i]-in.Offsets[0])
	}
	return out
}

// FsstExpandInto expands the FSST codes of in into buf, which must hold
// exactly their decoded size (DecodedLen), and writes the start of value v,
// plus base, to offs[v] as an Arrow offset (the end of the last value is
// left to the caller). Nothing is written past buf or past offs[in.N-1]:
// blocks expand side by side into neighbouring parts of one output.
// Corrupt codes, or values that do not fill buf exactly, are ErrCorrupt.
func FsstExpandInto[T int32 | int64](t *FsstTable, buf []byte, in Block, offs []T, base int) error {
	if err := checkCodes(in); err != nil {
		return err
	}
	if len(offs) < in.N {
		return fmt.Errorf("values: %d offsets for %d values: %w", len(offs), in.N, ErrCorrupt)
	}
	if !t.coded {
		n := int(in.Offsets[in.N] - in.Offsets[0])
		if n != len(buf) {
			return fmt.Errorf("fsst values of %d bytes for a %d-byte buffer: %w", n, len(buf), ErrCorrupt)
		}
		copy(buf, in.Data[in.Offsets[0]:in.Offsets[in.N]])
		for v := range in.N {
			offs[v] = T(int(in.Offsets[v]-in.Offsets[0]) + base)
		}
		return nil
	}
	n, err := expandTo(t, buf, in, offs, base)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("values: fsst values expand to %d bytes, sized %d: %w", n, len(buf), ErrCorrupt)
	}
	return err
}

// expandTo is the loop of FsstExpandInto: it writes each value's start
// plus base to offs[v] and returns the bytes written. A symbol is written as
// a whole 8-byte word while 8 bytes of buf remain, byte by byte at buf's
// end, and values that overrun buf are ErrCorrupt. (decodeInto keeps its
// own loop: the room test per code costs it 6-10% on URLs, 1.2 against 1.1
// GB/s.)
func expandTo[T int32 | int64](t *FsstTable, buf []byte, in Block, offs []T, base int) (int, error) {
	pos, i := 0, int(in.Offsets[0])
	data, n, room := in.Data, t.n, len(buf)
	offs = offs[:in.N]
	for v := 0; v < in.N; v++ {
		end := int(in.Offsets[v+1])
		offs[v] = T(pos + base)
		for i < end {
			c := data[i]
			// A symbol with a word of room: one test (the escape code,
			// 255, is never below n).
			if int(c) < n && pos+8 <= room {
				binary.LittleEndian.PutUint64(buf[pos:], t.sym[c])
				pos += int(t.lens[c])
				i++
				continue
			}
			if c == fsstEscape {
				if i+1 >= end || pos >= room {
					return pos, fmt.Errorf("values: fsst value %d ends with an escape or overruns its %d bytes: %w", v, room, ErrCorrupt)
				}
				buf[pos] = data[i+1]
				pos++
				i += 2
				continue
			}
			if int(c) >= n {
				return pos, fmt.Errorf("values: fsst code %d in value %d but the table has %d symbols: %w", c, v, n, ErrCorrupt)
			}
			l := int(t.lens[c])
			if pos+8 <= room {
				binary.LittleEndian.PutUint64(buf[pos:], t.sym[c])
			} else {
				if pos+l > room {
					return pos, fmt.Errorf("values: fsst value %d overruns its %d bytes: %w", v, room, ErrCorrupt)
				}
				for k := range l {
					buf[pos+k] = byte(t.sym[c] >> (8 * k))
				}
			}
			pos += l
			i++
		}
	}
	return pos, nil
}

// decodeInto expands the checked, non-empty coded block in into buf (sized
// for its values and 8 bytes of slack).
func (t *FsstTable) decodeInto(buf []byte, in Block) (Block, error) {
	out := Block{N: in.N, Offsets: make([]uint64, 1, in.N+1)}
	pos, i := 0, int(in.Offsets[0])
	data, n := in.Data, t.n
	for v := 0; v < in.N; v++ {
		end := int(in.Offsets[v+1])
		for i < end {
			c := data[i]
			if c == fsstEscape {
				if i+1 >= end {
					return Block{}, fmt.Errorf("values: fsst value %d ends with an escape: %w", v, ErrCorrupt)
				}
				buf[pos] = data[i+1]
				pos++
				i += 2
				continue
			}
			if int(c) >= n {
				return Block{}, fmt.Errorf("values: fsst code %d in value %d but the table has %d symbols: %w", c, v, n, ErrCorrupt)
			}
			binary.LittleEndian.PutUint64(buf[pos:], t.sym[c])
			pos += int(t.lens[c])
			i++
		}
		out.Offsets = append(out.Offsets, uint64(pos))
	}
	out.Data = buf[:pos]
	return out, nil
}

// DecodeBlock decodes every value of a variable-width block of FSST codes
// with the table (parsed once by the caller, for many blocks).
func (t *FsstTable) DecodeBlock(in Block) (Block, error) {
	if err := checkCodes(in); err != nil {
		return Block{}, err
	}
	out := Block{N: in.N, Offsets: make([]uint64, 1, in.N+1)}
	if in.N == 0 {
		return out, nil
	}
	codes := in.Data[in.Offsets[0]:in.Offsets[in.N]]
	if !t.coded {
		return verbatim(make([]byte, len(codes)), in), nil
	}
	// One pass over the chunk's codes, values back to back: every symbol
	// is written as a whole 8-byte word into a buffer sized exactly (plus
	// 8 bytes of slack), and each value's end is noted as its codes end.
	return t.decodeInto(make([]byte, t.decodedLen(codes)+8), in)
}

// fsstTables remembers the last few symbol tables parsed for decoding: a
// page's chunks all carry the same table, parsed once instead of per chunk.
// Entries hold a copy of the table bytes and match by content.
var fsstTables struct {
	sync.Mutex
	raw  [4][]byte
	tab  [4]*FsstTable
	next int
}
