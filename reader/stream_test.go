package reader_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// streamFiles are files with many pages per column of every kind: planar's
// flat and nested corpora in 2.2 and 2.3 with small pages, and pylance's
// dense and sparse golden files.
func streamFiles(t *testing.T) map[string][]byte {
	mem := memory.NewGoAllocator()
	flat := corpus.Record(mem, corpus.Flat(3000), 5)
	defer flat.Release()
	nested := corpus.NestedRecord(mem, corpus.NestedWritable(1500), 5)
	defer nested.Release()
	files := map[string][]byte{}
	for _, ff := range []writer.Format{writer.Format2_3, writer.Format2_2} {
		files["flat "+ff.String()] = writeFile(t, flat, writer.WithFormat(ff), writer.WithMaxPageBytes(4<<10))
		files["nested "+ff.String()] = writeFile(t, nested, writer.WithFormat(ff), writer.WithMaxPageBytes(4<<10))
	}
	for _, dir := range []string{"dense", "sparse"} {
		names, err := filepath.Glob(filepath.Join("testdata", dir, "*.lance"))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			files[dir+"/"+filepath.Base(n)] = b
		}
	}
	return files
}

// TestRecordReader streams every file in batches of several sizes, over
// the whole file and a row range, with all columns and a projection, and
// compares the batches with the rows of ReadAll.
func TestRecordReader(t *testing.T) {
	for name, b := range streamFiles(t) {
		t.Run(name, func(t *testing.T) {
			f := open(t, b)
			all, err := f.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			defer all.Release()
			rows := all.NumRows()
			// A projection: every other field, in reverse order.
			var proj []string
			var projIdx []int
			for i := all.Schema().NumFields() - 1; i >= 0; i -= 2 {
				proj = append(proj, all.Schema().Field(i).Name)
				projIdx = append(projIdx, i)
			}
			for _, batch := range []int64{7, 333, 4096, rows + 5} {
				if batch == 7 && rows > 20000 {
					continue // tiny batches of big files: slow, nothing new
				}
				for _, rng := range [][2]int64{{0, rows}, {rows / 3, rows / 2}} {
					opts := []reader.ReadOption{reader.WithBatchRows(batch)}
					if rng != [2]int64{0, rows} {
						opts = append(opts, reader.WithRowRange(rng[0], rng[1]))
					}
					want := all.NewSlice(rng[0], rng[0]+rng[1])
					checkStream(t, f, want, nil, batch, opts)
					checkStream(t, f, want, projIdx, batch, append(opts, reader.WithColumns(proj...)))
					want.Release()
				}
			}
		})
	}
}

// checkStream reads f with opts and compares the concatenated batches with
// want (the columns cols of it, or all of them when cols is nil).
func checkStream(t *testing.T, f *reader.File, want arrow.RecordBatch, cols []int, batch int64, opts []reader.ReadOption) {
	t.Helper()
	r, err := f.NewRecordReader(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var _ array.RecordReader = r
	if cols != nil {
		if r.Schema().NumFields() != len(cols) {
			t.Fatalf("projected schema has %d fields, want %d", r.Schema().NumFields(), len(cols))
		}
		for k, c := range cols {
			if !r.Schema().Field(k).Equal(want.Schema().Field(c)) {
				t.Fatalf("projected field %d is %v, want %v", k, r.Schema().Field(k), want.Schema().Field(c))
			}
		}
	}
	at := int64(0)
	for r.Next() {
		rec := r.RecordBatch()
		n := rec.NumRows()
		if n == 0 || n > batch || (n < batch && at+n != want.NumRows()) {
			t.Fatalf("batch of %d rows at %d (batch size %d, %d rows in all)", n, at, batch, want.NumRows())
		}
		for k := 0; k < int(rec.NumCols()); k++ {
			c := k
			if cols != nil {
				c = cols[k]
			}
			exp := array.NewSlice(want.Column(c), at, at+n)
			if !sameValues(rec.Column(k), exp) {
				exp.Release()
				t.Fatalf("batch size %d: column %q differs in rows [%d, %d)", batch, rec.Schema().Field(k).Name, at, at+n)
			}
			exp.Release()
		}
		at += n
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if at != want.NumRows() {
		t.Fatalf("batch size %d: streamed %d rows, want %d", batch, at, want.NumRows())
	}
	if r.Next() {
		t.Fatal("Next after the end returned true")
	}
}

func TestRecordReaderOptions(t *testing.T) {
	rec, b := corpusFile(t, writer.Format2_3)
	f := open(t, b)
	name := rec.Schema().Field(0).Name
	for i, opts := range [][]reader.ReadOption{
		{reader.WithBatchRows(0)},
		{reader.WithBatchRows(-3)},
		{reader.WithColumns("no such column")},
		{reader.WithColumns(name, name)},
		{reader.WithRowRange(-1, 5)},
		{reader.WithRowRange(0, rec.NumRows()+1)},
		{reader.WithRowRange(rec.NumRows()+1, 0)},
	} {
		if _, err := f.NewRecordReader(opts...); !errors.Is(err, reader.ErrInvalidOption) {
			t.Errorf("options %d: %v, want ErrInvalidOption", i, err)
		}
	}
	// No columns and an empty range are fine.
	r, err := f.NewRecordReader(reader.WithColumns())
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for r.Next() {
		if r.RecordBatch().NumCols() != 0 {
			t.Fatal("a projection of no columns returned columns")
		}
		n += r.RecordBatch().NumRows()
	}
	r.Release()
	if n != rec.NumRows() {
		t.Fatalf("no-column stream counted %d rows, want %d", n, rec.NumRows())
	}
	r, err = f.NewRecordReader(reader.WithRowRange(10, 0))
	if err != nil || r.Next() {
		t.Fatalf("empty range: %v", err)
	}
	r.Release()
}

// TestRecordReaderCorrupt streams damaged files: the reader reports an
// error or reads, never panics.
func TestRecordReaderCorrupt(t *testing.T) {
	_, b := corpusFile(t, writer.Format2_3)
	labels, files := corpus.Damage(b, 40, 9)
	for i, d := range files {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("%s: panic: %v", labels[i], p)
				}
			}()
			f, err := reader.Open(bytes.NewReader(d), int64(len(d)))
			if err != nil {
				return
			}
			r, err := f.NewRecordReader(reader.WithBatchRows(97))
			if err != nil {
				return
			}
			defer r.Release()
			for r.Next() {
			}
			if err := r.Err(); err != nil && !errors.Is(err, reader.ErrCorrupt) && !errors.Is(err, reader.ErrUnsupported) {
				t.Errorf("%s: %v is neither ErrCorrupt nor ErrUnsupported", labels[i], err)
			}
		}()
	}
}

