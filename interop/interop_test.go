package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// python returns the interpreter that has pylance, or fails/skips.
func python(t testing.TB) string {
	t.Helper()
	py := os.Getenv("PLANAR_PYTHON")
	if py == "" {
		py, _ = filepath.Abs(filepath.Join(".venv", "bin", "python"))
	}
	out, err := exec.Command(py, "-c", "import lance, pyarrow; print(lance.__version__)").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("pylance not available at %s (%v: %s); run `sh interop/setup.sh`", py, err, bytes.TrimSpace(out))
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: " + msg)
		}
		t.Skip("!!!!! SKIPPING INTEROP TESTS: " + msg + " !!!!!")
	}
	t.Logf("pylance %s", bytes.TrimSpace(out))
	return py
}

// python13 returns the interpreter of interop/.venv13, which has pylance
// 13.0.0: the Lance that LanceDB 0.40 embeds, the second real reader of
// every 2.2 file. Under CI=true a missing venv fails the test; otherwise the
// Lance 13 reads are left out, loudly, and "" is returned.
func python13(t testing.TB) string {
	t.Helper()
	py := os.Getenv("PLANAR_PYTHON13")
	if py == "" {
		py, _ = filepath.Abs(filepath.Join(".venv13", "bin", "python"))
	}
	out, err := exec.Command(py, "-c", "import lance; print(lance.__version__)").CombinedOutput()
	if err != nil || !bytes.HasPrefix(bytes.TrimSpace(out), []byte("13.")) {
		msg := fmt.Sprintf("pylance 13 not available at %s (%v: %s); run `sh interop/setup.sh`", py, err, bytes.TrimSpace(out))
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: " + msg)
		}
		t.Log("!!!!! LEAVING OUT THE LANCE 13 READS: " + msg + " !!!!!")
		return ""
	}
	return py
}

type fileSpec struct {
	File   string `json:"file"`
	Format string `json:"format,omitempty"`
}

type pylanceSpec struct {
	File       string `json:"file"`
	Version    string `json:"version"`
	Structural string `json:"structural,omitempty"`
}

type dataset struct {
	Arrow   string        `json:"arrow"`
	Planar  []fileSpec    `json:"planar"`
	Pylance []pylanceSpec `json:"pylance"`
}

type result struct {
	Pylance string `json:"pylance"`
	Reads   []struct {
		File      string   `json:"file"`
		OK        bool     `json:"ok"`
		Diffs     []string `json:"diffs"`
		Error     *string  `json:"error"`
		Version   string   `json:"version"`
		Encodings []string `json:"encodings"`
	} `json:"reads"`
	Writes []struct {
		File    string  `json:"file"`
		Version string  `json:"version"`
		OK      bool    `json:"ok"`
		Error   *string `json:"error"`
	} `json:"writes"`
}

func writeIPC(t testing.TB, path string, recs []arrow.RecordBatch) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(recs[0].Schema()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readIPC(t *testing.T, path string) arrow.RecordBatch {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	tbl := array.NewTableFromRecords(r.Schema(), recs)
	defer tbl.Release()
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		a, err := array.Concatenate(tbl.Column(i).Data().Chunks(), memory.NewGoAllocator())
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = a
	}
	return array.NewRecordBatch(r.Schema(), cols, tbl.NumRows())
}

// writePlanar writes recs as a planar file: storage 2.3 unless opts say
// otherwise (these tests compare with pylance's 2.3 output; the writer's own
// default is 2.2).
func writePlanar(t testing.TB, path string, recs []arrow.RecordBatch, opts ...writer.Option) {
	t.Helper()
	w, err := writer.Create(path, recs[0].Schema(), append([]writer.Option{writer.WithFormat(writer.Format2_3)}, opts...)...)
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
}

type corpusSet struct {
	name     string
	recs     []arrow.RecordBatch
	opts     []writer.Option
	interim  bool // also write and check the 2.3-interim flavour
	forced   bool // also have pylance write with structural-encoding forced
	readOnly bool // planar does not write this type yet: pylance -> planar only
}

