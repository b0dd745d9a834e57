package format

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/proto/enc20pb"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/proto/filepb"
)

// unhex decodes a space-separated hex string.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

var det = proto.MarshalOptions{Deterministic: true}

// container.md §1.2.
func TestFooterExample(t *testing.T) {
	want := unhex(t, `00 10 00 00 00 00 00 00  00 11 00 00 00 00 00 00  20 11 00 00 00 00 00 00
		01 00 00 00  02 00 00 00  02 00  01 00  4C 41 4E 43`)
	f := Footer{ColumnMetaStart: 0x1000, ColumnMetaOffset: 0x1100, GlobalBufOffset: 0x1120,
		NumGlobalBuffers: 1, NumColumns: 2, Major: 2, Minor: 1}
	got := AppendFooter(nil, f)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendFooter:\n got % x\nwant % x", got, want)
	}
	if len(got) != FooterSize {
		t.Fatalf("footer is %d bytes", len(got))
	}
	// AppendFooter appends.
	pre := []byte{1, 2, 3}
	if got := AppendFooter(pre, f); !bytes.Equal(got[:3], pre) || !bytes.Equal(got[3:], want) {
		t.Fatalf("AppendFooter does not append: % x", got)
	}
	back, err := ParseFooter(want)
	if err != nil {
		t.Fatal(err)
	}
	if back != f {
		t.Fatalf("ParseFooter = %+v, want %+v", back, f)
	}
}

func TestParseFooterErrors(t *testing.T) {
	good := AppendFooter(nil, Footer{NumGlobalBuffers: 1, Major: 2, Minor: 2})
	badMagic := append([]byte(nil), good...)
	badMagic[39] = 'D'
	lower := append([]byte(nil), good...)
	copy(lower[36:], "lanc")
	for name, b := range map[string][]byte{
		"empty":     nil,
		"short":     good[1:],
		"8 bytes":   good[32:],
		"long":      append(append([]byte(nil), good...), 0),
		"bad magic": badMagic,
		"lowercase": lower,
	} {
		if _, err := ParseFooter(b); !errors.Is(err, ErrNotLance) {
			t.Errorf("%s: err = %v, want ErrNotLance", name, err)
		}
	}
}

func TestOffsetTable(t *testing.T) {
	rs := []BufferRange{{0, 10}, {64, 40}, {128, 0}}
	b := AppendOffsetTable(nil, rs)
	if len(b) != 48 {
		t.Fatalf("table is %d bytes", len(b))
	}
	got, err := ParseOffsetTable(b, 3, 128)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		if got[i] != rs[i] {
			t.Fatalf("entry %d = %+v, want %+v", i, got[i], rs[i])
		}
	}
	if _, err := ParseOffsetTable(b, 2, 1000); !errors.Is(err, ErrCorruptFile) {
		t.Errorf("wrong length: %v", err)
	}
	if _, err := ParseOffsetTable(b, 3, 100); !errors.Is(err, ErrCorruptFile) {
		t.Errorf("entry past limit: %v", err)
	}
	// Overflowing position + size.
	huge := AppendOffsetTable(nil, []BufferRange{{10, ^uint64(0) - 5}})
	if _, err := ParseOffsetTable(huge, 1, 1000); !errors.Is(err, ErrCorruptFile) {
		t.Errorf("overflow: %v", err)
	}
}

