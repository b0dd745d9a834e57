package writer_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// BenchmarkCodecs measures every case of the codec corpus (a column class
// under a forced codec) end to end: encode = write the column to a Lance
// file, decode = read it back to Arrow, MB/s of Arrow input, and ratio =
// Arrow bytes / file bytes. Each column class also gets an arrow-go pqarrow
// line with its default properties, as a reference.
//
// Run with: go test ./writer -run '^$' -bench Codecs -benchtime 10x
func BenchmarkCodecs(b *testing.B) {
	const rows = 1 << 16
	mem := memory.NewGoAllocator()
	seen := map[string]bool{}
	for _, c := range corpus.CodecCases(rows) {
		rec := c.Record(mem)
		in := corpus.ArrowBytes(rec)
		var out []byte
		b.Run("encode/"+c.Name(), func(b *testing.B) {
			b.SetBytes(in)
			for b.Loop() {
				var buf bytes.Buffer
				w, err := writer.New(&buf, rec.Schema())
				if err != nil {
					b.Fatal(err)
				}
				if err := w.WriteBatch(rec); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				out = buf.Bytes()
			}
			b.ReportMetric(float64(in)/float64(len(out)), "ratio")
		})
		b.Run("decode/"+c.Name(), func(b *testing.B) {
			b.SetBytes(in)
			for b.Loop() {
				f, err := reader.Open(bytes.NewReader(out), int64(len(out)))
				if err != nil {
					b.Fatal(err)
				}
				r, err := f.ReadAll()
				if err != nil {
					b.Fatal(err)
				}
				r.Release()
			}
		})
		if seen[c.Column.Name] {
			continue
		}
		seen[c.Column.Name] = true
		var pq []byte
		if c.Column.Name == "vectors" {
			// Parquet cannot store a nullable fixed-size list whose null
			// rows have (null) items; pqarrow refuses the column.
			continue
		}
		b.Run("encode/"+c.Column.Name+"__pqarrow", func(b *testing.B) {
			b.SetBytes(in)
			for b.Loop() {
				var buf bytes.Buffer
				w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
				if err != nil {
					b.Fatal(err)
				}
				if err := w.Write(rec); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				pq = buf.Bytes()
			}
			b.ReportMetric(float64(in)/float64(len(pq)), "ratio")
		})
		b.Run("decode/"+c.Column.Name+"__pqarrow", func(b *testing.B) {
			b.SetBytes(in)
			for b.Loop() {
				pf, err := file.NewParquetReader(bytes.NewReader(pq))
				if err != nil {
					b.Fatal(err)
				}
				fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
				if err != nil {
					b.Fatal(err)
				}
				t, err := fr.ReadTable(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				t.Release()
			}
		})
	}
}
