package corpus

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// CodecColumn is one column class of the codec corpus: the data a codec is
// made for (small ints for bit packing, runs for RLE, URLs for FSST, ...).
type CodecColumn struct {
	Name string
	Type arrow.DataType
	gen  func(r *rand.Rand, i int, b array.Builder)
	null float64 // fraction of null rows
	// nullGen, when set, appends a null row (else the builder's AppendNull).
	nullGen func(b array.Builder)
}

// CodecForce is one way of forcing the value codec of a column: field
// metadata (Lance's keys, or planar's planar:codec), and the codec tree the
// writer must then choose (as values.Codec.Name prints it, "" to accept the
// selector's choice).
type CodecForce struct {
	Name     string
	Metadata map[string]string
	// Lance: the keys are Lance's own, so pylance writing the same data with
	// the same metadata must choose the same encoding.
	Lance bool
}

// CodecCase is one column class under one force.
type CodecCase struct {
	Column CodecColumn
	Force  CodecForce
	Rows   int
}

// Name is a stable file name.
func (c CodecCase) Name() string { return c.Column.Name + "__" + c.Force.Name }

// Record returns the case's data as a one-column batch whose field carries
// the force's metadata.
func (c CodecCase) Record(mem memory.Allocator) arrow.RecordBatch {
	return c.recordSeed(mem, 77)
}

// recordSeed is Record with rows drawn from seed.
func (c CodecCase) recordSeed(mem memory.Allocator, seed uint64) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(uint64(len(c.Column.Name)), seed))
	b := array.NewBuilder(mem, c.Column.Type)
	defer b.Release()
	for i := 0; i < c.Rows; i++ {
		if c.Column.null > 0 && r.Float64() < c.Column.null {
			if c.Column.nullGen != nil {
				c.Column.nullGen(b)
			} else {
				b.AppendNull()
			}
			continue
		}
		c.Column.gen(r, i, b)
	}
	arr := b.NewArray()
	defer arr.Release()
	md := arrow.NewMetadata(keys(c.Force.Metadata))
	f := arrow.Field{Name: c.Column.Name, Type: c.Column.Type, Nullable: c.Column.null > 0, Metadata: md}
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{f}, nil), []arrow.Array{arr}, int64(c.Rows))
}