func corpora() []corpusSet {
	mem := memory.NewGoAllocator()
	flat := corpus.Flat(5000)
	// A multi-batch, multi-page set: pages of 16 KiB, batches of odd sizes.
	multi := []corpus.Case{
		{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.SomeNulls},
		{Type: arrow.PrimitiveTypes.Float32, Nulls: corpus.NoNulls},
		{Type: arrow.PrimitiveTypes.Uint16, Nulls: corpus.Alternating, Shape: corpus.Small},
	}
	var mrecs []arrow.RecordBatch
	for i, n := range []int{1, 3000, 7001, 2} {
		for j := range multi {
			multi[j].Rows = n
		}
		mrecs = append(mrecs, corpus.Record(mem, multi, uint64(100+i)))
	}
	sets := []corpusSet{
		{name: "flat", recs: []arrow.RecordBatch{corpus.Record(mem, flat, 11)}, interim: true},
		{name: "multipage", recs: mrecs, opts: []writer.Option{writer.WithMaxPageBytes(16 << 10)}, interim: true},
	}
	// One file per nested case, so that a type one side cannot handle does
	// not hide the others. Small pages make every case span several pages.
	for _, c := range corpus.Nested(1500) {
		sets = append(sets, corpusSet{
			name:     "nested-" + c.Name(),
			recs:     []arrow.RecordBatch{corpus.NestedRecord(mem, []corpus.NestedCase{c}, 21)},
			opts:     []writer.Option{writer.WithMaxPageBytes(32 << 10)},
			forced:   true,
			readOnly: c.ReadOnly,
		})
	}
	return sets
}

var planarFormats = []writer.Format{writer.Format2_2, writer.Format2_3, writer.Format2_3Interim}

// pylance must reject 2.3-interim files: since the planar rework, its 2.3
// reader only accepts lance.encodings23.PlanarLayout pages.
func expectRead(f writer.Format) bool { return f != writer.Format2_3Interim }

func TestInterop(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	sets := corpora()
	var manifest struct {
		Datasets []dataset `json:"datasets"`
	}
	for _, s := range sets {
		ds := dataset{Arrow: filepath.Join(dir, s.name+".arrow")}
		writeIPC(t, ds.Arrow, s.recs)
		for _, f := range planarFormats {
			if f == writer.Format2_3Interim && !s.interim || s.readOnly {
				continue
			}
			p := filepath.Join(dir, fmt.Sprintf("%s.planar-%s.lance", s.name, f))
			writePlanar(t, p, s.recs, append([]writer.Option{writer.WithFormat(f)}, s.opts...)...)
			ds.Planar = append(ds.Planar, fileSpec{File: p, Format: f.String()})
		}
		for _, v := range []string{"2.1", "2.2", "2.3"} {
			ds.Pylance = append(ds.Pylance, pylanceSpec{File: filepath.Join(dir, fmt.Sprintf("%s.pylance-%s.lance", s.name, v)), Version: v})
		}
		if s.forced {
			for _, v := range []string{"2.2", "2.3"} {
				for _, st := range []string{"miniblock", "fullzip"} {
					ds.Pylance = append(ds.Pylance, pylanceSpec{File: filepath.Join(dir, fmt.Sprintf("%s.pylance-%s-%s.lance", s.name, v, st)), Version: v, Structural: st})
				}
			}
		}
		manifest.Datasets = append(manifest.Datasets, ds)
	}
	res := runCheck(t, py, dir, manifest.Datasets)
	t.Logf("checked against pylance %s", res.Pylance)

	t.Run("planar-to-pylance", func(t *testing.T) {
		for _, r := range res.Reads {
			f := formatOf(r.File)
			switch {
			case expectRead(f) && !r.OK:
				msg := strings.Join(r.Diffs, "; ")
				if r.Error != nil {
					msg = *r.Error
				}
				t.Errorf("%s: pylance read failed: %s", filepath.Base(r.File), msg)
			case !expectRead(f) && r.Error == nil:
				t.Errorf("%s: pylance read a 2.3-interim file; update FORMAT.md and expectRead", filepath.Base(r.File))
			case !expectRead(f):
				t.Logf("%s: rejected by pylance as expected: %s", filepath.Base(r.File), *r.Error)
			default:
				t.Logf("%s: pylance read footer %s, page encodings %v: equal", filepath.Base(r.File), r.Version, r.Encodings)
			}
		}
		want := 0
		for _, d := range manifest.Datasets {
			want += len(d.Planar)
		}
		if len(res.Reads) != want {
			t.Errorf("got %d read results, want %d", len(res.Reads), want)
		}
	})

	t.Run("pylance-to-planar", func(t *testing.T) {
		for i, s := range sets {
			want := readIPC(t, manifest.Datasets[i].Arrow)
			for _, w := range res.Writes {
				if !strings.HasPrefix(filepath.Base(w.File), s.name+".") {
					continue
				}
				if !w.OK {
					if why, ok := pylanceCannot(filepath.Base(w.File), *w.Error); ok {
						t.Logf("pylance cannot write %s (%s): %s", filepath.Base(w.File), why, *w.Error)
						continue
					}
					t.Errorf("pylance could not write %s: %s", filepath.Base(w.File), *w.Error)
					continue
				}
				checkPlanarRead(t, w.File, want)
			}
		}
	})
}

