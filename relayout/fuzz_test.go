package relayout_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/relayout"
	"github.com/planarlance/planar/writer"
)

// FuzzConvert converts arbitrary bytes both ways, with and without
// re-encoding: it must never panic, fail only with the documented errors,
// and every file it writes must open.
func FuzzConvert(f *testing.F) {
	mem := memory.NewGoAllocator()
	cases := []corpus.Case{
		{Type: arrow.PrimitiveTypes.Int32, Nulls: corpus.SomeNulls, Rows: 60},
		{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.NullableNone, Shape: corpus.Const, Rows: 60},
		{Type: arrow.PrimitiveTypes.Float64, Nulls: corpus.AllNulls, Rows: 60},
		{Type: arrow.PrimitiveTypes.Uint8, Nulls: corpus.NoNulls, Shape: corpus.Runs, Rows: 60},
	}
	rec := corpus.Record(mem, cases, 3)
	defer rec.Release()
	for _, ff := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		b := write(f, []arrow.RecordBatch{rec}, writer.WithFormat(ff))
		f.Add(b, true, false)
		f.Add(b, false, true)
		f.Add(b[:len(b)-7], true, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, to23, reencode bool) {
		target := relayout.V2_2
		if to23 {
			target = relayout.V2_3
		}
		var out bytes.Buffer
		_, err := relayout.Convert(bytes.NewReader(b), int64(len(b)), &out, relayout.Options{Target: target, Reencode: reencode})
		if err != nil {
			if !errors.Is(err, reader.ErrCorrupt) && !errors.Is(err, reader.ErrUnsupported) && !errors.Is(err, relayout.ErrNoCounterpart) {
				t.Fatalf("undocumented error: %v", err)
			}
			return
		}
		if _, err := reader.Open(bytes.NewReader(out.Bytes()), int64(out.Len())); err != nil {
			t.Fatalf("the output does not open: %v", err)
		}
	})
}
