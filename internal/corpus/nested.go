package corpus

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// field is a shorthand for a nullable child field.
func field(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

// WideString marks a string type whose values are over 256 bytes.
var WideString = &arrow.StringType{}

// TypeCase is one line of the type corpus: a type and how it is named.
type TypeCase struct {
	Name  string
	Type  arrow.DataType
	Wide  bool // values are wide (strings over 256 bytes)
	Const bool // every leaf value is the same (nulls still drawn)
	URLs  bool // strings are distinct URL-like values
	// ReadOnly marks types planar reads (pylance writes them) but does not
	// write yet; writer.New rejects them with ErrUnsupportedType.
	ReadOnly bool
}

// Types is the corpus of every Arrow type and nesting planar writes.
var Types = []TypeCase{
	{Name: "bool", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "float16", Type: arrow.FixedWidthTypes.Float16},
	{Name: "decimal128", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}},
	{Name: "decimal256", Type: &arrow.Decimal256Type{Precision: 40, Scale: 5}},
	{Name: "date64", Type: arrow.FixedWidthTypes.Date64},
	{Name: "time32s", Type: arrow.FixedWidthTypes.Time32s},
	{Name: "time32ms", Type: arrow.FixedWidthTypes.Time32ms},
	{Name: "time64us", Type: arrow.FixedWidthTypes.Time64us},
	{Name: "time64ns", Type: arrow.FixedWidthTypes.Time64ns},
	{Name: "duration_s", Type: arrow.FixedWidthTypes.Duration_s},
	{Name: "duration_ns", Type: arrow.FixedWidthTypes.Duration_ns},
	{Name: "string", Type: arrow.BinaryTypes.String},
	{Name: "string_wide", Type: arrow.BinaryTypes.String, Wide: true},
	{Name: "string_urls", Type: arrow.BinaryTypes.String, URLs: true},
	{Name: "large_string", Type: arrow.BinaryTypes.LargeString},
	{Name: "binary", Type: arrow.BinaryTypes.Binary},
	{Name: "large_binary", Type: arrow.BinaryTypes.LargeBinary},
	{Name: "fsb16", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}},
	{Name: "fsb300", Type: &arrow.FixedSizeBinaryType{ByteWidth: 300}},
	{Name: "fsl_f32_8", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32)},
	{Name: "fsl_f32_768", Type: arrow.FixedSizeListOf(768, arrow.PrimitiveTypes.Float32)},
	{Name: "fsl_fsl_i16", Type: arrow.FixedSizeListOf(3, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int16))},
	{Name: "fsl_bool_8", Type: arrow.FixedSizeListOf(8, arrow.FixedWidthTypes.Boolean)},
	{Name: "list_i32", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
	{Name: "list_bool", Type: arrow.ListOf(arrow.FixedWidthTypes.Boolean)},
	{Name: "large_list_str", Type: arrow.LargeListOf(arrow.BinaryTypes.String)},
	{Name: "list_list_i64", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64))},
	{Name: "list_fsl_f32", Type: arrow.ListOf(arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32))},
	{Name: "list_fsl_wide", Type: arrow.ListOf(arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32))},
	{Name: "struct_flat", Type: arrow.StructOf(field("a", arrow.PrimitiveTypes.Int32), field("b", arrow.BinaryTypes.String))},
	{Name: "struct_nested", Type: arrow.StructOf(field("s", arrow.StructOf(field("x", arrow.PrimitiveTypes.Float64))), field("t", arrow.FixedWidthTypes.Boolean))},
	{Name: "struct_list", Type: arrow.StructOf(field("l", arrow.ListOf(arrow.BinaryTypes.String)), field("n", arrow.PrimitiveTypes.Int16))},
	{Name: "list_struct", Type: arrow.ListOf(arrow.StructOf(field("a", arrow.PrimitiveTypes.Int32), field("b", arrow.ListOf(arrow.BinaryTypes.String))))},
	{Name: "map_str_i32", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)},
	{Name: "list_wide_str", Type: arrow.ListOf(arrow.BinaryTypes.String), Wide: true},
	{Name: "null", Type: arrow.Null},
	{Name: "fsl_struct", Type: arrow.FixedSizeListOf(2, arrow.StructOf(field("x", arrow.PrimitiveTypes.Int32), field("y", arrow.BinaryTypes.String)))},
	{Name: "struct_null", Type: arrow.StructOf(field("a", arrow.PrimitiveTypes.Int32), field("n", arrow.Null))},
	{Name: "list_i32_const", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Const: true},
	{Name: "struct_i64_const", Type: arrow.StructOf(field("x", arrow.PrimitiveTypes.Int64)), Const: true},
	{Name: "dict_str", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
	{Name: "dict_i64", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.PrimitiveTypes.Int64}},
	{Name: "list_dict_str", Type: arrow.ListOf(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String})},
}

