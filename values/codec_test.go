package values

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/planarlance/planar/stats"
)

func fixedBlock(bits int, vals ...uint64) Block {
	b := Block{Bits: bits, N: len(vals)}
	var w [8]byte
	for _, v := range vals {
		binary.LittleEndian.PutUint64(w[:], v)
		b.Data = append(b.Data, w[:bits/8]...)
	}
	return b
}

func varBlock(vals ...string) Block {
	b := Block{N: len(vals), Offsets: []uint64{0}}
	for _, v := range vals {
		b.Data = append(b.Data, v...)
		b.Offsets = append(b.Offsets, uint64(len(b.Data)))
	}
	return b
}

func seq(bits, n int, f func(i int) uint64) Block {
	vals := make([]uint64, n)
	for i := range vals {
		vals[i] = f(i)
	}
	return fixedBlock(bits, vals...)
}

func blocksEqual(t *testing.T, what string, got, want Block) {
	t.Helper()
	if got.N != want.N || got.Bits != want.Bits {
		t.Fatalf("%s: decoded %d values of %d bits, want %d of %d", what, got.N, got.Bits, want.N, want.Bits)
	}
	if want.Variable() {
		for i := 0; i < want.N; i++ {
			g := got.Data[got.Offsets[i]:got.Offsets[i+1]]
			w := want.Data[want.Offsets[i]:want.Offsets[i+1]]
			if !bytes.Equal(g, w) {
				t.Fatalf("%s: value %d = %q, want %q", what, i, g, w)
			}
		}
		return
	}
	n := fixedLen(want.Bits, want.N)
	if !bytes.Equal(got.Data[:n], want.Data[:n]) {
		t.Fatalf("%s: decoded bytes differ", what)
	}
}

type codecCase struct {
	name  string
	codec Codec
	data  Block
}

