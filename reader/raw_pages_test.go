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

// rawRecord holds columns whose zipped pages are raw (no nulls, fixed
// width) and one that is not (nulls), so a file holds both kinds of runs.
func rawRecord(n int) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewPCG(7, 9))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "vec", Type: arrow.FixedSizeListOf(16, arrow.PrimitiveTypes.Float32)},
		{Name: "mat", Type: arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int16))},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 5}},
		{Name: "nullable", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(rng.Int64())
		vb := b.Field(1).(*array.FixedSizeListBuilder)
		vb.Append(true)
		for k := 0; k < 16; k++ {
			vb.ValueBuilder().(*array.Float32Builder).Append(rng.Float32())
		}
		mb := b.Field(2).(*array.FixedSizeListBuilder)
		mb.Append(true)
		inner := mb.ValueBuilder().(*array.FixedSizeListBuilder)
		for r := 0; r < 2; r++ {
			inner.Append(true)
			for k := 0; k < 3; k++ {
				inner.ValueBuilder().(*array.Int16Builder).Append(int16(rng.Uint32()))
			}
		}
		fb := b.Field(3).(*array.FixedSizeBinaryBuilder)
		fb.Append([]byte{byte(i), byte(i >> 8), byte(rng.Uint32()), 3, 4})
		if i%7 == 0 {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Float64Builder).Append(rng.Float64())
		}
	}
	return b.NewRecordBatch()
}

// TestRawPageRuns reads multi-page zipped columns with and without the
// straight-to-buffer path: both equal the input, and the path is taken for
// the columns it is for.
func TestRawPageRuns(t *testing.T) {
	rec := rawRecord(3000)
	defer rec.Release()
	opts := []writer.Option{writer.WithMaxPageBytes(4096)}
	for _, f := range rec.Schema().Fields() {
		opts = append(opts, writer.WithColumnOptions(f.Name, map[string]string{"lance-encoding:structural-encoding": "fullzip"}))
	}
	for _, format := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		t.Run(fmt.Sprint(format), func(t *testing.T) {
			f := open(t, writeFile(t, rec, append(opts, writer.WithFormat(format))...))
			defer f.Close()
			for c := 0; c < 4; c++ {
				if n := len(f.Pages(c)); n < 3 {
					t.Fatalf("column %d has %d pages; the test needs several", c, n)
				}
				for i, p := range f.Pages(c) {
					if p.Cell != "dense x zipped" {
						t.Fatalf("column %d page %d is %s, want dense x zipped", c, i, p.Cell)
					}
				}
			}
			for _, raw := range []bool{false, true} {
				prev := f.SetRawPages(raw)
				before := reader.RawPageRuns()
				got, err := f.ReadAll()
				runs := reader.RawPageRuns() - before
				f.SetRawPages(prev)
				if err != nil {
					t.Fatal(err)
				}
				sameColumns(t, fmt.Sprint("raw=", raw), got, rec)
				got.Release()
				if want := map[bool]int64{false: 0, true: 4}[raw]; runs != want {
					t.Errorf("raw=%v: %d raw runs, want %d (the four null-free columns)", raw, runs, want)
				}
			}
			// A range that cuts pages goes page by page, and agrees.
			sameRange(t, "range", f, rec, 1001, 1500)
		})
	}
}
