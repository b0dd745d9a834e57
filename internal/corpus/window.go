package corpus

import (
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// SkewedLists is a list<int32> column whose levels are spread unevenly: the
// first half of the rows hold one value each, the rest mostly empty lists
// (one row in gap holds a value). The values come from 16 random 31-bit
// numbers, which bit packing cannot shrink but general compression can, so
// the cost policy compresses them in large chunks; chunks sized for the
// page's average levels per value then hold too many levels in the tail.
// (The field's dict-divisor keeps the cost policy's page dictionary, which
// would index the 16 values in 4 bits, out of the way.)
func SkewedLists(mem memory.Allocator, rows, gap int, seed uint64) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(seed, 0x5e1))
	var set [16]int32
	for i := range set {
		set[i] = int32(r.Uint32()>>1) | 1<<30
	}
	t := arrow.ListOf(arrow.PrimitiveTypes.Int32)
	b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Int32Builder)
	for i := range rows {
		b.Append(true)
		if i < rows/2 || i%gap == 0 {
			vb.Append(set[r.IntN(len(set))])
		}
	}
	a := b.NewArray()
	defer a.Release()
	md := arrow.NewMetadata([]string{"lance-encoding:dict-divisor"}, []string{"1000000000"})
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: t, Nullable: true, Metadata: md}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{a}, int64(rows))
}
