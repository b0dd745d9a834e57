package writer_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

func writeAll(t *testing.T, schema *arrow.Schema, recs []arrow.RecordBatch, opts ...writer.Option) []byte {
	t.Helper()
	b, _ := writeReport(t, schema, recs, opts...)
	return b
}

// writeReport writes recs and returns the file and the writer's report.
func writeReport(t *testing.T, schema *arrow.Schema, recs []arrow.RecordBatch, opts ...writer.Option) ([]byte, []writer.PageReport) {
	t.Helper()
	var buf bytes.Buffer
	w, err := writer.New(&buf, schema, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.WriteBatch(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.Report()
}

func open(t *testing.T, b []byte) *reader.File {
	t.Helper()
	f, err := reader.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRoundTripEveryFormat(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cases := corpus.Flat(3000)
	rec := corpus.Record(mem, cases, 1)
	defer rec.Release()
	for _, f := range []writer.Format{writer.Format2_3, writer.Format2_2, writer.Format2_3Interim} {
		t.Run(f.String(), func(t *testing.T) {
			b := writeAll(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithFormat(f))
			r := open(t, b)
			got, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if !got.Schema().Equal(rec.Schema()) {
				t.Fatalf("schema %s, want %s", got.Schema(), rec.Schema())
			}
			for i := range cases {
				if !array.Equal(got.Column(i), rec.Column(i)) {
					t.Errorf("%s: column differs", cases[i].Name())
				}
			}
			major, minor := r.Version()
			if want := map[writer.Format]uint16{writer.Format2_2: 2}[f]; (want != 0 && minor != want) || major != 2 {
				t.Errorf("version %d.%d", major, minor)
			}
		})
	}
}

func TestManyBatchesAndPages(t *testing.T) {
	mem := memory.NewGoAllocator()
	cases := []corpus.Case{
		{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.SomeNulls, Rows: 0},
		{Type: arrow.PrimitiveTypes.Int8, Nulls: corpus.NoNulls, Rows: 0},
	}
	var recs []arrow.RecordBatch
	var all []arrow.RecordBatch
	for i, n := range []int{1, 0, 777, 5000, 1, 4096, 123} {
		for j := range cases {
			cases[j].Rows = n
		}
		r := corpus.Record(mem, cases, uint64(i))
		recs = append(recs, r)
		all = append(all, r)
	}
	b := writeAll(t, recs[0].Schema(), recs, writer.WithMaxPageBytes(1000))
	f := open(t, b)
	if f.NumRows() != 1+777+5000+1+4096+123 {
		t.Fatalf("rows %d", f.NumRows())
	}
	if got := len(f.Pages(0)); got < 10 {
		t.Fatalf("int64 column has %d pages, want many", got)
	}
	got, err := f.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := concat(t, all)
	for i := range cases {
		if !array.Equal(got.Column(i), want[i]) {
			t.Errorf("column %d differs", i)
		}
	}
	// A range that crosses page boundaries, and takes out of order.
	rg, err := f.ReadRange(700, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if !array.Equal(rg.Column(0), array.NewSlice(want[0], 700, 2700)) {
		t.Error("range differs")
	}
	tk, err := f.Take([]int64{9997, 0, 5, 5, 778})
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range []int64{9997, 0, 5, 5, 778} {
		if !array.Equal(array.NewSlice(tk.Column(0), int64(k), int64(k)+1), array.NewSlice(want[0], i, i+1)) {
			t.Errorf("take %d differs", i)
		}
	}
	if _, err := f.Take([]int64{f.NumRows()}); !errors.Is(err, reader.ErrOutOfRange) {
		t.Errorf("take past the end: %v", err)
	}
}

func concat(t *testing.T, recs []arrow.RecordBatch) []arrow.Array {
	t.Helper()
	var out []arrow.Array
	for c := 0; c < int(recs[0].NumCols()); c++ {
		var parts []arrow.Array
		for _, r := range recs {
			parts = append(parts, r.Column(c))
		}
		a, err := array.Concatenate(parts, memory.NewGoAllocator())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// only23 reports whether an encoding uses a form 2.2 does not admit:
// variable-width offsets encoded on their own, u16 RLE run lengths,
// composite RLE (packed run values or lengths), or RLE levels (planar run-length codes levels in 2.3 only).
func only23(enc string) bool {
	return strings.Contains(enc, "def=rle") || strings.Contains(enc, "rep=rle") || strings.Contains(enc, "variable(delta") || strings.Contains(enc, "variable(range") || strings.Contains(enc, ",flat16)") || strings.Contains(enc, "rle(bitpack") || strings.Contains(enc, ",bitpack8(w=")
}

// Page buffers of dense pages must be identical between 2.2 (pb21 metadata)
// and 2.3 (planar metadata) output of the same data, except where 2.3 admits
// a codec 2.2 does not (see only23).
func TestPageIdentityAcrossFlavours(t *testing.T) {
	mem := memory.NewGoAllocator()
	flat := corpus.Record(mem, corpus.Flat(5000), 7)
	defer flat.Release()
	nested := corpus.NestedRecord(mem, corpus.NestedWritable(3000), 7)
	defer nested.Release()
	for name, rec := range map[string]arrow.RecordBatch{"flat": flat, "nested": nested} {
		t.Run(name, func(t *testing.T) { checkPageIdentity(t, rec) })
	}
}

func checkPageIdentity(t *testing.T, rec arrow.RecordBatch) {
	opt := writer.WithMaxPageBytes(64 << 10)
	f22 := open(t, writeAll(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithFormat(writer.Format2_2), opt))
	f23 := open(t, writeAll(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithFormat(writer.Format2_3), opt))
	pages, sparse, generic, recut := 0, 0, 0, 0
	for c := 0; c < f22.NumColumns(); c++ {
		p22, p23 := f22.Pages(c), f23.Pages(c)
		if !samePageRows(p22, p23) {
			// 2.3 cuts the pages of columns with fixed-size-list rows
			// that may be stored sparse on the valid rows' items only;
			// 2.2 cuts top-level wide fixed-width columns at null runs
			// (selector.MinNullRun).
			p := f23.ColumnPath(c)
			if !strings.Contains(p, "fsl") && !strings.Contains(p, "vec") && !strings.HasPrefix(p, "fsb") {
				t.Errorf("column %d (%s): %d vs %d pages", c, f23.ColumnPath(c), len(p22), len(p23))
			}
			recut++
			continue
		}
		for i := range p22 {
			if p22[i].Planar || !p23[i].Planar {
				t.Fatalf("column %d page %d: metadata flavours not as expected", c, i)
			}
			if strings.HasPrefix(p23[i].Cell, "sparse") {
				// Structured null/constant pages: sparse sets in 2.3, level
				// buffers in 2.2, by design.
				sparse++
				continue
			}
			if p22[i].Encoding != p23[i].Encoding {
				if !only23(p23[i].Encoding) {
					t.Errorf("column %d page %d: encodings %q (2.2) and %q (2.3)", c, i, p22[i].Encoding, p23[i].Encoding)
				}
				generic++
				continue
			}
			if len(p22[i].Buffers) != len(p23[i].Buffers) {
				t.Fatalf("column %d page %d: buffer counts differ", c, i)
			}
			for j := range p22[i].Buffers {
				a, _ := f22.ReadBuffer(p22[i].Buffers[j])
				b, _ := f23.ReadBuffer(p23[i].Buffers[j])
				if !bytes.Equal(a, b) {
					t.Errorf("column %d page %d buffer %d differs", c, i, j)
				}
			}
			pages++
		}
	}
	if pages+generic+sparse < f22.NumColumns() || pages < f22.NumColumns()/2 {
		t.Fatalf("compared %d pages for %d columns", pages, f22.NumColumns())
	}
	if recut > f22.NumColumns()/10 {
		t.Errorf("%d of %d columns cut into different pages", recut, f22.NumColumns())
	}
	t.Logf("%d dense pages byte-identical, %d sparse pages, %d with 2.3 generic offsets, %d columns cut differently", pages, sparse, generic, recut)
}

func TestBadInput(t *testing.T) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil)
	if _, err := writer.New(&bytes.Buffer{}, arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "q", Type: arrow.ListOf(arrow.FixedWidthTypes.MonthInterval)})}}, nil)); !errors.Is(err, writer.ErrUnsupportedType) {
		t.Errorf("unsupported type: %v", err)
	} else if want := `"s.q.item"`; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("error %q does not name the field", err)
	}
	if _, err := writer.New(&bytes.Buffer{}, schema, writer.WithMaxPageBytes(0)); !errors.Is(err, writer.ErrInvalidOption) {
		t.Errorf("bad option: %v", err)
	}
	var buf bytes.Buffer
	w, err := writer.New(&buf, schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBatch(nil); !errors.Is(err, writer.ErrNilRecord) {
		t.Errorf("nil record: %v", err)
	}
	other := corpus.Record(mem, []corpus.Case{{Type: arrow.PrimitiveTypes.Int64, Rows: 3}}, 1)
	if err := w.WriteBatch(other); !errors.Is(err, writer.ErrSchemaMismatch) {
		t.Errorf("schema mismatch: %v", err)
	}
	// The message names the field that differs, not the two schemas.
	for _, c := range []struct {
		f    arrow.Field
		want string
	}{
		{arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64}, `field "x" is int64, the writer's schema has int32`},
		{arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, `field "x" is nullable=true`},
		{arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int32}, `field 0 is "y", the writer's schema has "x"`},
	} {
		s2 := arrow.NewSchema([]arrow.Field{c.f}, nil)
		b := array.NewBuilder(mem, c.f.Type)
		a := b.NewArray()
		rec := array.NewRecordBatch(s2, []arrow.Array{a}, 0)
		err := w.WriteBatch(rec)
		if !errors.Is(err, writer.ErrSchemaMismatch) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("schema mismatch: %v, want %q in it", err, c.want)
		}
		rec.Release()
		a.Release()
		b.Release()
	}
	b := array.NewInt32Builder(mem)
	b.AppendValues([]int32{1, 2, 3}, nil)
	good := array.NewRecordBatch(schema, []arrow.Array{b.NewArray()}, 3)
	if err := w.WriteBatch(good); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, writer.ErrClosed) {
		t.Errorf("double close: %v", err)
	}
	if err := w.WriteBatch(good); !errors.Is(err, writer.ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	// The rejected batches left nothing behind: the file holds exactly 3 rows.
	f := open(t, buf.Bytes())
	if f.NumRows() != 3 {
		t.Errorf("rows %d, want 3", f.NumRows())
	}
}

