// Package corpus builds the deterministic test columns shared by the unit
// tests, the interop tests and the benchmarks: one table of cases, each a
// (type, null pattern, value shape, rows) line, so a new case is one line.
package corpus

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Nulls is a null pattern.
type Nulls int

// Null patterns.
const (
	NoNulls      Nulls = iota // non-nullable field
	SomeNulls                 // ~10% random nulls
	AllNulls                  // every value null
	Alternating               // every other value null
	Leading                   // the first 30% null
	Trailing                  // the last 30% null
	NullableNone              // nullable field without nulls
)

var nullNames = [...]string{"nonull", "some", "all", "alt", "lead", "trail", "nullable"}

func (n Nulls) String() string { return nullNames[n] }

// Shape is how values are drawn.
type Shape int

// Value shapes.
const (
	Random  Shape = iota // uniformly random bits
	Small                // small non-negative values (bit-packable)
	Sorted               // increasing ids
	Runs                 // long runs of repeated values
	Const                // one value repeated
	LowCard              // a few distinct values
)

var shapeNames = [...]string{"rand", "small", "sorted", "runs", "const", "lowcard"}

func (s Shape) String() string { return shapeNames[s] }

// Case is one test column.
type Case struct {
	Type  arrow.DataType
	Nulls Nulls
	Shape Shape
	Rows  int
}

// Name is a stable identifier usable as a column and file name.
func (c Case) Name() string {
	t := c.Type.String()
	clean := make([]byte, 0, len(t))
	for i := 0; i < len(t); i++ {
		b := t[i]
		switch {
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9':
			clean = append(clean, b)
		case b >= 'A' && b <= 'Z':
			clean = append(clean, b+'a'-'A')
		default:
			clean = append(clean, '_')
		}
	}
	return string(clean) + "__" + c.Nulls.String() + "__" + c.Shape.String()
}

// Field is the case's Arrow field.
func (c Case) Field() arrow.Field {
	return arrow.Field{Name: c.Name(), Type: c.Type, Nullable: c.Nulls != NoNulls}
}

// FixedWidthTypes are the flat fixed-width types of the first milestone.
var FixedWidthTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32,
	&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"},
	&arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"},
	&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"},
}

// Flat returns the milestone-one corpus: every fixed-width type under every
// null pattern, plus value shapes that steer codec choice.
func Flat(rows int) []Case {
	var cs []Case
	for _, t := range FixedWidthTypes {
		for _, n := range []Nulls{NoNulls, SomeNulls, AllNulls, Alternating, Leading, Trailing, NullableNone} {
			cs = append(cs, Case{Type: t, Nulls: n, Shape: Random, Rows: rows})
		}
		for _, s := range []Shape{Small, Sorted, Runs, Const, LowCard} {
			cs = append(cs, Case{Type: t, Nulls: SomeNulls, Shape: s, Rows: rows})
			cs = append(cs, Case{Type: t, Nulls: NoNulls, Shape: s, Rows: rows})
		}
	}
	return cs
}

func (c Case) isNull(r *rand.Rand, i int) bool {
	switch c.Nulls {
	case SomeNulls:
		return r.IntN(10) == 0
	case AllNulls:
		return true
	case Alternating:
		return i%2 == 1
	case Leading:
		return i < c.Rows*3/10
	case Trailing:
		return i >= c.Rows-c.Rows*3/10
	}
	return false
}

