package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

var update = flag.Bool("update", false, "rewrite the golden files in ../testdata/golden")

var formats = []writer.Format{writer.Format2_3, writer.Format2_2, writer.Format2_3Interim}

func writeFile(t testing.TB, rec arrow.RecordBatch, opts ...writer.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := writer.New(&buf, rec.Schema(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBatch(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func open(t testing.TB, b []byte) *reader.File {
	t.Helper()
	f, err := reader.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sameColumns reports every column of got that differs from rec's (what
// names the read in the messages).
func sameColumns(t testing.TB, what string, got, rec arrow.RecordBatch) {
	t.Helper()
	for c := range rec.Columns() {
		if !array.Equal(got.Column(c), rec.Column(c)) {
			t.Errorf("%s: column %s differs", what, rec.Schema().Field(c).Name)
		}
	}
}

// sameRange reads rows [off, off+n) of f and compares them with rec's.
func sameRange(t testing.TB, what string, f *reader.File, rec arrow.RecordBatch, off, n int64) {
	t.Helper()
	part, err := f.ReadRange(off, n)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer part.Release()
	want := rec.NewSlice(off, off+n)
	defer want.Release()
	sameColumns(t, fmt.Sprintf("%s, rows [%d, %d)", what, off, off+n), part, want)
}

var (
	corpusOnce  sync.Once
	corpusRec   arrow.RecordBatch
	corpusFiles map[writer.Format][]byte
	corpusErr   error
)

// corpusFile returns the Flat(500) corpus written in format f (built once).
func corpusFile(t testing.TB, f writer.Format) (arrow.RecordBatch, []byte) {
	t.Helper()
	corpusOnce.Do(func() {
		corpusRec = corpus.Record(memory.NewGoAllocator(), corpus.Flat(500), 1)
		corpusFiles = map[writer.Format][]byte{}
		for _, ff := range formats {
			var buf bytes.Buffer
			w, err := writer.New(&buf, corpusRec.Schema(), writer.WithFormat(ff))
			if err == nil {
				err = w.WriteBatch(corpusRec)
				if cerr := w.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				corpusErr = fmt.Errorf("%s: %w", ff, err)
				return
			}
			corpusFiles[ff] = buf.Bytes()
		}
	})
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return corpusRec, corpusFiles[f]
}

func isContainerErr(err error) bool {
	return errors.Is(err, reader.ErrNotLance) || errors.Is(err, reader.ErrCorrupt) || errors.Is(err, reader.ErrUnsupportedVersion)
}

// openNoPanic opens b and turns a panic into a test failure naming the input.
func openNoPanic(t *testing.T, what string, b []byte) (f *reader.File, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: Open panicked: %v", what, r)
		}
	}()
	return reader.Open(bytes.NewReader(b), int64(len(b)))
}

func readAllNoPanic(t *testing.T, what string, f *reader.File) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: ReadAll panicked: %v", what, r)
		}
	}()
	rec, err := f.ReadAll()
	if err == nil {
		rec.Release()
	}
	return err
}

func TestCorpusRoundTrip(t *testing.T) {
	for _, ff := range formats {
		t.Run(ff.String(), func(t *testing.T) {
			rec, b := corpusFile(t, ff)
			f := open(t, b)
			if f.NumRows() != 500 || f.NumColumns() != int(rec.NumCols()) {
				t.Fatalf("rows %d columns %d", f.NumRows(), f.NumColumns())
			}
			got, err := f.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if !got.Schema().Equal(rec.Schema()) {
				t.Fatalf("schema %s", got.Schema())
			}
			for i := 0; i < int(rec.NumCols()); i++ {
				if !array.Equal(got.Column(i), rec.Column(i)) {
					t.Errorf("column %s differs", rec.ColumnName(i))
				}
			}
		})
	}
}