// NestedCase is one column of the type corpus.
type NestedCase struct {
	TypeCase
	Nulls Nulls
	Rows  int
}

// Name is a stable identifier usable as a column and file name.
func (c NestedCase) Name() string { return c.TypeCase.Name + "__" + c.Nulls.String() }

// Field is the case's Arrow field.
func (c NestedCase) Field() arrow.Field {
	return arrow.Field{Name: c.Name(), Type: c.Type, Nullable: c.Nulls != NoNulls}
}

// Nested returns the type corpus under every null pattern of the top level.
func Nested(rows int) []NestedCase {
	var out []NestedCase
	for _, t := range Types {
		for _, n := range []Nulls{NoNulls, SomeNulls, AllNulls, Alternating, Leading, Trailing} {
			if t.Type.ID() == arrow.NULL && n != AllNulls {
				continue
			}
			out = append(out, NestedCase{TypeCase: t, Nulls: n, Rows: rows})
		}
	}
	return out
}

// Array builds the case's column with the given seed. Inner nullable fields
// get ~10% nulls and lists ~10% empties, drawn from the same seed.
func (c NestedCase) Array(mem memory.Allocator, seed uint64) arrow.Array {
	r := rand.New(rand.NewPCG(seed, uint64(len(c.Name()))*7919))
	b := array.NewBuilder(mem, c.Type)
	defer b.Release()
	g := gen{r: r, wide: c.Wide, constant: c.Const, urls: c.URLs}
	cs := Case{Nulls: c.Nulls, Rows: c.Rows}
	for i := 0; i < c.Rows; i++ {
		if c.Type.ID() == arrow.NULL || cs.isNull(r, i) {
			b.AppendNull()
			continue
		}
		g.value(b, c.Type, 0)
	}
	return b.NewArray()
}

// NestedRecord builds one batch holding the given cases as columns.
func NestedRecord(mem memory.Allocator, cases []NestedCase, seed uint64) arrow.RecordBatch {
	return record(mem, cases, seed)
}

type gen struct {
	r        *rand.Rand
	wide     bool
	constant bool
	urls     bool
}

// maybeNull appends a null with 10% probability and reports it.
func (g *gen) maybeNull(b array.Builder) bool {
	if g.constant {
		return false
	}
	if g.r.IntN(10) == 0 {
		b.AppendNull()
		return true
	}
	return false
}

func (g *gen) str() string {
	if g.urls {
		paths := []string{"docs", "blog", "api/v2/items", "static/img", "search"}
		return "https://www.example.com/" + paths[g.r.IntN(len(paths))] + "/" + strconv.FormatUint(g.r.Uint64()%1_000_000_000, 10) + "?ref=home"
	}
	if g.wide {
		return strings.Repeat("w", 250+g.r.IntN(100)) + string(rune('a'+g.r.IntN(26)))
	}
	words := []string{"alpha", "beta", "gamma", "delta", "", "https://example.com/x", "zeta"}
	return words[g.r.IntN(len(words))] + string(rune('a'+g.r.IntN(26)))
}

