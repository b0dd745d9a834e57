package values

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/proto/enc21pb"
)

func pkHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pkLE(bits int, vals ...uint64) []byte {
	var out []byte
	for _, v := range vals {
		switch bits {
		case 8:
			out = append(out, byte(v))
		case 16:
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		case 32:
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		case 64:
			out = binary.LittleEndian.AppendUint64(out, v)
		}
	}
	return out
}

func TestPackedStructExamples(t *testing.T) {
	cases := []struct {
		name   string
		fields []PackedField
		n      int
		want   string
	}{
		{
			// Lance fixed_packed_struct_round_trip: {id: Int32, value: Int64}.
			name: "i32,i64",
			fields: []PackedField{
				{32, pkLE(32, 1, 2, 3, 4)},
				{64, pkLE(64, 10, 20, 30, 40)},
			},
			n: 4,
			want: "01000000 0a00000000000000" +
				"02000000 1400000000000000" +
				"03000000 1e00000000000000" +
				"04000000 2800000000000000",
		},
		{
			name: "u8,u16,u32",
			fields: []PackedField{
				{8, pkLE(8, 0x11, 0x22)},
				{16, pkLE(16, 0xA1A2, 0xB1B2)},
				{32, pkLE(32, 0x01020304, 0xF1F2F3F4)},
			},
			n:    2,
			want: "11 a2a1 04030201  22 b2b1 f4f3f2f1",
		},
		{
			name: "u64,u8,24-bit",
			fields: []PackedField{
				{64, pkLE(64, 0x0807060504030201, 0x1817161514131211, 0x2827262524232221)},
				{8, []byte{0xAA, 0xBB, 0xCC}},
				{24, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}},
			},
			n: 3,
			want: "0102030405060708 aa 010203" +
				"1112131415161718 bb 040506" +
				"2122232425262728 cc 070809",
		},
		{
			name:   "single u16",
			fields: []PackedField{{16, pkLE(16, 1, 2, 3)}},
			n:      3,
			want:   "0100 0200 0300",
		},
		{
			name:   "zero rows",
			fields: []PackedField{{16, nil}, {8, []byte{}}},
			n:      0,
			want:   "",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := pkHex(t, c.want)
			got, err := appendPackedStruct([]byte{0xEE}, c.fields, c.n)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != 0xEE || !bytes.Equal(got[1:], want) {
				t.Fatalf("packed % x\nwant    % x", got[1:], want)
			}
			bits := make([]int, len(c.fields))
			for j, f := range c.fields {
				bits[j] = f.Bits
			}
			cols, err := DecodePackedStruct(want, bits, c.n)
			if err != nil {
				t.Fatal(err)
			}
			for j, f := range c.fields {
				if !bytes.Equal(cols[j], f.Data) {
					t.Fatalf("field %d: % x, want % x", j, cols[j], f.Data)
				}
			}
		})
	}
}

func TestPackedStructEncodingExact(t *testing.T) {
	got := PackedStructEncoding([]int{32, 64, 8})
	want := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_PackedStruct{PackedStruct: &enc21pb.PackedStruct{
		BitsPerValue: []uint64{32, 64, 8},
		Values:       &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: 104}}},
	}}}
	if !proto.Equal(got, want) {
		t.Fatalf("encoding %v\nwant %v", got, want)
	}
	// Wire bytes: field 12 (packed_struct) { 1: packed [32,64,8], 2: { 1 (flat): { 1: 104 } } }.
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if wantRaw := pkHex(t, "62 0b 0a 03 20 40 08 12 04 0a 02 08 68"); !bytes.Equal(raw, wantRaw) {
		t.Fatalf("wire % x\nwant % x", raw, wantRaw)
	}
	bits, err := ParsePackedStruct(got)
	if err != nil || !slices.Equal(bits, []int{32, 64, 8}) {
		t.Fatalf("parse: %v %v", bits, err)
	}
}

func TestParsePackedStructErrors(t *testing.T) {
	ps := func(bits []uint64, values *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_PackedStruct{PackedStruct: &enc21pb.PackedStruct{BitsPerValue: bits, Values: values}}}
	}
	flat := func(b uint64) *enc21pb.CompressiveEncoding {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: b}}}
	}
	withData := flat(32)
	withData.GetFlat().Data = &enc21pb.BufferCompression{}
	cases := []struct {
		name string
		enc  *enc21pb.CompressiveEncoding
		want error
	}{
		{"nil", nil, ErrUnsupported},
		{"flat", flat(32), ErrUnsupported},
		{"no fields", ps(nil, flat(0)), ErrCorrupt},
		{"zero width", ps([]uint64{0, 32}, flat(32)), ErrCorrupt},
		{"bit width", ps([]uint64{1}, flat(1)), ErrCorrupt},
		{"12 bits", ps([]uint64{12, 4}, flat(16)), ErrCorrupt},
		{"huge width", ps([]uint64{1 << 40}, flat(1<<40)), ErrCorrupt},
		{"row too wide", ps([]uint64{1 << 29, 1 << 29, 8}, flat(1<<30+8)), ErrCorrupt},
		{"values missing", ps([]uint64{32}, nil), ErrCorrupt},
		{"values empty", ps([]uint64{32}, &enc21pb.CompressiveEncoding{}), ErrCorrupt},
		{"values sum mismatch", ps([]uint64{32, 16}, flat(32)), ErrCorrupt},
		{"values buffer compression", ps([]uint64{32}, withData), ErrUnsupported},
		{"values not flat", ps([]uint64{32}, &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &enc21pb.InlineBitpacking{UncompressedBitsPerValue: 32}}}), ErrUnsupported},
	}
	for _, c := range cases {
		_, err := ParsePackedStruct(c.enc)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		t.Logf("%s: %v", c.name, err)
	}
}