func TestTruncated(t *testing.T) {
	for _, ff := range formats {
		t.Run(ff.String(), func(t *testing.T) {
			_, b := corpusFile(t, ff)
			var lens []int
			for n := len(b) - 300; n < len(b); n++ {
				lens = append(lens, n)
			}
			lens = append(lens, 0, 1, 7, 8, 39, 40, 41, 64, len(b)/4, len(b)/3, len(b)/2, 2*len(b)/3, len(b)-1000)
			for _, n := range lens {
				what := fmt.Sprintf("prefix of %d/%d bytes", n, len(b))
				f, err := openNoPanic(t, what, b[:n])
				if err == nil {
					t.Errorf("%s: Open succeeded (%d rows)", what, f.NumRows())
					continue
				}
				if !isContainerErr(err) {
					t.Errorf("%s: error %v is not ErrNotLance/ErrCorrupt/ErrUnsupportedVersion", what, err)
				}
			}
		})
	}
}

var flipAll = flag.Bool("flipall", false, "TestByteFlips: flip every byte of the metadata tail (slow: minutes)")

// flipPositions returns the tail positions TestByteFlips flips: every byte
// of the column-metadata offset table, the global-buffer table and the
// footer; every byte of the metadata of the first and last column and of one
// column per distinct page description (the corpus repeats a handful of
// layouts over hundreds of columns); and a stride sample of the rest. With
// -flipall, every byte from the start of the column metadata to EOF.
func flipPositions(t *testing.T, b []byte) []int {
	t.Helper()
	ft, err := format.ParseFooter(b[len(b)-format.FooterSize:])
	if err != nil {
		t.Fatal(err)
	}
	start, cmoPos := int(ft.ColumnMetaStart), int(ft.ColumnMetaOffset)
	if *flipAll {
		var all []int
		for i := start; i < len(b); i++ {
			all = append(all, i)
		}
		return all
	}
	n := int(ft.NumColumns)
	cmo, err := format.ParseOffsetTable(b[cmoPos:cmoPos+16*n], n, uint64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	chosen := map[int]bool{}
	seen := map[string]bool{}
	for i, r := range cmo {
		var cm file2pb.ColumnMetadata
		if err := proto.Unmarshal(b[r.Position:r.Position+r.Size], &cm); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprint(len(cm.Pages))
		for _, p := range cm.Pages {
			key += "|" + string(p.GetEncoding().GetDirect().GetEncoding())
		}
		if i == 0 || i == n-1 || !seen[key] {
			seen[key] = true
			from := r.Position
			if i > 0 && r.Size > 2 && b[from] == 0x0A && b[from+1] < 0x80 {
				// The column-level encoding (field 1) is the same in every
				// column: flip it in column 0 only.
				from += 2 + uint64(b[from+1])
			}
			for j := from; j < r.Position+r.Size; j++ {
				chosen[int(j)] = true
			}
		}
	}
	stride := 251
	if testing.Short() {
		stride = 0
	}
	var pos []int
	for i := start; i < len(b); i++ {
		if i >= cmoPos || chosen[i] || (stride > 0 && (i-start)%stride == 0) {
			pos = append(pos, i)
		}
	}
	return pos
}

// TestByteFlips XORs single bytes of the tail after the schema (column
// metadata, offset tables, footer) with 0xFF: the reader must never panic;
// either Open fails, or ReadAll fails, or ReadAll succeeds.
func TestByteFlips(t *testing.T) {
	for _, ff := range formats {
		t.Run(ff.String(), func(t *testing.T) {
			_, b := corpusFile(t, ff)
			t.Parallel()
			pos := flipPositions(t, b)
			mut := append([]byte(nil), b...)
			var opened, read int
			for _, i := range pos {
				mut[i] ^= 0xFF
				what := fmt.Sprintf("byte %d of %d flipped", i, len(b))
				f, err := openNoPanic(t, what, mut)
				if err == nil {
					opened++
					if readAllNoPanic(t, what, f) == nil {
						read++
					}
				} else if !isContainerErr(err) && !errors.Is(err, reader.ErrUnsupported) {
					t.Errorf("%s: Open error %v wraps none of the reader's errors", what, err)
				}
				mut[i] = b[i]
			}
			t.Logf("%d flips: %d opened, %d read", len(pos), opened, read)
		})
	}
}

func setVersion(b []byte, major, minor uint16) []byte {
	out := append([]byte(nil), b...)
	binary.LittleEndian.PutUint16(out[len(out)-8:], major)
	binary.LittleEndian.PutUint16(out[len(out)-6:], minor)
	return out
}

func TestUnsupportedVersions(t *testing.T) {
	_, b := corpusFile(t, writer.Format2_2)
	for _, v := range [][2]uint16{{2, 0}, {0, 3}, {0, 2}, {0, 1}, {0, 0}, {2, 4}, {3, 1}, {1, 2}, {0xFFFF, 0xFFFF}} {
		_, err := reader.Open(bytes.NewReader(setVersion(b, v[0], v[1])), int64(len(b)))
		if !errors.Is(err, reader.ErrUnsupportedVersion) {
			t.Errorf("version %d.%d: err = %v, want ErrUnsupportedVersion", v[0], v[1], err)
		}
	}
	// 2.1 is read (the 2.2 file's pages are valid 2.1 pages).
	f, err := reader.Open(bytes.NewReader(setVersion(b, 2, 1)), int64(len(b)))
	if err != nil {
		t.Fatalf("2.1: %v", err)
	}
	if maj, min := f.Version(); maj != 2 || min != 1 {
		t.Fatalf("version %d.%d", maj, min)
	}
}

func TestNotLance(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":    nil,
		"short":    []byte("LANC"),
		"zeros":    make([]byte, 100),
		"text":     bytes.Repeat([]byte("hello lance "), 10),
		"parquet":  append(make([]byte, 60), 'P', 'A', 'R', '1'),
		"39 bytes": append(make([]byte, 35), 'L', 'A', 'N', 'C'),
	} {
		if _, err := reader.Open(bytes.NewReader(b), int64(len(b))); !errors.Is(err, reader.ErrNotLance) {
			t.Errorf("%s: err = %v, want ErrNotLance", name, err)
		}
	}
	if _, err := reader.OpenPath(filepath.Join(t.TempDir(), "missing.lance")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// goldenRecord is the golden file's content: int32 values 0..9, rows 3 and 7
// null.
func goldenRecord(mem memory.Allocator) arrow.RecordBatch {
	b := array.NewInt32Builder(mem)
	defer b.Release()
	for i := int32(0); i < 10; i++ {
		if i == 3 || i == 7 {
			b.AppendNull()
		} else {
			b.Append(i)
		}
	}
	a := b.NewArray()
	defer a.Release()
	s := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	return array.NewRecordBatch(s, []arrow.Array{a}, 10)
}

func TestGoldenFlatInt32(t *testing.T) {
	// The golden file lives in the module's top-level testdata (the only place
	// .gitignore lets a .lance file be committed).
	path := filepath.Join("..", "testdata", "golden", "flat-int32-2.2.lance")
	rec := goldenRecord(memory.NewGoAllocator())
	defer rec.Release()
	got := writeFile(t, rec, writer.WithFormat(writer.Format2_2), writer.WithPolicy(selector.PolicyLance))
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", path, len(got))
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reader -run TestGoldenFlatInt32 -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("writer output (%d bytes) differs from %s (%d bytes) first at byte %d", len(got), path, len(want), i)
	}

	// The committed bytes read back as the expected values.
	f, err := reader.OpenPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if maj, min := f.Version(); maj != 2 || min != 2 {
		t.Errorf("version %d.%d, want 2.2", maj, min)
	}
	if f.NumRows() != 10 || f.NumColumns() != 1 || f.ColumnPath(0) != "x" {
		t.Fatalf("rows %d columns %d", f.NumRows(), f.NumColumns())
	}
	if !f.Schema().Equal(rec.Schema()) {
		t.Errorf("schema %s, want %s", f.Schema(), rec.Schema())
	}
	all, err := f.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	defer all.Release()
	col := all.Column(0).(*array.Int32)
	if col.Len() != 10 || col.NullN() != 2 {
		t.Fatalf("len %d nulls %d", col.Len(), col.NullN())
	}
	for i := 0; i < 10; i++ {
		if i == 3 || i == 7 {
			if !col.IsNull(i) {
				t.Errorf("row %d: %d, want null", i, col.Value(i))
			}
			continue
		}
		if col.IsNull(i) || col.Value(i) != int32(i) {
			t.Errorf("row %d: null=%v value=%d, want %d", i, col.IsNull(i), col.Value(i), i)
		}
	}
	pages := f.Pages(0)
	if len(pages) != 1 || pages[0].Rows != 10 || pages[0].FirstRow != 0 || pages[0].Planar {
		t.Errorf("pages %+v", pages)
	}
	for _, pb := range pages[0].Buffers {
		if pb.Position%64 != 0 {
			t.Errorf("buffer at %d not aligned", pb.Position)
		}
		bb, err := f.ReadBuffer(pb)
		if err != nil || uint64(len(bb)) != pb.Size {
			t.Errorf("ReadBuffer(%+v): %d bytes, %v", pb, len(bb), err)
		}
	}
	// Take in any order, with repeats.
	tk, err := f.Take([]int64{9, 3, 0, 9})
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Release()
	tc := tk.Column(0).(*array.Int32)
	if tc.Len() != 4 || tc.Value(0) != 9 || !tc.IsNull(1) || tc.Value(2) != 0 || tc.Value(3) != 9 {
		t.Errorf("Take = %v", tc)
	}
}

func TestOutOfRange(t *testing.T) {
	for _, ff := range formats {
		t.Run(ff.String(), func(t *testing.T) {
			rec := goldenRecord(memory.NewGoAllocator())
			defer rec.Release()
			f := open(t, writeFile(t, rec, writer.WithFormat(ff)))
			n := f.NumRows()
			for _, r := range [][2]int64{{-1, 1}, {0, n + 1}, {n, 1}, {n + 1, 0}, {5, -1}, {1, n}, {-5, 10}, {1 << 62, 1 << 62}, {3, 1<<63 - 1}} {
				if rec, err := f.ReadRange(r[0], r[1]); !errors.Is(err, reader.ErrOutOfRange) {
					t.Errorf("ReadRange(%d, %d) = %v, %v; want ErrOutOfRange", r[0], r[1], rec, err)
				}
			}
			for _, idx := range [][]int64{{n}, {-1}, {0, 1, n}, {1 << 62}, {-1 << 63}} {
				if rec, err := f.Take(idx); !errors.Is(err, reader.ErrOutOfRange) {
					t.Errorf("Take(%v) = %v, %v; want ErrOutOfRange", idx, rec, err)
				}
			}
			// Empty ranges inside the file are fine.
			for _, r := range [][2]int64{{0, 0}, {n, 0}, {4, 0}} {
				rec, err := f.ReadRange(r[0], r[1])
				if err != nil {
					t.Errorf("ReadRange(%d, %d): %v", r[0], r[1], err)
					continue
				}
				if rec.NumRows() != 0 {
					t.Errorf("ReadRange(%d, %d): %d rows", r[0], r[1], rec.NumRows())
				}
				rec.Release()
			}
			rec2, err := f.ReadRange(2, 5)
			if err != nil {
				t.Fatal(err)
			}
			defer rec2.Release()
			c := rec2.Column(0).(*array.Int32)
			if c.Len() != 5 || c.Value(0) != 2 || !c.IsNull(1) || c.Value(4) != 6 {
				t.Errorf("ReadRange(2, 5) = %v", c)
			}
		})
	}
}

// rebuild re-serializes the tail of a planar-written file (schema, column
// metadata, offset tables, footer) after edit has changed the decoded
// FileDescriptor and ColumnMetadata messages. The data region is kept.
func rebuild(t testing.TB, b []byte, edit func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata)) []byte {
	t.Helper()
	return rebuildExtra(t, b, nil, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata, _ []uint64) {
		if edit != nil {
			edit(fd, cols)
		}
	})
}

