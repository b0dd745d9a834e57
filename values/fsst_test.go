package values

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/planarlance/planar/internal/par"
)

// fsstExampleTable is the serialized table with symbols "ab" (0) and "c" (1).
func fsstExampleTable(t testing.TB) []byte {
	b := make([]byte, FsstTableSize)
	copy(b, cxHex(t, "02 00 00 01 54 53 53 46  61 62 00 00 00 00 00 00  63 00 00 00 00 00 00 00  02 01"))
	return b
}

func TestFsstExample(t *testing.T) {
	raw := fsstExampleTable(t)
	if len(raw) != 2312 {
		t.Fatalf("table size %d", len(raw))
	}
	tab, err := ParseFsstTable(raw)
	if err != nil {
		t.Fatal(err)
	}
	if tab.NumSymbols() != 2 || !tab.Coded() {
		t.Fatalf("n=%d coded=%v", tab.NumSymbols(), tab.Coded())
	}
	if s := tab.Symbol(nil, 0); string(s) != "ab" {
		t.Fatalf("symbol 0 = %q", s)
	}
	if got := tab.AppendBytes([]byte{1}); !bytes.Equal(got[1:], raw) || got[0] != 1 {
		t.Fatal("AppendBytes does not reproduce the table")
	}
	enc := tab.AppendEncoded([]byte{9}, []byte("abcxab"))
	if want := cxHex(t, "09 00 01 FF 78 00"); !bytes.Equal(enc, want) {
		t.Fatalf("encoded % x want % x", enc, want)
	}
	dec, err := tab.AppendDecoded([]byte("<"), enc[1:])
	if err != nil || string(dec) != "<abcxab" {
		t.Fatalf("decoded %q, %v", dec, err)
	}
	// Escapes of the escape byte and of symbol-like bytes.
	in := []byte{0xFF, 'a', 'b', 'a', 0x00, 'c', 'c'}
	enc = tab.AppendEncoded(nil, in)
	if want := cxHex(t, "FF FF 00 FF 61 FF 00 01 01"); !bytes.Equal(enc, want) {
		t.Fatalf("encoded % x want % x", enc, want)
	}
	dec, err = tab.AppendDecoded(nil, enc)
	if err != nil || !bytes.Equal(dec, in) {
		t.Fatalf("decoded % x, %v", dec, err)
	}
}

func TestFsstVerbatim(t *testing.T) {
	raw := fsstExampleTable(t)
	raw[3] = 0
	tab, err := ParseFsstTable(raw)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Coded() {
		t.Fatal("switch 0 should be verbatim")
	}
	in := []byte{0x00, 0xFF, 0x01, 'a'}
	if enc := tab.AppendEncoded(nil, in); !bytes.Equal(enc, in) {
		t.Fatalf("verbatim encode % x", enc)
	}
	if dec, err := tab.AppendDecoded(nil, in); err != nil || !bytes.Equal(dec, in) {
		t.Fatalf("verbatim decode % x %v", dec, err)
	}
	if got := tab.AppendBytes(nil); !bytes.Equal(got, raw) {
		t.Fatal("verbatim table does not serialize back")
	}
}