type failAfter struct{ n int }

var errDisk = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, errDisk
	}
	f.n -= len(p)
	return len(p), nil
}

func TestFailingDestination(t *testing.T) {
	mem := memory.NewGoAllocator()
	rec := corpus.Record(mem, []corpus.Case{{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.SomeNulls, Rows: 20000}}, 3)
	w, err := writer.New(&failAfter{n: 5000}, rec.Schema(), writer.WithMaxPageBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	err = w.WriteBatch(rec)
	if !errors.Is(err, errDisk) {
		t.Fatalf("WriteBatch: %v, want the destination's error", err)
	}
	if err := w.WriteBatch(rec); !errors.Is(err, writer.ErrFailed) {
		t.Errorf("after failure: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after failure returned nil")
	}
}

func TestCreateLeavesNoFileOnFailure(t *testing.T) {
	dir := t.TempDir()
	mem := memory.NewGoAllocator()
	rec := corpus.Record(mem, []corpus.Case{{Type: arrow.PrimitiveTypes.Int32, Nulls: corpus.SomeNulls, Rows: 100}}, 3)
	path := filepath.Join(dir, "ok.lance")
	w, err := writer.Create(path, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBatch(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("final path exists before Close")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := reader.OpenPath(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	// A failing Close (the rename target is a directory) leaves nothing.
	bad := filepath.Join(dir, "adir")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "x"), nil, 0o644)
	w, err = writer.Create(bad, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	w.WriteBatch(rec)
	if err := w.Close(); err == nil {
		t.Fatal("Close onto a non-empty directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "ok.lance" && e.Name() != "adir" {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

// TestCreateModeAndDirSync: Create gives a new file the mode os.Create
// gives (0666 less the umask, not os.CreateTemp's 0600), keeps the mode of a
// file it replaces, syncs the directory after the rename, and names its
// temporary file as documented (.<name>.tmp-*).
func TestCreateModeAndDirSync(t *testing.T) {
	dir := t.TempDir()
	mem := memory.NewGoAllocator()
	rec := corpus.Record(mem, []corpus.Case{{Type: arrow.PrimitiveTypes.Int32, Nulls: corpus.SomeNulls, Rows: 100}}, 3)
	defer rec.Release()
	ref := filepath.Join(dir, "ref")
	rf, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	rf.Close()
	st, _ := os.Stat(ref)
	wantNew := st.Mode().Perm()

	var synced []string
	restore := writer.SetSyncDir(func(d string) error {
		synced = append(synced, d)
		return nil
	})
	defer restore()
	write := func(path string) {
		t.Helper()
		w, err := writer.Create(path, rec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		tmps, _ := filepath.Glob(filepath.Join(dir, "."+filepath.Base(path)+".tmp-*"))
		if len(tmps) != 1 {
			t.Fatalf("temporary files %v, want one .%s.tmp-*", tmps, filepath.Base(path))
		}
		if err := w.WriteBatch(rec); err != nil {
			t.Fatal(err)
		}
		synced = nil
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if len(synced) != 1 || abs(t, synced[0]) != abs(t, dir) {
			t.Errorf("directory syncs %v, want [%s]", synced, dir)
		}
		if tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(tmps) != 0 {
			t.Errorf("left behind %v", tmps)
		}
		f, err := reader.OpenPath(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if f.NumRows() != 100 {
			t.Errorf("%d rows", f.NumRows())
		}
	}
	mode := func(path string) os.FileMode {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}

	fresh := filepath.Join(dir, "new.lance")
	write(fresh)
	if got := mode(fresh); got != wantNew {
		t.Errorf("new file mode %v, want %v (as os.Create)", got, wantNew)
	}
	for _, keep := range []os.FileMode{0o640, 0o604, 0o666} {
		old := filepath.Join(dir, "old.lance")
		if err := os.WriteFile(old, []byte("previous"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(old, keep); err != nil {
			t.Fatal(err)
		}
		write(old)
		if got := mode(old); got != keep {
			t.Errorf("replaced file mode %v, want its old %v", got, keep)
		}
	}
	// A relative path syncs the current directory's entry for it.
	t.Chdir(dir)
	write("rel.lance")
	if got := mode("rel.lance"); got != wantNew {
		t.Errorf("relative path mode %v, want %v", got, wantNew)
	}
}

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// samePageRows reports whether two columns are cut into the same pages.
func samePageRows(a, b []reader.PageInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Rows != b[i].Rows {
			return false
		}
	}
	return true
}
