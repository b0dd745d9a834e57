package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/values"
	"github.com/planarlance/planar/writer"
)

// The files testdata/dense/dense_<kind>.lance were written by pylance
// 14.0.2 with testdata/dense/make.py (Lance 2.2, 4000 rows, one column
// each): one per dense page kind a take reads by window (flat, nullable,
// FSST, dictionary and list chunked pages; variable- and fixed-width zipped
// pages).
var denseKinds = []string{"ints", "nints", "short", "lowcard", "lists", "nlists", "big", "vecs"}

func denseGolden(t testing.TB, kind string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "dense", "dense_"+kind+".lance"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rewrite writes the rows of data with planar in format ff.
func rewrite(t testing.TB, data []byte, ff writer.Format) []byte {
	t.Helper()
	rec, err := open(t, data).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	return writeFile(t, rec, writer.WithFormat(ff))
}

// checkTake asserts that Take(idx) returns the rows of all at idx.
func checkTake(t *testing.T, f *reader.File, all arrow.RecordBatch, idx []int64) {
	t.Helper()
	got, err := f.Take(idx)
	if err != nil {
		t.Fatalf("take %v: %v", idx, err)
	}
	defer got.Release()
	if got.NumRows() != int64(len(idx)) {
		t.Fatalf("take of %d rows returned %d", len(idx), got.NumRows())
	}
	for c := 0; c < int(all.NumCols()); c++ {
		for k, i := range idx {
			want := array.NewSlice(all.Column(c), i, i+1)
			have := array.NewSlice(got.Column(c), int64(k), int64(k+1))
			eq := array.Equal(want, have)
			want.Release()
			have.Release()
			if !eq {
				t.Fatalf("column %q: take position %d (row %d) differs from ReadAll", all.Schema().Field(c).Name, k, i)
			}
		}
	}
}

// takeSets are the index lists every file is taken with.
func takeSets(rows int64) map[string][]int64 {
	r := rand.New(rand.NewPCG(3, 4))
	random := make([]int64, 200)
	for i := range random {
		random[i] = r.Int64N(rows)
	}
	return map[string][]int64{
		"first":      {0},
		"last":       {rows - 1},
		"middle":     {rows / 2},
		"dups":       {5, 5, rows / 3, 5, rows / 3},
		"unsorted":   {rows - 1, 0, rows / 2, 1, rows - 2},
		"run":        {rows/2 - 3, rows/2 - 2, rows/2 - 1, rows / 2, rows/2 + 1},
		"random":     random,
		"every-97th": stride(rows, 97),
	}
}

func stride(rows, s int64) []int64 {
	var out []int64
	for i := int64(0); i < rows; i += s {
		out = append(out, i)
	}
	return out
}

func TestDenseTakeMatchesReadAll(t *testing.T) {
	nested := corpus.NestedRecord(memory.NewGoAllocator(), corpus.NestedWritable(3000), 5)
	defer nested.Release()
	files := map[string][]byte{}
	for _, ff := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		_, flat := corpusFile(t, ff)
		files["corpus-"+ff.String()] = flat
		files["nested-"+ff.String()] = writeFile(t, nested, writer.WithFormat(ff))
	}
	// Every codec the writer can force, in pages of several chunks.
	mem := memory.NewGoAllocator()
	for _, c := range corpus.CodecCases(2500) {
		rec := c.Record(mem)
		for _, ff := range []writer.Format{writer.Format2_2, writer.Format2_3} {
			files["codec-"+c.Name()+"-"+ff.String()] = writeFile(t, rec, writer.WithFormat(ff))
		}
		rec.Release()
	}
	for _, k := range denseKinds {
		g := denseGolden(t, k)
		files["pylance-"+k] = g
		files["planar-"+k] = rewrite(t, g, writer.Format2_3)
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			f := open(t, data)
			all, err := f.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			defer all.Release()
			for set, idx := range takeSets(f.NumRows()) {
				t.Run(set, func(t *testing.T) { checkTake(t, f, all, idx) })
				// The same rows picked from whole decoded pages.
				t.Run(set+"-whole", func(t *testing.T) {
					defer f.SetWholePageTake(f.SetWholePageTake(1))
					checkTake(t, f, all, idx)
				})
			}
			// A range inside pages reads by window too.
			n := f.NumRows()
			part, err := f.ReadRange(n/3, n/4)
			if err != nil {
				t.Fatal(err)
			}
			for c := 0; c < int(all.NumCols()); c++ {
				want := array.NewSlice(all.Column(c), n/3, n/3+n/4)
				if !array.Equal(want, part.Column(c)) {
					t.Fatalf("column %d: ReadRange differs from ReadAll", c)
				}
				want.Release()
			}
			part.Release()
			// Empty take and out-of-range indices.
			empty, err := f.Take(nil)
			if err != nil || empty.NumRows() != 0 {
				t.Fatalf("empty take: %v", err)
			}
			empty.Release()
			for _, bad := range []int64{-1, f.NumRows(), 1 << 40} {
				if _, err := f.Take([]int64{0, bad}); !errors.Is(err, reader.ErrOutOfRange) {
					t.Fatalf("take of row %d: %v, want ErrOutOfRange", bad, err)
				}
			}
		})
	}
}

