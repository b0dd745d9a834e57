package reader_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
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

// TestSparseDictionaryTake: a list<int32> column of values from 1,000 wide
// numbers, which the cost policy writes in 2.3 as a sparse chunked page with
// a page dictionary of 32-bit items. Takes of rows spread over many chunks
// read back equal, and the windows of a page join into one array: every
// chunk indexes the one dictionary, decoded once per page.
func TestSparseDictionaryTake(t *testing.T) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(7, 8))
	wide := make([]int32, 1000)
	for i := range wide {
		wide[i] = int32(r.Uint32())
	}
	const rows = 300_000
	b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Int32Builder)
	for i := range rows {
		if i%9 == 4 {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for range r.IntN(4) {
			vb.Append(wide[r.IntN(len(wide))])
		}
	}
	col := b.NewListArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: col.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, rows)
	defer rec.Release()
	f := open(t, writeFile(t, rec, writer.WithFormat(writer.Format2_3)))
	dict := false
	for _, p := range f.Pages(0) {
		dict = dict || strings.HasPrefix(p.Cell, "sparse x chunked") && strings.Contains(p.Encoding, "dict=")
	}
	if !dict {
		t.Fatalf("no sparse chunked page with a dictionary: %+v", f.Pages(0))
	}
	for _, n := range []int{2, 100, 5000} {
		idx := make([]int64, 0, n)
		for k := range n {
			idx = append(idx, int64(k)*rows/int64(n)+int64(r.IntN(rows/n)))
		}
		before := reader.SparseUnjoined()
		got, err := f.Take(idx)
		if err != nil {
			t.Fatal(err)
		}
		if d := reader.SparseUnjoined() - before; d != 0 {
			t.Errorf("take of %d rows: %d reads built an array per window", n, d)
		}
		gl := got.Column(0).(*array.List)
		for k, i := range idx {
			if !array.SliceEqual(gl, int64(k), int64(k+1), col, i, i+1) {
				t.Fatalf("take of %d rows: row %d (file row %d) differs", n, k, i)
			}
		}
		got.Release()
	}
}