// container.md §2.4: the Any of the column-level encoding.
func TestMarshalAnyColumnEncoding(t *testing.T) {
	if len(URLColumnEncoding) != 31 {
		t.Fatalf("URL is %d bytes", len(URLColumnEncoding))
	}
	want := append(append(unhex(t, "0A 1F"), URLColumnEncoding...), unhex(t, "12 02 0A 00")...)
	got, err := MarshalAny(URLColumnEncoding, &enc20pb.ColumnEncoding{
		ColumnEncoding: &enc20pb.ColumnEncoding_Values{Values: &emptypb.Empty{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("MarshalAny:\n got % x\nwant % x", got, want)
	}
	name, val, err := UnmarshalAny(got)
	if err != nil {
		t.Fatal(err)
	}
	if name != "lance.encodings.ColumnEncoding" || !bytes.Equal(val, []byte{0x0A, 0x00}) {
		t.Fatalf("UnmarshalAny = %q % x", name, val)
	}
}

func TestUnmarshalAnyURLs(t *testing.T) {
	mk := func(url string) []byte {
		b, err := det.Marshal(&anypb.Any{TypeUrl: url, Value: []byte{1, 2}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, url := range []string{
		"/lance.encodings21.PageLayout",
		"type.googleapis.com/lance.encodings21.PageLayout",
		"example.com/a/b/lance.encodings21.PageLayout",
	} {
		name, val, err := UnmarshalAny(mk(url))
		if err != nil {
			t.Errorf("%q: %v", url, err)
			continue
		}
		if name != "lance.encodings21.PageLayout" || !bytes.Equal(val, []byte{1, 2}) {
			t.Errorf("%q: got %q % x", url, name, val)
		}
	}
	for _, url := range []string{"lance.encodings21.PageLayout", "", "type.googleapis.com/"} {
		if _, _, err := UnmarshalAny(mk(url)); !errors.Is(err, ErrCorruptFile) {
			t.Errorf("%q: err = %v, want ErrCorruptFile", url, err)
		}
	}
	if _, _, err := UnmarshalAny([]byte{0x0A, 0x05, 'a'}); !errors.Is(err, ErrCorruptFile) {
		t.Errorf("truncated Any: err = %v", err)
	}
}

// container.md §3.1: the example Field and FileDescriptor.
func TestSchemaToLanceExample(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil)
	ls, cols, err := SchemaToLance(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Fields) != 1 || len(cols) != 1 || cols[0].Path != "x" || cols[0].ID != 0 {
		t.Fatalf("fields %v cols %+v", ls.Fields, cols)
	}
	fieldBytes := unhex(t, "12 01 78 20 FF FF FF FF FF FF FF FF FF 01 2A 05 69 6E 74 33 32 38 01")
	got, err := det.Marshal(ls.Fields[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, fieldBytes) {
		t.Fatalf("Field:\n got % x\nwant % x", got, fieldBytes)
	}
	wantFD := append(append(unhex(t, "0A 19 0A 17"), fieldBytes...), 0x10, 0x03)
	gotFD, err := det.Marshal(&filepb.FileDescriptor{Schema: ls, Length: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotFD, wantFD) {
		t.Fatalf("FileDescriptor:\n got % x\nwant % x", gotFD, wantFD)
	}
	// And back.
	var fd filepb.FileDescriptor
	if err := proto.Unmarshal(wantFD, &fd); err != nil {
		t.Fatal(err)
	}
	back, bcols, err := SchemaFromLance(fd.Schema)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(s) || len(bcols) != 1 || bcols[0].Path != "x" {
		t.Fatalf("SchemaFromLance = %s %+v", back, bcols)
	}
}

func TestSchemaRoundTripNested(t *testing.T) {
	md := arrow.NewMetadata([]string{"k", "ARROW:extension:name"}, []string{"v", "my.ext"})
	s := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: md},
		{Name: "b", Type: arrow.StructOf(
			arrow.Field{Name: "f1", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "f2", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
		), Nullable: true},
		{Name: "c", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32)},
	}, nil)
	ls, cols, err := SchemaToLance(s)
	if err != nil {
		t.Fatal(err)
	}
	var ids, parents []int32
	for _, f := range ls.Fields {
		ids = append(ids, f.Id)
		parents = append(parents, f.ParentId)
	}
	wantIDs := []int32{0, 1, 2, 3, 4, 5}
	wantParents := []int32{-1, -1, 1, 1, 3, -1}
	for i := range wantIDs {
		if i >= len(ids) || ids[i] != wantIDs[i] || parents[i] != wantParents[i] {
			t.Fatalf("ids %v parents %v", ids, parents)
		}
	}
	if ls.Fields[0].ExtensionName != "my.ext" {
		t.Errorf("extension name %q", ls.Fields[0].ExtensionName)
	}
	var paths []string
	for _, c := range cols {
		paths = append(paths, c.Path)
	}
	if strings.Join(paths, ",") != "a,b.f1,b.f2.item,c" {
		t.Errorf("columns %v", paths)
	}
	back, bcols, err := SchemaFromLance(ls)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(s) {
		t.Errorf("round trip:\n got %s\nwant %s", back, s)
	}
	if len(bcols) != len(cols) {
		t.Errorf("columns %d, want %d", len(bcols), len(cols))
	}
	if _, _, err := SchemaToLance(arrow.NewSchema([]arrow.Field{{Name: "a.b", Type: arrow.PrimitiveTypes.Int8}}, nil)); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("dotted top-level name: %v", err)
	}
}

// container.md §3.3.
func TestLogicalTypes(t *testing.T) {
	want := map[string]string{
		"int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
		"uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
		"float32": "float", "float64": "double", "date32": "date32:day",
	}
	tsWant := map[string]string{
		(&arrow.TimestampType{Unit: arrow.Second}).String():                                    "timestamp:s:-",
		(&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}).String():              "timestamp:ms:UTC",
		(&arrow.TimestampType{Unit: arrow.Microsecond}).String():                               "timestamp:us:-",
		(&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}).String(): "timestamp:us:America/New_York",
		(&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}).String():               "timestamp:ns:UTC",
	}
	type tc struct {
		dt       arrow.DataType
		s        string
		children []arrow.Field
	}
	var cases []tc
	for _, dt := range corpus.FixedWidthTypes {
		s, ok := want[dt.Name()]
		if dt.ID() == arrow.TIMESTAMP {
			s, ok = tsWant[dt.String()]
		}
		if !ok {
			t.Fatalf("no expected string for corpus type %s", dt)
		}
		cases = append(cases, tc{dt: dt, s: s})
	}
	structKids := []arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String},
	}
	listKid := arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	cases = append(cases,
		tc{dt: arrow.FixedWidthTypes.Boolean, s: "bool"},
		tc{dt: arrow.BinaryTypes.String, s: "string"},
		tc{dt: arrow.BinaryTypes.LargeString, s: "large_string"},
		tc{dt: arrow.BinaryTypes.Binary, s: "binary"},
		tc{dt: arrow.BinaryTypes.LargeBinary, s: "large_binary"},
		tc{dt: arrow.Null, s: "null"},
		tc{dt: arrow.FixedWidthTypes.Float16, s: "halffloat"},
		tc{dt: arrow.FixedWidthTypes.Date64, s: "date64:ms"},
		tc{dt: arrow.FixedWidthTypes.Time32s, s: "time32:s"},
		tc{dt: arrow.FixedWidthTypes.Time32ms, s: "time32:ms"},
		tc{dt: arrow.FixedWidthTypes.Time64us, s: "time64:us"},
		tc{dt: arrow.FixedWidthTypes.Time64ns, s: "time64:ns"},
		tc{dt: arrow.FixedWidthTypes.Duration_s, s: "duration:s"},
		tc{dt: arrow.FixedWidthTypes.Duration_ns, s: "duration:ns"},
		tc{dt: &arrow.FixedSizeBinaryType{ByteWidth: 16}, s: "fixed_size_binary:16"},
		tc{dt: &arrow.Decimal128Type{Precision: 10, Scale: 2}, s: "decimal:128:10:2"},
		tc{dt: &arrow.Decimal256Type{Precision: 40, Scale: 5}, s: "decimal:256:40:5"},
		tc{dt: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32), s: "fixed_size_list:float:128"},
		tc{dt: arrow.FixedSizeListOf(10, arrow.PrimitiveTypes.Int32), s: "fixed_size_list:int32:10"},
		tc{dt: arrow.FixedSizeListOf(3, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)), s: "fixed_size_list:fixed_size_list:float:2:3"},
		tc{dt: arrow.ListOfField(listKid), s: "list", children: []arrow.Field{listKid}},
		tc{dt: arrow.LargeListOfField(listKid), s: "large_list", children: []arrow.Field{listKid}},
		tc{dt: arrow.StructOf(structKids...), s: "struct", children: structKids},
		tc{dt: arrow.ListOfField(arrow.Field{Name: "item", Type: arrow.StructOf(structKids...), Nullable: true}), s: "list.struct",
			children: []arrow.Field{{Name: "item", Type: arrow.StructOf(structKids...), Nullable: true}}},
		tc{dt: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "+08:00"}, s: "timestamp:us:+08:00"},
		tc{dt: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, s: "dict:string:int32:false"},
	)
	for _, c := range cases {
		t.Run(c.s, func(t *testing.T) {
			s, err := LogicalType(c.dt)
			if err != nil {
				t.Fatalf("LogicalType(%s): %v", c.dt, err)
			}
			if s != c.s {
				t.Fatalf("LogicalType(%s) = %q, want %q", c.dt, s, c.s)
			}
			back, err := ParseLogicalType(s, c.children)
			if err != nil {
				t.Fatalf("ParseLogicalType(%q): %v", s, err)
			}
			if !arrow.TypeEqual(back, c.dt) {
				t.Fatalf("ParseLogicalType(%q) = %s, want %s", s, back, c.dt)
			}
		})
	}
}

