package relayout_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/relayout"
	"github.com/planarlance/planar/writer"
)

// BenchmarkConvertPath converts a 2.2 file of the flat corpus (100,000
// rows) to 2.3 on disk: the data region is copied whole, every page
// description rewritten.
func BenchmarkConvertPath(b *testing.B) {
	mem := memory.NewGoAllocator()
	var cases []corpus.Case
	for _, c := range corpus.Flat(100_000) {
		// Constant pages with nulls would be re-encoded: left out, this
		// measures the metadata-only path.
		if c.Nulls == corpus.NoNulls || c.Nulls == corpus.NullableNone {
			cases = append(cases, c)
		}
	}
	rec := corpus.Record(mem, cases, 7)
	data := write(b, []arrow.RecordBatch{rec}, writer.WithFormat(writer.Format2_2))
	rec.Release()
	dir := b.TempDir()
	src, dst := filepath.Join(dir, "src.lance"), filepath.Join(dir, "dst.lance")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	var rep relayout.Report
	for b.Loop() {
		var err error
		if rep, err = relayout.ConvertPath(src, dst, relayout.Options{Target: relayout.V2_3}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rep.Pages)), "pages")
	b.ReportMetric(float64(rep.Reencoded), "re-encoded")
}