// rebuildExtra is rebuild that also appends extra 64-aligned buffers to the
// data region; edit gets their positions.
func rebuildExtra(t testing.TB, b []byte, extra [][]byte, edit func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata, pos []uint64)) []byte {
	t.Helper()
	ft, err := format.ParseFooter(b[len(b)-format.FooterSize:])
	if err != nil {
		t.Fatal(err)
	}
	g, n := int(ft.NumGlobalBuffers), int(ft.NumColumns)
	gbo, err := format.ParseOffsetTable(b[ft.GlobalBufOffset:ft.GlobalBufOffset+uint64(16*g)], g, uint64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	cmoPos := ft.GlobalBufOffset - uint64(16*n)
	cmo, err := format.ParseOffsetTable(b[cmoPos:ft.GlobalBufOffset], n, uint64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var fd filepb.FileDescriptor
	if err := proto.Unmarshal(b[gbo[0].Position:gbo[0].Position+gbo[0].Size], &fd); err != nil {
		t.Fatal(err)
	}
	cols := make([]*file2pb.ColumnMetadata, n)
	for i, r := range cmo {
		cols[i] = &file2pb.ColumnMetadata{}
		if err := proto.Unmarshal(b[r.Position:r.Position+r.Size], cols[i]); err != nil {
			t.Fatal(err)
		}
	}
	out := append([]byte(nil), b[:gbo[0].Position]...)
	pad := func() {
		for len(out)%format.Alignment != 0 {
			out = append(out, format.PadByte)
		}
	}
	var pos []uint64
	for _, e := range extra {
		pad()
		pos = append(pos, uint64(len(out)))
		out = append(out, e...)
	}
	pad()
	edit(&fd, cols, pos)
	opts := proto.MarshalOptions{Deterministic: true}
	fdb, err := opts.Marshal(&fd)
	if err != nil {
		t.Fatal(err)
	}
	gbo[0] = format.BufferRange{Position: uint64(len(out)), Size: uint64(len(fdb))}
	out = append(out, fdb...)
	metaStart := uint64(len(out))
	for i, cm := range cols {
		cb, err := opts.Marshal(cm)
		if err != nil {
			t.Fatal(err)
		}
		cmo[i] = format.BufferRange{Position: uint64(len(out)), Size: uint64(len(cb))}
		out = append(out, cb...)
	}
	newCMO := uint64(len(out))
	out = format.AppendOffsetTable(out, cmo)
	newGBO := uint64(len(out))
	out = format.AppendOffsetTable(out, gbo)
	return format.AppendFooter(out, format.Footer{
		ColumnMetaStart: metaStart, ColumnMetaOffset: newCMO, GlobalBufOffset: newGBO,
		NumGlobalBuffers: uint32(g), NumColumns: uint32(n), Major: ft.Major, Minor: ft.Minor,
	})
}

func TestRebuildIdentity(t *testing.T) {
	for _, ff := range formats {
		rec := goldenRecord(memory.NewGoAllocator())
		b := writeFile(t, rec, writer.WithFormat(ff))
		rec.Release()
		if got := rebuild(t, b, nil); !bytes.Equal(got, b) {
			t.Errorf("%s: rebuild without edits changed the file", ff)
		}
	}
}

// constantPage returns a one-page dense x constant (or dense x none, for a
// nil scalar) encoding of rows rows, in the metadata flavour of format ff.
func constantPage(t testing.TB, ff writer.Format, rows uint64, scalar []byte) *file2pb.ColumnMetadata_Page {
	t.Helper()
	var (
		b   []byte
		err error
	)
	layers := []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM}
	if scalar == nil {
		layers = []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM}
	}
	l := &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{Layers: layers, InlineValue: scalar}}}
	if ff == writer.Format2_3 {
		p, perr := format.PlanarFromPB21(l)
		if perr != nil {
			t.Fatal(perr)
		}
		b, err = format.MarshalAny(format.URLPlanarLayout23, p)
	} else {
		b, err = format.MarshalAny(format.URLPageLayout21, l)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &file2pb.ColumnMetadata_Page{Length: rows, Encoding: &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: b}}}}
}