func TestAppendPackedStructErrors(t *testing.T) {
	cases := []struct {
		name   string
		fields []PackedField
		n      int
	}{
		{"no fields", nil, 1},
		{"negative rows", []PackedField{{8, nil}}, -1},
		{"zero bits", []PackedField{{0, nil}}, 0},
		{"negative bits", []PackedField{{-8, nil}}, 0},
		{"bits not multiple of 8", []PackedField{{8, []byte{1}}, {12, []byte{1, 2}}}, 1},
		{"bool", []PackedField{{1, []byte{1}}}, 8},
		{"too wide", []PackedField{{1 << 31, nil}}, 0},
		{"row too wide", []PackedField{{1 << 29, nil}, {1 << 29, nil}, {8, nil}}, 0},
		{"truncated", []PackedField{{32, make([]byte, 7)}}, 2},
		{"too long", []PackedField{{32, make([]byte, 12)}}, 2},
		{"partial value", []PackedField{{32, make([]byte, 9)}}, 2},
		{"mismatched lengths", []PackedField{{16, make([]byte, 6)}, {16, make([]byte, 4)}}, 3},
	}
	for _, c := range cases {
		dst := []byte{1, 2, 3}
		got, err := appendPackedStruct(dst, c.fields, c.n)
		if !errors.Is(err, ErrNotApplicable) {
			t.Errorf("%s: %v, want ErrNotApplicable", c.name, err)
		}
		t.Logf("%s: %v", c.name, err)
		if !bytes.Equal(got, []byte{1, 2, 3}) {
			t.Errorf("%s: dst changed to % x", c.name, got)
		}
	}
}

func TestDecodePackedStructErrors(t *testing.T) {
	cases := []struct {
		name string
		src  []byte
		bits []int
		n    int
	}{
		{"no fields", nil, nil, 0},
		{"zero bits", nil, []int{0}, 0},
		{"bits not multiple of 8", make([]byte, 3), []int{8, 12}, 1},
		{"negative bits", nil, []int{-8}, 0},
		{"too wide", nil, []int{1 << 31}, 0},
		{"negative rows", nil, []int{8}, -1},
		{"too many rows", nil, []int{8}, packedMaxRows + 1},
		{"truncated", make([]byte, 11), []int{32, 16}, 2},
		{"partial row", make([]byte, 13), []int{32, 16}, 2},
		{"extra row", make([]byte, 18), []int{32, 16}, 2},
		{"empty for rows", nil, []int{8}, 1},
	}
	for _, c := range cases {
		_, err := DecodePackedStruct(c.src, c.bits, c.n)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
		}
		t.Logf("%s: %v", c.name, err)
	}
}

var packedWidths = []int{8, 16, 24, 32, 64, 96, 128}

func TestPackedStructRandomRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		k := 1 + rng.IntN(6)
		n := rng.IntN(70)
		fields := make([]PackedField, k)
		bits := make([]int, k)
		for j := range fields {
			b := packedWidths[rng.IntN(len(packedWidths))]
			data := make([]byte, n*b/8)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			fields[j] = PackedField{b, data}
			bits[j] = b
		}
		enc, err := appendPackedStruct(nil, fields, n)
		if err != nil {
			t.Fatal(err)
		}
		row := 0
		for _, b := range bits {
			row += b / 8
		}
		if len(enc) != n*row {
			t.Fatalf("iter %d: %d bytes, want %d", iter, len(enc), n*row)
		}
		// Spot-check the layout: value i of field j sits at i*row + Σ earlier widths.
		if n > 0 {
			i, j := rng.IntN(n), rng.IntN(k)
			off := 0
			for _, b := range bits[:j] {
				off += b / 8
			}
			w := bits[j] / 8
			if !bytes.Equal(enc[i*row+off:i*row+off+w], fields[j].Data[i*w:(i+1)*w]) {
				t.Fatalf("iter %d: value %d of field %d misplaced", iter, i, j)
			}
		}
		cols, err := DecodePackedStruct(enc, bits, n)
		if err != nil {
			t.Fatal(err)
		}
		for j := range fields {
			if !bytes.Equal(cols[j], fields[j].Data) {
				t.Fatalf("iter %d field %d differs", iter, j)
			}
		}
		parsed, err := ParsePackedStruct(PackedStructEncoding(bits))
		if err != nil || !slices.Equal(parsed, bits) {
			t.Fatalf("iter %d: parse %v %v", iter, parsed, err)
		}
	}
}