// sameValues compares two arrays by value: equal arrays, or (dictionary
// columns, whose batches may carry other dictionaries than a whole-file
// read) the same logical value in every row.
func sameValues(a, b arrow.Array) bool {
	if array.Equal(a, b) {
		return true
	}
	if a.Len() != b.Len() {
		return false
	}
	for i := 0; i < a.Len(); i++ {
		x, err1 := json.Marshal(a.GetOneForMarshal(i))
		y, err2 := json.Marshal(b.GetOneForMarshal(i))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

// TestRecordReaderMemory streams a 100 MB file (768-d vectors and ids, a
// fifth of the vectors null) from disk in 512-row batches and checks that
// the heap the stream keeps live stays far below the file: the reader holds
// a batch and the pages it spans, not the file.
func TestRecordReaderMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 100 MB file")
	}
	const rows, dim = 32 << 10, 768
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "emb", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	path := filepath.Join(t.TempDir(), "big.lance")
	w, err := writer.Create(path, schema)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for off := 0; off < rows; off += 4096 {
		b := array.NewRecordBuilder(mem, schema)
		ids := b.Field(0).(*array.Int64Builder)
		fb := b.Field(1).(*array.FixedSizeListBuilder)
		vb := fb.ValueBuilder().(*array.Float32Builder)
		for i := off; i < off+4096; i++ {
			ids.Append(int64(i))
			if i%5 == 3 {
				fb.AppendNull()
				continue
			}
			fb.Append(true)
			for k := 0; k < dim; k++ {
				vb.Append(r.Float32())
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		if err := w.WriteBatch(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := reader.OpenPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rr, err := f.NewRecordReader(reader.WithBatchRows(512))
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	// The live heap is measured above what the process held before the
	// stream began: writing the file left the writer's pools (zstd
	// encoders, page buffers) live, and how many depends on GOMAXPROCS and
	// on what ran earlier in this process, not on the reader.
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak, n, next := uint64(0), int64(0), int64(0)
	for rr.Next() {
		rec := rr.RecordBatch()
		if got := rec.Column(0).(*array.Int64).Value(0); got != next {
			t.Fatalf("batch at %d starts with id %d", next, got)
		}
		next += rec.NumRows()
		if n++; n%8 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc-min(ms.HeapAlloc, base))
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	if next != rows {
		t.Fatalf("streamed %d rows, want %d", next, rows)
	}
	t.Logf("file %d MB, %d batches, live heap at most %d MB above the %d MB held before", st.Size()>>20, n, peak>>20, base>>20)
	if peak > uint64(st.Size())/4 {
		t.Fatalf("live heap reached %d MB while streaming a %d MB file", peak>>20, st.Size()>>20)
	}
}
