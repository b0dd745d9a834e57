package writer_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/writer"
)

// TestDictItemsInBackground: large page dictionary items are compressed
// while the page's indices are encoded; pages whose dictionary is then
// not used (wide strings: built, measured, lost) and whose encoder serves
// the next page before that work ends write and read back as they should,
// on one core (the work runs only when the page's goroutine waits) and on
// two. It once read the encoder's options from the background, after the
// encoder had been handed on: a nil dereference on one core.
func TestDictItemsInBackground(t *testing.T) {
	mem := memory.NewGoAllocator()
	var cases []corpus.NestedCase
	for _, c := range corpus.Nested(20000) {
		if c.TypeCase.Name == "string_wide" {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		t.Fatal("no string_wide case in the nested corpus")
	}
	f64 := corpus.PerfClasses(0.25)[3] // float64: a dictionary of large items, used
	if f64.Name != "float64" {
		t.Fatalf("class %s, want float64", f64.Name)
	}
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		for _, c := range cases {
			rec := corpus.NestedRecord(mem, []corpus.NestedCase{c}, 2)
			for _, f := range []writer.Format{writer.Format2_2, writer.Format2_3} {
				b, _ := writeReport(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithFormat(f))
				got, err := open(t, b).ReadAll()
				if err != nil {
					t.Fatalf("%s, %v, %d cores: %v", c.Name(), f, procs, err)
				}
				if !array.RecordEqual(got, rec) {
					t.Fatalf("%s, %v, %d cores: read back differs", c.Name(), f, procs)
				}
				got.Release()
			}
			rec.Release()
		}
		rec := f64.Record(mem, 1)
		b, rep := writeReport(t, rec.Schema(), []arrow.RecordBatch{rec})
		if len(rep) == 0 || len(rep[0].BufferSizes) != 3 || rep[0].BufferSizes[2] < 64<<10 || !strings.Contains(rep[0].Reason, "dictionary") {
			t.Fatalf("float64 page without a dictionary: %+v", rep)
		}
		got, err := open(t, b).ReadAll()
		if err != nil || !array.RecordEqual(got, rec) {
			t.Fatalf("float64, %d cores: read back differs (%v)", procs, err)
		}
		got.Release()
		rec.Release()
		runtime.GOMAXPROCS(prev)
	}
}