// callNoPanic runs fn and reports a panic as its value plus the source
// line (file:line) of the planar code that panicked.
func callNoPanic(fn func() error) (err error, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("%v at %s", r, panicSite())
		}
	}()
	return fn(), nil
}

// panicSite returns the innermost non-test planar frame of the panicking
// goroutine; call it from a deferred recover.
func panicSite() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		fr, more := frames.Next()
		if strings.Contains(fr.Function, "planarlance/planar/") && !strings.HasSuffix(fr.File, "_test.go") {
			return fmt.Sprintf("%s:%d (%s)", filepath.Base(filepath.Dir(fr.File))+"/"+filepath.Base(fr.File), fr.Line, fr.Function[strings.LastIndex(fr.Function, "/")+1:])
		}
		if !more {
			return "unknown"
		}
	}
}

func TestConstantPages(t *testing.T) {
	for _, ff := range formats {
		t.Run(ff.String(), func(t *testing.T) {
			rec := goldenRecord(memory.NewGoAllocator())
			defer rec.Release()
			b := writeFile(t, rec, writer.WithFormat(ff))
			// 7 rows of 42, then 3 null rows.
			c := rebuild(t, b, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
				fd.Length = 10
				cols[0].Pages = []*file2pb.ColumnMetadata_Page{
					constantPage(t, ff, 7, []byte{42, 0, 0, 0}),
					constantPage(t, ff, 3, nil),
				}
			})
			f := open(t, c)
			pages := f.Pages(0)
			if len(pages) != 2 || pages[0].Cell != "dense x constant" || pages[1].Cell != "dense x none" || pages[1].FirstRow != 7 {
				t.Fatalf("pages %+v", pages)
			}
			all, err := f.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			defer all.Release()
			col := all.Column(0).(*array.Int32)
			for i := 0; i < 10; i++ {
				if i < 7 && (col.IsNull(i) || col.Value(i) != 42) || i >= 7 && !col.IsNull(i) {
					t.Errorf("row %d: %v", i, col)
					break
				}
			}
			// A constant of the wrong width is corrupt.
			w := rebuild(t, b, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
				cols[0].Pages = []*file2pb.ColumnMetadata_Page{constantPage(t, ff, 10, []byte{1, 2})}
			})
			if f, err := reader.Open(bytes.NewReader(w), int64(len(w))); err == nil {
				if _, err := f.ReadAll(); !errors.Is(err, reader.ErrCorrupt) {
					t.Errorf("2-byte constant for int32: %v", err)
				}
			}
			// Page rows that disagree with the file's row count.
			m := rebuild(t, b, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
				cols[0].Pages[0].Length = 11
			})
			if _, err := reader.Open(bytes.NewReader(m), int64(len(m))); !errors.Is(err, reader.ErrCorrupt) {
				t.Errorf("11 page rows in a 10-row file: %v", err)
			}
		})
	}
}

