package reader_test

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// TestStructLeavesSideBySide: the leaves of one struct field are read
// (streams, ReadAll) and taken side by side (each with its own page
// cache); the batches and takes equal the input whatever the cores and the
// batch size, and when two leaves are damaged the error is always the
// first one's, as one leaf after another gives it.
func TestStructLeavesSideBySide(t *testing.T) {
	st := arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: st, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	sb := b.Field(0).(*array.StructBuilder)
	const n = 30000
	for i := range n {
		if i%13 == 0 {
			sb.AppendNull()
			continue
		}
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		sb.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprint("v", i%97))
		sb.FieldBuilder(2).(*array.Float64Builder).Append(float64(i) / 7)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	data := writeFile(t, rec, writer.WithMaxPageBytes(32<<10))
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		f := open(t, data)
		for _, batch := range []int64{n, 4096} {
			rr, err := f.NewRecordReader(reader.WithBatchRows(batch))
			if err != nil {
				t.Fatal(err)
			}
			row := int64(0)
			for rr.Next() {
				got := rr.RecordBatch()
				want := rec.NewSlice(row, row+got.NumRows())
				if !array.RecordEqual(got, want) {
					t.Errorf("%d cores, batches of %d: rows from %d differ", procs, batch, row)
				}
				want.Release()
				row += got.NumRows()
			}
			if rr.Err() != nil || row != n {
				t.Errorf("%d cores, batches of %d: %d rows, %v", procs, batch, row, rr.Err())
			}
			rr.Release()
		}
		idx := []int64{0, 1, 2, 500, 501, 4095, 4096, 17000, n - 2, n - 1}
		for i := int64(3); i < n; i += 37 {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		idx = slices.Compact(idx)
		got, err := f.Take(idx)
		if err != nil {
			t.Fatal(err)
		}
		for k, i := range idx {
			g, w := got.NewSlice(int64(k), int64(k+1)), rec.NewSlice(i, i+1)
			if !array.RecordEqual(g, w) {
				t.Fatalf("%d cores: take row %d differs", procs, i)
			}
			g.Release()
			w.Release()
		}
		got.Release()
		runtime.GOMAXPROCS(prev)
	}
	// Damage pages 1 and 3 of leaf a (its whole pages are decoded side by
	// side): every read names page 1.
	f0 := open(t, data)
	if n := len(f0.Pages(0)); n < 4 {
		t.Fatalf("leaf a has %d pages; the test needs four", n)
	}
	pageDamaged := bytes.Clone(data)
	for _, pi := range []int{1, 3} {
		r := f0.Pages(0)[pi].Buffers[0]
		for i := r.Position; i < r.Position+r.Size; i++ {
			pageDamaged[i] = 0xff
		}
	}
	for range 10 {
		_, err := open(t, pageDamaged).ReadAll()
		if err == nil || !strings.Contains(err.Error(), "page 1:") {
			t.Fatalf("damaged pages 1 and 3: %v, want page 1's error", err)
		}
	}
	// Damage the first page of leaves b and c: every read names b.
	f := open(t, data)
	damaged := bytes.Clone(data)
	for _, c := range []int{1, 2} {
		r := f.Pages(c)[0].Buffers[0]
		for i := r.Position; i < r.Position+r.Size; i++ {
			damaged[i] = 0xff
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for range 20 {
		g := open(t, damaged)
		_, err := g.ReadAll()
		if err == nil || !strings.Contains(err.Error(), `column "s.b"`) {
			t.Fatalf("damaged leaves b and c: %v, want the error of s.b", err)
		}
		_, err = g.Take([]int64{1, 2, 3, n - 1})
		if err == nil || !strings.Contains(err.Error(), `column "s.b"`) {
			t.Fatalf("take of damaged leaves b and c: %v, want the error of s.b", err)
		}
	}
}