func TestFsstTableErrors(t *testing.T) {
	mod := func(f func(b []byte) []byte) []byte { return f(fsstExampleTable(t)) }
	cases := map[string][]byte{
		"short":       mod(func(b []byte) []byte { return b[:2311] }),
		"long":        mod(func(b []byte) []byte { return append(b, 0) }),
		"empty":       nil,
		"magic":       mod(func(b []byte) []byte { b[7] = 0x47; return b }),
		"switch":      mod(func(b []byte) []byte { b[3] = 2; return b }),
		"len 0":       mod(func(b []byte) []byte { b[25] = 0; return b }),
		"len 9":       mod(func(b []byte) []byte { b[24] = 9; return b }),
		"256 symbols": mod(func(b []byte) []byte { b[0] = 0xFF; return b }), // lens after 2 are 0
	}
	for name, b := range cases {
		if _, err := ParseFsstTable(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: want ErrCorrupt, got %v", name, err)
		}
	}
	tab, err := ParseFsstTable(fsstExampleTable(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string][]byte{
		"code out of range": {0x00, 0x02},
		"trailing escape":   {0x01, 0xFF},
		"big code":          {0xFE},
	} {
		out, err := tab.AppendDecoded([]byte("k"), s)
		if !errors.Is(err, ErrCorrupt) || string(out) != "k" {
			t.Errorf("%s: want ErrCorrupt and dst kept, got %q %v", name, out, err)
		}
	}
}

func TestFsstFullTable(t *testing.T) {
	// 255 symbols of every length; every code decodes.
	b := make([]byte, FsstTableSize)
	copy(b, []byte{255, 0, 0, 1, 0x54, 0x53, 0x53, 0x46})
	for i := range 255 {
		l := 1 + i%8
		for k := range l {
			b[8+8*i+k] = byte(i + k)
		}
		b[8+8*255+i] = byte(l)
	}
	tab, err := ParseFsstTable(b)
	if err != nil {
		t.Fatal(err)
	}
	codes := make([]byte, 255)
	var want []byte
	for i := range codes {
		codes[i] = byte(i)
		want = tab.Symbol(want, i)
	}
	dec, err := tab.AppendDecoded(nil, codes)
	if err != nil || !bytes.Equal(dec, want) {
		t.Fatalf("full-table decode: %v", err)
	}
	if !bytes.Equal(tab.AppendBytes(nil), b) {
		t.Fatal("full table does not serialize back")
	}
	enc := tab.AppendEncoded(nil, want)
	if dec, err := tab.AppendDecoded(nil, enc); err != nil || !bytes.Equal(dec, want) {
		t.Fatalf("full-table round trip: %v", err)
	}
}

func fsstSampleStrings(r *rand.Rand, count int) [][]byte {
	words := []string{"https://", "www.", "example", ".com/", "lance", "planar", "?id=", "&page=", "index.html", "-", "_"}
	out := make([][]byte, count)
	for i := range out {
		var s []byte
		for range 1 + r.IntN(8) {
			s = append(s, words[r.IntN(len(words))]...)
		}
		s = fmt.Appendf(s, "%d", r.IntN(100000))
		if r.IntN(10) == 0 {
			s = append(s, 0xFF, 0x00, byte(r.Uint32()))
		}
		out[i] = s
	}
	return out
}

func TestFsstBuildRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	strs := fsstSampleStrings(r, 2000)
	tab := BuildFsstTable(strs[:500])
	if !tab.Coded() || tab.NumSymbols() == 0 || tab.NumSymbols() > 255 {
		t.Fatalf("built table: n=%d coded=%v", tab.NumSymbols(), tab.Coded())
	}
	raw := tab.AppendBytes(nil)
	if len(raw) != FsstTableSize {
		t.Fatalf("serialized %d bytes", len(raw))
	}
	parsed, err := ParseFsstTable(raw)
	if err != nil {
		t.Fatal(err)
	}
	var inBytes, outBytes int
	var enc, dec []byte
	for _, s := range strs {
		enc = tab.AppendEncoded(enc[:0], s)
		if again := parsed.AppendEncoded(nil, s); !bytes.Equal(again, enc) {
			t.Fatal("parsed table encodes differently")
		}
		dec, err = parsed.AppendDecoded(dec[:0], enc)
		if err != nil || !bytes.Equal(dec, s) {
			t.Fatalf("round trip of %q: %q, %v", s, dec, err)
		}
		inBytes += len(s)
		outBytes += len(enc)
	}
	if outBytes*2 > inBytes {
		t.Errorf("poor compression: %d -> %d bytes", inBytes, outBytes)
	}
	t.Logf("fsst: %d symbols, %d -> %d bytes (%.2fx)", tab.NumSymbols(), inBytes, outBytes, float64(inBytes)/float64(outBytes))

	// Degenerate samples.
	for _, sample := range [][][]byte{nil, {{}}, {{0xFF}}, {bytes.Repeat([]byte{'z'}, 100000)}} {
		tab := BuildFsstTable(sample)
		for _, s := range append(sample, []byte("anything \xff\x00")) {
			enc := tab.AppendEncoded(nil, s)
			dec, err := tab.AppendDecoded(nil, enc)
			if err != nil || !bytes.Equal(dec, s) {
				t.Fatalf("degenerate sample round trip: %v", err)
			}
		}
	}
}

