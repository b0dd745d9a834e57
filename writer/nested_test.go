package writer_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
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
			if c.ReadOnly {
				if _, err := writer.New(&bytes.Buffer{}, rec.Schema()); !errors.Is(err, writer.ErrUnsupportedType) {
					t.Fatalf("read-only type accepted by New: %v", err)
				}
				return
			}
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

// A page whose one value sits behind more than 65535 empty lists cannot be
// chunked dense: 2.3 stores its structure sparse (Lance's level budget
// rule), 2.2 falls back to a zipped page.
func TestManyLevelsInOneChunk(t *testing.T) {
	mem := memory.NewGoAllocator()
	b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	for i := 0; i < 70000; i++ {
		b.Append(true) // empty list
	}
	b.Append(true)
	b.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{42, 43}, nil)
	arr := b.NewArray()
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arr.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	var w *writer.Writer
	for _, f := range []writer.Format{writer.Format2_3, writer.Format2_2} {
		var buf bytes.Buffer
		var err error
		if w, err = writer.New(&buf, schema, writer.WithFormat(f)); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBatch(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want := "dense x zipped"
		if f == writer.Format2_3 {
			want = "sparse x chunked"
		}
		if got := w.Report()[0].Cell; got != want {
			t.Errorf("%s: cell %q, want %s", f, got, want)
		}
		got, err := open(t, buf.Bytes()).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(got.Column(0), arr) {
			t.Errorf("%s: data differs", f)
		}
	}
}

// Batches of any size, sliced input arrays and a million rows give the same
// data back, and pages never split a row.
func TestBatchSizesAndSlices(t *testing.T) {
	mem := memory.NewGoAllocator()
	cases := []corpus.NestedCase{
		{TypeCase: corpus.TypeByName("list_struct"), Nulls: corpus.SomeNulls}, // list_struct
		{TypeCase: corpus.TypeByName("string"), Nulls: corpus.SomeNulls},      // string
	}
	var recs []arrow.RecordBatch
	for i, n := range []int{1, 0, 3000, 1, 777} {
		for j := range cases {
			cases[j].Rows = n + 10
		}
		full := corpus.NestedRecord(mem, cases, uint64(i))
		recs = append(recs, full.NewSlice(5, int64(5+n))) // sliced input
	}
	b := writeAll(t, recs[0].Schema(), recs, writer.WithMaxPageBytes(4<<10))
	f := open(t, b)
	got, err := f.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := concat(t, recs)
	for c := range cases {
		if !array.Equal(got.Column(c), want[c]) {
			t.Errorf("column %s differs", cases[c].Name())
		}
	}
	for c := 0; c < f.NumColumns(); c++ {
		var rows uint64
		for _, p := range f.Pages(c) {
			rows += p.Rows
		}
		if rows != uint64(f.NumRows()) {
			t.Errorf("column %d pages hold %d rows of %d", c, rows, f.NumRows())
		}
	}
	// One million rows of a list column in one batch.
	big := corpus.NestedRecord(mem, []corpus.NestedCase{{TypeCase: corpus.TypeByName("list_i32"), Nulls: corpus.SomeNulls, Rows: 1 << 20}}, 9)
	bb := writeAll(t, big.Schema(), []arrow.RecordBatch{big})
	bg, err := open(t, bb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !array.Equal(bg.Column(0), big.Column(0)) {
		t.Error("1M-row list column differs")
	}
}

// Arrays whose offsets or lengths are inconsistent are rejected with
// ErrInvalidBatch before anything of the batch is written.
func TestInconsistentArrays(t *testing.T) {
	mem := memory.NewGoAllocator()
	lt := arrow.ListOf(arrow.PrimitiveTypes.Int32)
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: lt, Nullable: true}}, nil)
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{1, 2, 3, 4}, nil)
	child := ib.NewArray()
	mk := func(offsets []int32, n int) arrow.RecordBatch {
		d := array.NewData(lt, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{child.Data()}, 0, 0)
		return array.NewRecordBatch(schema, []arrow.Array{array.MakeFromData(d)}, int64(n))
	}
	var buf bytes.Buffer
	w, err := writer.New(&buf, schema)
	if err != nil {
		t.Fatal(err)
	}
	for name, rec := range map[string]arrow.RecordBatch{
		"decreasing offsets":  mk([]int32{0, 3, 1}, 2),
		"offsets past child":  mk([]int32{0, 2, 9}, 2),
		"short offset buffer": mk([]int32{0, 1}, 3),
	} {
		if err := w.WriteBatch(rec); !errors.Is(err, writer.ErrInvalidBatch) {
			t.Errorf("%s: %v, want ErrInvalidBatch", name, err)
		}
	}
	good := mk([]int32{0, 1, 4}, 2)
	if err := w.WriteBatch(good); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := open(t, buf.Bytes()).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != 2 || !array.Equal(got.Column(0), good.Column(0)) {
		t.Errorf("file holds %d rows: %v", got.NumRows(), got.Column(0))
	}
}