func codecCases() []codecCase {
	rng := rand.New(rand.NewPCG(1, 2))
	small := seq(32, 1000, func(int) uint64 { return rng.Uint64N(100) })
	runs := seq(16, 3000, func(i int) uint64 { return uint64(i / 300) })
	sorted := seq(64, 2500, func(i int) uint64 { return uint64(i*7 + rng.IntN(3)) })
	floats := seq(64, 700, func(int) uint64 { return rng.Uint64() })
	strs := varBlock("alpha", "", "beta", "gamma-delta", "alpha", "z")
	fixedLenStrs := varBlock("aaaa", "bbbb", "cccc", "dddd")
	urls := Block{N: 0, Offsets: []uint64{0}}
	for i := 0; i < 500; i++ {
		urls.Data = append(urls.Data, "https://example.com/items/"...)
		urls.Data = binary.AppendUvarint(urls.Data, uint64(rng.IntN(1000)))
		urls.Offsets = append(urls.Offsets, uint64(len(urls.Data)))
		urls.N++
	}
	table := BuildFsstTable([][]byte{urls.Data})
	fsl := seq(32, 40, func(int) uint64 { return rng.Uint64N(1 << 20) })
	fsl.Bits, fsl.N = 32*4, 10
	fslValid := fsl
	fslValid.ItemValid = [][]byte{{0xFF, 0xF7, 0xFF, 0xFF, 0x0F}}
	delta, _ := newDelta(sorted)
	return []codecCase{
		{"flat32", FlatCodec{Bits: 32}, small},
		{"flat1", FlatCodec{Bits: 1}, Block{Bits: 1, N: 13, Data: []byte{0xA5, 0x13}}},
		{"bitpack32", BitpackCodec{Bits: 32}, small},
		{"bitpack16", BitpackCodec{Bits: 16}, seq(16, 1024, func(i int) uint64 { return uint64(i % 7) })},
		{"bitpack8", BitpackCodec{Bits: 8}, seq(8, 5, func(i int) uint64 { return uint64(i) })},
		{"bitpack64", BitpackCodec{Bits: 64}, seq(64, 1000, func(i int) uint64 { return uint64(i) << 20 })},
		{"ool16", OutOfLineCodec{Bits: 16, Width: 2}, seq(16, 2100, func(i int) uint64 { return uint64(i % 4) })},
		{"rle16", RleCodec{Bits: 16}, runs},
		{"rle64", RleCodec{Bits: 64}, seq(64, 600, func(i int) uint64 { return uint64(i / 100) })},
		{"rle16-u16", RleCodec{Bits: 16, LenBits: 16}, runs},
		{"rle32-packed-values", RleCodec{Bits: 32, ValueWidth: 5}, seq(32, 2000, func(i int) uint64 { return uint64(i/7) % 32 })},
		{"rle32-packed-lengths", RleCodec{Bits: 32, LenWidth: 3}, seq(32, 2000, func(i int) uint64 { return uint64(i/5) * 977 })},
		{"bss64", BssCodec{Bits: 64}, floats},
		{"general-zstd-bss", GeneralCodec{Scheme: SchemeZstd, Inner: BssCodec{Bits: 64}}, floats},
		{"general-lz4-flat", GeneralCodec{Scheme: SchemeLZ4, Inner: FlatCodec{Bits: 16}}, runs},
		{"general-zstd-bitpack", GeneralCodec{Scheme: SchemeZstd, Level: 3, Inner: BitpackCodec{Bits: 32}}, small},
		{"general-lz4-rle", GeneralCodec{Scheme: SchemeLZ4, Inner: RleCodec{Bits: 16}}, runs},
		{"variable32", VariableCodec{OffBits: 32}, strs},
		{"variable64", VariableCodec{OffBits: 64}, strs},
		{"variable-bitpacked-offsets", VariableCodec{OffBits: 32, Offsets: BitpackCodec{Bits: 32}}, strs},
		{"variable-range-offsets", VariableCodec{OffBits: 32, Offsets: RangeCodec{Bits: 32, Start: 0, Step: 4}}, fixedLenStrs},
		{"general-zstd-variable", GeneralCodec{Scheme: SchemeZstd, Inner: VariableCodec{OffBits: 32}}, urls},
		{"fsst", FsstCodec{Table: table, Values: VariableCodec{OffBits: 32}}, urls},
		{"fsl", FslCodec{Dim: 4, Values: FlatCodec{Bits: 32}}, fsl},
		{"fsl-validity", FslCodec{Dim: 4, HasValidity: true, Values: FlatCodec{Bits: 32}}, fslValid},
		{"constant", ConstantCodec{Value: []byte{7, 0, 0, 0}}, seq(32, 50, func(int) uint64 { return 7 })},
		{"range64", RangeCodec{Bits: 64, Start: 10, Step: 3}, seq(64, 3000, func(i int) uint64 { return uint64(10 + 3*i) })},
		{"range32", RangeCodec{Bits: 32, Start: 0, Step: 1}, seq(32, 5, func(i int) uint64 { return uint64(i) })},
		{"delta64", delta, sorted},
		{"general-lz4-delta", GeneralCodec{Scheme: SchemeLZ4, Inner: delta}, sorted},
	}
}

// TestCodecRoundTrip encodes every codec in each context it supports and
// decodes the bytes with the decoders the reader uses, from the codec's own
// Encoding description.
func TestCodecRoundTrip(t *testing.T) {
	for _, tc := range codecCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.codec
			if err := c.Check(tc.data); err != nil {
				t.Fatalf("Check: %v", err)
			}
			enc := c.Encoding()
			if c.Contexts()&InChunk != 0 {
				bufs, err := c.AppendChunk(nil, tc.data)
				if err != nil {
					t.Fatalf("AppendChunk: %v", err)
				}
				if len(bufs) != c.NumBuffers() {
					t.Fatalf("AppendChunk made %d buffers, NumBuffers says %d", len(bufs), c.NumBuffers())
				}
				got, err := DecodeMiniBlock(enc, bufs, tc.data.N)
				if err != nil {
					t.Fatalf("DecodeMiniBlock: %v", err)
				}
				blocksEqual(t, "chunk", got, tc.data)
				// Appending to reused buffers gives the same bytes.
				again, err := c.AppendChunk(bufs[:0:0], tc.data)
				if err != nil || len(again) != len(bufs) {
					t.Fatalf("second AppendChunk: %v", err)
				}
			} else if _, err := c.AppendChunk(nil, tc.data); !errors.Is(err, ErrNotApplicable) {
				t.Fatalf("AppendChunk outside its contexts: err = %v, want ErrNotApplicable", err)
			}
			if c.Contexts()&InBlock != 0 {
				buf, err := c.AppendBlock([]byte("prefix"), tc.data)
				if err != nil {
					t.Fatalf("AppendBlock: %v", err)
				}
				if string(buf[:6]) != "prefix" {
					t.Fatal("AppendBlock clobbered dst")
				}
				if !HasPayload(enc) && len(buf) != 6 {
					t.Fatalf("metadata-only codec stored %d bytes", len(buf)-6)
				}
				got, err := DecodeBlock(enc, buf[6:], tc.data.N)
				if err != nil {
					t.Fatalf("DecodeBlock: %v", err)
				}
				blocksEqual(t, "block", got, tc.data)
			} else if _, err := c.AppendBlock(nil, tc.data); !errors.Is(err, ErrNotApplicable) {
				t.Fatalf("AppendBlock outside its contexts: err = %v, want ErrNotApplicable", err)
			}
		})
	}
}