func FuzzFsstDecode(f *testing.F) {
	ex := fsstExampleTable(f)
	f.Add(ex[:64], []byte{0x00, 0x01, 0xFF, 0x78, 0x00})
	f.Add(ex[:64], []byte{0xFF})
	f.Add(ex[:64], []byte{0x02})
	full := make([]byte, 64)
	copy(full, []byte{8, 0, 0, 1, 0x54, 0x53, 0x53, 0x46})
	f.Add(full, []byte{0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, head, s []byte) {
		// head overlays the start of an otherwise valid-sized table.
		raw := make([]byte, FsstTableSize)
		copy(raw, head)
		tab, err := ParseFsstTable(raw)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		// The serialized form must parse back to an equivalent table.
		tab2, err := ParseFsstTable(tab.AppendBytes(nil))
		if err != nil || tab2.NumSymbols() != tab.NumSymbols() || tab2.Coded() != tab.Coded() {
			t.Fatalf("table does not serialize back: %v", err)
		}
		for c := range tab.NumSymbols() {
			if !bytes.Equal(tab.Symbol(nil, c), tab2.Symbol(nil, c)) {
				t.Fatalf("symbol %d differs after re-serialization", c)
			}
		}
		dec, err := tab.AppendDecoded([]byte("p"), s)
		fuzzExpand(t, tab, s, dec, err)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || string(dec) != "p" {
				t.Fatalf("error %v, dst %q", err, dec)
			}
			return
		}
		enc := tab.AppendEncoded(nil, dec[1:])
		again, err := tab.AppendDecoded(nil, enc)
		if err != nil || !bytes.Equal(again, dec[1:]) {
			t.Fatalf("re-round-trip: %v", err)
		}
	})
}

// fuzzExpand expands codes s, cut into values of up to three codes, with
// FsstExpandInto into buffers of DecodedLen bytes and one more or less:
// no panic, nothing written past the buffer, and exactly AppendDecoded's
// bytes (dec after its first byte, or its error err) in the right-sized
// one.
func fuzzExpand(t *testing.T, tab *FsstTable, s, dec []byte, err error) {
	in := Block{Data: s, Offsets: []uint64{0}}
	for at := 0; at < len(s); {
		at = min(len(s), at+1+int(s[at])%3)
		in.Offsets = append(in.Offsets, uint64(at))
		in.N++
	}
	if in.N == 0 {
		return
	}
	n := tab.DecodedLen(in)
	for _, size := range []int{n, n + 1, n - 1} {
		if size < 0 {
			continue
		}
		buf := make([]byte, size+8)
		for k := range buf {
			buf[k] = 0xA5
		}
		offs := make([]int32, in.N+1)
		offs[in.N] = -7
		xerr := FsstExpandInto(tab, buf[:size], in, offs, 3)
		for k := size; k < len(buf); k++ {
			if buf[k] != 0xA5 {
				t.Fatalf("byte %d written past a %d-byte buffer", k, size)
			}
		}
		if offs[in.N] != -7 {
			t.Fatal("offset written past the values")
		}
		if xerr != nil && !errors.Is(xerr, ErrCorrupt) {
			t.Fatalf("unexpected error kind: %v", xerr)
		}
		if size != n {
			if xerr == nil {
				t.Fatalf("codes of %d decoded bytes expanded into %d without an error", n, size)
			}
			continue
		}
		// (A value ending in an escape is corrupt for the expander alone:
		// values are cut here, not by AppendDecoded.)
		if xerr == nil && (err != nil || !bytes.Equal(buf[:size], dec[1:])) {
			t.Fatalf("expanded % x, AppendDecoded % x (%v)", buf[:size], dec, err)
		}
	}
}