// TestHugeRowCounts: a tiny file whose metadata claims an enormous number of
// rows (constant pages need no buffers) must fail cleanly, not panic.
func TestHugeRowCounts(t *testing.T) {
	for _, ff := range formats {
		t.Run(ff.String(), func(t *testing.T) {
			rec := goldenRecord(memory.NewGoAllocator())
			defer rec.Release()
			b := writeFile(t, rec, writer.WithFormat(ff))
			huge := rebuild(t, b, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
				fd.Length = 1 << 61
				cols[0].Pages = []*file2pb.ColumnMetadata_Page{constantPage(t, ff, 1<<61, []byte{1, 2, 3, 4})}
			})
			f, err := reader.Open(bytes.NewReader(huge), int64(len(huge)))
			if err != nil {
				return // refusing such a file is fine
			}
			var bugs []string
			if _, p := callNoPanic(func() error { _, err := f.Take([]int64{0}); return err }); p != nil {
				bugs = append(bugs, fmt.Sprintf("Take([0]) panics: %v (page rows are not bounded before sizing a slice by them)", p))
			}
			if _, p := callNoPanic(func() error { _, err := f.ReadAll(); return err }); p != nil {
				bugs = append(bugs, fmt.Sprintf("ReadAll panics: %v", p))
			}
			if len(bugs) > 0 {
				t.Errorf("a file of %d bytes claiming 2^61 rows in one constant page opens, then %v", len(huge), bugs)
			}
		})
	}
}

