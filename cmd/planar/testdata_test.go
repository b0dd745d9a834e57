package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/reader"
)

// mixedSchema is the test table: scalars, a nullable string, a list, a
// struct and a fixed-size list.
var mixedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "point", Type: arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
	{Name: "emb", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// mixedRecord builds n rows of mixedSchema starting at row first.
func mixedRecord(n, first int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, mixedSchema)
	defer b.Release()
	for r := first; r < first+n; r++ {
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		if r%7 == 3 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", r%50))
		}
		if r%11 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(float64(r) * 0.25)
		}
		lb := b.Field(3).(*array.ListBuilder)
		if r%13 == 5 {
			lb.AppendNull()
		} else {
			lb.Append(true)
			for k := 0; k < r%4; k++ {
				lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("t%d", (r+k)%9))
			}
		}
		sb := b.Field(4).(*array.StructBuilder)
		if r%17 == 2 {
			sb.AppendNull()
		} else {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Float32Builder).Append(float32(r) / 3)
			sb.FieldBuilder(1).(*array.Int32Builder).Append(int32(r % 100))
		}
		fb := b.Field(5).(*array.FixedSizeListBuilder)
		// No null vectors: pqarrow cannot write a null fixed-size list.
		fb.Append(true)
		for k := 0; k < 4; k++ {
			fb.ValueBuilder().(*array.Float32Builder).Append(float32(r*4 + k))
		}
	}
	return b.NewRecordBatch()
}

func writeParquet(t testing.TB, path string, recs []arrow.RecordBatch, rowGroup int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rowGroup), parquet.WithCompression(compress.Codecs.Snappy))
	w, err := pqarrow.NewFileWriter(recs[0].Schema(), f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.WriteBuffered(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeIPC(t testing.TB, path string, recs []arrow.RecordBatch, stream bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if stream {
		w := ipc.NewWriter(f, ipc.WithSchema(recs[0].Schema()))
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(recs[0].Schema()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// csvSchema is what the test CSV infers to.
var csvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
}, nil)

// writeCSV writes n rows matching csvSchema and returns them as a batch.
func writeCSV(t testing.TB, path string, n int) arrow.RecordBatch {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("id,name,score,ok,day\n")
	b := array.NewRecordBuilder(memory.DefaultAllocator, csvSchema)
	defer b.Release()
	for r := 0; r < n; r++ {
		score := ""
		if r%5 == 1 {
			b.Field(2).AppendNull()
		} else {
			score = fmt.Sprintf("%g", float64(r)/8)
			b.Field(2).(*array.Float64Builder).Append(float64(r) / 8)
		}
		name := fmt.Sprintf("n%d, \"q\"", r%30)
		fmt.Fprintf(&sb, "%d,\"%s\",%s,%t,2024-01-%02d\n", r, strings.ReplaceAll(name, `"`, `""`), score, r%3 == 0, 1+r%28)
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		b.Field(1).(*array.StringBuilder).Append(name)
		b.Field(3).(*array.BooleanBuilder).Append(r%3 == 0)
		b.Field(4).(*array.Date32Builder).Append(arrow.Date32(19723 + r%28))
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.NewRecordBatch()
}

// readParquet reads a Parquet file whole with pqarrow, the rows a
// conversion must reproduce.
func readParquet(t testing.TB, path string) arrow.RecordBatch {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, -1)
	defer tr.Release()
	var recs []arrow.RecordBatch
	for tr.Next() {
		r := tr.RecordBatch()
		r.Retain()
		recs = append(recs, r)
	}
	rec := concat(t, recs)
	s, _ := noFieldIDs(rec.Schema())
	cols := make([]arrow.Array, rec.NumCols())
	for c := range cols {
		cols[c] = array.MakeFromData(relabel(rec.Column(c).Data(), s.Field(c).Type))
	}
	return array.NewRecordBatch(s, cols, rec.NumRows())
}

func readLanceFile(t testing.TB, path string) arrow.RecordBatch {
	t.Helper()
	f, err := reader.OpenPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := f.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func readDataset(t testing.TB, uri string) arrow.RecordBatch {
	t.Helper()
	d, err := dataset.Open(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := d.ReadAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// concat joins batches of one schema.
func concat(t testing.TB, recs []arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, recs[0].NumCols())
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		cols[c] = a
	}
	return array.NewRecordBatch(recs[0].Schema(), cols, n)
}

// sameRows fails unless got holds want's rows: same column names, types
// and values.
func sameRows(t testing.TB, what string, got, want arrow.RecordBatch) {
	t.Helper()
	if got.NumRows() != want.NumRows() || got.NumCols() != want.NumCols() {
		t.Fatalf("%s: %d rows x %d cols, want %d x %d", what, got.NumRows(), got.NumCols(), want.NumRows(), want.NumCols())
	}
	for c := range int(want.NumCols()) {
		if g, w := got.Schema().Field(c), want.Schema().Field(c); g.Name != w.Name || !arrow.TypeEqual(g.Type, w.Type) {
			t.Errorf("%s: column %d is %s %s, want %s %s", what, c, g.Name, g.Type, w.Name, w.Type)
			continue
		}
		if !array.Equal(got.Column(c), want.Column(c)) {
			t.Errorf("%s: column %q differs", what, want.Schema().Field(c).Name)
		}
	}
}

// dirEntries lists a directory's names (hidden temporaries included).
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// datasetFiles lists every file under a dataset directory.
func datasetFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}