// value appends one non-null value of type dt (children may be null).
func (g *gen) value(b array.Builder, dt arrow.DataType, depth int) {
	r := g.r
	switch t := dt.(type) {
	case *arrow.BooleanType:
		b.(*array.BooleanBuilder).Append(r.IntN(2) == 0)
	case *arrow.Int16Type:
		b.(*array.Int16Builder).Append(int16(r.IntN(1 << 15)))
	case *arrow.Int32Type:
		if g.constant {
			b.(*array.Int32Builder).Append(7)
			return
		}
		b.(*array.Int32Builder).Append(int32(r.IntN(1000)) - 500)
	case *arrow.Int64Type:
		if g.constant {
			b.(*array.Int64Builder).Append(-9)
			return
		}
		b.(*array.Int64Builder).Append(r.Int64N(1<<40) - 1<<39)
	case *arrow.Float16Type:
		b.(*array.Float16Builder).Append(float16.New(float32(r.IntN(2000)) / 8))
	case *arrow.Float32Type:
		b.(*array.Float32Builder).Append(r.Float32())
	case *arrow.Float64Type:
		b.(*array.Float64Builder).Append(r.NormFloat64())
	case *arrow.Decimal128Type:
		b.(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(1e9)))
	case *arrow.Decimal256Type:
		b.(*array.Decimal256Builder).Append(decimal256.FromI64(r.Int64N(1e18)))
	case *arrow.Date64Type:
		b.(*array.Date64Builder).Append(arrow.Date64(r.Int64N(1e12) / 86400000 * 86400000))
	case *arrow.Time32Type:
		b.(*array.Time32Builder).Append(arrow.Time32(r.IntN(86400)))
	case *arrow.Time64Type:
		b.(*array.Time64Builder).Append(arrow.Time64(r.Int64N(86400e6)))
	case *arrow.DurationType:
		b.(*array.DurationBuilder).Append(arrow.Duration(r.Int64N(1e12)))
	case *arrow.StringType:
		b.(*array.StringBuilder).Append(g.str())
	case *arrow.LargeStringType:
		b.(*array.LargeStringBuilder).Append(g.str())
	case *arrow.BinaryType:
		v := make([]byte, r.IntN(12))
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		b.(*array.BinaryBuilder).Append(v)
	case *arrow.LargeBinaryType:
		v := make([]byte, r.IntN(12))
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		b.(*array.BinaryBuilder).Append(v)
	case *arrow.FixedSizeBinaryType:
		v := make([]byte, t.ByteWidth)
		for i := range v {
			v[i] = byte(r.IntN(4))
		}
		b.(*array.FixedSizeBinaryBuilder).Append(v)
	case *arrow.FixedSizeListType:
		fb := b.(*array.FixedSizeListBuilder)
		fb.Append(true)
		vb := fb.ValueBuilder()
		for i := 0; i < int(t.Len()); i++ {
			if t.ElemField().Nullable && depth == 0 && t.Elem().ID() != arrow.FIXED_SIZE_LIST && r.IntN(40) == 0 {
				vb.AppendNull()
				continue
			}
			g.value(vb, t.Elem(), depth+1)
		}
	case *arrow.ListType, *arrow.LargeListType:
		lb := b.(array.ListLikeBuilder)
		lb.Append(true)
		n := r.IntN(4)
		if r.IntN(10) == 0 {
			n = 0
		}
		elem := t.(arrow.ListLikeType).ElemField()
		for i := 0; i < n; i++ {
			if elem.Nullable && g.maybeNull(lb.ValueBuilder()) {
				continue
			}
			g.value(lb.ValueBuilder(), elem.Type, depth+1)
		}
	case *arrow.MapType:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		n := r.IntN(4)
		for i := 0; i < n; i++ {
			mb.KeyBuilder().(*array.StringBuilder).Append(g.str())
			if g.maybeNull(mb.ItemBuilder()) {
				continue
			}
			g.value(mb.ItemBuilder(), t.ItemType(), depth+1)
		}
	case *arrow.DictionaryType:
		switch db := b.(type) {
		case *array.BinaryDictionaryBuilder:
			db.AppendString("k" + string(rune('a'+r.IntN(20))))
		case *array.Int64DictionaryBuilder:
			db.Append(int64(r.IntN(7)) * 1_000_003)
		default:
			panic("corpus: no dictionary generator for " + dt.String())
		}
	case *arrow.StructType:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		for i, f := range t.Fields() {
			if f.Type.ID() == arrow.NULL {
				sb.FieldBuilder(i).AppendNull()
				continue
			}
			if f.Nullable && g.maybeNull(sb.FieldBuilder(i)) {
				continue
			}
			g.value(sb.FieldBuilder(i), f.Type, depth+1)
		}
	default:
		panic("corpus: no generator for " + dt.String())
	}
}

// TypeByName returns the corpus type case with the given name.
func TypeByName(name string) TypeCase {
	for _, t := range Types {
		if t.Name == name {
			return t
		}
	}
	panic("corpus: no type case " + name)
}

// NestedWritable is Nested without the read-only types.
func NestedWritable(rows int) []NestedCase {
	var out []NestedCase
	for _, c := range Nested(rows) {
		if !c.ReadOnly {
			out = append(out, c)
		}
	}
	return out
}
