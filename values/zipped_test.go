package values

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func zipHex(t *testing.T, got, want []byte, what string) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n got % X\nwant % X", what, got, want)
	}
}

func TestZipSpecFixedExample(t *testing.T) {
	// Nullable int32 [10, null, 30]: bits_rep 0, bits_def 1.
	def := []uint16{0, 1, 0}
	br, bd := LevelWidths(nil, def)
	if br != 0 || bd != 1 {
		t.Fatalf("LevelWidths = %d, %d", br, bd)
	}
	l := ZipLevels{BitsRep: br, BitsDef: bd}
	vals := binary.LittleEndian.AppendUint32(nil, 10)
	vals = binary.LittleEndian.AppendUint32(vals, 0)
	vals = binary.LittleEndian.AppendUint32(vals, 30)
	data, idx, err := AppendZippedFixed(nil, l, nil, def, vals, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x00, 0x0A, 0, 0, 0, 0x01, 0, 0, 0, 0, 0x00, 0x1E, 0, 0, 0}
	zipHex(t, data, want, "data")
	if idx != nil {
		t.Fatalf("unexpected repetition index % X", idx)
	}
	z, err := ParseZippedFixed(data, l, 3, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	if z.Rep != nil || !slices.Equal(z.Def, def) || !bytes.Equal(z.Values, vals) || z.NumRows != 3 {
		t.Fatalf("parsed %+v", z)
	}
}

func TestZipSpecVariableExample(t *testing.T) {
	rep := []uint16{1, 0, 1, 1, 1, 1, 0}
	def := []uint16{0, 0, 4, 2, 3, 1, 0}
	br, bd := LevelWidths(rep, def)
	if br != 1 || bd != 3 {
		t.Fatalf("LevelWidths = %d, %d", br, bd)
	}
	l := ZipLevels{BitsRep: br, BitsDef: bd, MaxRep: 1, MaxVisibleDef: 1}
	offsets := []uint64{0, 1, 2, 2, 3} // "x", "y", null, "z"
	data, idx, err := AppendZippedVariable(nil, l, rep, def, offsets, []byte("xyz"), 32)
	if err != nil {
		t.Fatal(err)
	}
	zipHex(t, data, []byte{0x08, 0x01, 0, 0, 0, 0x78, 0x00, 0x01, 0, 0, 0, 0x79, 0x0C, 0x0A, 0x0B, 0x09, 0x00, 0x01, 0, 0, 0, 0x7A}, "data")
	zipHex(t, idx, []byte{0x00, 0x0C, 0x0D, 0x0E, 0x0F, 0x16}, "repetition index")

	z, err := ParseZippedVariable(data, idx, l, 7, 4, 5, 32)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(z.Rep, rep) || !slices.Equal(z.Def, def) || z.NumRows != 5 {
		t.Fatalf("levels %v %v rows %d", z.Rep, z.Def, z.NumRows)
	}
	if !slices.Equal(z.Offsets, offsets) || string(z.VarData) != "xyz" {
		t.Fatalf("values %v %q", z.Offsets, z.VarData)
	}
	x, err := ParseZipRepIndex(idx, 5, len(data))
	if err != nil || x.Width() != 1 || x.NumRows() != 5 || x.Offset(2) != 13 || x.Offset(5) != 22 {
		t.Fatalf("index %+v %v", x, err)
	}
}

func TestZipControlWordExamples(t *testing.T) {
	// bits 4/4, (rep, def) = (7, 3) -> 0x73 (invisible entry: word only).
	l := ZipLevels{BitsRep: 4, BitsDef: 4, MaxRep: 7, MaxVisibleDef: 2}
	data, idx, err := AppendZippedVariable(nil, l, []uint16{7}, []uint16{3}, nil, nil, 32)
	if err != nil {
		t.Fatal(err)
	}
	zipHex(t, data, []byte{0x73}, "4/4 word")
	zipHex(t, idx, []byte{0, 1}, "4/4 index")

	// bits_def 5, (9, 12) -> u16 0x012C -> 2C 01.
	l = ZipLevels{BitsRep: 4, BitsDef: 5, MaxRep: 9, MaxVisibleDef: 0}
	data, idx, err = AppendZippedVariable(nil, l, []uint16{9}, []uint16{12}, nil, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	zipHex(t, data, []byte{0x2C, 0x01}, "4/5 word")
	zipHex(t, idx, []byte{0, 2}, "4/5 index")
	z, err := ParseZippedVariable(data, idx, l, 1, 0, 1, 64)
	if err != nil || z.Rep[0] != 9 || z.Def[0] != 12 || len(z.Offsets) != 1 {
		t.Fatalf("%+v %v", z, err)
	}

	// 4-byte words: 9 + 9 bits.
	l = ZipLevels{BitsRep: 9, BitsDef: 9, MaxRep: 300, MaxVisibleDef: 400}
	data, _, err = AppendZippedFixed(nil, l, []uint16{300}, []uint16{257}, []byte{0xAB}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := uint32(300)<<9 | 257
	zipHex(t, data, append(binary.LittleEndian.AppendUint32(nil, w), 0xAB), "9/9 word")
}

func TestZipNoControlWordsWhenWidthsZero(t *testing.T) {
	// A def stream that is present but all zero gets width 0: no words.
	def := []uint16{0, 0, 0}
	br, bd := LevelWidths(nil, def)
	l := ZipLevels{BitsRep: br, BitsDef: bd}
	vals := []byte{1, 2, 3, 4, 5, 6}
	data, idx, err := AppendZippedFixed(nil, l, nil, def, vals, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	zipHex(t, data, vals, "fixed")
	if idx != nil {
		t.Fatal("index without repetition")
	}
	data, idx, err = AppendZippedVariable(nil, l, nil, def, []uint64{0, 1, 1, 3}, []byte("abc"), 32)
	if err != nil {
		t.Fatal(err)
	}
	zipHex(t, data, []byte{1, 0, 0, 0, 'a', 0, 0, 0, 0, 2, 0, 0, 0, 'b', 'c'}, "variable")
	zipHex(t, idx, []byte{0, 5, 9, 15}, "variable index")
	z, err := ParseZippedVariable(data, idx, l, 3, 3, 3, 32)
	if err != nil || z.Def != nil || string(z.VarData) != "abc" || !slices.Equal(z.Offsets, []uint64{0, 1, 1, 3}) {
		t.Fatalf("%+v %v", z, err)
	}
}

func TestZipLegacyPhantom(t *testing.T) {
	// Pre-fix writer: widths 0 but a 0x00 word before every value.
	legacy := []byte{0, 1, 2, 0, 3, 4, 0, 5, 6}
	if !LegacyPhantomControlWords(len(legacy), 3, 2) {
		t.Fatal("legacy page not detected")
	}
	if LegacyPhantomControlWords(6, 3, 2) || LegacyPhantomControlWords(0, 0, 2) || LegacyPhantomControlWords(10, 3, 2) {
		t.Fatal("false positive")
	}
	if _, err := ParseZippedFixed(legacy, ZipLevels{}, 3, 3, 2); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("legacy page parsed with 0-byte words: %v", err)
	}
	z, err := ParseZippedFixed(legacy, ZipLevels{BitsDef: 1}, 3, 3, 2)
	if err != nil || !bytes.Equal(z.Values, []byte{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("%+v %v", z, err)
	}
}

func TestZipLevelWidths(t *testing.T) {
	for _, c := range []struct {
		rep, def []uint16
		br, bd   int
	}{
		{nil, nil, 0, 0},
		{[]uint16{0, 0}, []uint16{0}, 0, 0},
		{[]uint16{1, 0}, []uint16{4, 0}, 1, 3},
		{[]uint16{3}, []uint16{7}, 2, 3},
		{[]uint16{4}, []uint16{8}, 3, 4},
		{nil, []uint16{65535}, 0, 16},
	} {
		br, bd := LevelWidths(c.rep, c.def)
		if br != c.br || bd != c.bd {
			t.Errorf("LevelWidths(%v, %v) = %d, %d; want %d, %d", c.rep, c.def, br, bd, c.br, c.bd)
		}
	}
	for _, c := range []struct {
		l ZipLevels
		n int
	}{{ZipLevels{}, 0}, {ZipLevels{BitsDef: 1}, 1}, {ZipLevels{BitsRep: 4, BitsDef: 4}, 1},
		{ZipLevels{BitsRep: 4, BitsDef: 5}, 2}, {ZipLevels{BitsDef: 16}, 2}, {ZipLevels{BitsRep: 1, BitsDef: 16}, 4}} {
		if got := c.l.WordBytes(); got != c.n {
			t.Errorf("%+v.WordBytes() = %d, want %d", c.l, got, c.n)
		}
	}
}

// zipCase is a random, valid set of levels.
type zipCase struct {
	l        ZipLevels
	rep, def []uint16 // as handed to the encoder (nil when absent)
	n        int
	visible  []bool // per entry
	valid    []bool // per entry
	rows     int
}

func randZipCase(r *rand.Rand, n int) zipCase {
	maxReps := []int{0, 0, 1, 2, 3, 300}
	maxDefs := []int{0, 0, 1, 3, 7, 200, 40000}
	R := maxReps[r.IntN(len(maxReps))]
	D := maxDefs[r.IntN(len(maxDefs))]
	var c zipCase
	c.n = n
	if R > 0 {
		c.rep = make([]uint16, n)
		for i := range c.rep {
			if i == 0 || r.IntN(3) == 0 {
				c.rep[i] = uint16(R)
			} else {
				c.rep[i] = uint16(r.IntN(R + 1))
			}
		}
	}
	if D > 0 || r.IntN(4) == 0 {
		c.def = make([]uint16, n)
		nullRate := r.IntN(4) // 0: no nulls, 3: mostly null
		for i := range c.def {
			if D > 0 && r.IntN(4) < nullRate {
				c.def[i] = uint16(1 + r.IntN(D))
			}
		}
	}
	br, bd := LevelWidths(c.rep, c.def)
	c.l = ZipLevels{BitsRep: br, BitsDef: bd, MaxRep: R}
	if br > 0 {
		c.l.MaxVisibleDef = r.IntN(D + 1)
	}
	c.visible = make([]bool, n)
	c.valid = make([]bool, n)
	for i := 0; i < n; i++ {
		var d int
		if c.def != nil {
			d = int(c.def[i])
		}
		c.visible[i] = br == 0 || d <= c.l.MaxVisibleDef
		c.valid[i] = d == 0
		if br == 0 || int(c.rep[i]) == R {
			c.rows++
		}
	}
	return c
}

func (c zipCase) numVisible() int {
	k := 0
	for _, v := range c.visible {
		if v {
			k++
		}
	}
	return k
}

func (c zipCase) word(i int) uint32 {
	var rp, d uint32
	if c.l.BitsRep > 0 {
		rp = uint32(c.rep[i])
	}
	if c.l.BitsDef > 0 {
		d = uint32(c.def[i])
	}
	return rp<<c.l.BitsDef | d
}

// refIndex builds a repetition index naively.
func refIndex(starts []int, end int, estimate int) []byte {
	w := 8
	switch {
	case estimate == 0:
		return nil
	case estimate <= 0xFF:
		w = 1
	case estimate <= 0xFFFF:
		w = 2
	case estimate <= 0xFFFFFFFF:
		w = 4
	}
	var out []byte
	for _, s := range append(starts, end) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(s))
		out = append(out, b[:w]...)
	}
	return out
}

// refFixed is an independent, naive fixed-width encoder.
func refFixed(c zipCase, vals []byte, width int) ([]byte, []byte) {
	cw := c.l.WordBytes()
	var out []byte
	var starts []int
	v := 0
	for i := 0; i < c.n; i++ {
		if c.l.BitsRep > 0 && int(c.rep[i]) == c.l.MaxRep {
			starts = append(starts, len(out))
		}
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], c.word(i))
		out = append(out, b[:cw]...)
		if c.visible[i] {
			out = append(out, vals[v*width:(v+1)*width]...)
			v++
		}
	}
	if c.l.BitsRep == 0 {
		return out, nil
	}
	return out, refIndex(starts, len(out), len(out))
}

