package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// fuzzSeeds returns small valid files of every format and a few truncated
// and garbled variants of them.
func fuzzSeeds(tb testing.TB) [][]byte {
	mem := memory.NewGoAllocator()
	var files [][]byte
	golden := goldenRecord(mem)
	defer golden.Release()
	cases := []corpus.Case{
		{Type: arrow.PrimitiveTypes.Int8, Nulls: corpus.AllNulls, Rows: 40},
		{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.NoNulls, Shape: corpus.Sorted, Rows: 40},
		{Type: arrow.PrimitiveTypes.Float64, Nulls: corpus.SomeNulls, Rows: 40},
		{Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nulls: corpus.Alternating, Shape: corpus.Small, Rows: 40},
		{Type: arrow.PrimitiveTypes.Uint16, Nulls: corpus.NullableNone, Shape: corpus.Const, Rows: 40},
	}
	multi := corpus.Record(mem, cases, 7)
	defer multi.Release()
	empty := array.NewRecordBatch(golden.Schema(), []arrow.Array{array.NewSlice(golden.Column(0), 0, 0)}, 0)
	defer empty.Release()
	for _, ff := range formats {
		files = append(files,
			writeFile(tb, golden, writer.WithFormat(ff)),
			writeFile(tb, multi, writer.WithFormat(ff)),
			writeFile(tb, multi, writer.WithFormat(ff), writer.WithMaxPageBytes(64)),
			writeFile(tb, empty, writer.WithFormat(ff)),
			rebuild(tb, writeFile(tb, golden, writer.WithFormat(ff)), func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
				cols[0].Pages = []*file2pb.ColumnMetadata_Page{
					constantPage(tb, ff, 6, []byte{42, 0, 0, 0}),
					constantPage(tb, ff, 4, nil),
				}
			}),
		)
	}
	// Every codec the writer can force, on small pages (packed structs,
	// general compression, byte stream split, FSST, composite RLE...).
	for _, c := range corpus.CodecCases(300) {
		if c.Column.Name == "wide_binary" || c.Column.Name == "urls" {
			continue // large; the other string classes cover the codecs
		}
		files = append(files, writeFile(tb, c.Record(mem)))
	}
	sparse := sparseFiles(tb)
	for _, cell := range slices.Sorted(maps.Keys(sparse)) {
		files = append(files, sparse[cell])
	}
	// Pages that claim 2^31-1 rows without storing values: reads of them
	// must stay small.
	huge := hugeFiles(tb)
	for _, name := range slices.Sorted(maps.Keys(huge)) {
		files = append(files, huge[name])
	}
	seeds := append([][]byte(nil), files...)
	for _, b := range files {
		n := len(b)
		seeds = append(seeds, b[:n-1], b[:n-40], b[:n/2], b[n-40:])
		flip := append([]byte(nil), b...)
		flip[n-100] ^= 0xFF
		seeds = append(seeds, flip)
		v20 := append([]byte(nil), b...)
		binary.LittleEndian.PutUint16(v20[n-6:], 0)
		seeds = append(seeds, v20)
	}
	return seeds
}

// checkClass fails unless err wraps one of the reader's documented classes.
func checkClass(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, reader.ErrCorrupt) && !errors.Is(err, reader.ErrUnsupported) {
		t.Fatalf("%s: error wraps neither ErrCorrupt nor ErrUnsupported: %v", what, err)
	}
}

func FuzzOpen(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := reader.Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			checkClass(t, "Open", err)
			return
		}
		for i := 0; i < r.NumColumns(); i++ {
			_ = r.ColumnPath(i)
			_ = r.Pages(i)
		}
		if r.NumRows() > 0 {
			// One row of any page costs little, whatever the page claims.
			var rec arrow.RecordBatch
			if a := allocated(func() { rec, err = r.Take([]int64{r.NumRows() - 1}) }); a > readBudget+uint64(64*len(b)) {
				t.Fatalf("Take of one row of a %d-byte file allocated %d MiB", len(b), a>>20)
			}
			if err == nil {
				rec.Release()
			} else {
				checkClass(t, "Take", err)
			}
		}
		if r.NumRows() > 1<<20 {
			return // reading it all is legitimately large
		}
		if rec, err := r.ReadAll(); err == nil {
			if rec.NumRows() != r.NumRows() {
				t.Fatalf("ReadAll returned %d rows of %d", rec.NumRows(), r.NumRows())
			}
			rec.Release()
		} else {
			checkClass(t, "ReadAll", err)
		}
	})
}

// FuzzOpenNested is FuzzOpen seeded with small files of every nested type of
// the corpus (chunked pages with lists, zipped pages, sparse pages,
// dictionaries) and the small pylance sparse golden files, so that
// mutations reach the nested and windowed decoders.
func FuzzOpenNested(f *testing.F) {
	mem := memory.NewGoAllocator()
	for i, c := range corpus.NestedWritable(12) {
		if i%2 == 1 {
			continue
		}
		rec := corpus.NestedRecord(mem, []corpus.NestedCase{c}, uint64(i))
		ff := formats[i%len(formats)]
		f.Add(writeFile(f, rec, writer.WithFormat(ff), writer.WithMaxPageBytes(256)))
		rec.Release()
	}
	// Runs of sparse pages of fixed-width rows (read into one buffer).
	sp := sparseRecord(60)
	spOpts := []writer.Option{writer.WithFormat(writer.Format2_3), writer.WithMaxPageBytes(2048)}
	for _, fl := range sp.Schema().Fields() {
		spOpts = append(spOpts, writer.WithColumnOptions(fl.Name, map[string]string{"lance-encoding:structural-encoding": "sparse"}))
	}
	f.Add(writeFile(f, sp, spOpts...))
	sp.Release()
	// Pylance's sparse pages (zipped, chunked, indexed), read by windows.
	for _, name := range smallSparseGoldens {
		f.Add(readGolden(f, name))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := reader.Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			checkClass(t, "Open", err)
			return
		}
		if rec, err := r.ReadAll(); err == nil {
			rec.Release()
		} else {
			checkClass(t, "ReadAll", err)
		}
		if r.NumRows() > 1 {
			if rec, err := r.Take([]int64{r.NumRows() - 1, 0}); err == nil {
				rec.Release()
			} else {
				checkClass(t, "Take", err)
			}
		}
	})
}