// Array builds the case's column with the given seed.
func (c Case) Array(mem memory.Allocator, seed uint64) arrow.Array {
	r := rand.New(rand.NewPCG(seed, uint64(len(c.Name()))))
	fw := c.Type.(arrow.FixedWidthDataType)
	bw := fw.BitWidth() / 8
	vals := make([]byte, c.Rows*bw)
	valid := make([]bool, c.Rows)
	nulls := 0
	for i := 0; i < c.Rows; i++ {
		valid[i] = !c.isNull(r, i)
		if !valid[i] {
			nulls++
			continue
		}
		var v uint64
		switch c.Shape {
		case Random:
			v = r.Uint64()
		case Small:
			v = uint64(r.IntN(100))
		case Sorted:
			v = uint64(i)*3 + 1
		case Runs:
			v = uint64(i / 300)
		case Const:
			v = 42
		case LowCard:
			v = uint64(r.IntN(5)) * 1000
		}
		if c.Type.ID() == arrow.FLOAT32 && c.Shape != Random {
			v = uint64(math.Float32bits(float32(v)))
		}
		if c.Type.ID() == arrow.FLOAT64 && c.Shape != Random {
			v = math.Float64bits(float64(v))
		}
		if c.Type.ID() == arrow.FLOAT32 && c.Shape == Random {
			v = uint64(math.Float32bits(r.Float32()))
		}
		if c.Type.ID() == arrow.FLOAT64 && c.Shape == Random {
			v = math.Float64bits(r.NormFloat64())
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		copy(vals[i*bw:], b[:bw])
	}
	b := array.NewBuilder(mem, c.Type)
	defer b.Release()
	b.Reserve(c.Rows)
	for i := 0; i < c.Rows; i++ {
		if !valid[i] {
			b.AppendNull()
			continue
		}
		appendRaw(b, vals[i*bw:(i+1)*bw])
	}
	return b.NewArray()
}

func appendRaw(b array.Builder, v []byte) {
	le := binary.LittleEndian
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(int8(v[0]))
	case *array.Uint8Builder:
		bb.Append(v[0])
	case *array.Int16Builder:
		bb.Append(int16(le.Uint16(v)))
	case *array.Uint16Builder:
		bb.Append(le.Uint16(v))
	case *array.Int32Builder:
		bb.Append(int32(le.Uint32(v)))
	case *array.Uint32Builder:
		bb.Append(le.Uint32(v))
	case *array.Int64Builder:
		bb.Append(int64(le.Uint64(v)))
	case *array.Uint64Builder:
		bb.Append(le.Uint64(v))
	case *array.Float32Builder:
		bb.Append(math.Float32frombits(le.Uint32(v)))
	case *array.Float64Builder:
		bb.Append(math.Float64frombits(le.Uint64(v)))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(int32(le.Uint32(v))))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(int64(le.Uint64(v))))
	default:
		panic("corpus: unsupported builder")
	}
}

// Record builds one batch holding every case as a column.
func Record(mem memory.Allocator, cases []Case, seed uint64) arrow.RecordBatch {
	return record(mem, cases, seed)
}

// column is what Case and NestedCase have in common.
type column interface {
	Field() arrow.Field
	Array(mem memory.Allocator, seed uint64) arrow.Array
}

// record builds one batch from cases (case i drawn with seed+i) and releases
// the builders' references.
func record[C column](mem memory.Allocator, cases []C, seed uint64) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cases))
	cols := make([]arrow.Array, len(cases))
	for i, c := range cases {
		fields[i] = c.Field()
		cols[i] = c.Array(mem, seed+uint64(i))
	}
	rows := 0
	if len(cols) > 0 {
		rows = cols[0].Len()
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// ArrowBytes is the size of a batch's Arrow buffers (children included):
// the input size throughput figures are quoted against.
func ArrowBytes(rec arrow.RecordBatch) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, c := range rec.Columns() {
		walk(c.Data())
	}
	return n
}

// OffsetsBuffer is the bytes of an Arrow offsets buffer holding ends:
// 64-bit entries when large, else 32-bit (tests assemble arrays from
// buffers, with bytes under null slots, which builders never write).
func OffsetsBuffer(ends []int64, large bool) []byte {
	if large {
		return arrow.Int64Traits.CastToBytes(ends)
	}
	o := make([]int32, len(ends))
	for i, e := range ends {
		o[i] = int32(e)
	}
	return arrow.Int32Traits.CastToBytes(o)
}
