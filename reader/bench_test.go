package reader_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// Run with: go test ./reader -run '^$' -bench Read -benchtime 5x
func BenchmarkRead(b *testing.B) {
	const rows = 1 << 20
	rec := corpus.Record(memory.NewGoAllocator(), []corpus.Case{
		{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.NoNulls, Shape: corpus.Sorted, Rows: rows},
		{Type: arrow.PrimitiveTypes.Int32, Nulls: corpus.SomeNulls, Shape: corpus.Small, Rows: rows},
	}, 1)
	defer rec.Release()
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
	data := buf.Bytes()
	f, err := reader.Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("all", func(b *testing.B) {
		b.SetBytes(int64(rows * 12))
		for b.Loop() {
			r, err := f.ReadAll()
			if err != nil {
				b.Fatal(err)
			}
			r.Release()
		}
	})
	b.Run("take100", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 2))
		idx := make([]int64, 100)
		for b.Loop() {
			for i := range idx {
				idx[i] = r.Int64N(rows)
			}
			t, err := f.Take(idx)
			if err != nil {
				b.Fatal(err)
			}
			t.Release()
		}
	})
}
