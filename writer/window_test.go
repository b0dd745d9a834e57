package writer_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// TestWindowChunksWithSkewedLevels: a list page whose values the cost
// policy compresses in large chunks, with most of its levels in the tail, is
// still written (the windows shrink until every chunk's levels fit the
// 65535 a chunk header counts) and reads back equal.
func TestWindowChunksWithSkewedLevels(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, f := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		rec := corpus.SkewedLists(mem, 300_000, 40, 1)
		defer rec.Release()
		var buf bytes.Buffer
		w, err := writer.New(&buf, rec.Schema(), writer.WithFormat(f))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBatch(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		windows := false
		for _, p := range w.Report() {
			t.Logf("%v: page %d %s %s", f, p.Page, p.Cell, p.Encoding)
			windows = windows || strings.Contains(p.Encoding, "general(zstd")
		}
		if !windows {
			t.Errorf("%v: no page compressed with zstd: the test does not exercise windows", f)
		}
		r, err := reader.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if !array.RecordEqual(got, rec) {
			t.Errorf("%v: read back differs", f)
		}
		got.Release()
	}
}