func FuzzFsstRoundTrip(f *testing.F) {
	f.Add([]byte("abcxab"), []byte("abcabcabc"))
	f.Add([]byte("https://www.example.com/index.html"), []byte("www.example.com"))
	f.Add([]byte{0xFF, 0xFF, 0x00}, []byte{})
	f.Fuzz(func(t *testing.T, s, sample []byte) {
		tab := BuildFsstTable([][]byte{sample, s[:len(s)/2]})
		parsed, err := ParseFsstTable(tab.AppendBytes(nil))
		if err != nil {
			t.Fatalf("built table does not parse: %v", err)
		}
		enc := tab.AppendEncoded(nil, s)
		dec, err := parsed.AppendDecoded(nil, enc)
		if err != nil || !bytes.Equal(dec, s) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// TestFsstMatchIsLongest: the encoder's index finds, at every position, the
// longest symbol that matches (lowest code among equal ones), as a scan of
// the whole table would.
func TestFsstMatchIsLongest(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	words := []string{"https://", "www.", "example", ".com/", "lance", "planar", "path/", "?id=", "&q=", "abc", "ab", "a"}
	var sample [][]byte
	for i := 0; i < 2000; i++ {
		var b []byte
		for k := 0; k < 1+rng.IntN(8); k++ {
			b = append(b, words[rng.IntN(len(words))]...)
			if rng.IntN(3) == 0 {
				b = append(b, byte(rng.IntN(256)))
			}
		}
		sample = append(sample, b)
	}
	// One site's paths with numbers: dozens of symbols share a three-byte
	// prefix ("docs/631", "docs/940", ...), one crowded bucket.
	var paths [][]byte
	for i := 0; i < 2000; i++ {
		paths = append(paths, fmt.Appendf(nil, "https://www.example.com/docs/%d?ref=home", rng.IntN(1e9)))
	}
	// The benchmarks' URL class: most symbols under "em-" and "ite".
	words4 := []string{"alpha", "bravo", "charlie", "delta"}
	var catalog [][]byte
	for i := 0; i < 2000; i++ {
		catalog = append(catalog, fmt.Appendf(nil, "https://www.example.com/catalog/%s/item-%d?ref=%s", words4[rng.IntN(4)], rng.IntN(100000), words4[i%3]))
	}
	for _, sample := range [][][]byte{sample, paths, catalog} {
		tab := BuildFsstTable(sample)
		if !tab.Coded() || tab.NumSymbols() < 20 {
			t.Fatalf("table of %d symbols (coded %v); the test needs a real one", tab.NumSymbols(), tab.Coded())
		}
		checkLongest(t, tab, sample)
	}
	// A table made by hand: a hundred symbols of one prefix and lengths
	// from one to eight in one bucket, some symbols twice (the lowest code
	// wins).
	tab := &FsstTable{coded: true}
	add := func(sym string) {
		var w [8]byte
		copy(w[:], sym)
		tab.sym[tab.n], tab.lens[tab.n] = binary.LittleEndian.Uint64(w[:]), uint8(len(sym))
		tab.n++
	}
	for i := range 100 {
		add(fmt.Sprintf("docs/%03d", 3*i))
	}
	for _, sym := range []string{"docs/", "docs/00", "docs/1", "doc", "do", "d", "docs/003", "docs/12", "s/1", "/", "?ref=", "home"} {
		add(sym)
	}
	checkLongest(t, tab, paths)
}

// checkLongest checks match against a scan of every symbol, and the page
// coder against match, on table tab.
func checkLongest(t *testing.T, tab *FsstTable, sample [][]byte) {
	tab.index()
	most := 0
	for h := range fsstBuckets {
		most = max(most, int(tab.first3[h+1]-tab.first3[h]))
	}
	t.Logf("%d symbols, at most %d in a bucket", tab.NumSymbols(), most)
	var page []byte
	for _, s := range sample {
		page = append(page, s...)
	}
	at := 0
	for _, s := range sample {
		// The page coder (whole words read past the value) codes as match
		// does position by position.
		var want []byte
		for i := 0; i < len(s); {
			var word uint64
			for k := min(len(s), i+8) - 1; k >= i; k-- {
				word = word<<8 | uint64(s[k])
			}
			c, l := tab.match(word, len(s)-i)
			if c < 0 {
				want = append(want, fsstEscape, s[i])
			} else {
				want = append(want, byte(c))
			}
			i += l
		}
		if got := tab.appendEncodedIn(nil, page, at, at+len(s)); !bytes.Equal(got, want) {
			t.Fatalf("%q: page coder gives % x, match % x", s, got, want)
		}
		at += len(s)
	}
	for _, s := range sample {
		for i := range s {
			rem := len(s) - i
			var word uint64
			for k := min(len(s), i+8) - 1; k >= i; k-- {
				word = word<<8 | uint64(s[k])
			}
			gc, gl := tab.match(word, rem)
			wc, wl := -1, 1
			for c := 0; c < tab.n; c++ {
				l := int(tab.lens[c])
				if l >= 1 && l <= rem && word&fsstLenMask[l] == tab.sym[c] && (l > wl || l == wl && wc < 0) {
					wc, wl = c, l
				}
			}
			if gc != wc || gl != wl {
				t.Fatalf("%q at %d: match gives code %d length %d, the longest is code %d length %d", s, i, gc, gl, wc, wl)
			}
		}
	}
}

// TestFsstExpandInto: blocks expanded side by side into neighbouring parts
// of one buffer, with 32- and 64-bit Arrow offsets, give DecodeBlock's
// values and leave each other's bytes and offsets alone; a buffer one byte
// short or long, and an escape at a value's end, are ErrCorrupt; an uncoded
// table copies.
func TestFsstExpandInto(t *testing.T) {
	testFsstExpandInto[int32](t)
	testFsstExpandInto[int64](t)
}

func testFsstExpandInto[T int32 | int64](t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	strs := fsstSampleStrings(r, 900)
	tab := BuildFsstTable(strs[:300])
	blocks := make([]Block, 3)
	for k := range blocks {
		b := Block{Offsets: []uint64{0}}
		for _, s := range strs[300*k : 300*(k+1)] {
			b.Data = tab.AppendEncoded(b.Data, s)
			b.Offsets = append(b.Offsets, uint64(len(b.Data)))
			b.N++
		}
		blocks[k] = b
	}
	sizes := make([]int, len(blocks))
	total := 0
	for k, b := range blocks {
		sizes[k] = tab.DecodedLen(b)
		total += sizes[k]
	}
	buf := make([]byte, total)
	offs := make([]T, 901)
	for i := range offs {
		offs[i] = -1
	}
	// Expand the last block first, so that a word or an offset written
	// past a block would land on a neighbour already expanded.
	at := total
	for k := len(blocks) - 1; k >= 0; k-- {
		at -= sizes[k]
		if err := FsstExpandInto(tab, buf[at:at+sizes[k]], blocks[k], offs[300*k:300*(k+1)], at); err != nil {
			t.Fatal(err)
		}
	}
	offs[900] = T(total)
	for i, s := range strs[:900] {
		if got := buf[offs[i]:offs[i+1]]; !bytes.Equal(got, s) {
			t.Fatalf("value %d: %q, want %q", i, got, s)
		}
	}
	for _, n := range []int{sizes[0] - 1, sizes[0] + 1} {
		if err := FsstExpandInto(tab, make([]byte, n), blocks[0], offs, 0); !errors.Is(err, ErrCorrupt) {
			t.Errorf("buffer of %d bytes for %d: %v, want ErrCorrupt", n, sizes[0], err)
		}
	}
	if err := FsstExpandInto(tab, make([]byte, sizes[0]), blocks[0], offs[:299], 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("299 offsets for 300 values: %v, want ErrCorrupt", err)
	}
	esc := Block{N: 1, Data: []byte{fsstEscape}, Offsets: []uint64{0, 1}}
	if err := FsstExpandInto(tab, make([]byte, 8), esc, offs, 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("escape at the end: %v, want ErrCorrupt", err)
	}
	vraw := fsstExampleTable(t)
	vraw[3] = 0 // verbatim
	plain, err := ParseFsstTable(vraw)
	if err != nil || plain.Coded() {
		t.Fatalf("verbatim table: %v", err)
	}
	raw := Block{N: 2, Data: []byte("wxyz"), Offsets: []uint64{1, 2, 4}}
	out, got := make([]byte, 3), make([]T, 2)
	if err := FsstExpandInto(plain, out, raw, got, 10); err != nil || string(out) != "xyz" || fmt.Sprint(got) != "[10 11]" {
		t.Fatalf("uncoded table: %q %v %v", out, got, err)
	}
}

// raw is the bytes of values [lo, hi) of a variable block.
func raw(b Block, lo, hi int) uint64 { return b.Offsets[hi] - b.Offsets[lo] }

// TestFsstCodeInPieces: a block large enough to be coded in pieces side by
// side codes to the same bytes whatever GOMAXPROCS is, also when a piece
// codes to more bytes than its region of the shared buffer (values of
// bytes the table lacks, escaped: twice their size) and when every piece
// does; and coded from values whose bytes lie in parts (CodeParts).
func TestFsstCodeInPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n := 3*par.MinValues + 17
	strs := fsstSampleStrings(r, n)
	table := BuildFsstTable(strs[:1000])
	escaped := func(lo, hi int) [][]byte {
		out := slices.Clone(strs)
		for i := lo; i < hi; i++ {
			v := make([]byte, 6+i%5) // (long enough to outgrow the slack too)
			for k := range v {
				v[k] = byte(0x80 + (i+k)%0x7f) // no training string holds these
			}
			out[i] = v
		}
		return out
	}
	for _, tc := range []struct {
		name string
		strs [][]byte
	}{{"coded", strs}, {"second piece escaped", escaped(n/4, n/2)}, {"all escaped", escaped(0, n)}} {
		b := Block{Offsets: []uint64{0}}
		for _, s := range tc.strs {
			b.Data = append(b.Data, s...)
			b.Offsets = append(b.Offsets, uint64(len(b.Data)))
			b.N++
		}
		c := FsstCodec{Table: table, Values: VariableCodec{OffBits: 32}}
		prev := runtime.GOMAXPROCS(1)
		one := c.Code(b)
		runtime.GOMAXPROCS(4)
		four := c.Code(b)
		runtime.GOMAXPROCS(prev)
		if !bytes.Equal(one.Data, four.Data) || fmt.Sprint(one.Offsets) != fmt.Sprint(four.Offsets) || one.N != four.N {
			t.Fatalf("%s: coded in pieces differently", tc.name)
		}
		// (The second of four pieces is values [n/4, n/2).)
		if lo, hi := n/4, n/2; tc.name != "coded" && four.Offsets[hi]-four.Offsets[lo] <= raw(b, lo, hi)+uint64(hi-lo)+min(raw(b, lo, hi), fsstRegionSlack) {
			t.Fatalf("%s: the second piece fits its region", tc.name)
		}
		// The same values from parts of one buffer each (cut at values
		// spread unevenly, one part empty of values) code the same.
		firsts := []int{0, 17, n / 3, n / 3, 2*n/3 + 5, n - 2}
		var parts [][]byte
		for k, lo := range firsts {
			hi := n
			if k+1 < len(firsts) {
				hi = firsts[k+1]
			}
			parts = append(parts, bytes.Clone(b.Data[b.Offsets[lo]:b.Offsets[hi]]))
		}
		for _, procs := range []int{1, 4} {
			runtime.GOMAXPROCS(procs)
			got := c.CodeParts(b.Offsets, parts, firsts)
			runtime.GOMAXPROCS(prev)
			if !bytes.Equal(one.Data, got.Data) || fmt.Sprint(one.Offsets) != fmt.Sprint(got.Offsets) || one.N != got.N {
				t.Fatalf("%s: coded from parts on %d cores differently", tc.name, procs)
			}
		}
		dec, err := c.Table.DecodeBlock(four)
		if err != nil || !bytes.Equal(dec.Data, b.Data) || fmt.Sprint(dec.Offsets) != fmt.Sprint(b.Offsets) {
			t.Fatalf("%s: pieces do not decode back: %v", tc.name, err)
		}
	}
}

// TestTopCands: the heap selection keeps exactly the first k candidates of
// a full sort, in order, ties on gain and length included.
func TestTopCands(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for i := 0; i < 300; i++ {
		n := rng.IntN(2000)
		cs := make([]fsstCand, n)
		for j := range cs {
			cs[j] = fsstCand{s: fsstSym{v: uint64(rng.IntN(50)), l: uint8(1 + rng.IntN(8))}, g: rng.IntN(20)}
		}
		want := slices.Clone(cs)
		slices.SortFunc(want, candBefore)
		k := fsstMaxSymbols
		if i%3 == 0 {
			k = 1 + rng.IntN(10)
		}
		got := topCands(slices.Clone(cs), k)
		if !slices.Equal(got, want[:min(k, n)]) {
			t.Fatalf("case %d (%d candidates, k=%d): top differs", i, n, k)
		}
	}
}

// TestFsstDecodedLen: the decoded length, taken eight codes at a time
// between escapes, is a code-by-code count's, escapes anywhere (the last
// code of a word, of the stream, one after another) included.
func TestFsstDecodedLen(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 2))
	table := BuildFsstTable(fsstSampleStrings(r, 2000))
	count := func(codes []byte) int {
		n := 0
		for i := 0; i < len(codes); i++ {
			if codes[i] == fsstEscape {
				i++
				n++
			} else {
				n += int(table.lens[codes[i]])
			}
		}
		return n
	}
	for iter := range 3000 {
		codes := make([]byte, r.IntN(70))
		for k := range codes {
			codes[k] = byte(r.IntN(table.n))
			if r.IntN([]int{4, 20, 1000}[iter%3]) == 0 {
				codes[k] = fsstEscape
			}
		}
		if got, want := table.decodedLen(codes), count(codes); got != want {
			t.Fatalf("codes %v: decoded length %d, want %d", codes, got, want)
		}
	}
}