func formatOf(path string) writer.Format {
	for _, f := range planarFormats {
		if strings.HasSuffix(path, ".planar-"+f.String()+".lance") {
			return f
		}
	}
	return -1
}

func checkPlanarRead(t *testing.T, path string, want arrow.RecordBatch) {
	t.Helper()
	f, err := reader.OpenPath(path)
	if err != nil {
		t.Errorf("%s: %v", filepath.Base(path), err)
		return
	}
	defer f.Close()
	got, err := f.ReadAll()
	if err != nil {
		t.Errorf("%s: %v", filepath.Base(path), err)
		return
	}
	if !sameSchema(got.Schema(), want.Schema(), strings.Contains(path, "-miniblock.") || strings.Contains(path, "-fullzip.")) {
		t.Errorf("%s: schema %s, want %s", filepath.Base(path), got.Schema(), want.Schema())
		return
	}
	if forced := !got.Schema().Equal(want.Schema()); forced {
		// Forced-encoding files carry field metadata the IPC data lacks:
		// compare values under the file's types.
		cols := make([]arrow.Array, want.NumCols())
		for c := range cols {
			cols[c] = withType(want.Column(c), got.Column(c).DataType())
		}
		want = array.NewRecordBatch(got.Schema(), cols, want.NumRows())
	}
	bad := 0
	for c := 0; c < int(want.NumCols()); c++ {
		if !equalValues(got.Column(c), want.Column(c)) {
			bad++
			t.Errorf("%s: column %s differs", filepath.Base(path), want.ColumnName(c))
		}
	}
	n := want.NumRows()
	rg, err := f.ReadRange(n/3, n/3)
	if err != nil {
		t.Errorf("%s: range: %v", filepath.Base(path), err)
		return
	}
	for c := 0; c < int(want.NumCols()); c++ {
		if !equalValues(rg.Column(c), array.NewSlice(want.Column(c), n/3, n/3+n/3)) {
			t.Errorf("%s: range of column %s differs", filepath.Base(path), want.ColumnName(c))
		}
	}
	idx := []int64{n - 1, 0, n / 2}
	tk, err := f.Take(idx)
	if err != nil {
		t.Errorf("%s: take: %v", filepath.Base(path), err)
		return
	}
	for c := 0; c < int(want.NumCols()); c++ {
		for k, i := range idx {
			if !equalValues(array.NewSlice(tk.Column(c), int64(k), int64(k)+1), array.NewSlice(want.Column(c), i, i+1)) {
				t.Errorf("%s: take(%d) of column %s differs", filepath.Base(path), i, want.ColumnName(c))
			}
		}
	}
	if bad == 0 {
		var cells []string
		for c := 0; c < f.NumColumns(); c++ {
			for _, p := range f.Pages(c) {
				cells = append(cells, p.Cell)
			}
		}
		t.Logf("%s: %d columns equal; cells seen: %v", filepath.Base(path), want.NumCols(), uniq(cells))
	}
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// sameSchema compares schemas; with ignoreMetadata, field metadata (which
// the forced-encoding files carry) is not compared.
func sameSchema(a, b *arrow.Schema, ignoreMetadata bool) bool {
	if !ignoreMetadata {
		return a.Equal(b)
	}
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Nullable != fb.Nullable || !arrow.TypeEqual(stripMetadata(fa.Type), stripMetadata(fb.Type)) {
			return false
		}
	}
	return true
}