// Lance's variable_packed_struct_round_trip: {id: UInt32, name: Utf8}.
func TestVariablePackedStructExamples(t *testing.T) {
	fx := func(bits int, data []byte) VarPackedField {
		return VarPackedField{PackedLayout: PackedLayout{Bits: bits}, Data: data}
	}
	vr := func(bits int, strs ...string) VarPackedField {
		offs, data := varStrings(strs...)
		return VarPackedField{PackedLayout: PackedLayout{Variable: true, Bits: bits}, Data: data, Offsets: offs}
	}
	cases := []struct {
		name    string
		fields  []VarPackedField
		n       int
		want    string
		records []int // record lengths
	}{
		{
			name:    "u32,utf8",
			fields:  []VarPackedField{fx(32, pkLE(32, 1, 2, 42)), vr(32, "a", "bcz", "")},
			n:       3,
			want:    "01000000 01000000 61" + "02000000 03000000 62637a" + "2a000000 00000000",
			records: []int{9, 11, 8},
		},
		{
			name:    "i64,large_utf8",
			fields:  []VarPackedField{fx(64, pkLE(64, 10, 20)), vr(64, "alpha", "z")},
			n:       2,
			want:    "0a00000000000000 0500000000000000 616c706861" + "1400000000000000 0100000000000000 7a",
			records: []int{21, 17},
		},
		{
			// Lance's variable_packed_struct_multi_variable_round_trip, first rows.
			name:   "utf8,binary,i32",
			fields: []VarPackedField{vr(32, "red", "blue"), vr(32, "\x01\x02", ""), fx(32, pkLE(32, 1, 2))},
			n:      2,
			want: "03000000 726564 02000000 0102 01000000" +
				"04000000 626c7565 00000000 02000000",
			records: []int{17, 16},
		},
		{
			name:    "u8,u16,binary64,u64",
			fields:  []VarPackedField{fx(8, []byte{7, 8}), fx(16, pkLE(16, 0x0102, 0x0304)), vr(64, "", "xy"), fx(64, pkLE(64, 5, 6))},
			n:       2,
			want:    "07 0201 0000000000000000 0500000000000000" + "08 0403 0200000000000000 7879 0600000000000000",
			records: []int{19, 21},
		},
		{
			name:   "no rows",
			fields: []VarPackedField{fx(32, nil), vr(32)},
			n:      0,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := pkHex(t, c.want)
			got, offs, err := AppendVariablePackedStruct([]byte{0xEE, 0xEF}, []uint64{99}, c.fields, c.n)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:2], []byte{0xEE, 0xEF}) || !bytes.Equal(got[2:], want) {
				t.Fatalf("records % x\nwant    % x", got[2:], want)
			}
			wantOffs := []uint64{99, 2}
			for _, l := range c.records {
				wantOffs = append(wantOffs, wantOffs[len(wantOffs)-1]+uint64(l))
			}
			if !slices.Equal(offs, wantOffs) {
				t.Fatalf("offsets %v, want %v", offs, wantOffs)
			}
			if VariablePackedOffsetBits(offs[1:]) != 32 {
				t.Fatal("small records need 32-bit offsets")
			}
			layouts := make([]PackedLayout, len(c.fields))
			for j, f := range c.fields {
				layouts[j] = f.PackedLayout
			}
			dec, err := DecodeVariablePackedStruct(got, offs[1:], layouts)
			if err != nil {
				t.Fatal(err)
			}
			for j, f := range c.fields {
				if dec[j].PackedLayout != f.PackedLayout || !bytes.Equal(dec[j].Data, f.Data) || !slices.Equal(dec[j].Offsets, f.Offsets) {
					t.Fatalf("field %d: %+v, want %+v", j, dec[j], f)
				}
			}
			// Record by record.
			var parts [][]byte
			for i := range c.n {
				parts, err = splitVariablePackedRecord(parts[:0], got[offs[i+1]:offs[i+2]], layouts)
				if err != nil {
					t.Fatal(err)
				}
				for j, f := range c.fields {
					var v []byte
					if f.Variable {
						v = f.Data[f.Offsets[i]:f.Offsets[i+1]]
					} else {
						v = f.Data[i*f.Bits/8 : (i+1)*f.Bits/8]
					}
					if !bytes.Equal(parts[j], v) {
						t.Fatalf("record %d field %d: % x, want % x", i, j, parts[j], v)
					}
				}
			}
		})
	}
}

// Lance's variable_packed_struct_decompress_empty_row: an empty record
// decodes as a zero fixed value and an empty variable value.
func TestVariablePackedStructEmptyRecord(t *testing.T) {
	data := pkHex(t, "01000000 01000000 61  02000000 00000000")
	layouts := []PackedLayout{{Bits: 32}, {Variable: true, Bits: 32}}
	dec, err := DecodeVariablePackedStruct(data, []uint64{0, 9, 9, 17}, layouts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dec[0].Data, pkLE(32, 1, 0, 2)) || dec[0].Offsets != nil {
		t.Fatalf("fixed field %+v", dec[0])
	}
	if !slices.Equal(dec[1].Offsets, []uint64{0, 1, 1, 1}) || string(dec[1].Data) != "a" {
		t.Fatalf("variable field %+v", dec[1])
	}
	parts, err := splitVariablePackedRecord(nil, nil, layouts)
	if err != nil || len(parts) != 2 || parts[0] != nil || parts[1] != nil {
		t.Fatalf("empty record split: %q %v", parts, err)
	}
	// All records empty, offsets not starting at 0.
	dec, err = DecodeVariablePackedStruct(data, []uint64{5, 5, 5}, layouts)
	if err != nil || !bytes.Equal(dec[0].Data, make([]byte, 8)) || !slices.Equal(dec[1].Offsets, []uint64{0, 0, 0}) || len(dec[1].Data) != 0 {
		t.Fatalf("all empty: %+v %v", dec, err)
	}
}