// Columns below a structural fixed-size list are written as one page (as
// pylance does; FORMAT.md §5b), whatever the page budget.
func TestFSLOfStructOnePage(t *testing.T) {
	mem := memory.NewGoAllocator()
	c := corpus.NestedCase{TypeCase: corpus.TypeByName("fsl_struct"), Nulls: corpus.Leading, Rows: 3000}
	rec := corpus.NestedRecord(mem, []corpus.NestedCase{c}, 1)
	b := writeAll(t, rec.Schema(), []arrow.RecordBatch{rec, rec}, writer.WithMaxPageBytes(1024))
	f := open(t, b)
	for col := 0; col < f.NumColumns(); col++ {
		if p := f.Pages(col); len(p) != 1 || p[0].Rows != 2*3000*2 {
			t.Errorf("column %d: %d pages (first %d elements)", col, len(p), p[0].Rows)
		}
	}
	got, err := f.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := concat(t, []arrow.RecordBatch{rec, rec})
	if !array.Equal(got.Column(0), want[0]) {
		t.Error("data differs")
	}
}

// A structural fixed-size list combined with a list is refused in 2.2 and
// 2.3-interim (Lance 14's dense reader does not support FSL<...List<...>>)
// and written as sparse cells in 2.3, which planar reads back (issue #9.4).
func TestFSLOfStructWithList(t *testing.T) {
	mem := memory.NewGoAllocator()
	i32 := arrow.PrimitiveTypes.Int32
	st := func(name string, dt arrow.DataType) arrow.DataType {
		return arrow.StructOf(arrow.Field{Name: name, Type: dt, Nullable: true})
	}
	cases := []struct {
		dt   arrow.DataType
		rows string
	}{
		{arrow.ListOf(arrow.FixedSizeListOf(2, st("x", i32))), `[[[{"x": 1}, {"x": 2}]], [], null, [null, [{"x": null}, {"x": 3}]], [[{"x": 4}, null]]]`},
		{arrow.FixedSizeListOf(2, st("l", arrow.ListOf(i32))), `[[{"l": [1, 2]}, {"l": []}], null, [{"l": null}, null], [{"l": [3]}, {"l": [null]}]]`},
		{arrow.ListOf(arrow.FixedSizeListOf(2, st("l", arrow.ListOf(i32)))), `[[[{"l": [1]}, {"l": [2, 3]}]], [], null, [[null, {"l": null}], [{"l": []}, {"l": [4]}]]]`},
		{arrow.ListOf(arrow.FixedSizeListOf(2, st("x", i32))), `[[[{"x": 7}, {"x": 7}]], [[{"x": 7}, {"x": 7}], [{"x": 7}, {"x": 7}]]]`},
		{arrow.ListOf(arrow.FixedSizeListOf(2, st("x", i32))), `[[[{"x": null}, null]], null, []]`},
	}
	for _, c := range cases {
		a, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.rows))
		if err != nil {
			t.Fatal(err)
		}
		schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.dt, Nullable: true}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))
		for _, f := range []writer.Format{writer.Format2_2, writer.Format2_3Interim} {
			if _, err := writer.New(&bytes.Buffer{}, schema, writer.WithFormat(f)); !errors.Is(err, writer.ErrUnsupportedType) {
				t.Errorf("%s in %s: New returned %v, want ErrUnsupportedType", c.dt, f, err)
			}
		}
		b, rep := writeReport(t, schema, []arrow.RecordBatch{rec}, writer.WithFormat(writer.Format2_3))
		for _, p := range rep {
			if !strings.HasPrefix(p.Cell, "sparse") {
				t.Errorf("%s: page %s is %s, want a sparse cell", c.dt, p.Column, p.Cell)
			}
		}
		got, err := open(t, b).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", c.dt, err)
		}
		if !array.Equal(got.Column(0), a) {
			t.Errorf("%s: read back\n%v\nwant\n%v", c.dt, got.Column(0), a)
		}
	}
}