// TestPageRowsOverflow: page lengths whose uint64 sum wraps around to the
// file's row count must be refused by Open.
func TestPageRowsOverflow(t *testing.T) {
	for _, ff := range formats {
		t.Run(ff.String(), func(t *testing.T) {
			rec := goldenRecord(memory.NewGoAllocator())
			defer rec.Release()
			b := writeFile(t, rec, writer.WithFormat(ff))
			wrap := rebuild(t, b, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
				fd.Length = 5
				cols[0].Pages = []*file2pb.ColumnMetadata_Page{
					constantPage(t, ff, ^uint64(0), []byte{1, 2, 3, 4}), // 2^64-1 rows
					constantPage(t, ff, 6, []byte{1, 2, 3, 4}),
				}
			})
			f, err := reader.Open(bytes.NewReader(wrap), int64(len(wrap)))
			if err == nil {
				msg := fmt.Sprintf("Open accepts pages of 2^64-1 and 6 rows as a 5-row file of %d bytes", len(wrap))
				if _, p := callNoPanic(func() error { _, err := f.Take([]int64{0}); return err }); p != nil {
					msg += fmt.Sprintf("; Take([0]) then panics: %v", p)
				}
				t.Fatal(msg)
			}
			if !errors.Is(err, reader.ErrCorrupt) && !errors.Is(err, reader.ErrUnsupported) {
				t.Errorf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

func planarPage(t testing.TB, rows uint64, bufs []format.BufferRange, p *enc23pb.PlanarLayout) *file2pb.ColumnMetadata_Page {
	t.Helper()
	b, err := format.MarshalAny(format.URLPlanarLayout23, p)
	if err != nil {
		t.Fatal(err)
	}
	pg := &file2pb.ColumnMetadata_Page{Length: rows, Encoding: &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: b}}}}
	for _, r := range bufs {
		pg.BufferOffsets = append(pg.BufferOffsets, r.Position)
		pg.BufferSizes = append(pg.BufferSizes, r.Size)
	}
	return pg
}

func flatEnc(bits uint64) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: bits}}}
}