func TestVariablePackedStructEncodingExact(t *testing.T) {
	fsst := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Fsst{Fsst: &enc21pb.Fsst{
		SymbolTable: []byte{1, 2, 3},
		Values:      &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: FlatEncoding(32)}}},
	}}}
	fields := []VarPackedFieldEncoding{
		{PackedLayout: PackedLayout{Bits: 32}},
		{PackedLayout: PackedLayout{Variable: true, Bits: 64}},
		{PackedLayout: PackedLayout{Variable: true, Bits: 32}, Value: fsst},
	}
	got := VariablePackedStructEncoding(fields)
	want := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_VariablePackedStruct{VariablePackedStruct: &enc21pb.VariablePackedStruct{
		Fields: []*enc21pb.VariablePackedStruct_FieldEncoding{
			{Value: FlatEncoding(32), Layout: &enc21pb.VariablePackedStruct_FieldEncoding_BitsPerValue{BitsPerValue: 32}},
			{
				Value:  &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: FlatEncoding(64)}}},
				Layout: &enc21pb.VariablePackedStruct_FieldEncoding_BitsPerLength{BitsPerLength: 64},
			},
			{Value: fsst, Layout: &enc21pb.VariablePackedStruct_FieldEncoding_BitsPerLength{BitsPerLength: 32}},
		},
	}}}
	if !proto.Equal(got, want) {
		t.Fatalf("encoding %v\nwant %v", got, want)
	}
	// Wire bytes of the first two fields: field 13 (variable_packed_struct)
	// { 1: { 1 (value): flat{32}, 2 (bits_per_value): 32 },
	//   1: { 1: variable{ 1 (offsets): flat{64} }, 3 (bits_per_length): 64 } }.
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(VariablePackedStructEncoding(fields[:2]))
	if err != nil {
		t.Fatal(err)
	}
	if wantRaw := pkHex(t, "6a 18  0a 08 0a 04 0a 02 08 20 10 20  0a 0c 0a 08 12 06 0a 04 0a 02 08 40 18 40"); !bytes.Equal(raw, wantRaw) {
		t.Fatalf("wire % x\nwant % x", raw, wantRaw)
	}
	parsed, err := ParseVariablePackedStruct(got)
	if err != nil {
		t.Fatal(err)
	}
	wantLayouts := []PackedLayout{{Bits: 32}, {Variable: true, Bits: 64}, {Variable: true, Bits: 32}}
	if !slices.Equal(VarPackedLayouts(parsed), wantLayouts) {
		t.Fatalf("layouts %v", VarPackedLayouts(parsed))
	}
	if parsed[2].Value != fsst || !proto.Equal(parsed[0].Value, FlatEncoding(32)) {
		t.Fatalf("values %v", parsed)
	}
}