func refVariable(c zipCase, offs []uint64, vb []byte, offBits int) ([]byte, []byte) {
	cw := c.l.WordBytes()
	ob := offBits / 8
	var out []byte
	var starts []int
	v := 0
	for i := 0; i < c.n; i++ {
		if c.l.BitsRep == 0 || int(c.rep[i]) == c.l.MaxRep {
			starts = append(starts, len(out))
		}
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], c.word(i))
		out = append(out, b[:cw]...)
		if c.visible[i] {
			if c.valid[i] {
				binary.LittleEndian.PutUint64(b[:], offs[v+1]-offs[v])
				out = append(out, b[:ob]...)
				out = append(out, vb[offs[v]:offs[v+1]]...)
			}
			v++
		}
	}
	k := c.numVisible()
	est := int(offs[len(offs)-1]-offs[0]) + cw*c.n + ob*k
	idx := refIndex(starts, len(out), est)
	if idx == nil {
		idx = []byte{}
	}
	return out, idx
}

func checkLevels(t *testing.T, c zipCase, z Zipped) {
	t.Helper()
	if c.l.BitsRep > 0 {
		if !slices.Equal(z.Rep, c.rep) {
			t.Fatalf("rep %v, want %v", z.Rep, c.rep)
		}
	} else if z.Rep != nil {
		t.Fatalf("rep %v without rep bits", z.Rep)
	}
	if c.l.BitsDef > 0 {
		if !slices.Equal(z.Def, c.def) {
			t.Fatalf("def %v, want %v", z.Def, c.def)
		}
	} else if z.Def != nil {
		t.Fatalf("def %v without def bits", z.Def)
	}
	if z.NumRows != c.rows {
		t.Fatalf("%d rows, want %d", z.NumRows, c.rows)
	}
}

func TestZipFixedRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	widths := []int{1, 2, 3, 4, 7, 8, 16, 33, 256, 1000, 1024}
	for iter := 0; iter < 600; iter++ {
		width := widths[iter%len(widths)]
		n := r.IntN(60)
		if iter%7 == 0 {
			n = 0
		}
		c := randZipCase(r, n)
		k := c.numVisible()
		vals := make([]byte, k*width)
		for i := range vals {
			vals[i] = byte(r.Uint32())
		}
		prefix := []byte("prefix")
		cn := 0
		if c.rep == nil && c.def == nil {
			cn = n
		}
		data, idx, err := AppendZippedFixed(slices.Clone(prefix), c.l, c.rep, c.def, vals, width, cn)
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		if !bytes.HasPrefix(data, prefix) {
			t.Fatal("prefix clobbered")
		}
		data = data[len(prefix):]
		wantData, wantIdx := refFixed(c, vals, width)
		zipHex(t, data, wantData, "fixed data")
		zipHex(t, idx, wantIdx, "fixed index")
		if c.l.BitsRep > 0 && n > 0 {
			if _, err := ParseZipRepIndex(idx, c.rows, len(data)); err != nil {
				t.Fatalf("iter %d: own index: %v", iter, err)
			}
		}
		z, err := ParseZippedFixed(data, c.l, n, k, width)
		if err != nil {
			t.Fatalf("iter %d (%+v, n=%d k=%d w=%d): %v", iter, c.l, n, k, width, err)
		}
		checkLevels(t, c, z)
		if !bytes.Equal(z.Values, vals) {
			t.Fatalf("iter %d: values differ", iter)
		}
		// Every truncation and one byte too many are rejected.
		for cut := 0; cut < len(data); cut += 1 + len(data)/50 {
			if _, err := ParseZippedFixed(data[:cut], c.l, n, k, width); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("iter %d: truncated to %d of %d: %v", iter, cut, len(data), err)
			}
		}
		if _, err := ParseZippedFixed(append(slices.Clone(data), 0), c.l, n, k, width); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("iter %d: trailing byte accepted: %v", iter, err)
		}
		if n > 0 {
			if _, err := ParseZippedFixed(data, c.l, n, k+1, width); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("iter %d: wrong visible count accepted: %v", iter, err)
			}
		}
	}
}

func TestZipVariableRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 800; iter++ {
		n := r.IntN(50)
		if iter%9 == 0 {
			n = 0
		}
		c := randZipCase(r, n)
		k := c.numVisible()
		offBits := 32
		if iter%2 == 1 {
			offBits = 64
		}
		// Values: empty ones, short ones, occasionally long ones; nulls may
		// carry garbage bytes (dropped by the writer).
		start := uint64(r.IntN(5))
		offs := []uint64{start}
		var vb []byte
		vb = append(vb, make([]byte, start)...)
		v := 0
		var want []byte
		wantOffs := []uint64{0}
		for i := 0; i < n; i++ {
			if !c.visible[i] {
				continue
			}
			ln := r.IntN(6)
			switch r.IntN(10) {
			case 0:
				ln = 0
			case 1:
				ln = 300 + r.IntN(700)
			}
			for j := 0; j < ln; j++ {
				vb = append(vb, byte(r.Uint32()))
			}
			offs = append(offs, uint64(len(vb)))
			if c.valid[i] {
				want = append(want, vb[offs[v]:offs[v+1]]...)
			}
			wantOffs = append(wantOffs, uint64(len(want)))
			v++
		}
		vb = append(vb, 0xEE) // trailing byte outside the offsets
		data, idx, err := AppendZippedVariable([]byte{9, 9}, c.l, c.rep, c.def, offs, vb, offBits)
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		data = data[2:]
		wantData, wantIdx := refVariable(c, offs, vb, offBits)
		zipHex(t, data, wantData, "variable data")
		zipHex(t, idx, wantIdx, "variable index")
		z, err := ParseZippedVariable(data, idx, c.l, n, k, c.rows, offBits)
		if err != nil {
			t.Fatalf("iter %d (%+v n=%d k=%d rows=%d): %v", iter, c.l, n, k, c.rows, err)
		}
		checkLevels(t, c, z)
		if !slices.Equal(z.Offsets, wantOffs) || !bytes.Equal(z.VarData, want) {
			t.Fatalf("iter %d: values differ: %v vs %v", iter, z.Offsets, wantOffs)
		}
		if _, err := ParseZippedVariable(data, nil, c.l, n, k, c.rows, offBits); err != nil {
			t.Fatalf("iter %d: without index: %v", iter, err)
		}
		for cut := 0; cut < len(data); cut += 1 + len(data)/40 {
			if _, err := ParseZippedVariable(data[:cut], nil, c.l, n, k, c.rows, offBits); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("iter %d: truncated to %d of %d: %v", iter, cut, len(data), err)
			}
		}
		if _, err := ParseZippedVariable(append(slices.Clone(data), 0), nil, c.l, n, k, c.rows, offBits); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("iter %d: trailing byte accepted: %v", iter, err)
		}
		if n > 0 {
			if _, err := ParseZippedVariable(data, idx, c.l, n, k, c.rows+1, offBits); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("iter %d: wrong row count accepted: %v", iter, err)
			}
			if len(idx) > 1 {
				bad := slices.Clone(idx)
				bad[0] ^= 1
				if _, err := ParseZippedVariable(data, bad, c.l, n, k, c.rows, offBits); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("iter %d: bad index accepted: %v", iter, err)
				}
			}
		}
		// Random corruption never panics and anything accepted re-encodes
		// to the same bytes.
		for j := 0; j < 5 && len(data) > 0; j++ {
			bad := slices.Clone(data)
			bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
			zipCheckVariableReencode(t, bad, c.l, n, k, c.rows, offBits)
		}
	}
}

