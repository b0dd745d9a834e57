package reader

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
	"github.com/planarlance/planar/writer"
)

// fullSparse decodes a whole sparse page the way reads did before windows:
// every buffer read, structure and values decoded in one go.
func (f *File) fullSparse(p *page, types []arrow.DataType, path []structural.Step) (arrow.Array, error) {
	bufs, err := f.pageBuffers(p)
	if err != nil {
		return nil, err
	}
	lds, pd, err := f.decodeSparse(p, bufs, path)
	if err != nil {
		return nil, err
	}
	leaf, err := leafArray(types[len(types)-1], pd, lds[len(lds)-1].Valid)
	if err != nil {
		return nil, err
	}
	defer leaf.Release()
	d, err := projected(types, path, lds, leaf)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// sparseWindowFiles returns the pylance golden files and planar-written
// nested files (2.3) with sparse pages.
func sparseWindowFiles(t *testing.T) map[string][]byte {
	files := map[string][]byte{}
	names, _ := filepath.Glob(filepath.Join("testdata", "sparse", "*.lance"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(n)] = b
	}
	mem := memory.NewGoAllocator()
	write := func(name string, rec arrow.RecordBatch, opts ...writer.Option) {
		var buf bytes.Buffer
		w, err := writer.New(&buf, rec.Schema(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBatch(rec); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files[name] = buf.Bytes()
	}
	for i, c := range corpus.NestedWritable(300) {
		rec := corpus.NestedRecord(mem, []corpus.NestedCase{c}, uint64(i))
		write(c.Name(), rec, writer.WithMaxPageBytes(2048))
		rec.Release()
	}
	for seed := uint64(1); seed <= 40; seed++ {
		c := corpus.RandomCase(mem, seed)
		if c.Format != "2.3" || len(c.Batches) == 0 {
			c.Release()
			continue
		}
		var buf bytes.Buffer
		w, err := writer.New(&buf, c.Schema, writer.WithFormat(writer.Format2_3), writer.WithMaxPageBytes(max(c.PageBytes, 1024)))
		if err != nil {
			t.Fatal(err)
		}
		ok := true
		for _, b := range c.Batches {
			if err := w.WriteBatch(b); err != nil {
				ok = false
				break
			}
		}
		if err := w.Close(); err == nil && ok {
			files["random-"+c.String()[:12]] = buf.Bytes()
		}
		c.Release()
	}
	return files
}

// TestSparseWindowMatchesFullDecode: every window of every sparse page
// decodes to the same rows as the whole page decoded at once.
func TestSparseWindowMatchesFullDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pages, windows := 0, 0
	cells := map[string]int{}
	for name, b := range sparseWindowFiles(t) {
		f, err := Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		layout, err := f.fieldLayout()
		if err != nil {
			t.Fatal(err)
		}
		for _, fc := range layout {
			for k, ci := range fc.cols {
				path := fc.paths[k]
				types, err := pathTypes(fc.field.Type, path)
				if err != nil {
					t.Fatal(err)
				}
				dims := uint64(1)
				for _, s := range path {
					if s.Kind == structural.StepFSL {
						dims *= uint64(s.Dim)
					}
				}
				for pi, p := range f.columns[ci] {
					if p.sparse == nil {
						continue
					}
					pages++
					cells[p.cell()]++
					full, err := f.fullSparse(p, types, path)
					if err != nil {
						t.Fatalf("%s column %d page %d: full decode: %v", name, ci, pi, err)
					}
					rows := int64(p.rows / dims)
					for it := 0; it < 25; it++ {
						lo := rng.Int64N(rows + 1)
						hi := lo + rng.Int64N(rows-lo+1)
						if it%2 == 0 {
							hi = min(lo+rng.Int64N(4), rows)
						}
						lr := &leafRead{f: f, ci: ci, at: pi, path: path, types: types, leafType: types[len(types)-1], dims: dims, pages: f.columns[ci], cache: newPageCache()}
						parts, err := sparseCell{}.read(lr, p, [][2]uint64{{uint64(lo) * dims, uint64(hi) * dims}}, nil)
						if err != nil {
							t.Fatalf("%s column %d page %d rows [%d, %d): %v", name, ci, pi, lo, hi, err)
						}
						got := parts[0]
						want := array.NewSlice(full, lo, hi)
						if !array.Equal(got, want) {
							t.Fatalf("%s column %d page %d (%s) rows [%d, %d):\n got %v\nwant %v", name, ci, pi, p.cell(), lo, hi, got, want)
						}
						got.Release()
						want.Release()
						windows++
					}
					full.Release()
				}
			}
		}
	}
	t.Logf("%d sparse pages, %d windows; cells %v", pages, windows, cells)
	if cells["sparse x zipped"] == 0 || cells["sparse x chunked"] == 0 || cells["sparse x indexed"] == 0 || cells["sparse x none"] == 0 || cells["sparse x constant"] == 0 {
		t.Errorf("cells covered: %v", cells)
	}
}

// TestSliceBlock: values [i, j) of fixed, bit-packed, variable and
// fixed-size-list blocks with item validity.
func TestSliceBlock(t *testing.T) {
	cases := []struct {
		name string
		in   values.Block
		i, j int
		want values.Block
	}{
		{"fixed", values.Block{Bits: 16, N: 3, Data: []byte{1, 0, 2, 0, 3, 0}}, 1, 3,
			values.Block{Bits: 16, N: 2, Data: []byte{2, 0, 3, 0}}},
		{"bits", values.Block{Bits: 1, N: 10, Data: []byte{0b10110100, 0b10}}, 2, 10,
			values.Block{Bits: 1, N: 8, Data: []byte{0b10101101}}},
		{"variable", values.Block{N: 3, Offsets: []uint64{0, 1, 3, 6}, Data: []byte("abbccc")}, 1, 3,
			values.Block{N: 2, Offsets: []uint64{0, 2, 5}, Data: []byte("bbccc")}},
		{"fsl item validity", values.Block{Bits: 32, N: 2, Dims: []int{2}, Data: []byte{1, 0, 2, 0, 3, 0, 4, 0}, ItemValid: [][]byte{{0b1001}}}, 1, 2,
			values.Block{Bits: 32, N: 1, Dims: []int{2}, Data: []byte{3, 0, 4, 0}, ItemValid: [][]byte{{0b10}}}},
		{"empty", values.Block{Bits: 8, N: 2, Data: []byte{1, 2}}, 2, 2, values.Block{Bits: 8, N: 0, Data: []byte{}}},
	}
	for _, c := range cases {
		got, err := sliceBlock(c.in, c.i, c.j)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.N != c.want.N || got.Bits != c.want.Bits || !bytes.Equal(got.Data, c.want.Data) || !equalU64(got.Offsets, c.want.Offsets) ||
			len(got.ItemValid) != len(c.want.ItemValid) || (len(got.ItemValid) > 0 && !bytes.Equal(got.ItemValid[0], c.want.ItemValid[0])) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	for _, bad := range [][2]int{{-1, 1}, {2, 1}, {0, 4}} {
		if _, err := sliceBlock(values.Block{Bits: 8, N: 3, Data: []byte{1, 2, 3}}, bad[0], bad[1]); err == nil {
			t.Errorf("slice %v of 3 values: no error", bad)
		}
	}
	if _, err := sliceBlock(values.Block{Bits: 8, N: 3, Data: []byte{1}}, 0, 3); err == nil {
		t.Errorf("3 values in 1 byte: no error")
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSparseCacheBudget: the structure cache keeps each sparse page's
// metadata once within its budget; past the budget, reads still work and
// load the metadata each time.
func TestSparseCacheBudget(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "sparse", "list_int32_100k.lance"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(f *File) IOStats {
		before := f.IOStats()
		for range 2 {
			rec, err := f.Take([]int64{5, 70000})
			if err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		return f.IOStats().Sub(before)
	}
	f, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	cached := read(f)
	if n := len(f.sparseCache.pages); n != 1 || f.sparseCache.bytes == 0 || f.sparseCache.bytes > 2*uint64(len(b))+sparseCacheAllowance {
		t.Errorf("cache of %d pages, %d bytes", n, f.sparseCache.bytes)
	}

	defer func(a uint64) { sparseCacheAllowance = a }(sparseCacheAllowance)
	sparseCacheAllowance = 0 // the page's metadata (100,000 rows) exceeds twice the 42 KB file
	g, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	uncached := read(g)
	if len(g.sparseCache.pages) != 0 || g.sparseCache.bytes != 0 {
		t.Errorf("over budget: cache of %d pages, %d bytes", len(g.sparseCache.pages), g.sparseCache.bytes)
	}
	// A load reads 4 buffers (3 structural sets, the chunk words): once
	// cached; uncached, once a take (its two windows of the page are
	// decoded together), so one load more over the 2 takes.
	if d := uncached.Requests - cached.Requests; d != 4 {
		t.Errorf("uncached %+v, cached %+v", uncached, cached)
	}
}