func TestLogicalTypeUnsupported(t *testing.T) {
	for _, dt := range []arrow.DataType{
		arrow.FixedWidthTypes.MonthInterval,
		arrow.FixedWidthTypes.DayTimeInterval,
		arrow.FixedWidthTypes.MonthDayNanoInterval,
		arrow.DenseUnionOf([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}}, []arrow.UnionTypeCode{0}),
		arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}}, []arrow.UnionTypeCode{0}),
		arrow.BinaryTypes.StringView,
		arrow.FixedSizeListOf(2, arrow.ListOf(arrow.PrimitiveTypes.Int32)),
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.FixedWidthTypes.Date32},
		func() arrow.DataType {
			m := arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)
			m.KeysSorted = true
			return m
		}(),
	} {
		if s, err := LogicalType(dt); !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("LogicalType(%s) = %q, %v; want ErrUnsupportedType", dt, s, err)
		}
	}
	// A schema with such a field is refused too.
	s := arrow.NewSchema([]arrow.Field{{Name: "iv", Type: arrow.FixedWidthTypes.MonthInterval}}, nil)
	if _, _, err := SchemaToLance(s); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("SchemaToLance(interval): %v", err)
	}
	for _, s := range []string{
		"", "int", "interval", "timestamp:xs:-", "timestamp:us", "fixed_size_binary", "fixed_size_binary:0",
		"fixed_size_binary:x", "fixed_size_binary:4:4", "decimal:64:10:2", "decimal:128:10", "decimal:128:a:2",
		"fixed_size_list:float", "fixed_size_list:float:0", "fixed_size_list:float:-1", "fixed_size_list:nope:4",
		"dict:string:int32", "dict:nope:int32:false", "list", "large_list", "map",
	} {
		if dt, err := ParseLogicalType(s, nil); !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("ParseLogicalType(%q) = %v, %v; want ErrUnsupportedType", s, dt, err)
		}
	}
}