// pageChunks returns the chunk locations of page 0 of column ci (a dense
// chunked page of a 2.2+ file).
func pageChunks(t *testing.T, f *reader.File, ci int) (reader.PageInfo, []values.ChunkRef) {
	t.Helper()
	pg := f.Pages(ci)[0]
	words, err := f.ReadBuffer(pg.Buffers[0])
	if err != nil {
		t.Fatal(err)
	}
	// Lists have more items than rows: the chunk words hold the counts.
	n := uint64(0)
	for i := 0; i+4 <= len(words); i += 4 {
		if i+4 < len(words) {
			n += 1 << (binary.LittleEndian.Uint32(words[i:]) & 0xF)
		}
	}
	last := binary.LittleEndian.Uint32(words[len(words)-4:]) & 0xF
	if last != 0 {
		n += 1 << last
	} else {
		n++ // smallest remainder that parses; only the offsets are used
	}
	if !isListPage(pg) {
		n = pg.Rows
	}
	refs, err := values.ParseChunkMeta(words, true, int(pg.Buffers[1].Size), n)
	if err != nil {
		t.Fatal(err)
	}
	return pg, refs
}

// takeIO returns the IO of op on a warm file.
func takeIO(t *testing.T, f *reader.File, idx []int64) reader.IOStats {
	t.Helper()
	before := f.IOStats()
	rec, err := f.Take(idx)
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	return f.IOStats().Sub(before)
}

func columnIndex(t *testing.T, f *reader.File, path string) int {
	t.Helper()
	for i := 0; i < f.NumColumns(); i++ {
		if f.ColumnPath(i) == path {
			return i
		}
	}
	t.Fatalf("no column %q", path)
	return -1
}

func TestDenseTakeIO(t *testing.T) {
	for _, k := range denseKinds {
		if k == "lowcard" || k == "nlists" {
			continue // covered by TestDenseTakeMatchesReadAll
		}
		g := denseGolden(t, k)
		for _, s := range []struct {
			name string
			data []byte
		}{{"pylance", g}, {"planar", rewrite(t, g, writer.Format2_3)}} {
			t.Run(k+"/"+s.name, func(t *testing.T) { checkColumnIO(t, open(t, s.data), 0) })
		}
	}
	// Planar writes the golden file's big strings sparse (a quarter are
	// null); without nulls they are dense and zipped.
	b := array.NewStringBuilder(memory.NewGoAllocator())
	defer b.Release()
	r := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 400)
	for range 2000 {
		n := 250 + r.IntN(150)
		for j := range n {
			buf[j] = byte(33 + r.IntN(94))
		}
		b.Append(string(buf[:n]))
	}
	col := b.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "big", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	t.Run("big-dense/planar", func(t *testing.T) {
		f := open(t, writeFile(t, rec))
		if c := f.Pages(0)[0].Cell; c != "dense x zipped" {
			t.Fatalf("cell %q", c)
		}
		checkColumnIO(t, f, 0)
	})
}

