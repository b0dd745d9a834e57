package writer_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// exampleBatch is 1,000 rows of an id and a mostly-repeated city name.
func exampleBatch() arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range 1000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append([]string{"Paris", "Rome", "Oslo"}[i%3])
	}
	return b.NewRecordBatch()
}

// Write a Lance file and read what the writer chose for each page.
func ExampleWriter() {
	rec := exampleBatch()
	defer rec.Release()
	var buf bytes.Buffer // any io.Writer: a file, an upload
	w, err := writer.New(&buf, rec.Schema())
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteBatch(rec); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	for _, p := range w.Report() {
		fmt.Printf("%s: %d rows, %s, %s\n", p.Column, p.Rows, p.Cell, p.Encoding)
	}
	f, err := reader.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		log.Fatal(err)
	}
	major, minor := f.Version()
	fmt.Printf("%d rows, Lance %d.%d\n", f.NumRows(), major, minor)
	// Output:
	// id: 1000 rows, dense x chunked, values=general(lz4,bss64)
	// city: 1000 rows, dense x chunked, values=general(lz4,bitpack32)
	// 1000 rows, Lance 2.2
}

// Override one column's encoding: the same keys and values as Lance's
// field metadata, from Go. The report says what was asked.
func ExampleWithColumnOptions() {
	rec := exampleBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := writer.New(&buf, rec.Schema(),
		writer.WithColumnOptions("city", map[string]string{selector.KeyCompression: "zstd"}))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteBatch(rec); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	p := w.Report()[1]
	fmt.Println(p.Column+":", p.Encoding)
	fmt.Println(p.Reason[:len("asked compression=zstd")])
	// Output:
	// city: values=general(zstd,bitpack32)
	// asked compression=zstd
}
