package relayout_test

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
	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/relayout"
	"github.com/planarlance/planar/writer"
)

func write(t testing.TB, recs []arrow.RecordBatch, opts ...writer.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	// Sources are 2.3 unless the test says otherwise.
	w, err := writer.New(&buf, recs[0].Schema(), append([]writer.Option{writer.WithFormat(writer.Format2_3)}, opts...)...)
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

func convert(t testing.TB, b []byte, opts relayout.Options) ([]byte, relayout.Report) {
	t.Helper()
	var out bytes.Buffer
	rep, err := relayout.Convert(bytes.NewReader(b), int64(len(b)), &out, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OutputSize != uint64(out.Len()) {
		t.Fatalf("report says %d bytes, wrote %d", rep.OutputSize, out.Len())
	}
	return out.Bytes(), rep
}

// sameData asserts planar's reader gives the same batch from both files.
func sameData(t testing.TB, a, b []byte) {
	t.Helper()
	ra, err := open(t, a).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Release()
	rb, err := open(t, b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Release()
	if !array.RecordApproxEqual(ra, rb, array.WithNaNsEqual(true)) {
		t.Fatalf("data differs after conversion")
	}
}

// samePageBuffers asserts every page of src has its buffers at the same
// positions with the same bytes in dst (no page re-encoded).
func samePageBuffers(t testing.TB, src, dst []byte) (pages int) {
	t.Helper()
	fs, fd := open(t, src), open(t, dst)
	for c := 0; c < fs.NumColumns(); c++ {
		ps, pd := fs.Pages(c), fd.Pages(c)
		if len(ps) != len(pd) {
			t.Fatalf("column %s: %d pages, then %d", fs.ColumnPath(c), len(ps), len(pd))
		}
		for i := range ps {
			if len(ps[i].Buffers) != len(pd[i].Buffers) {
				t.Fatalf("column %s page %d: buffer counts differ", fs.ColumnPath(c), i)
			}
			for k, r := range ps[i].Buffers {
				if pd[i].Buffers[k] != r || !bytes.Equal(src[r.Position:r.Position+r.Size], dst[r.Position:r.Position+r.Size]) {
					t.Fatalf("column %s page %d buffer %d moved or differs", fs.ColumnPath(c), i, k)
				}
			}
			pages++
		}
	}
	return pages
}

func corpusFiles(t testing.TB, opts ...writer.Option) map[string][]byte {
	mem := memory.NewGoAllocator()
	flat := corpus.Record(mem, corpus.Flat(3000), 7)
	defer flat.Release()
	nested := corpus.NestedRecord(mem, corpus.NestedWritable(2000), 7)
	defer nested.Release()
	return map[string][]byte{
		"flat":   write(t, []arrow.RecordBatch{flat}, opts...),
		"nested": write(t, []arrow.RecordBatch{nested}, opts...),
	}
}

func TestDenseRoundTrip(t *testing.T) {
	for name, src := range corpusFiles(t, writer.WithFormat(writer.Format2_2), writer.WithMaxPageBytes(64<<10)) {
		t.Run(name, func(t *testing.T) {
			// 2.2 -> 2.3: every page of planar's 2.2 output has a dense
			// counterpart except constant pages with level buffers.
			to23, rep := convert(t, src, relayout.Options{Target: relayout.V2_3, Reencode: true})
			if rep.Reexpressed == 0 || rep.From != "2.2" || rep.To != "2.3" {
				t.Fatalf("report %+v", rep)
			}
			for _, p := range rep.Pages {
				if p.Action == relayout.Reencoded && p.From != "2.2 constant with level buffers" {
					t.Errorf("%s page %d: %s re-encoded: %s", p.Column, p.Page, p.From, p.Reason)
				}
			}
			if maj, min := open(t, to23).Version(); maj != 2 || min != 3 {
				t.Fatalf("version %d.%d", maj, min)
			}
			sameData(t, src, to23)
			t.Logf("%d pages: %d re-expressed, %d re-encoded", len(rep.Pages), rep.Reexpressed, rep.Reencoded)
			// The fields whose pages are all re-expressed: 2.2 -> 2.3 ->
			// 2.2 gives the original file back, byte for byte.
			dense := withoutFields(t, src, rep)
			d23, rep1 := convert(t, dense, relayout.Options{Target: relayout.V2_3})
			if rep1.Reencoded != 0 || rep1.Reexpressed == 0 {
				t.Fatalf("report %+v", rep1)
			}
			samePageBuffers(t, dense, d23)
			back, rep2 := convert(t, d23, relayout.Options{Target: relayout.V2_2})
			// planar's writer serializes a oneof after the other fields
			// (Go's order), relayout in field order (Lance's): the files
			// may differ in that order only (pylance's come back byte for
			// byte, interop.TestRelayout).
			if err := relayout.SameFile(back, dense); rep2.Reexpressed != rep1.Reexpressed || err != nil {
				t.Fatalf("2.2 -> 2.3 -> 2.2 is not the original file (%d re-expressed): %v", rep2.Reexpressed, err)
			}
			// Same version: the file is copied as it is.
			same, rep3 := convert(t, src, relayout.Options{Target: relayout.V2_2})
			if !bytes.Equal(same, src) || rep3.Kept != len(rep3.Pages) {
				t.Fatalf("2.2 -> 2.2 changed the file")
			}
		})
	}
}

func TestPlanar23To22(t *testing.T) {
	for name, src := range corpusFiles(t, writer.WithFormat(writer.Format2_3), writer.WithMaxPageBytes(64<<10)) {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := relayout.Convert(bytes.NewReader(src), int64(len(src)), &out, relayout.Options{Target: relayout.V2_2})
			if err != nil && !errors.Is(err, relayout.ErrNoCounterpart) {
				t.Fatal(err)
			}
			if err != nil && (!strings.Contains(err.Error(), "column \"") || !strings.Contains(err.Error(), ", page ")) {
				t.Fatalf("error does not name column and page: %v", err)
			}
			if err != nil && out.Len() != 0 {
				t.Fatalf("%d bytes written before failing", out.Len())
			}
			to22, rep := convert(t, src, relayout.Options{Target: relayout.V2_2, Reencode: true})
			sameData(t, src, to22)
			if (err == nil) != (rep.Reencoded == 0) {
				t.Fatalf("error %v with %d re-encoded pages", err, rep.Reencoded)
			}
			t.Logf("%d kept, %d re-expressed, %d re-encoded; %d bytes copied, %d re-encoded into %d", rep.Kept, rep.Reexpressed, rep.Reencoded,
				rep.BytesCopied, rep.BytesReencoded, rep.BytesWritten)
			for _, p := range rep.Pages {
				if p.Action == relayout.Reencoded {
					t.Logf("  %s page %d: %s -> %v: %s", p.Column, p.Page, p.From, p.NewFormat, p.Reason)
				}
			}
		})
	}
}

func TestSparseNeedsReencode(t *testing.T) {
	mem := memory.NewGoAllocator()
	var recs []arrow.RecordBatch
	for _, c := range corpus.Sparse(3000, 300, 3000) {
		if c.Name == "int64_const42_null99" || c.Name == "lowcard100_1k_null90" {
			recs = append(recs, c.Record(mem, 3))
		}
	}
	for _, rec := range recs {
		src := write(t, []arrow.RecordBatch{rec})
		name := rec.Schema().Field(0).Name
		_, err := relayout.Convert(bytes.NewReader(src), int64(len(src)), &bytes.Buffer{}, relayout.Options{Target: relayout.V2_2})
		if !errors.Is(err, relayout.ErrNoCounterpart) || !strings.Contains(err.Error(), `column "`+name+`", page 0`) {
			t.Fatalf("%s: got %v", name, err)
		}
		out, rep := convert(t, src, relayout.Options{Target: relayout.V2_2, Reencode: true})
		if rep.Reencoded == 0 || !rep.Moved {
			t.Fatalf("%s: report %+v", name, rep)
		}
		if waste := unreferenced(t, out); waste != 0 {
			t.Fatalf("%s: %d bytes of the data region are not buffers or padding", name, waste)
		}
		sameData(t, src, out)
		// And back: the 2.2 page is a constant page with levels or a
		// dense page; either way the data survives.
		back, _ := convert(t, out, relayout.Options{Target: relayout.V2_3, Reencode: true})
		sameData(t, src, back)
		rec.Release()
	}
}

func TestErrors(t *testing.T) {
	mem := memory.NewGoAllocator()
	rec := corpus.Record(mem, corpus.Flat(500), 1)
	defer rec.Release()
	good := write(t, []arrow.RecordBatch{rec}, writer.WithFormat(writer.Format2_2))
	garbage := bytes.Clone(good)
	copy(garbage[len(garbage)-40:], bytes.Repeat([]byte{0xAB}, 32))
	future := bytes.Clone(good)
	future[len(future)-6] = 9 // minor version 9
	badTable := bytes.Clone(good)
	// The column metadata offset table points past the file.
	for i := len(badTable) - 40 - 16 - 16*5; i < len(badTable)-40-16; i++ {
		badTable[i] = 0xFF
	}
	cases := []struct {
		name string
		b    []byte
		opts relayout.Options
		want error
	}{
		{"empty", nil, relayout.Options{Target: "2.3"}, reader.ErrNotLance},
		{"truncated", good[:len(good)/2], relayout.Options{Target: "2.3"}, reader.ErrCorrupt},
		{"no footer", good[:len(good)-1], relayout.Options{Target: "2.3"}, reader.ErrNotLance},
		{"garbage footer", garbage, relayout.Options{Target: "2.3"}, reader.ErrCorrupt},
		{"future version", future, relayout.Options{Target: "2.3"}, reader.ErrUnsupportedVersion},
		{"bad offset table", badTable, relayout.Options{Target: "2.3"}, reader.ErrCorrupt},
		{"bad target", good, relayout.Options{Target: "2.1"}, relayout.ErrInvalidOption},
		{"no target", good, relayout.Options{}, relayout.ErrInvalidOption},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := relayout.Convert(bytes.NewReader(c.b), int64(len(c.b)), &out, c.opts)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if out.Len() != 0 {
				t.Fatalf("%d bytes written", out.Len())
			}
			src := filepath.Join(dir, "src.lance")
			if err := os.WriteFile(src, c.b, 0o644); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, "dst.lance")
			if _, err := relayout.ConvertPath(src, dst, c.opts); !errors.Is(err, c.want) {
				t.Fatalf("ConvertPath: got %v, want %v", err, c.want)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "*dst*"))
			if len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
			// An existing destination is left as it was.
			if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := relayout.ConvertPath(src, dst, c.opts); !errors.Is(err, c.want) {
				t.Fatalf("ConvertPath: got %v, want %v", err, c.want)
			}
			if b, err := os.ReadFile(dst); err != nil || string(b) != "old" {
				t.Fatalf("the destination changed: %q, %v", b, err)
			}
			left, _ = filepath.Glob(filepath.Join(dir, ".*dst*"))
			os.Remove(dst)
			if len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

func TestConvertPath(t *testing.T) {
	mem := memory.NewGoAllocator()
	rec := corpus.Record(mem, corpus.Flat(2000), 2)
	defer rec.Release()
	src := write(t, []arrow.RecordBatch{rec}, writer.WithFormat(writer.Format2_2))
	dir := t.TempDir()
	sp, dp := filepath.Join(dir, "a.lance"), filepath.Join(dir, "b.lance")
	if err := os.WriteFile(sp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dp, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := relayout.ConvertPath(sp, dp, relayout.Options{Target: relayout.V2_3, Reencode: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dp)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := convert(t, src, relayout.Options{Target: relayout.V2_3, Reencode: true})
	if !bytes.Equal(got, want) || rep.OutputSize != uint64(len(got)) {
		t.Fatalf("ConvertPath and Convert disagree")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	// A missing source leaves nothing.
	if _, err := relayout.ConvertPath(filepath.Join(dir, "none"), filepath.Join(dir, "c.lance"), relayout.Options{Target: "2.3"}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v", err)
	}
}

// withoutFields rewrites a 2.2 file without the top-level fields that have a
// re-encoded page in rep.
func withoutFields(t testing.TB, src []byte, rep relayout.Report) []byte {
	t.Helper()
	drop := map[string]bool{}
	for _, p := range rep.Pages {
		if p.Action == relayout.Reencoded {
			drop[strings.SplitN(p.Column, ".", 2)[0]] = true
		}
	}
	rec, err := open(t, src).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var fields []arrow.Field
	var cols []arrow.Array
	for i, f := range rec.Schema().Fields() {
		if !drop[f.Name] {
			fields = append(fields, f)
			cols = append(cols, rec.Column(i))
		}
	}
	kept := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	defer kept.Release()
	return write(t, []arrow.RecordBatch{kept}, writer.WithFormat(writer.Format2_2), writer.WithMaxPageBytes(64<<10))
}

// unreferenced counts the bytes of a file's data region that no buffer and
// no alignment padding accounts for.
func unreferenced(t testing.TB, b []byte) int64 {
	t.Helper()
	ft, err := format.ParseFooter(b[len(b)-format.FooterSize:])
	if err != nil {
		t.Fatal(err)
	}
	f := open(t, b)
	var used uint64
	for c := 0; c < f.NumColumns(); c++ {
		for _, p := range f.Pages(c) {
			for _, r := range p.Buffers {
				used += r.Size + format.PadLen(r.Size, format.Alignment)
			}
		}
	}
	// The schema (global buffer 0) ends the data region.
	return int64(ft.ColumnMetaStart) - int64(used) - int64(schemaSize(t, b, ft))
}

func schemaSize(t testing.TB, b []byte, ft format.Footer) uint64 {
	g, err := format.ParseOffsetTable(b[ft.GlobalBufOffset:ft.GlobalBufOffset+16], 1, uint64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return g[0].Size
}

// A 2.3 column 2.2 cannot hold at all (a fixed-size list of structs below
// a list: sparse in 2.3, refused by the 2.2 writer) has no counterpart even
// with Reencode.
func TestReencodeRefused(t *testing.T) {
	mem := memory.NewGoAllocator()
	st := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	typ := arrow.ListOf(arrow.FixedSizeListOf(2, st))
	lb := array.NewListBuilder(mem, typ.Elem())
	defer lb.Release()
	fb := lb.ValueBuilder().(*array.FixedSizeListBuilder)
	sb := fb.ValueBuilder().(*array.StructBuilder)
	xb := sb.FieldBuilder(0).(*array.Int32Builder)
	for i := 0; i < 50; i++ {
		lb.Append(true)
		for k := 0; k < i%3; k++ {
			fb.Append(true)
			for e := 0; e < 2; e++ {
				sb.Append(true)
				xb.Append(int32(i + k + e))
			}
		}
	}
	a := lb.NewArray()
	defer a.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "l", Type: typ, Nullable: true}}, nil), []arrow.Array{a}, int64(a.Len()))
	defer rec.Release()
	src := write(t, []arrow.RecordBatch{rec})
	var out bytes.Buffer
	_, err := relayout.Convert(bytes.NewReader(src), int64(len(src)), &out, relayout.Options{Target: relayout.V2_2, Reencode: true})
	if !errors.Is(err, relayout.ErrNoCounterpart) || !errors.Is(err, writer.ErrUnsupportedType) || !strings.Contains(err.Error(), `column "l.item.item.x", page 0`) {
		t.Fatalf("got %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("%d bytes written", out.Len())
	}
}