// TestCodecRejectsData: a codec handed data it does not apply to returns
// ErrNotApplicable from Check and from both encoders, and appends nothing.
func TestCodecRejectsData(t *testing.T) {
	strs := varBlock("a", "bb")
	cases := []struct {
		name  string
		codec Codec
		data  Block
	}{
		{"flat width", FlatCodec{Bits: 32}, fixedBlock(64, 1, 2)},
		{"flat short data", FlatCodec{Bits: 32}, Block{Bits: 32, N: 4, Data: make([]byte, 15)}},
		{"bitpack 12 bits", BitpackCodec{Bits: 12}, Block{Bits: 12, N: 2, Data: make([]byte, 3)}},
		{"bitpack variable", BitpackCodec{Bits: 32}, strs},
		{"ool too wide", OutOfLineCodec{Bits: 16, Width: 2}, fixedBlock(16, 1, 9)},
		{"rle 1 bit", RleCodec{Bits: 1}, Block{Bits: 1, N: 8, Data: []byte{1}}},
		{"bss 16", BssCodec{Bits: 16}, fixedBlock(16, 1)},
		{"variable fixed", VariableCodec{OffBits: 32}, fixedBlock(32, 1)},
		{"variable 16-bit offsets", VariableCodec{OffBits: 16}, strs},
		{"range offsets not arithmetic", VariableCodec{OffBits: 32, Offsets: RangeCodec{Bits: 32, Step: 1}}, strs},
		{"constant differs", ConstantCodec{Value: []byte{1}}, fixedBlock(8, 1, 2)},
		{"range differs", RangeCodec{Bits: 64, Start: 0, Step: 2}, fixedBlock(64, 0, 2, 5)},
		{"delta decreasing", DeltaCodec{Bits: 64, Base: 5, Deltas: FlatCodec{Bits: 64}}, fixedBlock(64, 5, 4)},
		{"delta wrong base", DeltaCodec{Bits: 64, Base: 1, Deltas: FlatCodec{Bits: 64}}, fixedBlock(64, 5, 6)},
		{"fsl bad dim", FslCodec{Dim: 3, Values: FlatCodec{Bits: 32}}, fixedBlock(64, 1)},
		{"fsl no validity", FslCodec{Dim: 2, HasValidity: true, Values: FlatCodec{Bits: 32}}, fixedBlock(64, 1)},
		{"fsst no table", FsstCodec{Values: VariableCodec{OffBits: 32}}, strs},
		{"general bad scheme", GeneralCodec{Scheme: 9, Inner: FlatCodec{Bits: 8}}, fixedBlock(8, 1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.codec.Check(tc.data); !errors.Is(err, ErrNotApplicable) {
				t.Fatalf("Check = %v, want ErrNotApplicable", err)
			}
			if tc.codec.Contexts()&InChunk != 0 {
				bufs, err := tc.codec.AppendChunk(nil, tc.data)
				if !errors.Is(err, ErrNotApplicable) {
					t.Fatalf("AppendChunk = %v, want ErrNotApplicable", err)
				}
				for _, b := range bufs {
					if len(b) != 0 {
						t.Fatal("AppendChunk wrote bytes for data it rejects")
					}
				}
			}
			if tc.codec.Contexts()&InBlock != 0 {
				out, err := tc.codec.AppendBlock([]byte{9}, tc.data)
				if !errors.Is(err, ErrNotApplicable) {
					t.Fatalf("AppendBlock = %v, want ErrNotApplicable", err)
				}
				if len(out) != 1 {
					t.Fatal("AppendBlock wrote bytes for data it rejects")
				}
			}
		})
	}
}