func zipCheckVariableReencode(t *testing.T, data []byte, l ZipLevels, n, k, rows, offBits int) {
	t.Helper()
	z, err := ParseZippedVariable(data, nil, l, n, k, rows, offBits)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error does not wrap ErrCorrupt: %v", err)
		}
		return
	}
	if len(z.Offsets) != k+1 || (l.BitsRep > 0 && len(z.Rep) != n) || (l.BitsDef > 0 && len(z.Def) != n) || z.NumRows != rows {
		t.Fatalf("inconsistent parse: %d offsets, %d rep, %d def, %d rows", len(z.Offsets), len(z.Rep), len(z.Def), z.NumRows)
	}
	again, idx, err := AppendZippedVariable(nil, l, z.Rep, z.Def, z.Offsets, z.VarData, offBits)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	if !bytes.Equal(again, data) {
		t.Fatalf("re-encode differs:\n got % X\nwant % X", again, data)
	}
	if _, err := ParseZippedVariable(data, idx, l, n, k, rows, offBits); err != nil {
		t.Fatalf("re-encoded index rejected: %v", err)
	}
}

func zipCheckFixedReencode(t *testing.T, data []byte, l ZipLevels, n, k, width int) {
	t.Helper()
	z, err := ParseZippedFixed(data, l, n, k, width)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error does not wrap ErrCorrupt: %v", err)
		}
		return
	}
	if len(z.Values) != k*width || (l.BitsRep > 0 && len(z.Rep) != n) || (l.BitsDef > 0 && len(z.Def) != n) {
		t.Fatalf("inconsistent parse: %d value bytes, %d rep, %d def", len(z.Values), len(z.Rep), len(z.Def))
	}
	cn := 0
	if z.Rep == nil && z.Def == nil {
		cn = n
	}
	again, idx, err := AppendZippedFixed(nil, l, z.Rep, z.Def, z.Values, width, cn)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	if !bytes.Equal(again, data) {
		t.Fatalf("re-encode differs:\n got % X\nwant % X", again, data)
	}
	if idx != nil {
		if _, err := ParseZipRepIndex(idx, z.NumRows, len(data)); err != nil {
			t.Fatalf("re-encoded index rejected: %v", err)
		}
	}
}

func TestZipFixedCorruption(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 300; iter++ {
		n := 1 + r.IntN(30)
		c := randZipCase(r, n)
		width := 1 + r.IntN(9)
		k := c.numVisible()
		vals := make([]byte, k*width)
		cn := 0
		if c.rep == nil && c.def == nil {
			cn = n
		}
		data, _, err := AppendZippedFixed(nil, c.l, c.rep, c.def, vals, width, cn)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 8; j++ {
			bad := slices.Clone(data)
			bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
			zipCheckFixedReencode(t, bad, c.l, n, k, width)
		}
	}
}