func TestSchemaFromLanceRejects(t *testing.T) {
	f := func(name string, id, parent int32, lt string) *filepb.Field {
		return &filepb.Field{Name: name, Id: id, ParentId: parent, LogicalType: lt}
	}
	for name, fields := range map[string][]*filepb.Field{
		"parent after child": {f("c", 1, 0, "int32"), f("s", 0, -1, "struct")},
		"missing parent":     {f("s", 0, -1, "struct"), f("c", 1, 7, "int32")},
		"self parent":        {f("c", 3, 3, "int32")},
		"duplicate ids":      {f("a", 0, -1, "int32"), f("b", 0, -1, "int32")},
		"duplicate child id": {f("s", 0, -1, "struct"), f("c", 1, 0, "int32"), f("d", 1, 0, "int32")},
		"nil field":          {f("a", 0, -1, "int32"), nil},
	} {
		t.Run(name, func(t *testing.T) {
			if s, _, err := SchemaFromLance(&filepb.Schema{Fields: fields}); !errors.Is(err, ErrCorruptFile) {
				t.Errorf("err = %v (schema %v), want ErrCorruptFile", err, s)
			}
		})
	}
	// A parent that precedes its child is fine.
	s, cols, err := SchemaFromLance(&filepb.Schema{Fields: []*filepb.Field{f("s", 5, -1, "struct"), f("c", 2, 5, "int32")}})
	if err != nil || s.NumFields() != 1 || len(cols) != 1 || cols[0].Path != "s.c" || cols[0].ID != 2 {
		t.Fatalf("valid schema: %v %v %+v", s, err, cols)
	}
	// Deep nesting is refused rather than recursing without bound.
	var deep []*filepb.Field
	deep = append(deep, f("s", 0, -1, "struct"))
	for i := int32(1); i < 200; i++ {
		deep = append(deep, f("s", i, i-1, "struct"))
	}
	if _, _, err := SchemaFromLance(&filepb.Schema{Fields: deep}); !errors.Is(err, ErrCorruptFile) {
		t.Errorf("deep nesting: %v", err)
	}
	// Unknown logical types are ErrUnsupportedType.
	if _, _, err := SchemaFromLance(&filepb.Schema{Fields: []*filepb.Field{f("a", 0, -1, "interval")}}); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("unknown logical type: %v", err)
	}
}