func profileOf(b Block, offBits int) *Profile {
	p := &Profile{N: b.N, Bits: b.Bits, OffBits: offBits, Sample: b, Data: b}
	if b.Variable() {
		vs := stats.Variable(b.Offsets, b.Data, nil)
		p.Var = &vs
	} else if checkWord("", b.Bits) == nil {
		fs := stats.Fixed(b.Data, b.Bits, b.N, nil)
		p.Fixed = &fs
	}
	return p
}

// TestCodecEstimates compares each codec's estimate from statistics with
// the bytes it actually writes.
func TestCodecEstimates(t *testing.T) {
	for _, tc := range codecCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.codec
			p := profileOf(tc.data, 32)
			if v, ok := c.(VariableCodec); ok {
				p.OffBits = v.OffBits
			}
			est, ok := c.Estimate(p)
			if !ok {
				if _, isFsl := c.(FslCodec); isFsl {
					return // rows wider than a word carry no fixed stats
				}
				t.Fatalf("no estimate for data the codec applies to")
			}
			var actual int
			if _, ok := c.(FsstCodec); ok {
				actual = FsstTableSize // the table is stored in the page metadata
			}
			if c.Contexts()&InChunk == 0 {
				buf, err := c.AppendBlock(nil, tc.data)
				if err != nil {
					t.Fatal(err)
				}
				actual += len(buf)
			} else {
				bufs, err := c.AppendChunk(nil, tc.data)
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range bufs {
					actual += len(b)
				}
			}
			// Estimates may over-count framing (chunk splits, padding) but
			// must be close: within 10% or 16 bytes.
			diff := est - actual
			if diff < 0 {
				diff = -diff
			}
			if diff > 16 && diff*10 > actual {
				t.Fatalf("estimate %d bytes, actual %d", est, actual)
			}
		})
	}
}