// TestFsstLanesSameBytes codes runs of values in lanes (codeInto, into a
// region as codeSpans gives it) and one value at a time (AppendEncoded)
// and wants the same bytes and ends: runs of every size around the lane
// threshold, empty values, values with bytes no symbol covers, tables with
// crowded buckets, runs ending at the end of their buffer (the last words
// read byte by byte) or not, and runs of escaped values (the first half,
// the second, all of them) whose lanes need more than the region holds.
func TestFsstLanesSameBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	urls := func(i int) []byte {
		return fmt.Appendf(nil, "https://www.example.com/catalog/%s/item-%d?ref=%d", []string{"a", "bb", "ccc"}[r.IntN(3)], r.IntN(100000), i%3)
	}
	letters := func(int) []byte {
		b := make([]byte, r.IntN(20))
		for k := range b {
			b[k] = byte('a' + r.IntN(26))
		}
		return b
	}
	mixed := func(i int) []byte {
		switch r.IntN(6) {
		case 0:
			return nil // a null slot
		case 1:
			b := make([]byte, 1+r.IntN(12))
			for k := range b {
				b[k] = byte(r.Uint32()) // escapes, zero bytes
			}
			return b
		case 2:
			return []byte{byte('a' + r.IntN(3))} // one byte: the one-byte path
		}
		return urls(i)
	}
	// The first (last) half of a run's values escaped (no training string
	// holds their bytes): two bytes a byte for one lane, not the other.
	var escN int
	escaped := func() []byte {
		b := make([]byte, 40+r.IntN(20))
		for k := range b {
			b[k] = byte(0x80 + r.IntN(0x7f))
		}
		return b
	}
	escFirst := func(i int) []byte {
		if i < escN/2 {
			return escaped()
		}
		return urls(i)
	}
	escLast := func(i int) []byte {
		if i >= escN/2 {
			return escaped()
		}
		return urls(i)
	}
	// Letters then escaped bytes: both lanes step a byte or two at a time.
	lettersEscaped := func(i int) []byte {
		if i >= escN/2 {
			return escaped()
		}
		return append(letters(i), 'a', 'b', 'c', 'd')
	}
	for _, gen := range []struct {
		name string
		f    func(int) []byte
	}{{"urls", urls}, {"letters", letters}, {"mixed", mixed}, {"first half escaped", escFirst}, {"last half escaped", escLast}, {"all escaped", func(int) []byte { return escaped() }}, {"letters, then escaped", lettersEscaped}} {
		for _, n := range []int{1, 2, fsstLaneMin - 1, fsstLaneMin, fsstLaneMin + 1, 300, 5000} {
			escN = n
			vals := make([][]byte, n)
			for i := range vals {
				vals[i] = gen.f(i)
			}
			sample := make([][]byte, 0, 500)
			for i := range 500 {
				if gen.name == "letters, then escaped" {
					sample = append(sample, letters(i))
				} else {
					sample = append(sample, urls(i))
				}
			}
			if !strings.Contains(gen.name, "escaped") {
				sample = sample[:0]
				for i := range 500 {
					sample = append(sample, gen.f(i))
				}
			}
			table := BuildFsstTable(sample)
			for _, tail := range []int{0, 3, 16} {
				offsets := []uint64{0}
				var data []byte
				for _, v := range vals {
					data = append(data, v...)
					offsets = append(offsets, uint64(len(data)))
				}
				data = append(data, make([]byte, tail)...)
				// The run starts a little into its buffer (base 5).
				buf := append(make([]byte, 5), data...)
				for k := range offsets {
					offsets[k] += 5
				}
				var want []byte
				wantEnds := make([]uint64, n)
				for i, v := range vals {
					want = table.AppendEncoded(want, v)
					wantEnds[i] = uint64(len(want)) + 2
				}
				// dst with room for the values' bytes and a byte a value
				// after what it holds (codeSpans adds some slack; without
				// it the lanes must grow past their room).
				ends := make([]uint64, n)
				dst := append(make([]byte, 0, 2+len(data)-tail+n), 7, 7)
				got := FsstCodec{Table: table}.codeInto(dst, ends, par.Span{Data: buf[5:], Base: 5, Lo: 0, Hi: n}, offsets)
				if !bytes.Equal(got[2:], want) || got[0] != 7 || !slices.Equal(ends, wantEnds) {
					t.Fatalf("%s, %d values, %d bytes after: coded in lanes differently", gen.name, n, tail)
				}
			}
		}
	}
}

