package writer_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/writer"
)

// Every type and nesting of the corpus round-trips through planar's own
// reader in every format, whole, by range and by take.
func TestNestedRoundTrip(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, c := range corpus.Nested(700) {
		t.Run(c.Name(), func(t *testing.T) {
			rec := corpus.NestedRecord(mem, []corpus.NestedCase{c}, 3)
			defer rec.Release()
			for _, f := range []writer.Format{writer.Format2_3, writer.Format2_2} {
				b := writeAll(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithFormat(f), writer.WithMaxPageBytes(8<<10))
				r := open(t, b)
				got, err := r.ReadAll()
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if !array.Equal(got.Column(0), rec.Column(0)) {
					t.Fatalf("%s: column differs\n got %v\nwant %v", f, got.Column(0), rec.Column(0))
				}
				rg, err := r.ReadRange(123, 400)
				if err != nil {
					t.Fatalf("%s: range: %v", f, err)
				}
				if !array.Equal(rg.Column(0), array.NewSlice(rec.Column(0), 123, 523)) {
					t.Fatalf("%s: range differs", f)
				}
				tk, err := r.Take([]int64{699, 0, 350, 351})
				if err != nil {
					t.Fatalf("%s: take: %v", f, err)
				}
				for k, i := range []int64{699, 0, 350, 351} {
					if !array.Equal(array.NewSlice(tk.Column(0), int64(k), int64(k)+1), array.NewSlice(rec.Column(0), i, i+1)) {
						t.Fatalf("%s: take(%d) differs", f, i)
					}
				}
			}
		})
	}
}