func TestZipRepIndexErrors(t *testing.T) {
	for _, c := range []struct {
		name      string
		idx       []byte
		rows, end int
	}{
		{"width 3", []byte{0, 0, 0, 5, 0, 0}, 1, 5},
		{"too short", []byte{0}, 1, 5},
		{"not multiple", []byte{0, 1, 2}, 1, 5},
		{"decreasing", []byte{0, 4, 3}, 2, 5},
		{"beyond data", []byte{0, 6}, 1, 5},
		{"negative rows", []byte{0}, -1, 5},
		{"empty with rows", nil, 1, 5},
	} {
		if _, err := ParseZipRepIndex(c.idx, c.rows, c.end); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	x, err := ParseZipRepIndex([]byte{0, 0, 3, 0, 5, 0}, 2, 5)
	if err != nil || x.Width() != 2 || x.Offset(1) != 3 {
		t.Fatalf("%+v %v", x, err)
	}
	if _, err := ParseZipRepIndex(nil, 0, 0); err != nil {
		t.Fatal(err)
	}
	// Index must agree with the rows it describes.
	l := ZipLevels{BitsRep: 1, MaxRep: 1}
	data, idx, err := AppendZippedVariable(nil, l, []uint16{1, 0, 1}, nil, []uint64{0, 1, 2, 3}, []byte("abc"), 32)
	if err != nil {
		t.Fatal(err)
	}
	zipHex(t, idx, []byte{0, 12, 18}, "index")
	if _, err := ParseZippedVariable(data, []byte{0, 11, 18}, l, 3, 3, 2, 32); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("misplaced row start accepted: %v", err)
	}
	if _, err := ParseZippedVariable(data, []byte{0, 12, 17}, l, 3, 3, 2, 32); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short index accepted: %v", err)
	}
	wide := []byte{0, 0, 0, 0, 12, 0, 0, 0, 18, 0, 0, 0}
	if _, err := ParseZippedVariable(data, wide, l, 3, 3, 2, 32); err != nil {
		t.Fatalf("u32 index rejected: %v", err)
	}
}

func TestZipFixedRepIndexWidths(t *testing.T) {
	// Index width follows the exact data length for fixed pages.
	l := ZipLevels{BitsRep: 1, MaxRep: 1}
	for _, c := range []struct{ rows, width, w int }{{1, 254, 1}, {1, 255, 2}, {2, 40000, 4}} {
		rep := make([]uint16, c.rows)
		for i := range rep {
			rep[i] = 1
		}
		vals := make([]byte, c.rows*c.width)
		data, idx, err := AppendZippedFixed(nil, l, rep, nil, vals, c.width, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(idx) != (c.rows+1)*c.w {
			t.Fatalf("rows %d width %d: index of %d bytes, want %d-byte entries", c.rows, c.width, len(idx), c.w)
		}
		x, err := ParseZipRepIndex(idx, c.rows, len(data))
		if err != nil || x.Offset(c.rows) != uint64(len(data)) {
			t.Fatalf("%v", err)
		}
	}
	// Empty page with repetition: no index (Lance writes none).
	data, idx, err := AppendZippedFixed(nil, l, []uint16{}, nil, nil, 4, 0)
	if err != nil || len(data) != 0 || idx != nil {
		t.Fatalf("%v %v %v", data, idx, err)
	}
	// The variable estimate counts a length for every visible entry, nulls
	// included, so it may pick a wider index than the data needs.
	lv := ZipLevels{BitsDef: 1}
	_, idx, err = AppendZippedVariable(nil, lv, nil, []uint16{1, 1, 0}, []uint64{0, 0, 0, 230}, make([]byte, 230), 64)
	if err != nil {
		t.Fatal(err)
	}
	// estimate 230 + 3 + 24 = 257 -> u16 although data is only 241 bytes.
	if len(idx) != 4*2 {
		t.Fatalf("index of %d bytes, want u16 entries", len(idx))
	}
}

func TestZipEncoderErrors(t *testing.T) {
	for _, c := range []struct {
		name     string
		l        ZipLevels
		rep, def []uint16
		vals     []byte
		width, n int
	}{
		{"width 0", ZipLevels{}, nil, nil, nil, 0, 0},
		{"def too wide", ZipLevels{BitsDef: 1}, nil, []uint16{2}, []byte{0}, 1, 0},
		{"rep too big", ZipLevels{BitsRep: 2, MaxRep: 2}, []uint16{2, 3}, nil, []byte{0, 0}, 1, 0},
		{"rep without bits", ZipLevels{}, []uint16{1}, nil, []byte{0}, 1, 0},
		{"first not row", ZipLevels{BitsRep: 1, MaxRep: 1}, []uint16{0, 1}, nil, []byte{0, 0}, 1, 0},
		{"missing rep", ZipLevels{BitsRep: 1, MaxRep: 1}, nil, []uint16{0}, []byte{0}, 1, 0},
		{"missing def", ZipLevels{BitsDef: 1}, nil, nil, []byte{0}, 1, 1},
		{"length mismatch", ZipLevels{BitsRep: 1, BitsDef: 1, MaxRep: 1}, []uint16{1, 0}, []uint16{0}, []byte{0}, 1, 0},
		{"short vals", ZipLevels{BitsDef: 1}, nil, []uint16{0, 1}, []byte{0}, 1, 0},
		{"n mismatch", ZipLevels{BitsDef: 1}, nil, []uint16{0, 1}, []byte{0, 0}, 1, 3},
		{"bits too big", ZipLevels{BitsDef: 17}, nil, []uint16{0}, []byte{0}, 1, 0},
		{"maxrep too big", ZipLevels{BitsRep: 1, MaxRep: 2}, []uint16{2}, nil, []byte{0}, 1, 0},
	} {
		if _, _, err := AppendZippedFixed(nil, c.l, c.rep, c.def, c.vals, c.width, c.n); !errors.Is(err, ErrNotApplicable) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	l := ZipLevels{BitsDef: 1}
	if _, _, err := AppendZippedVariable(nil, l, nil, []uint16{0}, []uint64{0, 2}, []byte{1}, 32); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("offsets beyond bytes: %v", err)
	}
	if _, _, err := AppendZippedVariable(nil, l, nil, []uint16{0, 0}, []uint64{0, 2, 1}, []byte{1, 2}, 32); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("decreasing offsets: %v", err)
	}
	if _, _, err := AppendZippedVariable(nil, l, nil, []uint16{0}, []uint64{0, 1}, []byte{1}, 16); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("16-bit lengths: %v", err)
	}
	if _, _, err := AppendZippedVariable(nil, l, nil, []uint16{0, 0}, []uint64{0, 1}, []byte{1}, 32); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("too few offsets: %v", err)
	}
}

