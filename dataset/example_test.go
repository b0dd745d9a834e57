package dataset_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/dataset"
)

var docsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func docs(js string) arrow.RecordBatch {
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, docsSchema, strings.NewReader(js))
	if err != nil {
		log.Fatal(err)
	}
	return rec
}

// Create a dataset (a LanceDB table's directory), append to it, and read
// some of its columns and rows back.
func ExampleCreate() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	uri := filepath.Join(dir, "docs.lance") // or s3://bucket/docs.lance

	w, err := dataset.Create(ctx, uri, docsSchema)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write(docs(`[{"id": 1, "text": "one"}, {"id": 2, "text": "two"}]`)); err != nil {
		log.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		log.Fatal(err)
	}

	a, err := dataset.Append(ctx, uri)
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Write(docs(`[{"id": 3, "text": null}]`)); err != nil {
		log.Fatal(err)
	}
	d, err := a.Commit(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("version", d.Version(), "rows", d.CountRows(), "fragments", d.NumFragments())
	for _, f := range a.Report() { // what the writer chose in the appended file
		for _, p := range f.Pages {
			fmt.Printf("  %s: %s, %s\n", p.Column, p.Cell, p.Encoding)
		}
	}

	r, err := d.NewRecordReader(ctx, 0, "text") // one column, every row
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release()
	for r.Next() {
		fmt.Println(r.RecordBatch().Column(0))
	}
	rows, err := d.Take(ctx, []int64{2, 0}) // rows by position
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Release()
	fmt.Println(rows.Column(0), rows.Column(1))
	// Output:
	// version 2 rows 3 fragments 2
	//   id: dense x constant, scalar 8 bytes
	//   text: dense x none, no values
	// ["one" "two"]
	// [(null)]
	// [3 1] [(null) "one"]
}

// Add a column to every row of a table (pylance's add_columns): only the
// new column is written, one file per fragment, committed as one version.
func ExampleAddColumns() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	uri := filepath.Join(dir, "docs.lance")
	w, err := dataset.Create(ctx, uri, docsSchema)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write(docs(`[{"id": 1, "text": "one"}, {"id": 2, "text": "two"}, {"id": 3, "text": "three"}]`)); err != nil {
		log.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		log.Fatal(err)
	}

	lengths := arrow.NewSchema([]arrow.Field{{Name: "len", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues([]int32{3, 3, 5}, nil) // one value per row, in scan order
	col := b.NewArray()
	r, err := array.NewRecordReader(lengths, []arrow.RecordBatch{array.NewRecordBatch(lengths, []arrow.Array{col}, 3)})
	if err != nil {
		log.Fatal(err)
	}
	d, err := dataset.AddColumns(ctx, uri, r)
	if err != nil {
		log.Fatal(err)
	}
	all, err := d.ReadAll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer all.Release()
	fmt.Println(d.Schema().Field(2).Name, all.Column(2))
	// Output:
	// len [3 3 5]
}