// TestFsstCodeIntoScratch: coding into scratch an earlier page left (its
// bytes stale) gives the same values as coding into nothing, in the
// scratch's memory, also when the page's last part is one long value (a
// page cut across batches), which once outgrew its piece's region and had
// the page copied into fresh memory to be joined.
func TestFsstCodeIntoScratch(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	n := 2*par.MinValues + 1
	strs := fsstSampleStrings(r, n)
	strs[n-1] = bytes.Repeat([]byte("https://www.example.com/"), 12)
	table := BuildFsstTable(strs[:1000])
	c := FsstCodec{Table: table, Values: VariableCodec{OffBits: 32}}
	b := Block{Offsets: []uint64{0}}
	for _, s := range strs {
		b.Data = append(b.Data, s...)
		b.Offsets = append(b.Offsets, uint64(len(b.Data)))
		b.N++
	}
	firsts := []int{0, n / 2, n - 1}
	parts := [][]byte{b.Data[:b.Offsets[n/2]], b.Data[b.Offsets[n/2]:b.Offsets[n-1]], b.Data[b.Offsets[n-1]:]}
	want := c.Code(b)
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		scratch := Block{Data: make([]byte, 3*len(b.Data)+n), Offsets: make([]uint64, n+1)}
		for i := range scratch.Data {
			scratch.Data[i] = byte(i)
		}
		for i := range scratch.Offsets {
			scratch.Offsets[i] = uint64(i * 7)
		}
		for _, whole := range []bool{true, false} {
			var got Block
			if whole {
				got = c.CodeInto(scratch, b)
			} else {
				got = c.CodePartsInto(scratch, b.Offsets, parts, firsts)
			}
			if !bytes.Equal(got.Data, want.Data) || !slices.Equal(got.Offsets, want.Offsets) || got.N != want.N {
				t.Fatalf("%d cores, whole %v: coded into scratch differently", procs, whole)
			}
			if &got.Data[0] != &scratch.Data[0] || &got.Offsets[0] != &scratch.Offsets[0] {
				t.Errorf("%d cores, whole %v: coded values not in the scratch's memory", procs, whole)
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}