// Structural cases of issue #9 (nested FSL nulls, lists under nullable
// parents, pages whose content changes) round-trip through planar's reader
// in both formats, both policies and tiny page budgets. The interop tests
// have pylance read the same shapes.
func TestStructuralIssueRoundTrip(t *testing.T) {
	mem := memory.NewGoAllocator()
	i16, i32 := arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32
	fsl := func(n int32, t arrow.DataType) arrow.DataType { return arrow.FixedSizeListOf(n, t) }
	sl := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.ListOf(i32), Nullable: true})
	cases := []struct {
		dt   arrow.DataType
		rows string
	}{
		{fsl(3, fsl(2, i16)), `[[[1, 2], null, [5, 6]], [[7, null], [9, 10], [11, 12]], null, [[13, 14], [15, 16], [17, 18]]]`},
		{fsl(2, fsl(2, fsl(2, i16))), `[[[[1, null], null], null], [[[1, 2], [3, 4]], [[5, 6], [null, 8]]], null]`},
		{fsl(2, fsl(16, arrow.PrimitiveTypes.Float64)), `[[null, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, null]], null]`},
		{sl, `[{"a": [null]}, null, {"a": [1, 2]}, null, null, {"a": null}, {"a": null}, {"a": []}, {"a": [3]}]`},
		{arrow.ListOf(arrow.StructOf(arrow.Field{Name: "a", Type: i32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true})),
			`[[{"a": 1, "b": [null, "x"]}, null], [{"a": 2, "b": ["y"]}], null, [{"a": 3, "b": null}]]`},
	}
	for _, c := range cases {
		a, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.rows))
		if err != nil {
			t.Fatal(err)
		}
		schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.dt, Nullable: true}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))
		for _, f := range []writer.Format{writer.Format2_2, writer.Format2_3} {
			for _, p := range []selector.Policy{selector.PolicyCost, selector.PolicyLance} {
				for _, budget := range []int64{1, 8 << 20} {
					b := writeAll(t, schema, []arrow.RecordBatch{rec}, writer.WithFormat(f), writer.WithPolicy(p), writer.WithMaxPageBytes(budget))
					got, err := open(t, b).ReadAll()
					if err != nil {
						t.Fatalf("%s %s %v budget %d: %v", c.dt, f, p, budget, err)
					}
					if !array.Equal(got.Column(0), a) {
						t.Errorf("%s %s %v budget %d: read back\n%v\nwant\n%v", c.dt, f, p, budget, got.Column(0), a)
					}
				}
			}
		}
	}
}

// Strings behind more than 65535 empty lists, numerous enough for FSST:
// 2.3 stores the page sparse, 2.2 zips the plain values (an FSST-coded or
// dictionary page would need the levels in one chunk).
func TestManyLevelsInOneChunkStrings(t *testing.T) {
	mem := memory.NewGoAllocator()
	b := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	for i := 0; i < 70000; i++ {
		b.Append(true)
	}
	b.Append(true)
	for i := 0; i < 20000; i++ {
		b.ValueBuilder().(*array.StringBuilder).Append("abcdefgh-something")
	}
	arr := b.NewArray()
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arr.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	for f, want := range map[writer.Format]string{writer.Format2_2: "dense x zipped", writer.Format2_3: "sparse x chunked"} {
		var buf bytes.Buffer
		w, err := writer.New(&buf, schema, writer.WithFormat(f))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBatch(rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if got := w.Report()[0].Cell; got != want {
			t.Errorf("%s: cell %q, want %s", f, got, want)
		}
		got, err := open(t, buf.Bytes()).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(got.Column(0), arr) {
			t.Errorf("%s: data differs", f)
		}
	}
}