func keys(m map[string]string) ([]string, []string) {
	var k, v []string
	for _, key := range sortedKeys(m) {
		k = append(k, key)
		v = append(v, m[key])
	}
	return k, v
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

var lowCardWords = []string{"red", "green", "blue", "cyan", "magenta", "yellow", "black", "white", "orange", "purple"}

// CodecColumns are the column classes of the codec corpus.
func CodecColumns() []CodecColumn {
	i32 := func(f func(r *rand.Rand, i int) int32) func(*rand.Rand, int, array.Builder) {
		return func(r *rand.Rand, i int, b array.Builder) { b.(*array.Int32Builder).Append(f(r, i)) }
	}
	i64 := func(f func(r *rand.Rand, i int) int64) func(*rand.Rand, int, array.Builder) {
		return func(r *rand.Rand, i int, b array.Builder) { b.(*array.Int64Builder).Append(f(r, i)) }
	}
	str := func(f func(r *rand.Rand, i int) string) func(*rand.Rand, int, array.Builder) {
		return func(r *rand.Rand, i int, b array.Builder) { b.(*array.StringBuilder).Append(f(r, i)) }
	}
	return []CodecColumn{
		{Name: "int_small", Type: arrow.PrimitiveTypes.Int32, gen: i32(func(r *rand.Rand, _ int) int32 { return int32(r.IntN(100)) })},
		{Name: "int_small_nulls", Type: arrow.PrimitiveTypes.Int32, null: 0.1, gen: i32(func(r *rand.Rand, _ int) int32 { return int32(r.IntN(100)) })},
		{Name: "int_large", Type: arrow.PrimitiveTypes.Int64, gen: i64(func(r *rand.Rand, _ int) int64 { return r.Int64() })},
		{Name: "sorted_ids", Type: arrow.PrimitiveTypes.Int64, gen: i64(func(_ *rand.Rand, i int) int64 { return int64(1_000_000 + i) })},
		{Name: "repeated", Type: arrow.PrimitiveTypes.Int32, gen: i32(func(_ *rand.Rand, i int) int32 { return int32(i / 300 * 7919) })},
		{Name: "float_random", Type: arrow.PrimitiveTypes.Float64, gen: func(r *rand.Rand, _ int, b array.Builder) {
			b.(*array.Float64Builder).Append(math.Round(r.NormFloat64()*1e4) / 100)
		}},
		{Name: "float32_random", Type: arrow.PrimitiveTypes.Float32, gen: func(r *rand.Rand, _ int, b array.Builder) {
			b.(*array.Float32Builder).Append(float32(r.NormFloat64()))
		}},
		{Name: "lowcard_str", Type: arrow.BinaryTypes.String, gen: str(func(r *rand.Rand, _ int) string { return lowCardWords[r.IntN(len(lowCardWords))] })},
		{Name: "urls", Type: arrow.BinaryTypes.String, gen: str(func(r *rand.Rand, i int) string {
			return fmt.Sprintf("https://www.example.com/catalog/%s/item-%d?ref=%s", lowCardWords[r.IntN(4)], r.IntN(100000), lowCardWords[i%3])
		})},
		{Name: "random_str", Type: arrow.BinaryTypes.String, gen: str(func(r *rand.Rand, _ int) string {
			b := make([]byte, 4+r.IntN(12))
			for j := range b {
				b[j] = byte('a' + r.IntN(26))
			}
			return string(b)
		})},
		{Name: "bools", Type: arrow.FixedWidthTypes.Boolean, null: 0.05, gen: func(r *rand.Rand, _ int, b array.Builder) {
			b.(*array.BooleanBuilder).Append(r.IntN(4) == 0)
		}},
		{Name: "vectors", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), null: 0.05, gen: func(r *rand.Rand, _ int, b array.Builder) {
			lb := b.(*array.FixedSizeListBuilder)
			lb.Append(true)
			vb := lb.ValueBuilder().(*array.Float32Builder)
			for j := 0; j < 8; j++ {
				vb.Append(float32(r.NormFloat64()))
			}
		}},
		{Name: "packed_struct", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32},
			arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Uint8}), null: 0.05,
			// Null rows keep valid (zero) children: the builder's
			// AppendNull would null the non-nullable children too.
			nullGen: func(b array.Builder) {
				sb := b.(*array.StructBuilder)
				sb.AppendValues([]bool{false}) // the bitmap only
				sb.FieldBuilder(0).(*array.Int32Builder).Append(0)
				sb.FieldBuilder(1).(*array.Int64Builder).Append(0)
				sb.FieldBuilder(2).(*array.Uint8Builder).Append(0)
			}, gen: func(r *rand.Rand, i int, b array.Builder) {
				sb := b.(*array.StructBuilder)
				sb.Append(true)
				sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(r.IntN(1000)))
				sb.FieldBuilder(1).(*array.Int64Builder).Append(int64(i) * 1000)
				sb.FieldBuilder(2).(*array.Uint8Builder).Append(uint8(i))
			}},
		{Name: "packed_varstruct", Type: arrow.StructOf(
			arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int32},
			arrow.Field{Name: "name", Type: arrow.BinaryTypes.String},
			arrow.Field{Name: "blob", Type: arrow.BinaryTypes.Binary}), null: 0.05,
			nullGen: func(b array.Builder) {
				sb := b.(*array.StructBuilder)
				sb.AppendValues([]bool{false})
				sb.FieldBuilder(0).(*array.Int32Builder).Append(0)
				sb.FieldBuilder(1).(*array.StringBuilder).Append("")
				sb.FieldBuilder(2).(*array.BinaryBuilder).Append(nil)
			}, gen: func(r *rand.Rand, i int, b array.Builder) {
				sb := b.(*array.StructBuilder)
				sb.Append(true)
				sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
				sb.FieldBuilder(1).(*array.StringBuilder).Append(lowCardWords[r.IntN(len(lowCardWords))] + fmt.Sprint(r.IntN(100)))
				sb.FieldBuilder(2).(*array.BinaryBuilder).Append([]byte{byte(i), byte(i >> 8)})
			}},
		{Name: "constant", Type: arrow.PrimitiveTypes.Int64, gen: i64(func(*rand.Rand, int) int64 { return 42 })},
		{Name: "wide_binary", Type: arrow.BinaryTypes.Binary, gen: func(r *rand.Rand, _ int, b array.Builder) {
			v := make([]byte, 300+r.IntN(100))
			for j := range v {
				v[j] = byte(r.IntN(256))
			}
			b.(*array.BinaryBuilder).Append(v)
		}},
	}
}