// checkColumnIO asserts the IO of one-row and two-row takes of column ci
// of a one-column file.
func checkColumnIO(t *testing.T, f *reader.File, ci int) {
	t.Helper()
	pg := f.Pages(ci)[0]
	rows := f.NumRows()
	if len(f.Pages(ci)) != 1 {
		t.Skipf("%d pages", len(f.Pages(ci)))
	}
	row := rows/2 + 2 // a non-null row in every golden column
	cold := takeIO(t, f, []int64{row})
	warm := takeIO(t, f, []int64{row})
	// Chunked pages load their chunk words (and dictionary, repetition
	// index) on the first take only; zipped pages cache no bytes.
	if pg.Cell == "dense x chunked" && (warm.Bytes >= cold.Bytes || warm.Requests >= cold.Requests) ||
		warm.Bytes > cold.Bytes || warm.Requests > cold.Requests {
		t.Fatalf("warm take read %+v, cold %+v: metadata re-read", warm, cold)
	}
	switch pg.Cell {
	case "dense x chunked":
		_, refs := pageChunks(t, f, ci)
		if len(refs) < 2 && !strings.Contains(t.Name(), "planar") {
			t.Fatalf("%d chunks: the page does not test windowed reads", len(refs))
		}
		sizes := map[int64]bool{}
		for _, r := range refs {
			sizes[int64(r.Size)] = true
		}
		if warm.Requests != 1 || !sizes[warm.Bytes] {
			t.Fatalf("one-row take read %+v, want one request of one chunk's size", warm)
		}
		if !isListPage(pg) {
			// Flat: the row's chunk follows from the value counts.
			var want int64
			for _, r := range refs {
				if int64(r.FirstValue) <= row && row < int64(r.FirstValue+r.NumValues) {
					want = int64(r.Size)
				}
			}
			if warm.Bytes != want {
				t.Fatalf("one-row take read %d bytes, the row's chunk has %d", warm.Bytes, want)
			}
			var c values.ChunkRef
			for _, r := range refs {
				if int64(r.FirstValue) <= row && row < int64(r.FirstValue+r.NumValues) {
					c = r
				}
			}
			two := takeIO(t, f, []int64{int64(c.FirstValue), int64(c.FirstValue + c.NumValues - 1)})
			if two != (reader.IOStats{Requests: 1, Bytes: int64(c.Size)}) {
				t.Fatalf("two rows of one chunk read %+v, want one read of %d bytes", two, c.Size)
			}
		}
	case "dense x zipped":
		if len(pg.Buffers) == 1 {
			stride := int64(pg.Buffers[0].Size) / rows
			if warm != (reader.IOStats{Requests: 1, Bytes: stride}) {
				t.Fatalf("one-row take of a fixed-width zipped page read %+v, want one record of %d bytes", warm, stride)
			}
			return
		}
		idx, err := f.ReadBuffer(pg.Buffers[1])
		if err != nil {
			t.Fatal(err)
		}
		w := int64(len(idx)) / (rows + 1)
		entry := func(r int64) int64 {
			var v int64
			for k := w - 1; k >= 0; k-- {
				v = v<<8 | int64(idx[r*w+k])
			}
			return v
		}
		want := reader.IOStats{Requests: 2, Bytes: 2*w + entry(row+1) - entry(row)}
		if warm != want {
			t.Fatalf("one-row take of a variable-width zipped page read %+v, want %+v (an index pair, a record)", warm, want)
		}
	default:
		t.Skipf("cell %q", pg.Cell)
	}
}

func isListPage(pg reader.PageInfo) bool { return bytes.Contains([]byte(pg.Encoding), []byte("rep=")) }

// TestTakeCompressedChunks: a take whose rows lie in many chunks under
// general compression (each decompressed whole, side by side on the cores)
// returns the rows ReadAll returns, in order, with their nulls, for fixed-
// and variable-width values.
func TestTakeCompressedChunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	mem := memory.NewGoAllocator()
	md := arrow.NewMetadata([]string{selector.KeyCompression}, []string{"zstd"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: md},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: md},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	r := rand.New(rand.NewPCG(31, 32))
	const n = 200_000
	// Full-width values in a short cycle (bit packing gains nothing, zstd
	// much), and strings that repeat long stretches.
	var cycle [7]int32
	for k := range cycle {
		cycle[k] = int32(r.Uint32())
	}
	for i := range n {
		if r.IntN(9) == 0 {
			b.Field(0).AppendNull()
			b.Field(1).AppendNull()
			continue
		}
		b.Field(0).(*array.Int32Builder).Append(cycle[i%7])
		b.Field(1).(*array.StringBuilder).Append(strings.Repeat(string(rune('a'+i%7)), 20+i%5))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, ff := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		f := open(t, writeFile(t, rec, writer.WithFormat(ff)))
		if pg := f.Pages(0)[0]; !strings.Contains(pg.Encoding, "zstd") || pg.Rows < 4*4096 {
			t.Fatalf("%s: page of %d rows encoded %s; the test needs many zstd chunks", ff, pg.Rows, pg.Encoding)
		}
		all, err := f.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{5, 100, 3000} {
			idx := make([]int64, k)
			for i := range idx {
				idx[i] = int64(r.IntN(n))
			}
			slices.Sort(idx)
			checkTake(t, f, all, idx)
		}
		all.Release()
	}
}
