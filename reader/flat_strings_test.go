package reader_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// TestFlatStringRuns reads multi-page flat string and binary columns (FSST
// coded and plain, with and without nulls, 32- and 64-bit offsets) whole and
// in ranges, with and without the one-buffer path: all equal the input.
func TestFlatStringRuns(t *testing.T) {
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewPCG(3, 5))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "url", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "rand", Type: arrow.BinaryTypes.LargeString},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "empty", Type: arrow.BinaryTypes.String, Nullable: true},
		// Page dictionaries: few distinct values throughout, or in the
		// first half only (dictionary pages, then plain ones).
		{Name: "low", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "lowlarge", Type: arrow.BinaryTypes.LargeString},
		{Name: "halflow", Type: arrow.BinaryTypes.String},
	}, nil)
	words := []string{"red", "green", "blue", "ultraviolet", ""}
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	hosts := []string{"example.com", "lance.org", "planar.dev"}
	for i := 0; i < 40000; i++ {
		if i%9 == 0 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("https://%s/path/%d/item?id=%d", hosts[i%3], i%41, rng.IntN(1000)))
		}
		r := make([]byte, 5+rng.IntN(20))
		for k := range r {
			r[k] = byte('a' + rng.IntN(26))
		}
		b.Field(1).(*array.LargeStringBuilder).Append(string(r))
		if i%4 == 1 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.BinaryBuilder).Append([]byte{byte(i), 0, byte(i >> 8)})
		}
		if i%2 == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append("")
		}
		if i%7 == 3 {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.StringBuilder).Append(words[rng.IntN(len(words))])
		}
		b.Field(5).(*array.LargeStringBuilder).Append(words[rng.IntN(4)] + "-" + words[i%3])
		if i < 20000 {
			b.Field(6).(*array.StringBuilder).Append(words[rng.IntN(4)])
		} else {
			b.Field(6).(*array.StringBuilder).Append(fmt.Sprintf("value-%d", rng.IntN(1<<30)))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, format := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		f := open(t, writeFile(t, rec, writer.WithFormat(format), writer.WithMaxPageBytes(128<<10)))
		fsst, dict := false, 0
		for c := 0; c < 7; c++ {
			if n := len(f.Pages(c)); n < 2 && c != 3 {
				t.Fatalf("column %d has %d pages; the test needs several", c, n)
			}
			for _, p := range f.Pages(c) {
				fsst = fsst || strings.Contains(p.Encoding, "fsst")
				if strings.Contains(p.Encoding, "dict=") {
					dict++
				}
			}
		}
		if !fsst || dict < 4 {
			t.Errorf("%s: FSST page %v, %d dictionary pages; the test means to cover both", format, fsst, dict)
		}
		for _, on := range []bool{true, false} {
			prev := f.SetFlatVariable(on)
			before := reader.FlatVariableRuns()
			got, err := f.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if runs := reader.FlatVariableRuns() - before; on && runs < 5 || !on && runs != 0 {
				t.Errorf("%s one-buffer=%v: %d runs read into one buffer", format, on, runs)
			}
			what := fmt.Sprintf("%s one-buffer=%v", format, on)
			sameColumns(t, what, got, rec)
			got.Release()
			sameRange(t, what, f, rec, 1234, 30000)
			f.SetFlatVariable(prev)
		}
	}
}

// TestFlatStringLargePages reads FSST pages of over 2·par.MinValues values
// into one buffer, with nulls and 32- and 64-bit offsets, whole and in a
// range: equal to the input.
func TestFlatStringLargePages(t *testing.T) {
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewPCG(8, 2))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.BinaryTypes.LargeString},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	const n = 300_000
	for i := 0; i < n; i++ {
		r := make([]byte, 4+rng.IntN(12))
		for k := range r {
			r[k] = "abcdefghij"[rng.IntN(10)]
		}
		if i%11 == 5 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append(string(r))
		}
		b.Field(1).(*array.LargeStringBuilder).Append(string(r[1:]))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f := open(t, writeFile(t, rec, writer.WithFormat(writer.Format2_3), writer.WithMaxPageBytes(3<<20)))
	for c := 0; c < 2; c++ {
		pages := f.Pages(c)
		if len(pages) < 2 || pages[0].Rows < 2*65536 || !strings.Contains(pages[0].Encoding, "fsst") {
			t.Fatalf("column %d: %d pages, the first of %d rows (%s); the test needs large FSST pages", c, len(pages), pages[0].Rows, pages[0].Encoding)
		}
	}
	before := reader.FlatVariableRuns()
	got, err := f.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if reader.FlatVariableRuns()-before != 2 {
		t.Fatalf("%d runs read into one buffer, want 2", reader.FlatVariableRuns()-before)
	}
	sameColumns(t, "whole", got, rec)
	sameRange(t, "range", f, rec, 70_000, 200_000)
}