func sparseStructure(meaning enc23pb.SparseValiditySet_Meaning, k uint64) *enc23pb.StructuralPlane {
	return &enc23pb.StructuralPlane{Codec: &enc23pb.StructuralPlane_Sparse{Sparse: &enc23pb.SparseStructure{
		Layers: []*enc23pb.SparseStructuralLayer{{Layer: &enc23pb.SparseStructuralLayer_Validity{Validity: &enc23pb.SparseValiditySet{
			Meaning: meaning, Positions: flatEnc(64), NumPositions: k,
		}}}},
	}}}
}

// sparseFiles returns 2.3 files of a 10-row int32 column written as one
// sparse planar page: sparse x zipped (values 0..9, null positions 3 and 7),
// sparse x constant (5, valid positions all but 3 and 7) and sparse x none
// (no valid positions: every row null).
func sparseFiles(t testing.TB) map[string][]byte {
	t.Helper()
	rec := goldenRecord(memory.NewGoAllocator())
	defer rec.Release()
	b := writeFile(t, rec, writer.WithFormat(writer.Format2_3))
	var vals []byte
	for _, v := range []uint32{0, 1, 2, 4, 5, 6, 8, 9} {
		vals = binary.LittleEndian.AppendUint32(vals, v)
	}
	u64s := func(xs ...uint64) []byte {
		var out []byte
		for _, x := range xs {
			out = binary.LittleEndian.AppendUint64(out, x)
		}
		return out
	}
	nullPos := u64s(3, 7)
	validPos := u64s(0, 1, 2, 4, 5, 6, 8, 9)
	out := map[string][]byte{}
	out["sparse x zipped"] = rebuildExtra(t, b, [][]byte{vals, nullPos}, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata, pos []uint64) {
		cols[0].Pages = []*file2pb.ColumnMetadata_Page{planarPage(t, 10,
			[]format.BufferRange{{Position: pos[0], Size: uint64(len(vals))}, {Position: pos[1], Size: uint64(len(nullPos))}},
			&enc23pb.PlanarLayout{
				Structure: sparseStructure(enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS, 2),
				Values: &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Zipped{Zipped: &enc23pb.ZippedValues{
					Compression: flatEnc(32), Addressing: &enc23pb.ZippedValues_BitsPerValue{BitsPerValue: 32}, NumItems: 8, NumVisibleItems: 8,
				}}},
			})}
	})
	out["sparse x constant"] = rebuildExtra(t, b, [][]byte{validPos}, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata, pos []uint64) {
		cols[0].Pages = []*file2pb.ColumnMetadata_Page{planarPage(t, 10,
			[]format.BufferRange{{Position: pos[0], Size: uint64(len(validPos))}},
			&enc23pb.PlanarLayout{
				Structure: sparseStructure(enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS, 8),
				Values:    &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Constant{Constant: &enc23pb.ConstantValue{Scalar: []byte{5, 0, 0, 0}}}},
			})}
	})
	out["sparse x none"] = rebuildExtra(t, b, [][]byte{{}}, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata, pos []uint64) {
		// An empty position set still names its (empty) payload buffer.
		cols[0].Pages = []*file2pb.ColumnMetadata_Page{planarPage(t, 10, []format.BufferRange{{Position: pos[0]}},
			&enc23pb.PlanarLayout{
				Structure: sparseStructure(enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS, 0),
				Values:    &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_None{None: &enc23pb.NoValues{}}},
			})}
	})
	return out
}

func TestSparsePages(t *testing.T) {
	for cell, b := range sparseFiles(t) {
		t.Run(cell, func(t *testing.T) {
			f := open(t, b)
			if pages := f.Pages(0); len(pages) != 1 || pages[0].Cell != cell || !pages[0].Planar {
				t.Fatalf("pages %+v", pages)
			}
			all, err := f.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			defer all.Release()
			col := all.Column(0).(*array.Int32)
			for i := 0; i < 10; i++ {
				null := i == 3 || i == 7 || cell == "sparse x none"
				want := int32(i)
				if cell == "sparse x constant" {
					want = 5
				}
				if col.IsNull(i) != null || (!null && col.Value(i) != want) {
					t.Errorf("row %d: null=%v value=%d, want null=%v value=%d", i, col.IsNull(i), col.Value(i), null, want)
				}
			}
			// Sparse planar metadata is only read from 2.3 files.
			if _, err := reader.Open(bytes.NewReader(setVersion(b, 2, 2)), int64(len(b))); !errors.Is(err, reader.ErrCorrupt) {
				t.Errorf("sparse page in a 2.2 file: %v", err)
			}
		})
	}
}
