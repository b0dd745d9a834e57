package writer_test

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// TestConcurrencySameBytes writes the flat, nested and sparse corpora in
// several batches with small pages (many pages per column, cut mid-batch)
// under every mix of encoding goroutines and pages in flight: the files and
// the reports must be identical to the single-goroutine writer's, and read
// back to the input.
func TestConcurrencySameBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	flat := corpus.Record(mem, corpus.Flat(6000), 11)
	defer flat.Release()
	nested := corpus.NestedRecord(mem, corpus.NestedWritable(3000), 11)
	defer nested.Release()
	for _, tc := range []struct {
		name string
		rec  arrow.RecordBatch
		opts []writer.Option
	}{
		{"flat 2.3", flat, nil},
		{"flat 2.2 lance", flat, []writer.Option{writer.WithFormat(writer.Format2_2), writer.WithPolicy(selector.PolicyLance)}},
		{"nested 2.3", nested, nil},
		{"nested 2.2", nested, []writer.Option{writer.WithFormat(writer.Format2_2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var batches []arrow.RecordBatch
			for off := int64(0); off < tc.rec.NumRows(); off += 700 {
				s := tc.rec.NewSlice(off, min(off+700, tc.rec.NumRows()))
				defer s.Release()
				batches = append(batches, s)
			}
			base := append([]writer.Option{writer.WithMaxPageBytes(16 << 10)}, tc.opts...)
			want, wantRep := writeReport(t, tc.rec.Schema(), batches, append(base, writer.WithConcurrency(1))...)
			if int64(len(wantRep)) <= 2*tc.rec.NumCols() {
				t.Fatalf("only %d pages for %d columns: the test needs several pages per column", len(wantRep), tc.rec.NumCols())
			}
			got, err := open(t, want).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if !array.RecordEqual(got, tc.rec) {
				t.Fatal("single-goroutine file does not read back to the input")
			}
			got.Release()
			for _, c := range []struct{ workers, inFlight int }{{2, 1}, {2, 0}, {4, 3}} {
				opts := append(base, writer.WithConcurrency(c.workers))
				if c.inFlight > 0 {
					opts = append(opts, writer.WithPagesInFlight(c.inFlight))
				}
				b, rep := writeReport(t, tc.rec.Schema(), batches, opts...)
				if !bytes.Equal(b, want) {
					t.Errorf("%d goroutines, %d in flight: file differs (%d vs %d bytes)", c.workers, c.inFlight, len(b), len(want))
				}
				if !reflect.DeepEqual(rep, wantRep) {
					t.Errorf("%d goroutines, %d in flight: report differs", c.workers, c.inFlight)
				}
			}
		})
	}
}

func TestConcurrencyOptions(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, o := range []writer.Option{writer.WithConcurrency(0), writer.WithConcurrency(-1), writer.WithPagesInFlight(0)} {
		if _, err := writer.New(&bytes.Buffer{}, schema, o); !errors.Is(err, writer.ErrInvalidOption) {
			t.Errorf("bad option accepted: %v", err)
		}
	}
}

// TestCoresSameBytes writes large pages, whose chunks and FSST coding are
// split across cores, under GOMAXPROCS 1 and 4: the files and reports must
// be identical.
func TestCoresSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("large pages")
	}
	var recs []arrow.RecordBatch
	for _, c := range corpus.PerfClasses(0.4) { // 400k-row pages: several pieces
		switch c.Name {
		case "int32-small-nulls", "float64", "urls", "list-int32-nulls", "struct-i32-str-list", "timestamps", "lowcard-strings":
			r := c.Record(memory.DefaultAllocator, 3)
			defer r.Release()
			recs = append(recs, r)
		}
	}
	if len(recs) != 7 {
		t.Fatalf("%d classes found", len(recs))
	}
	write := func(procs int) ([][]byte, [][]writer.PageReport) {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		var files [][]byte
		var reps [][]writer.PageReport
		for _, r := range recs {
			for _, f := range []writer.Format{writer.Format2_2, writer.Format2_3} {
				var buf bytes.Buffer
				w, err := writer.New(&buf, r.Schema(), writer.WithFormat(f), writer.WithMaxPageBytes(64<<20))
				if err != nil {
					t.Fatal(err)
				}
				if err := w.WriteBatch(r); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				files = append(files, buf.Bytes())
				reps = append(reps, w.Report())
			}
		}
		return files, reps
	}
	f1, r1 := write(1)
	f4, r4 := write(4)
	for i := range f1 {
		if !bytes.Equal(f1[i], f4[i]) || !reflect.DeepEqual(r1[i], r4[i]) {
			t.Errorf("file %d (%d pages): GOMAXPROCS 4 writes other bytes than 1", i, len(r1[i]))
		}
	}
}