func TestParseVariablePackedStructErrors(t *testing.T) {
	vps := func(fs ...*enc21pb.VariablePackedStruct_FieldEncoding) *enc21pb.CompressiveEncoding {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_VariablePackedStruct{VariablePackedStruct: &enc21pb.VariablePackedStruct{Fields: fs}}}
	}
	fixed := func(v *enc21pb.CompressiveEncoding, bits uint64) *enc21pb.VariablePackedStruct_FieldEncoding {
		return &enc21pb.VariablePackedStruct_FieldEncoding{Value: v, Layout: &enc21pb.VariablePackedStruct_FieldEncoding_BitsPerValue{BitsPerValue: bits}}
	}
	variable := func(v *enc21pb.CompressiveEncoding, bits uint64) *enc21pb.VariablePackedStruct_FieldEncoding {
		return &enc21pb.VariablePackedStruct_FieldEncoding{Value: v, Layout: &enc21pb.VariablePackedStruct_FieldEncoding_BitsPerLength{BitsPerLength: bits}}
	}
	varEnc := func(off *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: off}}}
	}
	general := func(c *enc21pb.BufferCompression) *enc21pb.CompressiveEncoding {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_General{General: &enc21pb.General{Compression: c, Values: varEnc(FlatEncoding(32))}}}
	}
	good := fixed(FlatEncoding(32), 32)
	cases := []struct {
		name string
		enc  *enc21pb.CompressiveEncoding
		want error
	}{
		{"nil", nil, ErrUnsupported},
		{"not packed", FlatEncoding(8), ErrUnsupported},
		{"zero fields", vps(), ErrCorrupt},
		{"missing value", vps(good, fixed(nil, 32)), ErrCorrupt},
		{"empty value", vps(fixed(&enc21pb.CompressiveEncoding{}, 32)), ErrCorrupt},
		{"missing layout", vps(&enc21pb.VariablePackedStruct_FieldEncoding{Value: FlatEncoding(32)}), ErrCorrupt},
		{"fixed zero bits", vps(fixed(FlatEncoding(8), 0)), ErrCorrupt},
		{"fixed 12 bits", vps(fixed(FlatEncoding(12), 12)), ErrCorrupt},
		{"fixed huge", vps(fixed(FlatEncoding(8), 1<<40)), ErrCorrupt},
		{"fixed as variable", vps(fixed(varEnc(FlatEncoding(32)), 32)), ErrUnsupported},
		{"fixed as bitpacked", vps(fixed(&enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &enc21pb.InlineBitpacking{UncompressedBitsPerValue: 32}}}, 32)), ErrUnsupported},
		{"variable 16-bit lengths", vps(good, variable(varEnc(FlatEncoding(16)), 16)), ErrUnsupported},
		{"variable 0-bit lengths", vps(variable(varEnc(FlatEncoding(32)), 0)), ErrUnsupported},
		{"variable huge lengths", vps(variable(varEnc(FlatEncoding(32)), 1<<40)), ErrUnsupported},
		{"variable as flat", vps(variable(FlatEncoding(32), 32)), ErrUnsupported},
		{"variable offsets not flat", vps(variable(varEnc(&enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &enc21pb.InlineBitpacking{UncompressedBitsPerValue: 32}}}), 32)), ErrUnsupported},
		{"variable offsets missing", vps(variable(varEnc(nil), 32)), ErrUnsupported},
		{"variable offsets too wide", vps(variable(varEnc(FlatEncoding(255)), 32)), ErrCorrupt},
		{"general without scheme", vps(variable(general(nil), 32)), ErrCorrupt},
	}
	for _, c := range cases {
		_, err := ParseVariablePackedStruct(c.enc)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		t.Logf("%s: %v", c.name, err)
	}
	// Accepted value encodings.
	fsl := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{FixedSizeList: &enc21pb.FixedSizeList{ItemsPerValue: 2, Values: FlatEncoding(32)}}}
	cst := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: &enc21pb.Constant{Value: []byte{1, 2, 3, 4}}}}
	fsst := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Fsst{Fsst: &enc21pb.Fsst{SymbolTable: []byte{0}, Values: varEnc(FlatEncoding(32))}}}
	ok := vps(good, fixed(fsl, 64), fixed(cst, 32), fixed(PackedStructEncoding([]int{8, 16}), 24),
		variable(varEnc(FlatEncoding(32)), 32), variable(fsst, 32),
		variable(general(&enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD}), 64),
		variable(vps(good, variable(varEnc(FlatEncoding(32)), 32)), 32))
	parsed, err := ParseVariablePackedStruct(ok)
	if err != nil || len(parsed) != 8 {
		t.Fatalf("accepted encodings: %v %v", parsed, err)
	}
}

func TestAppendVariablePackedStructErrors(t *testing.T) {
	fx := func(bits int, data []byte) VarPackedField {
		return VarPackedField{PackedLayout: PackedLayout{Bits: bits}, Data: data}
	}
	vr := func(bits int, offs []uint64, data []byte) VarPackedField {
		return VarPackedField{PackedLayout: PackedLayout{Variable: true, Bits: bits}, Data: data, Offsets: offs}
	}
	cases := []struct {
		name   string
		fields []VarPackedField
		n      int
	}{
		{"no fields", nil, 0},
		{"negative rows", []VarPackedField{fx(8, nil)}, -1},
		{"fixed zero bits", []VarPackedField{fx(0, nil)}, 0},
		{"fixed bits not multiple of 8", []VarPackedField{fx(12, make([]byte, 3))}, 2},
		{"fixed too wide", []VarPackedField{fx(1<<31, nil)}, 0},
		{"fixed with offsets", []VarPackedField{{PackedLayout: PackedLayout{Bits: 8}, Data: []byte{1}, Offsets: []uint64{0, 1}}}, 1},
		{"fixed truncated", []VarPackedField{fx(32, make([]byte, 7))}, 2},
		{"fixed too long", []VarPackedField{fx(32, make([]byte, 12))}, 2},
		{"fields mismatched", []VarPackedField{fx(8, []byte{1, 2}), vr(32, []uint64{0, 1}, []byte{1})}, 2},
		{"variable 16-bit lengths", []VarPackedField{vr(16, []uint64{0, 1}, []byte{1})}, 1},
		{"variable 8-bit lengths", []VarPackedField{vr(8, []uint64{0, 1}, []byte{1})}, 1},
		{"variable missing offsets", []VarPackedField{vr(32, nil, []byte{1})}, 1},
		{"variable too many offsets", []VarPackedField{vr(32, []uint64{0, 1, 1}, []byte{1})}, 1},
		{"variable decreasing", []VarPackedField{vr(32, []uint64{0, 2, 1}, []byte{1, 2})}, 2},
		{"variable beyond data", []VarPackedField{vr(64, []uint64{0, 1, 3}, []byte{1, 2})}, 2},
	}
	for _, c := range cases {
		got, offs, err := AppendVariablePackedStruct([]byte{9}, []uint64{7}, c.fields, c.n)
		if !errors.Is(err, ErrNotApplicable) {
			t.Errorf("%s: %v, want ErrNotApplicable", c.name, err)
		}
		t.Logf("%s: %v", c.name, err)
		if !bytes.Equal(got, []byte{9}) || !slices.Equal(offs, []uint64{7}) {
			t.Errorf("%s: outputs changed: % x %v", c.name, got, offs)
		}
	}
}