// knownPylanceLimits lists what pylance 14.0.2 itself refuses to write, by
// file-name fragment and error fragment. Everything else must succeed.
var knownPylanceLimits = []struct{ file, err, why string }{
	{"map_str_i32", "Map data type is not enabled", "maps need file version 2.2+"},
	{"fsl_struct", "FixedSizeList<Struct> is not enabled", "fixed-size lists of structs need file version 2.2+"},
	{"fsl_bool_8", "range end index", "pylance 14.0.2 panics forcing full-zip on fixed-size lists of booleans"},
	{"packed_struct__packed-fullzip", "Per-value compression not yet supported for block type Nullable", "pylance 14.0.2 cannot write full-zip packed structs with nullable children"},
}

func pylanceCannot(file, err string) (string, bool) {
	for _, k := range knownPylanceLimits {
		if strings.Contains(file, k.file) && strings.Contains(err, k.err) {
			return k.why, true
		}
	}
	return "", false
}

// stripMetadata returns dt with every nested field's metadata removed.
func stripMetadata(dt arrow.DataType) arrow.DataType {
	strip := func(f arrow.Field) arrow.Field {
		return arrow.Field{Name: f.Name, Type: stripMetadata(f.Type), Nullable: f.Nullable}
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		fs := make([]arrow.Field, t.NumFields())
		for i, f := range t.Fields() {
			fs[i] = strip(f)
		}
		return arrow.StructOf(fs...)
	case *arrow.ListType:
		return arrow.ListOfField(strip(t.ElemField()))
	case *arrow.LargeListType:
		return arrow.LargeListOfField(strip(t.ElemField()))
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(t.Len(), strip(t.ElemField()))
	case *arrow.MapType:
		m := arrow.MapOf(stripMetadata(t.KeyType()), stripMetadata(t.ItemType()))
		m.SetItemNullable(t.ItemField().Nullable)
		return m
	}
	return dt
}

// withType rebuilds an array under a type that differs only in field metadata.
func withType(a arrow.Array, dt arrow.DataType) arrow.Array {
	d := retypeData(a.Data(), dt)
	defer d.Release()
	return array.MakeFromData(d)
}

func retypeData(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	var childTypes []arrow.DataType
	switch t := dt.(type) {
	case *arrow.StructType:
		for i := 0; i < t.NumFields(); i++ {
			childTypes = append(childTypes, t.Field(i).Type)
		}
	case arrow.ListLikeType:
		childTypes = []arrow.DataType{t.Elem()}
	}
	var kids []arrow.ArrayData
	for i, c := range d.Children() {
		if i < len(childTypes) {
			kids = append(kids, retypeData(c, childTypes[i]))
		} else {
			c.Retain()
			kids = append(kids, c)
		}
	}
	out := array.NewData(dt, d.Len(), d.Buffers(), kids, d.NullN(), d.Offset())
	if dict := d.Dictionary(); dict != nil {
		out.SetDictionary(dict)
	}
	return out
}

// equalValues is array.Equal, falling back to a row-by-row comparison of
// logical values (so that equivalent dictionaries compare equal).
func equalValues(a, b arrow.Array) bool {
	if array.Equal(a, b) {
		return true
	}
	if a.Len() != b.Len() || !arrow.TypeEqual(a.DataType(), b.DataType()) {
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

// runCheck writes the manifest of datasets into dir, runs check.py on it and
// returns its results.
func runCheck(tb testing.TB, py, dir string, datasets []dataset) result {
	tb.Helper()
	mb, err := json.Marshal(struct {
		Datasets []dataset `json:"datasets"`
	}{datasets})
	if err != nil {
		tb.Fatal(err)
	}
	mpath := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(mpath, mb, 0o644); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(py, "check.py", mpath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("check.py: %v\n%s", err, stderr.String())
	}
	var res result
	if err := json.Unmarshal(out, &res); err != nil {
		tb.Fatalf("check.py output: %v\n%s", err, out)
	}
	return res
}