func TestZipDecoderErrors(t *testing.T) {
	valid := []byte{0x00, 0x0A, 0, 0, 0, 0x01, 0, 0, 0, 0, 0x00, 0x1E, 0, 0, 0}
	l := ZipLevels{BitsDef: 1}
	for _, c := range []struct {
		name                 string
		data                 []byte
		l                    ZipLevels
		items, visible, wdth int
	}{
		{"word out of range", []byte{0x02, 0, 0, 0, 0}, l, 1, 1, 4},
		{"negative items", valid, l, -1, 0, 4},
		{"visible > items", valid, l, 3, 4, 4},
		{"visible != items without rep", valid, l, 3, 2, 4},
		{"width 0", valid, l, 3, 3, 0},
		{"huge items", valid, l, math.MaxInt, math.MaxInt, 4},
		{"huge width", valid, l, 3, 3, math.MaxInt},
		{"bad widths", valid, ZipLevels{BitsDef: -1}, 3, 3, 4},
		{"rep level above max", []byte{0x03}, ZipLevels{BitsRep: 2, MaxRep: 2}, 1, 0, 1},
		{"first entry not row", []byte{0x00, 7, 0x01, 8}, ZipLevels{BitsRep: 1, MaxRep: 1}, 2, 2, 1},
		{"maxrep 0 with rep bits", []byte{0x01, 7}, ZipLevels{BitsRep: 1}, 1, 1, 1},
	} {
		if _, err := ParseZippedFixed(c.data, c.l, c.items, c.visible, c.wdth); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	vl := ZipLevels{BitsRep: 1, BitsDef: 3, MaxRep: 1, MaxVisibleDef: 1}
	good := []byte{0x08, 0x01, 0, 0, 0, 0x78, 0x00, 0x01, 0, 0, 0, 0x79, 0x0C, 0x0A, 0x0B, 0x09, 0x00, 0x01, 0, 0, 0, 0x7A}
	bigLen := slices.Clone(good)
	bigLen[1] = 0xFF
	for _, c := range []struct {
		name                 string
		data                 []byte
		items, vis, rows, ob int
	}{
		{"length overruns", bigLen, 7, 4, 5, 32},
		{"bad offBits", good, 7, 4, 5, 16},
		{"rows > items", good, 7, 4, 8, 32},
		{"zero rows", good, 7, 4, 0, 32},
		{"huge items", good, math.MaxInt, 4, 5, 32},
		{"visible too few", good, 7, 3, 5, 32},
		{"64-bit lengths", good, 7, 4, 5, 64},
	} {
		if _, err := ParseZippedVariable(c.data, nil, vl, c.items, c.vis, c.rows, c.ob); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func FuzzParseZippedFixed(f *testing.F) {
	f.Add([]byte{0x00, 0x0A, 0, 0, 0, 0x01, 0, 0, 0, 0, 0x00, 0x1E, 0, 0, 0}, uint8(0), uint8(1), uint8(0), uint8(0), uint16(3), uint16(3), uint16(4))
	f.Add([]byte{0x08, 1, 0x00, 2, 0x0C, 0x09, 3}, uint8(1), uint8(3), uint8(1), uint8(1), uint16(4), uint16(3), uint16(1))
	f.Add([]byte{1, 2, 3, 4}, uint8(0), uint8(0), uint8(0), uint8(0), uint16(2), uint16(2), uint16(2))
	f.Fuzz(func(t *testing.T, data []byte, br, bd, maxRep, maxVis uint8, items, visible, width uint16) {
		l := ZipLevels{BitsRep: int(br % 18), BitsDef: int(bd % 18), MaxRep: int(maxRep), MaxVisibleDef: int(maxVis)}
		zipCheckFixedReencode(t, data, l, int(items), int(visible), int(width))
	})
}

func FuzzParseZippedVariable(f *testing.F) {
	good := []byte{0x08, 0x01, 0, 0, 0, 0x78, 0x00, 0x01, 0, 0, 0, 0x79, 0x0C, 0x0A, 0x0B, 0x09, 0x00, 0x01, 0, 0, 0, 0x7A}
	f.Add(good, []byte{0x00, 0x0C, 0x0D, 0x0E, 0x0F, 0x16}, uint8(1), uint8(3), uint8(1), uint8(1), uint16(7), uint16(4), uint16(5), false)
	f.Add([]byte{1, 0, 0, 0, 'a', 0, 0, 0, 0}, []byte{0, 5, 9}, uint8(0), uint8(0), uint8(0), uint8(0), uint16(2), uint16(2), uint16(2), false)
	f.Add([]byte{0x01, 0x00, 2, 0, 0, 0, 0, 0, 0, 0, 'h', 'i'}, []byte(nil), uint8(0), uint8(1), uint8(0), uint8(0), uint16(2), uint16(2), uint16(2), true)
	f.Fuzz(func(t *testing.T, data, index []byte, br, bd, maxRep, maxVis uint8, items, visible, rows uint16, wide bool) {
		l := ZipLevels{BitsRep: int(br % 18), BitsDef: int(bd % 18), MaxRep: int(maxRep), MaxVisibleDef: int(maxVis)}
		offBits := 32
		if wide {
			offBits = 64
		}
		if index != nil {
			if _, err := ParseZippedVariable(data, index, l, int(items), int(visible), int(rows), offBits); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
		}
		zipCheckVariableReencode(t, data, l, int(items), int(visible), int(rows), offBits)
	})
}

func TestZipWideWordsParse(t *testing.T) {
	// 2-byte words: (9,0) visible, (9,12) invisible, (0,3) visible null.
	l := ZipLevels{BitsRep: 4, BitsDef: 5, MaxRep: 9, MaxVisibleDef: 3}
	data := []byte{0x20, 0x01, 0xAA, 0xBB, 0x2C, 0x01, 0x03, 0x00, 0xCC, 0xDD}
	z, err := ParseZippedFixed(data, l, 3, 2, 2)
	if err != nil || !slices.Equal(z.Rep, []uint16{9, 9, 0}) || !slices.Equal(z.Def, []uint16{0, 12, 3}) ||
		!bytes.Equal(z.Values, []byte{0xAA, 0xBB, 0xCC, 0xDD}) || z.NumRows != 2 {
		t.Fatalf("%+v %v", z, err)
	}
	zipCheckFixedReencode(t, data, l, 3, 2, 2)
	// 4-byte words: 8 + 9 bits.
	l = ZipLevels{BitsRep: 8, BitsDef: 9, MaxRep: 200}
	data = []byte{0x00, 0x90, 0x01, 0x00, 0x55}
	z, err = ParseZippedFixed(data, l, 1, 1, 1)
	if err != nil || z.Rep[0] != 200 || z.Def[0] != 0 || z.Values[0] != 0x55 {
		t.Fatalf("%+v %v", z, err)
	}
	zipCheckFixedReencode(t, data, l, 1, 1, 1)
	// Rep only, 64-bit lengths: rows [a, "", bc] [d].
	l = ZipLevels{BitsRep: 2, MaxRep: 2}
	data = []byte{2, 1, 0, 0, 0, 0, 0, 0, 0, 'a', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 'b', 'c', 2, 1, 0, 0, 0, 0, 0, 0, 0, 'd'}
	enc, idx, err := AppendZippedVariable(nil, l, []uint16{2, 1, 0, 2}, nil, []uint64{0, 1, 1, 3, 4}, []byte("abcd"), 64)
	if err != nil {
		t.Fatal(err)
	}
	zipHex(t, enc, data, "rep-only variable")
	zipHex(t, idx, []byte{0, 30, 40}, "rep-only index")
	z, err = ParseZippedVariable(data, idx, l, 4, 4, 2, 64)
	if err != nil || z.Def != nil || string(z.VarData) != "abcd" || !slices.Equal(z.Offsets, []uint64{0, 1, 1, 3, 4}) {
		t.Fatalf("%+v %v", z, err)
	}
}