func TestDecodeVariablePackedStructErrors(t *testing.T) {
	u32v := []PackedLayout{{Bits: 32}, {Variable: true, Bits: 32}}
	good := pkHex(t, "01000000 01000000 61  02000000 00000000")
	cases := []struct {
		name    string
		data    []byte
		offsets []uint64
		layouts []PackedLayout
		want    error
	}{
		{"no layouts", good, []uint64{0, 9}, nil, ErrCorrupt},
		{"fixed zero bits", good, []uint64{0, 9}, []PackedLayout{{Bits: 0}}, ErrCorrupt},
		{"fixed 12 bits", good, []uint64{0, 9}, []PackedLayout{{Bits: 12}}, ErrCorrupt},
		{"fixed too wide", good, []uint64{0, 9}, []PackedLayout{{Bits: 1 << 31}}, ErrCorrupt},
		{"fixed row too wide", good, []uint64{0, 9}, []PackedLayout{{Bits: 1 << 29}, {Bits: 1 << 29}, {Bits: 8}}, ErrCorrupt},
		{"16-bit lengths", good, []uint64{0, 9}, []PackedLayout{{Variable: true, Bits: 16}}, ErrUnsupported},
		{"no offsets", good, nil, u32v, ErrCorrupt},
		{"record beyond data", good, []uint64{0, 9, 18}, u32v, ErrCorrupt},
		{"record reversed", good, []uint64{9, 0}, u32v, ErrCorrupt},
		{"offsets decrease", good, []uint64{0, 9, 8, 17}, u32v, ErrCorrupt},
		{"fixed truncated", good, []uint64{0, 3}, u32v, ErrCorrupt},
		{"length prefix truncated", good, []uint64{0, 6}, u32v, ErrCorrupt},
		{"64-bit length prefix truncated", good, []uint64{0, 9}, []PackedLayout{{Bits: 32}, {Variable: true, Bits: 64}}, ErrCorrupt},
		{"value beyond record", good, []uint64{0, 8}, u32v, ErrCorrupt},
		{"huge length", pkHex(t, "01000000 ffffffff 61"), []uint64{0, 9}, u32v, ErrCorrupt},
		{"huge 64-bit length", pkHex(t, "ffffffffffffffff 61"), []uint64{0, 9}, []PackedLayout{{Variable: true, Bits: 64}}, ErrCorrupt},
		{"trailing bytes", good, []uint64{0, 10}, u32v, ErrCorrupt},
		{"trailing bytes in last record", append(slices.Clone(good), 0), []uint64{0, 9, 18}, u32v, ErrCorrupt},
		{"zero fill too large", nil, make([]uint64, 1026), []PackedLayout{{Bits: 1 << 23}}, ErrCorrupt},
	}
	for _, c := range cases {
		_, err := DecodeVariablePackedStruct(c.data, c.offsets, c.layouts)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		t.Logf("%s: %v", c.name, err)
		if len(c.offsets) == 2 && c.offsets[0] <= c.offsets[1] && c.offsets[1] <= uint64(len(c.data)) {
			rec := c.data[c.offsets[0]:c.offsets[1]]
			dst := [][]byte{{1}}
			got, err := splitVariablePackedRecord(dst, rec, c.layouts)
			if !errors.Is(err, c.want) || len(got) != 1 {
				t.Errorf("%s: split: %v (%d parts), want %v", c.name, err, len(got), c.want)
			}
		}
	}
}

func TestVariablePackedOffsetBits(t *testing.T) {
	if VariablePackedOffsetBits(nil) != 32 || VariablePackedOffsetBits([]uint64{10, 10 + 1<<32 - 1}) != 32 || VariablePackedOffsetBits([]uint64{10, 10 + 1<<32}) != 64 {
		t.Fatal("offset width rule")
	}
}

func randVarPackedFields(rng *rand.Rand, n int) []VarPackedField {
	k := 1 + rng.IntN(5)
	fields := make([]VarPackedField, k)
	for j := range fields {
		if rng.IntN(2) == 0 {
			b := packedWidths[rng.IntN(len(packedWidths))]
			data := make([]byte, n*b/8)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			fields[j] = VarPackedField{PackedLayout: PackedLayout{Bits: b}, Data: data}
			continue
		}
		// Offsets need not start at 0.
		base := uint64(rng.IntN(4))
		offs := []uint64{base}
		for range n {
			l := uint64(rng.IntN(12))
			if rng.IntN(4) == 0 {
				l = 0
			}
			offs = append(offs, offs[len(offs)-1]+l)
		}
		data := make([]byte, offs[n]+uint64(rng.IntN(3)))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		fields[j] = VarPackedField{PackedLayout: PackedLayout{Variable: true, Bits: 32 << rng.IntN(2)}, Data: data, Offsets: offs}
	}
	return fields
}

func TestVariablePackedStructRandomRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := range 300 {
		n := rng.IntN(40)
		fields := randVarPackedFields(rng, n)
		layouts := make([]PackedLayout, len(fields))
		for j, f := range fields {
			layouts[j] = f.PackedLayout
		}
		recs, offs, err := AppendVariablePackedStruct(nil, nil, fields, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(offs) != n+1 || offs[0] != 0 || offs[n] != uint64(len(recs)) {
			t.Fatalf("iter %d: offsets %v for %d bytes", iter, offs, len(recs))
		}
		dec, err := DecodeVariablePackedStruct(recs, offs, layouts)
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		for j, f := range fields {
			d := dec[j]
			if !f.Variable {
				if !bytes.Equal(d.Data, f.Data) || d.Offsets != nil {
					t.Fatalf("iter %d fixed field %d differs", iter, j)
				}
				continue
			}
			for i := range n {
				got := d.Data[d.Offsets[i]:d.Offsets[i+1]]
				if !bytes.Equal(got, f.Data[f.Offsets[i]:f.Offsets[i+1]]) {
					t.Fatalf("iter %d field %d value %d differs", iter, j, i)
				}
			}
			if d.Offsets[0] != 0 || d.Offsets[n] != uint64(len(d.Data)) {
				t.Fatalf("iter %d field %d offsets %v", iter, j, d.Offsets)
			}
		}
		// Re-encoding the decoded columns reproduces the records.
		again, offs2, err := AppendVariablePackedStruct(nil, nil, dec, n)
		if err != nil || !bytes.Equal(again, recs) || !slices.Equal(offs2, offs) {
			t.Fatalf("iter %d: re-encode differs (%v)", iter, err)
		}
		fe := make([]VarPackedFieldEncoding, len(layouts))
		for j, l := range layouts {
			fe[j].PackedLayout = l
		}
		parsed, err := ParseVariablePackedStruct(VariablePackedStructEncoding(fe))
		if err != nil || !slices.Equal(VarPackedLayouts(parsed), layouts) {
			t.Fatalf("iter %d: parse %v", iter, err)
		}
	}
}

func TestPackedAllocs(t *testing.T) {
	fields := []PackedField{{32, make([]byte, 4*1000)}, {64, make([]byte, 8*1000)}, {8, make([]byte, 1000)}}
	dst := make([]byte, 0, 13*1000)
	if a := testing.AllocsPerRun(20, func() { _, _ = appendPackedStruct(dst[:0], fields, 1000) }); a != 0 {
		t.Errorf("appendPackedStruct: %v allocs", a)
	}
	enc, _ := appendPackedStruct(nil, fields, 1000)
	if a := testing.AllocsPerRun(20, func() { _, _ = DecodePackedStruct(enc, []int{32, 64, 8}, 1000) }); a > 2 {
		t.Errorf("DecodePackedStruct: %v allocs", a)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	vf := randVarPackedFields(rng, 1000)
	recs, offs, err := AppendVariablePackedStruct(nil, nil, vf, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() { _, _, _ = AppendVariablePackedStruct(recs[:0], offs[:0], vf, 1000) }); a != 0 {
		t.Errorf("AppendVariablePackedStruct: %v allocs", a)
	}
	layouts := make([]PackedLayout, len(vf))
	for j, f := range vf {
		layouts[j] = f.PackedLayout
	}
	if a := testing.AllocsPerRun(20, func() { _, _ = DecodeVariablePackedStruct(recs, offs, layouts) }); a > 4 {
		t.Errorf("DecodeVariablePackedStruct: %v allocs", a)
	}
	parts := make([][]byte, 0, len(layouts))
	if a := testing.AllocsPerRun(20, func() { _, _ = splitVariablePackedRecord(parts[:0], recs[offs[0]:offs[1]], layouts) }); a != 0 {
		t.Errorf("splitVariablePackedRecord: %v allocs", a)
	}
}

// fuzzPackedBits maps a header byte to a field width, mostly valid.
func fuzzPackedBits(b byte) int {
	if b >= 0xF0 {
		return int(b & 0x0F) // 0..15: mostly invalid
	}
	return 8 * (1 + int(b)%12)
}

// FuzzDecodePackedStruct input: [k][k width bytes][row count byte][buffer].
func FuzzDecodePackedStruct(f *testing.F) {
	seed := func(bits []int, n int, fields []PackedField) {
		hdr := []byte{byte(len(bits))}
		for _, b := range bits {
			hdr = append(hdr, byte(b/8-1))
		}
		hdr = append(hdr, byte(n))
		buf, err := appendPackedStruct(hdr, fields, n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(buf)
	}
	seed([]int{32, 64}, 4, []PackedField{{32, pkLE(32, 1, 2, 3, 4)}, {64, pkLE(64, 10, 20, 30, 40)}})
	seed([]int{8, 16, 32}, 2, []PackedField{{8, []byte{1, 2}}, {16, pkLE(16, 3, 4)}, {32, pkLE(32, 5, 6)}})
	seed([]int{24}, 3, []PackedField{{24, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}}})
	seed([]int{16, 8}, 0, []PackedField{{16, nil}, {8, nil}})
	f.Add([]byte{})
	f.Add([]byte{1, 0xF3, 1, 0})
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		k := int(in[0] % 8)
		if len(in) < 2+k {
			return
		}
		bits := make([]int, k)
		for j := range bits {
			bits[j] = fuzzPackedBits(in[1+j])
		}
		n := int(in[1+k])
		src := in[2+k:]
		cols, err := DecodePackedStruct(src, bits, n)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		fields := make([]PackedField, k)
		for j := range fields {
			fields[j] = PackedField{bits[j], cols[j]}
		}
		again, err := appendPackedStruct(nil, fields, n)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(again, src) {
			t.Fatalf("re-encode % x\nwant       % x", again, src)
		}
		if _, err := ParsePackedStruct(PackedStructEncoding(bits)); err != nil {
			t.Fatalf("parse: %v", err)
		}
	})
}

