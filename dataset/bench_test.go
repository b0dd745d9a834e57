package dataset

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// BenchmarkDatasetAppend streams 1M rows into a new dataset per iteration.
func BenchmarkDatasetAppend(b *testing.B) {
	const batch, batches = 64 << 10, 16
	recs := make([]arrow.RecordBatch, batches)
	for i := range recs {
		recs[i] = testBatch(int64(i*batch), batch)
		defer recs[i].Release()
	}
	ctx := context.Background()
	dir := b.TempDir()
	n := 0
	for b.Loop() {
		n++
		w, err := Create(ctx, filepath.Join(dir, "ds"+strconv.Itoa(n)), testSchema)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(batch*batches)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkDatasetCommit measures one small append: open the latest
// version, write a 100-row data file, commit.
func BenchmarkDatasetCommit(b *testing.B) {
	ctx := context.Background()
	uri := filepath.Join(b.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	rec := testBatch(0, 100)
	defer rec.Release()
	for b.Loop() {
		a, err := Append(ctx, uri)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Write(rec); err != nil {
			b.Fatal(err)
		}
		if _, err := a.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
