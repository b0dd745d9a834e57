package reader_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// sparseRecord holds nullable fixed-width columns meant to be written
// sparse: vectors and matrices of all-valid items (the straight-to-buffer
// path's columns), vectors with null items (not its), plain values, and a
// column null nowhere in its first pages.
func sparseRecord(n int) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewPCG(3, 5))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "vec", Type: arrow.FixedSizeListOf(64, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "mat", Type: arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(40, arrow.PrimitiveTypes.Float32)), Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 5}, Nullable: true},
		{Name: "late", Type: arrow.FixedSizeListOf(48, arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "holes", Type: arrow.FixedSizeListOfField(32, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float64, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := 0; i < n; i++ {
		if rng.IntN(3) == 0 {
			b.Field(0).AppendNull()
		} else {
			vb := b.Field(0).(*array.FixedSizeListBuilder)
			vb.Append(true)
			for k := 0; k < 64; k++ {
				vb.ValueBuilder().(*array.Float32Builder).Append(rng.Float32())
			}
		}
		if rng.IntN(10) < 6 {
			b.Field(1).AppendNull()
		} else {
			mb := b.Field(1).(*array.FixedSizeListBuilder)
			mb.Append(true)
			inner := mb.ValueBuilder().(*array.FixedSizeListBuilder)
			for r := 0; r < 2; r++ {
				inner.Append(true)
				for k := 0; k < 40; k++ {
					inner.ValueBuilder().(*array.Float32Builder).Append(rng.Float32())
				}
			}
		}
		if i%5 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.FixedSizeBinaryBuilder).Append([]byte{byte(i), byte(i >> 8), byte(rng.Uint32()), 3, 4})
		}
		if i > n/2 && i%3 == 0 {
			b.Field(3).AppendNull()
		} else {
			lb := b.Field(3).(*array.FixedSizeListBuilder)
			lb.Append(true)
			for k := 0; k < 48; k++ {
				lb.ValueBuilder().(*array.Int32Builder).Append(int32(rng.Uint32()))
			}
		}
		if i%2 == 0 {
			b.Field(4).AppendNull()
		} else {
			hb := b.Field(4).(*array.FixedSizeListBuilder)
			hb.Append(true)
			for k := 0; k < 32; k++ {
				if rng.IntN(4) == 0 {
					hb.ValueBuilder().AppendNull()
				} else {
					hb.ValueBuilder().(*array.Float64Builder).Append(rng.Float64())
				}
			}
		}
	}
	return b.NewRecordBatch()
}

// TestSparsePageRuns reads multi-page sparse columns with and without the
// straight-to-buffer path: both equal the input, on both cores and one,
// and the path is taken for the columns whose pages are sparse zipped
// rows without item validity.
func TestSparsePageRuns(t *testing.T) {
	rec := sparseRecord(3000)
	defer rec.Release()
	opts := []writer.Option{writer.WithMaxPageBytes(64 << 10), writer.WithFormat(writer.Format2_3)}
	for _, f := range rec.Schema().Fields() {
		opts = append(opts, writer.WithColumnOptions(f.Name, map[string]string{"lance-encoding:structural-encoding": "sparse"}))
	}
	f := open(t, writeFile(t, rec, opts...))
	defer f.Close()
	eligible, holes := 0, false
	for c, fl := range rec.Schema().Fields() {
		pages := f.Pages(c)
		zipped := len(pages) >= 2
		for _, p := range pages {
			zipped = zipped && p.Cell == "sparse x zipped"
		}
		t.Logf("column %s: %d pages, first %s", fl.Name, len(pages), pages[0].Cell)
		switch {
		case zipped && fl.Name == "holes":
			holes = true
		case zipped:
			eligible++
		}
	}
	if eligible < 2 || !holes {
		t.Fatalf("%d columns without null items written as sparse zipped pages, holes %v; the test needs two and holes", eligible, holes)
	}
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("path=", on), func(t *testing.T) {
			prev := f.SetSparsePages(on)
			defer f.SetSparsePages(prev)
			before := reader.SparsePageRuns()
			got, err := f.ReadAll()
			runs := reader.SparsePageRuns() - before
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			sameColumns(t, "ReadAll", got, rec)
			if want := map[bool]int64{false: 0, true: int64(eligible)}[on]; runs != want {
				t.Errorf("%d sparse runs, want %d", runs, want)
			}
			// A range that cuts pages goes page by page, and agrees.
			sameRange(t, "range", f, rec, 1001, 1500)
		})
	}
}