// fuzzVarLayout maps a header byte to a layout: high bit = variable.
func fuzzVarLayout(b byte) PackedLayout {
	if b&0x80 != 0 {
		switch b & 0x7F {
		case 0x7F:
			return PackedLayout{Variable: true, Bits: 16} // invalid
		default:
			return PackedLayout{Variable: true, Bits: 32 << (b & 1)}
		}
	}
	return PackedLayout{Bits: fuzzPackedBits(b)}
}

// FuzzDecodeVariablePackedStruct input:
// [k][k layout bytes][m][m record length bytes][record bytes].
func FuzzDecodeVariablePackedStruct(f *testing.F) {
	seed := func(layouts []byte, fields []VarPackedField, n int) {
		hdr := []byte{byte(len(layouts))}
		hdr = append(hdr, layouts...)
		recs, offs, err := AppendVariablePackedStruct(nil, nil, fields, n)
		if err != nil {
			f.Fatal(err)
		}
		hdr = append(hdr, byte(n))
		for i := range n {
			l := offs[i+1] - offs[i]
			if l > 255 {
				f.Fatalf("seed record %d too long", i)
			}
			hdr = append(hdr, byte(l))
		}
		f.Add(append(hdr, recs...))
	}
	o1, d1 := varStrings("a", "bcz", "")
	seed([]byte{3, 0x80}, []VarPackedField{
		{PackedLayout: PackedLayout{Bits: 32}, Data: pkLE(32, 1, 2, 42)},
		{PackedLayout: PackedLayout{Variable: true, Bits: 32}, Data: d1, Offsets: o1},
	}, 3)
	o2, d2 := varStrings("alpha", "z")
	o3, d3 := varStrings("", "xy")
	seed([]byte{0, 1, 0x81, 0x80, 7}, []VarPackedField{
		{PackedLayout: PackedLayout{Bits: 8}, Data: []byte{7, 8}},
		{PackedLayout: PackedLayout{Bits: 16}, Data: pkLE(16, 1, 2)},
		{PackedLayout: PackedLayout{Variable: true, Bits: 64}, Data: d2, Offsets: o2},
		{PackedLayout: PackedLayout{Variable: true, Bits: 32}, Data: d3, Offsets: o3},
		{PackedLayout: PackedLayout{Bits: 64}, Data: pkLE(64, 5, 6)},
	}, 2)
	// Lance's empty-row example: records of 9, 0 and 8 bytes.
	f.Add(append([]byte{2, 3, 0x80, 3, 9, 0, 8}, pkHex(f, "01000000 01000000 61  02000000 00000000")...))
	f.Add([]byte{1, 0xFF, 1, 2, 0, 0})
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		k := int(in[0] % 8)
		if len(in) < 2+k {
			return
		}
		layouts := make([]PackedLayout, k)
		for j := range layouts {
			layouts[j] = fuzzVarLayout(in[1+j])
		}
		m := int(in[1+k])
		if len(in) < 2+k+m {
			return
		}
		offsets := []uint64{0}
		for _, l := range in[2+k : 2+k+m] {
			offsets = append(offsets, offsets[len(offsets)-1]+uint64(l))
		}
		data := in[2+k+m:]
		dec, err := DecodeVariablePackedStruct(data, offsets, layouts)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v wraps neither ErrCorrupt nor ErrUnsupported", err)
			}
			return
		}
		// Re-encode: non-empty records are reproduced exactly; empty ones
		// come back as an all-zero placeholder record.
		again, offs2, err := AppendVariablePackedStruct(nil, nil, dec, m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		placeholder := 0
		for _, l := range layouts {
			placeholder += l.Bits / 8
		}
		var parts [][]byte
		for i := range m {
			rec := data[offsets[i]:offsets[i+1]]
			got := again[offs2[i]:offs2[i+1]]
			if len(rec) == 0 {
				if len(got) != placeholder || !bytes.Equal(got, make([]byte, placeholder)) {
					t.Fatalf("record %d: empty record re-encoded as % x", i, got)
				}
			} else if !bytes.Equal(got, rec) {
				t.Fatalf("record %d: re-encoded % x\nwant            % x", i, got, rec)
			}
			parts, err = splitVariablePackedRecord(parts[:0], rec, layouts)
			if err != nil {
				t.Fatalf("record %d: split: %v", i, err)
			}
			for j, l := range layouts {
				var v []byte
				if l.Variable {
					v = dec[j].Data[dec[j].Offsets[i]:dec[j].Offsets[i+1]]
				} else if len(rec) > 0 {
					v = dec[j].Data[i*l.Bits/8 : (i+1)*l.Bits/8]
				}
				if !bytes.Equal(parts[j], v) {
					t.Fatalf("record %d field %d: split % x, decode % x", i, j, parts[j], v)
				}
			}
		}
		fe := make([]VarPackedFieldEncoding, k)
		for j, l := range layouts {
			fe[j].PackedLayout = l
		}
		parsed, err := ParseVariablePackedStruct(VariablePackedStructEncoding(fe))
		if err != nil || !slices.Equal(VarPackedLayouts(parsed), layouts) {
			t.Fatalf("parse: %v", err)
		}
	})
}