// FuzzCodecRoundTrip encodes fuzzer-chosen values with a fuzzer-chosen
// codec and checks the reader's decoders return them unchanged.
func FuzzCodecRoundTrip(f *testing.F) {
	f.Add(uint8(0), uint8(2), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(uint8(3), uint8(3), bytes.Repeat([]byte{9, 0, 0, 0, 0, 0, 0, 0}, 300))
	f.Add(uint8(7), uint8(1), []byte("hello world, hello fuzz"))
	f.Add(uint8(9), uint8(3), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Fuzz(codecCheckOnce)
}

func codecCheckOnce(t *testing.T, which, width uint8, raw []byte) {
	{
		if len(raw) > 1<<14 {
			raw = raw[:1<<14]
		}
		bits := 8 << (width % 4)
		n := len(raw) / (bits / 8)
		if n > 1024 {
			n = 1024
		}
		b := Block{Bits: bits, N: n, Data: raw[:n*bits/8]}
		var c Codec
		switch which % 14 {
		case 0:
			c = FlatCodec{Bits: bits}
		case 1:
			c = BitpackCodec{Bits: bits}
		case 2:
			c = RleCodec{Bits: bits}
		case 3:
			c = GeneralCodec{Scheme: SchemeZstd, Inner: FlatCodec{Bits: bits}}
		case 4:
			c = GeneralCodec{Scheme: SchemeLZ4, Inner: BitpackCodec{Bits: bits}}
		case 5:
			if bits < 32 {
				return
			}
			c = BssCodec{Bits: bits}
		case 6:
			var or uint64
			for i := 0; i < n; i++ {
				or |= loadWord(b.Data, bits, i)
			}
			w := 0
			for w < bits && or>>uint(w) != 0 {
				w++
			}
			c = OutOfLineCodec{Bits: bits, Width: w}
		case 7, 8:
			// Variable: split raw into values at zero bytes.
			v := Block{N: 0, Offsets: []uint64{0}, Data: raw}
			for i, x := range raw {
				if x == 0 {
					v.Offsets = append(v.Offsets, uint64(i+1))
					v.N++
				}
			}
			b = v
			c = VariableCodec{OffBits: 32}
			if which%14 == 8 {
				c = VariableCodec{OffBits: 64, Offsets: BitpackCodec{Bits: 64}}
			}
		case 9, 10:
			if bits < 32 {
				return
			}
			// Sorted values for Delta.
			for i := 1; i < n; i++ {
				if loadWord(b.Data, bits, i) < loadWord(b.Data, bits, i-1) {
					return
				}
			}
			d, err := newDelta(b)
			if err != nil {
				t.Fatal(err)
			}
			c = d
			if which%14 == 10 {
				c = GeneralCodec{Scheme: SchemeLZ4, Inner: d}
			}
		case 11, 12, 13:
			// Composite RLE: packed run values or lengths, at the widths
			// the data needs; u16 lengths.
			var or uint64
			for i := 0; i < n; i++ {
				or |= loadWord(b.Data, bits, i)
			}
			switch which % 14 {
			case 11:
				w := 0
				for w < bits && or>>uint(w) != 0 {
					w++
				}
				c = RleCodec{Bits: bits, ValueWidth: max(w, 1)}
			case 12:
				m := MaxRunPiece(bits, b.Data, n, 255, max(n, 1))
				w := 0
				for w < 8 && m>>uint(w) != 0 {
					w++
				}
				c = RleCodec{Bits: bits, LenWidth: max(w, 1)}
			default:
				c = RleCodec{Bits: bits, LenBits: 16}
			}
		}
		if err := c.Check(b); err != nil {
			if errors.Is(err, ErrNotApplicable) {
				return
			}
			t.Fatal(err)
		}
		if c.Contexts()&InChunk != 0 && b.N <= 1024 {
			bufs, err := c.AppendChunk(nil, b)
			if err != nil {
				t.Fatalf("%s: AppendChunk: %v", c.Name(), err)
			}
			got, err := DecodeMiniBlock(c.Encoding(), bufs, b.N)
			if err != nil {
				t.Fatalf("%s: DecodeMiniBlock: %v", c.Name(), err)
			}
			blocksEqual(t, c.Name(), got, b)
		}
		if c.Contexts()&InBlock != 0 {
			buf, err := c.AppendBlock(nil, b)
			if err != nil {
				t.Fatalf("%s: AppendBlock: %v", c.Name(), err)
			}
			got, err := DecodeBlock(c.Encoding(), buf, b.N)
			if err != nil {
				t.Fatalf("%s: DecodeBlock: %v", c.Name(), err)
			}
			blocksEqual(t, c.Name(), got, b)
		}
	}
}

// TestEncodingNameMatchesCodec: the name a reader prints from the stored
// encoding is the name the writer's codec tree reports.
func TestEncodingNameMatchesCodec(t *testing.T) {
	for _, tc := range codecCases() {
		if got, want := EncodingName(tc.codec.Encoding()), tc.codec.Name(); got != want {
			t.Errorf("%s: EncodingName = %q, Codec.Name = %q", tc.name, got, want)
		}
	}
}

// TestCheckedEncoding: the codecs whose AppendBlock or AppendChunk check
// their input as they encode it (delta, out-of-line bit packing, variable
// offsets under them) refuse what Check refuses and take what it takes.
// (Delta's Check leaves its differences to its child's encoding: a
// difference too wide is refused there.)
func TestCheckedEncoding(t *testing.T) {
	u32 := func(vs ...uint32) Block { return Block{Bits: 32, N: len(vs), Data: putValues(32, toU64(vs))} }
	u64 := func(vs ...uint64) Block { return Block{Bits: 64, N: len(vs), Data: putValues(64, vs)} }
	strs := func(vs ...string) Block {
		b := Block{N: len(vs), Offsets: []uint64{0}}
		for _, v := range vs {
			b.Data = append(b.Data, v...)
			b.Offsets = append(b.Offsets, uint64(len(b.Data)))
		}
		return b
	}
	deltas := func(bits int, base uint64, w int) DeltaCodec {
		return DeltaCodec{Bits: bits, Base: base, Deltas: OutOfLineCodec{Bits: bits, Width: w}}
	}
	for _, tc := range []struct {
		name string
		c    Codec
		b    Block
		ok   bool
		// childRefuses: Check takes it, the encoding refuses it
		childRefuses bool
	}{
		{"delta32", deltas(32, 5, 3), u32(5, 7, 7, 12), true, false},
		{"delta32 decreasing", deltas(32, 5, 3), u32(5, 7, 6), false, false},
		{"delta32 decreasing last", deltas(32, 5, 3), u32(5, 7, 8, 1), false, false},
		{"delta32 not at its base", deltas(32, 4, 3), u32(5, 7), false, false},
		{"delta32 difference too wide", deltas(32, 5, 3), u32(5, 7, 20), false, true},
		{"delta64", deltas(64, 1<<40, 5), u64(1<<40, 1<<40+31), true, false},
		{"delta64 decreasing", deltas(64, 1<<40, 5), u64(1<<40, 1<<40+3, 1<<40+2), false, false},
		// (Flat differences take any: the decrease alone refuses these.)
		{"delta32 flat decreasing", DeltaCodec{Bits: 32, Base: 5, Deltas: FlatCodec{Bits: 32}}, u32(5, 7, 6), false, false},
		{"delta64 flat decreasing", DeltaCodec{Bits: 64, Base: 5, Deltas: FlatCodec{Bits: 64}}, u64(5, 9, 9, 8), false, false},
		{"delta64 flat", DeltaCodec{Bits: 64, Base: 5, Deltas: FlatCodec{Bits: 64}}, u64(5, 9, 9, 1<<60), true, false},
		{"ool8", OutOfLineCodec{Bits: 8, Width: 3}, Block{Bits: 8, N: 3, Data: []byte{1, 7, 2}}, true, false},
		{"ool8 too wide", OutOfLineCodec{Bits: 8, Width: 3}, Block{Bits: 8, N: 3, Data: []byte{1, 8, 2}}, false, false},
		{"ool16 too wide", OutOfLineCodec{Bits: 16, Width: 9}, Block{Bits: 16, N: 2, Data: putValues(16, []uint64{3, 512})}, false, false},
		{"ool32 too wide", OutOfLineCodec{Bits: 32, Width: 3}, u32(1, 9, 2), false, false},
		{"ool64 too wide", OutOfLineCodec{Bits: 64, Width: 40}, u64(1, 1<<40), false, false},
		{"ool64", OutOfLineCodec{Bits: 64, Width: 41}, u64(1, 1<<40), true, false},
		{"variable", VariableCodec{OffBits: 32, Offsets: deltas(32, 0, 3)}, strs("ab", "", "abcdefg"), true, false},
		{"variable value too long", VariableCodec{OffBits: 32, Offsets: deltas(32, 0, 3)}, strs("ab", "abcdefgh"), false, true},
	} {
		check := tc.c.Check(tc.b)
		var err error
		if tc.c.Contexts()&InChunk != 0 {
			_, err = tc.c.AppendChunk(nil, tc.b)
		} else {
			_, err = tc.c.AppendBlock(nil, tc.b)
		}
		if tc.ok && (check != nil || err != nil) {
			t.Errorf("%s: Check %v, encoding %v; want both to take it", tc.name, check, err)
		}
		if !tc.ok && (!errors.Is(check, ErrNotApplicable) && !tc.childRefuses || check != nil && tc.childRefuses || !errors.Is(err, ErrNotApplicable)) {
			t.Errorf("%s: Check %v, encoding %v; want both to refuse it", tc.name, check, err)
		}
	}
}

func toU64(vs []uint32) []uint64 {
	out := make([]uint64, len(vs))
	for i, v := range vs {
		out[i] = uint64(v)
	}
	return out
}