// CodecColumn returns the column class of that name (it panics if there is
// none: the corpus is a fixed table).
func CodecColumnByName(name string) CodecColumn {
	for _, c := range CodecColumns() {
		if c.Name == name {
			return c
		}
	}
	panic("corpus: no codec column " + name)
}

func md(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// CodecCases is the codec corpus: each column class under the forces that
// apply to it. Every codec planar can force appears at least once.
func CodecCases(rows int) []CodecCase {
	const (
		comp  = "lance-encoding:compression"
		level = "lance-encoding:compression-level"
		bss   = "lance-encoding:bss"
		rle   = "lance-encoding:rle-threshold"
		st    = "lance-encoding:structural-encoding"
		dictV = "lance-encoding:dict-values-compression"
		dictD = "lance-encoding:dict-divisor"
		codec = "planar:codec"
	)
	def := CodecForce{Name: "default", Metadata: md(), Lance: true}
	none := CodecForce{Name: "none", Metadata: md(comp, "none"), Lance: true}
	lz4 := CodecForce{Name: "lz4", Metadata: md(comp, "lz4"), Lance: true}
	zstd := CodecForce{Name: "zstd3", Metadata: md(comp, "zstd", level, "3"), Lance: true}
	fullzip := CodecForce{Name: "fullzip", Metadata: md(st, "fullzip"), Lance: true}
	miniblock := CodecForce{Name: "miniblock", Metadata: md(st, "miniblock"), Lance: true}
	per := map[string][]CodecForce{
		"int_small": {def, none, lz4, zstd, fullzip,
			{Name: "rle", Metadata: md(codec, "rle")},
			{Name: "flat", Metadata: md(codec, "flat")}},
		"int_small_nulls": {def, none, zstd, fullzip},
		"int_large":       {def, lz4, {Name: "bitpack", Metadata: md(codec, "bitpack")}},
		"sorted_ids":      {def, zstd, {Name: "rle", Metadata: md(codec, "rle")}},
		"repeated":        {def, {Name: "no-rle", Metadata: md(rle, "0"), Lance: true}, lz4},
		"float_random": {def, zstd,
			{Name: "zstd-bss", Metadata: md(comp, "zstd", bss, "on"), Lance: true},
			{Name: "lz4-bss-off", Metadata: md(comp, "lz4", bss, "off"), Lance: true}},
		"float32_random": {def, {Name: "bss", Metadata: md(codec, "bss")},
			{Name: "zstd-bss", Metadata: md(comp, "zstd", bss, "on"), Lance: true}},
		"lowcard_str": {def,
			{Name: "dict-zstd", Metadata: md(dictV, "zstd"), Lance: true},
			{Name: "dict-none", Metadata: md(dictV, "none"), Lance: true},
			{Name: "no-dict", Metadata: md(dictD, "1000000"), Lance: true}, miniblock},
		"urls":       {def, {Name: "fsst", Metadata: md(comp, "fsst", dictD, "1000000"), Lance: true}, zstd, fullzip},
		"random_str": {def, lz4, none},
		"bools":      {def, zstd},
		"vectors":    {def, fullzip},
		"constant":   {def, miniblock},
		"packed_struct": {
			{Name: "packed", Metadata: md("lance-encoding:packed", "true"), Lance: true},
			{Name: "packed-legacy-key", Metadata: md("packed", "true"), Lance: true},
			{Name: "packed-fullzip", Metadata: md("lance-encoding:packed", "true", st, "fullzip"), Lance: true},
			def},
		"packed_varstruct": {
			{Name: "packed", Metadata: md("lance-encoding:packed", "true"), Lance: true},
			def},
		"wide_binary": {def, miniblock, lz4},
	}
	var out []CodecCase
	for _, c := range CodecColumns() {
		for _, f := range per[c.Name] {
			out = append(out, CodecCase{Column: c, Force: f, Rows: rows})
		}
	}
	return out
}