func dense(layers ...enc21pb.RepDefLayer) *enc23pb.StructuralPlane {
	return &enc23pb.StructuralPlane{Codec: &enc23pb.StructuralPlane_Dense{Dense: &enc23pb.DenseStructure{Layers: layers}}}
}

func constant(scalar []byte) *enc23pb.ValuePlane {
	return &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Constant{Constant: &enc23pb.ConstantValue{Scalar: scalar}}}
}

func none() *enc23pb.ValuePlane {
	return &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_None{None: &enc23pb.NoValues{}}}
}

func TestPB21FromPlanarRules(t *testing.T) {
	const (
		avi = enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
		avl = enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST
		ni  = enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM
		nl  = enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST
	)
	four := []byte{1, 2, 3, 4}
	ok := map[string]*enc23pb.PlanarLayout{
		"constant avi":      {Structure: dense(avi), Values: constant(four)},
		"constant avi avi":  {Structure: dense(avi, avi), Values: constant(four)},
		"constant 1 byte":   {Structure: dense(avi), Values: constant([]byte{7})},
		"constant 32 bytes": {Structure: dense(avi), Values: constant(make([]byte, 32))},
		"none ni":           {Structure: dense(ni), Values: none()},
	}
	bad := map[string]*enc23pb.PlanarLayout{
		"constant ni":        {Structure: dense(ni), Values: constant(four)},
		"constant avi ni":    {Structure: dense(avi, ni), Values: constant(four)},
		"constant avl":       {Structure: dense(avi, avl), Values: constant(four)},
		"constant 0 bytes":   {Structure: dense(avi), Values: constant(nil)},
		"constant empty":     {Structure: dense(avi), Values: constant([]byte{})},
		"constant 33 bytes":  {Structure: dense(avi), Values: constant(make([]byte, 33))},
		"none avi":           {Structure: dense(avi), Values: none()},
		"none ni ni":         {Structure: dense(ni, ni), Values: none()},
		"none ni nl":         {Structure: dense(ni, nl), Values: none()},
		"none no layers":     {Structure: dense(), Values: none()},
		"no structure":       {Values: none()},
		"sparse structure":   {Structure: &enc23pb.StructuralPlane{Codec: &enc23pb.StructuralPlane_Sparse{Sparse: &enc23pb.SparseStructure{}}}, Values: none()},
		"no values":          {Structure: dense(ni)},
		"empty values":       {Structure: dense(ni), Values: &enc23pb.ValuePlane{}},
		"unspecified layer":  {Structure: dense(enc21pb.RepDefLayer_REPDEF_UNSPECIFIED), Values: constant(four)},
		"unknown layer":      {Structure: dense(enc21pb.RepDefLayer(99)), Values: constant(four)},
		"chunked w/o levels": {Structure: dense(avi), Values: &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Chunked{Chunked: &enc23pb.ChunkedValues{}}}},
		"zipped w/o addr":    {Structure: dense(avi), Values: &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Zipped{Zipped: &enc23pb.ZippedValues{}}}},
		"zipped huge count": {Structure: dense(avi), Values: &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Zipped{Zipped: &enc23pb.ZippedValues{
			NumItems: 1 << 32, Addressing: &enc23pb.ZippedValues_BitsPerValue{BitsPerValue: 32}}}}},
		"indexed values": {Structure: dense(avi), Values: &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Indexed{Indexed: &enc23pb.IndexedValues{}}}},
	}
	for name, p := range ok {
		l, err := PB21FromPlanar(p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		c := l.GetConstantLayout()
		if c == nil {
			t.Errorf("%s: got %T, want a constant layout", name, l.GetLayout())
			continue
		}
		// And back to the same planar form.
		p2, err := PlanarFromPB21(l)
		if err != nil {
			t.Errorf("%s: back: %v", name, err)
		} else if !proto.Equal(p, p2) {
			t.Errorf("%s: round trip\n got %v\nwant %v", name, p2, p)
		}
	}
	for name, p := range bad {
		if l, err := PB21FromPlanar(p); !errors.Is(err, ErrCorruptFile) {
			t.Errorf("%s: got %v, %v; want ErrCorruptFile", name, l, err)
		}
	}
}

