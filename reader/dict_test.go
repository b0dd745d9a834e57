package reader_test

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/writer"
)

// TestUnsignedDictionaryKeys: unsigned keys use their top bit, so a uint8
// dictionary of 200 items (keys up to 199) and a uint16 one of 40000 read
// back exactly (the signed limit 2^(bits-1) used to refuse key 128). The
// writer takes at most one fewer distinct values than the keys address
// (arrow's dictionary unification refuses more), so 255 under uint8.
func TestUnsignedDictionaryKeys(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, c := range []struct {
		idx   arrow.DataType
		items int
	}{{arrow.PrimitiveTypes.Uint8, 200}, {arrow.PrimitiveTypes.Uint8, 255}, {arrow.PrimitiveTypes.Uint16, 40000}, {arrow.PrimitiveTypes.Int8, 127}} {
		dt := &arrow.DictionaryType{IndexType: c.idx, ValueType: arrow.BinaryTypes.String}
		ib := array.NewBuilder(mem, c.idx)
		sb := array.NewStringBuilder(mem)
		for i := 0; i < c.items; i++ {
			sb.Append(fmt.Sprintf("item%d", i))
		}
		rows := 3 * c.items
		for i := 0; i < rows; i++ {
			k := (i * 7) % c.items
			switch b := ib.(type) {
			case *array.Uint8Builder:
				b.Append(uint8(k))
			case *array.Uint16Builder:
				b.Append(uint16(k))
			case *array.Int8Builder:
				b.Append(int8(k))
			}
			if i%13 == 5 {
				ib.AppendNull()
			}
		}
		keys, items := ib.NewArray(), sb.NewArray()
		da := array.NewDictionaryArray(dt, keys, items)
		schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{da}, int64(da.Len()))
		for _, ff := range []writer.Format{writer.Format2_2, writer.Format2_3} {
			t.Run(fmt.Sprintf("%s-%d-%s", c.idx, c.items, ff), func(t *testing.T) {
				f := open(t, writeFile(t, rec, writer.WithFormat(ff)))
				got, err := f.ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				g := got.Column(0).(*array.Dictionary)
				for i := 0; i < da.Len(); i++ {
					if g.IsNull(i) != da.IsNull(i) || !g.IsNull(i) && g.Dictionary().ValueStr(g.GetValueIndex(i)) != items.ValueStr(da.GetValueIndex(i)) {
						t.Fatalf("row %d: got %s, want %s", i, g.ValueStr(i), da.ValueStr(i))
					}
				}
				tk, err := f.Take([]int64{int64(rows) - 1, 128, 0})
				if err != nil {
					t.Fatal(err)
				}
				defer tk.Release()
				if tk.NumRows() != 3 {
					t.Fatalf("take: %d rows", tk.NumRows())
				}
			})
		}
	}
}
