package reader_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// Read some columns of some rows of a Lance file, as a stream of batches,
// and take rows by number.
func ExampleFile_NewRecordReader() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cities.lance")
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "pop", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(`[
		{"id": 0, "city": "Paris", "pop": 2.1}, {"id": 1, "city": "Rome", "pop": 2.8},
		{"id": 2, "city": "Oslo", "pop": null}, {"id": 3, "city": "Lima", "pop": 10.1},
		{"id": 4, "city": null, "pop": 0.5}]`))
	if err != nil {
		log.Fatal(err)
	}
	out, _ := os.Create(path)
	w, err := writer.New(out, schema)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteBatch(rec); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	out.Close()

	f, err := reader.OpenPath(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := f.NewRecordReader(reader.WithColumns("city", "pop"), reader.WithRowRange(1, 3), reader.WithBatchRows(2))
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release()
	for r.Next() {
		b := r.RecordBatch()
		fmt.Println(b.Column(0), b.Column(1))
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	rows, err := f.TakeColumns([]int64{4, 0}, "id", "city")
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Release()
	fmt.Println(rows.Column(0), rows.Column(1))
	// Output:
	// ["Rome" "Oslo"] [2.8 (null)]
	// ["Lima"] [10.1]
	// [4 0] [(null) "Paris"]
}