func flat(bits uint64) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: bits}}}
}

func TestPlanarRoundTripMiniBlock(t *testing.T) {
	for name, m := range map[string]*enc21pb.MiniBlockLayout{
		"nullable": {
			DefCompression:   flat(16),
			ValueCompression: flat(32),
			Layers:           []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM},
			NumBuffers:       1,
			NumItems:         1000,
			HasLargeChunk:    true,
		},
		"dictionary list": {
			RepCompression:       flat(16),
			DefCompression:       flat(16),
			ValueCompression:     flat(8),
			Dictionary:           flat(64),
			NumDictionaryItems:   12,
			Layers:               []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM, enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST},
			NumBuffers:           2,
			RepetitionIndexDepth: 1,
			NumItems:             77,
			HasLargeChunk:        true,
		},
	} {
		l := &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: m}}
		p, err := PlanarFromPB21(l)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.GetStructure().GetDense() == nil || p.GetValues().GetChunked() == nil {
			t.Fatalf("%s: planar form %v", name, p)
		}
		back, err := PB21FromPlanar(p)
		if err != nil {
			t.Fatalf("%s: back: %v", name, err)
		}
		if !proto.Equal(back, l) {
			t.Fatalf("%s: round trip\n got %v\nwant %v", name, back, l)
		}
		// Through the wire too.
		b, err := det.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var p2 enc23pb.PlanarLayout
		if err := proto.Unmarshal(b, &p2); err != nil {
			t.Fatal(err)
		}
		if back2, err := PB21FromPlanar(&p2); err != nil || !proto.Equal(back2, l) {
			t.Fatalf("%s: wire round trip: %v %v", name, back2, err)
		}
	}
	// u16-framed mini-blocks have no planar form.
	small := &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: &enc21pb.MiniBlockLayout{
		ValueCompression: flat(32), Layers: []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM}, NumBuffers: 1, NumItems: 4,
	}}}
	if _, err := PlanarFromPB21(small); !errors.Is(err, ErrCorruptFile) {
		t.Errorf("u16 mini-block: %v", err)
	}
	if _, err := PlanarFromPB21(&enc21pb.PageLayout{}); !errors.Is(err, ErrCorruptFile) {
		t.Errorf("empty layout: %v", err)
	}
}

func TestPlanarRoundTripFullZip(t *testing.T) {
	for _, f := range []*enc21pb.FullZipLayout{
		{BitsRep: 0, BitsDef: 1, NumItems: 10, NumVisibleItems: 10, ValueCompression: flat(32),
			Layers:  []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM},
			Details: &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: 32}},
		{BitsRep: 1, BitsDef: 2, NumItems: 10, NumVisibleItems: 8, ValueCompression: flat(8),
			Layers:  []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM, enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST},
			Details: &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: 32}},
	} {
		l := &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_FullZipLayout{FullZipLayout: f}}
		p, err := PlanarFromPB21(l)
		if err != nil {
			t.Fatal(err)
		}
		back, err := PB21FromPlanar(p)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(back, l) {
			t.Fatalf("round trip\n got %v\nwant %v", back, l)
		}
	}
}

func TestPadLen(t *testing.T) {
	for _, c := range []struct{ n, a, want uint64 }{{0, 64, 0}, {1, 64, 63}, {63, 64, 1}, {64, 64, 0}, {65, 64, 63}, {130, 8, 6}} {
		if got := PadLen(c.n, c.a); got != c.want {
			t.Errorf("PadLen(%d, %d) = %d, want %d", c.n, c.a, got, c.want)
		}
	}
}
