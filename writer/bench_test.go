package writer_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// benchRecord is the first benchmark's input: 1M rows of int64, float64 and
// nullable int32 (10% nulls).
func benchRecord() arrow.RecordBatch {
	const rows = 1 << 20
	return corpus.Record(memory.NewGoAllocator(), []corpus.Case{
		{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.NoNulls, Shape: corpus.Random, Rows: rows},
		{Type: arrow.PrimitiveTypes.Float64, Nulls: corpus.NoNulls, Shape: corpus.Random, Rows: rows},
		{Type: arrow.PrimitiveTypes.Int32, Nulls: corpus.SomeNulls, Shape: corpus.Random, Rows: rows},
	}, 42)
}

// Run with: go test ./writer -run '^$' -bench Write -benchtime 5x
func BenchmarkWrite(b *testing.B) {
	rec := benchRecord()
	defer rec.Release()
	in := corpus.ArrowBytes(rec)
	for _, pol := range []selector.Policy{selector.PolicyCost, selector.PolicyLance} {
		b.Run("planar/"+pol.String(), func(b *testing.B) { benchPlanar(b, rec, in, writer.WithPolicy(pol)) })
	}
	for _, c := range []struct {
		name  string
		codec compress.Compression
	}{{"pqarrow/none", compress.Codecs.Uncompressed}, {"pqarrow/zstd", compress.Codecs.Zstd}} {
		b.Run(c.name, func(b *testing.B) {
			var size int
			b.SetBytes(in)
			b.ReportAllocs()
			props := parquet.NewWriterProperties(parquet.WithCompression(c.codec))
			for b.Loop() {
				var buf bytes.Buffer
				w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.DefaultWriterProps())
				if err != nil {
					b.Fatal(err)
				}
				if err := w.Write(rec); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
			}
			b.ReportMetric(float64(size)/float64(rec.NumRows()), "B/row")
		})
	}
}

func benchPlanar(b *testing.B, rec arrow.RecordBatch, in int64, opts ...writer.Option) {
	var size int
	b.SetBytes(in)
	b.ReportAllocs()
	for b.Loop() {
		// The bytes are counted, not kept: growing a buffer would be
		// timed too.
		var cw countWriter
		w, err := writer.New(&cw, rec.Schema(), opts...)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.WriteBatch(rec); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		size = cw.n
	}
	b.ReportMetric(float64(size)/float64(rec.NumRows()), "B/row")
}

// stringRecord is 1M rows of one nullable string column (5% nulls): URL-like
// ASCII, or with mixed, one value in three multi-byte UTF-8.
func stringRecord(multibyte bool) arrow.RecordBatch {
	const rows = 1 << 20
	mem := memory.NewGoAllocator()
	b := array.NewStringBuilder(mem)
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
	if multibyte {
		words = []string{"alpha", "Grüße", "日本語", "delta", "😀 smile", "zeta"}
	}
	var sb strings.Builder
	for i := range rows {
		if i%20 == 7 {
			b.AppendNull()
			continue
		}
		sb.Reset()
		fmt.Fprintf(&sb, "https://example.com/%s/%d/%s?id=%d", words[i%6], i%1000, words[(i/6)%6], i)
		b.Append(sb.String())
	}
	a := b.NewArray()
	defer a.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{a}, rows)
}

// Run with: go test ./writer -run '^$' -bench WriteStrings -benchtime 5x
func BenchmarkWriteStrings(b *testing.B) {
	for _, mb := range []bool{false, true} {
		rec := stringRecord(mb)
		name := "ascii"
		if mb {
			name = "multibyte"
		}
		b.Run(name, func(b *testing.B) { benchPlanar(b, rec, corpus.ArrowBytes(rec)) })
		rec.Release()
	}
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}
