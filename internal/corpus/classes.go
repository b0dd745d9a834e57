package corpus

import (
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PerfClass is one column class of the performance benchmarks: a single
// column of a typical shape, big enough that a write takes well over a
// millisecond.
type PerfClass struct {
	Name string
	Rows int
	// Record builds the class's rows (deterministic for a seed).
	Record func(mem memory.Allocator, seed uint64) arrow.RecordBatch
}

// PerfClasses are the classes of the performance issue (#12): flat integers,
// floats, timestamps, three kinds of strings, a list, a struct and
// embeddings. scale multiplies the row counts (1: 1M rows for flat classes,
// 64Ki for 768-d embeddings).
func PerfClasses(scale float64) []PerfClass {
	rows := func(n int) int { return max(1, int(float64(n)*scale)) }
	const m = 1 << 20
	codec := func(name, col string, n int) PerfClass {
		return PerfClass{Name: name, Rows: n, Record: func(mem memory.Allocator, seed uint64) arrow.RecordBatch {
			c := CodecCase{Column: CodecColumnByName(col), Force: CodecForce{Name: "default"}, Rows: n}
			return c.recordSeed(mem, seed)
		}}
	}
	nested := func(name string, t TypeCase, nulls Nulls, n int) PerfClass {
		return PerfClass{Name: name, Rows: n, Record: func(mem memory.Allocator, seed uint64) arrow.RecordBatch {
			nc := NestedCase{TypeCase: t, Nulls: nulls, Rows: n}
			return NestedRecord(mem, []NestedCase{nc}, seed)
		}}
	}
	structT := TypeCase{Name: "struct_i32_str_listf32", Type: arrow.StructOf(
		field("a", arrow.PrimitiveTypes.Int32),
		field("b", arrow.BinaryTypes.String),
		field("c", arrow.ListOf(arrow.PrimitiveTypes.Float32)))}
	return []PerfClass{
		codec("int64-random", "int_large", rows(m)),
		codec("int32-small-nulls", "int_small_nulls", rows(m)),
		codec("sorted-ids", "sorted_ids", rows(m)),
		codec("float64", "float_random", rows(m)),
		{Name: "timestamps", Rows: rows(m), Record: func(mem memory.Allocator, seed uint64) arrow.RecordBatch {
			return timestamps(mem, rows(m), seed)
		}},
		codec("lowcard-strings", "lowcard_str", rows(m)),
		codec("urls", "urls", rows(m)),
		codec("random-strings", "random_str", rows(m)),
		nested("list-int32-nulls", TypeByName("list_i32"), SomeNulls, rows(m)),
		nested("struct-i32-str-list", structT, SomeNulls, rows(m/2)),
		{Name: "fsl768", Rows: rows(1 << 16), Record: func(mem memory.Allocator, seed uint64) arrow.RecordBatch {
			return vectors768(mem, rows(1<<16), 0, seed)
		}},
		{Name: "fsl768-50null", Rows: rows(1 << 16), Record: func(mem memory.Allocator, seed uint64) arrow.RecordBatch {
			return vectors768(mem, rows(1<<16), 0.5, seed)
		}},
	}
}

// timestamps is an event-time column: microseconds from a 2026 epoch,
// increasing by random gaps (mostly sub-second, sometimes minutes), the
// last 1% null.
func timestamps(mem memory.Allocator, n int, seed uint64) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(seed, 0x7157))
	t := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	b := array.NewTimestampBuilder(mem, t)
	defer b.Release()
	b.Reserve(n)
	v := int64(1_767_225_600_000_000)
	for i := range n {
		if i >= n-n/100 {
			b.AppendNull()
			continue
		}
		gap := r.Int64N(1_000_000)
		if r.IntN(100) == 0 {
			gap += r.Int64N(300_000_000)
		}
		v += gap
		b.Append(arrow.Timestamp(v))
	}
	a := b.NewArray()
	defer a.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: t, Nullable: true}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{a}, int64(n))
}

// vectors768 is a column of 768-d float32 vectors (unit-normal items, none
// null) with a share of null rows drawn at random.
func vectors768(mem memory.Allocator, n int, nullShare float64, seed uint64) arrow.RecordBatch {
	const dim = 768
	r := rand.New(rand.NewPCG(seed, 0xe3b))
	t := arrow.FixedSizeListOfNonNullable(dim, arrow.PrimitiveTypes.Float32)
	b := array.NewFixedSizeListBuilderWithField(mem, dim, t.ElemField())
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	b.Reserve(n)
	vb.Reserve(n * dim)
	for range n {
		if nullShare > 0 && r.Float64() < nullShare {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for range dim {
			vb.UnsafeAppend(float32(r.NormFloat64()))
		}
	}
	a := b.NewArray()
	defer a.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: t, Nullable: nullShare > 0}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{a}, int64(n))
}
