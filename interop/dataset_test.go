package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	lds "github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/writer"
)

// dsSchema has flat, nested and vector columns (a nullable fsl<f32,8>).
var dsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	{Name: "st", Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
	), Nullable: true},
	{Name: "emb", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// dsBatch builds rows first..first+n-1; every value is a function of id.
func dsBatch(first, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, dsSchema)
	defer b.Release()
	id := b.Field(0).(*array.Int64Builder)
	name := b.Field(1).(*array.StringBuilder)
	tags := b.Field(2).(*array.ListBuilder)
	tv := tags.ValueBuilder().(*array.Int32Builder)
	st := b.Field(3).(*array.StructBuilder)
	sa := st.FieldBuilder(0).(*array.Int32Builder)
	sb := st.FieldBuilder(1).(*array.StringBuilder)
	emb := b.Field(4).(*array.FixedSizeListBuilder)
	ev := emb.ValueBuilder().(*array.Float32Builder)
	for i := first; i < first+n; i++ {
		id.Append(i)
		if i%7 == 3 {
			name.AppendNull()
		} else {
			name.Append(fmt.Sprintf("row-%d", i))
		}
		if i%5 == 0 {
			tags.AppendNull()
		} else {
			tags.Append(true)
			for k := int64(0); k < i%4; k++ {
				tv.Append(int32(i + k))
			}
		}
		if i%11 == 0 {
			st.AppendNull()
		} else {
			st.Append(true)
			sa.Append(int32(i * 3))
			sb.Append(fmt.Sprintf("s%d", i%13))
		}
		if i%3 == 1 {
			emb.AppendNull()
		} else {
			emb.Append(true)
			for k := 0; k < 8; k++ {
				ev.Append(float32(i) + float32(k)/8)
			}
		}
	}
	return b.NewRecordBatch()
}

// writeDatasetIPC writes the rows dsBatch gives for each {first, n} range,
// in order, to an Arrow IPC file.
func writeDatasetIPC(t *testing.T, path string, ranges ...[2]int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(dsSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ranges {
		rec := dsBatch(r[0], r[1])
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// pyDataset runs dataset_check.py and decodes its JSON line.
func pyDataset(t *testing.T, py string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(py, append([]string{"dataset_check.py"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("dataset_check.py %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("dataset_check.py output %q: %v", out, err)
	}
	return res
}

func planarWrite(t *testing.T, w *lds.Writer, first, n, batch int64) *lds.Dataset {
	t.Helper()
	for at := first; at < first+n; at += batch {
		rec := dsBatch(at, min(batch, first+n-at))
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := w.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// planarCheck reads version v in planar and compares it with rows 0..n-1,
// or with the given ranges of rows in order.
func planarCheck(t *testing.T, uri string, v uint64, n int64, ranges ...[2]int64) {
	t.Helper()
	d, err := lds.OpenVersion(context.Background(), uri, v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if len(ranges) == 0 {
		ranges = [][2]int64{{0, n}}
	}
	want := dsConcat(t, ranges)
	defer want.Release()
	if got.NumRows() != n || d.CountRows() != n {
		t.Fatalf("planar: version %d has %d rows (count %d), want %d", v, got.NumRows(), d.CountRows(), n)
	}
	for i := range want.NumCols() {
		if !array.Equal(got.Column(int(i)), want.Column(int(i))) {
			t.Fatalf("planar: version %d column %s differs", v, want.ColumnName(int(i)))
		}
	}
}

// TestDatasetPlanarToPylance: planar creates and appends; pylance opens
// every version (to_table, count_rows, take, filter), appends itself, and
// planar reads pylance's version.
func TestDatasetPlanarToPylance(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	for _, sv := range []string{lds.StorageVersion2_2, lds.StorageVersion2_3} {
		t.Run(sv, func(t *testing.T) {
			dir := t.TempDir()
			uri := filepath.Join(dir, "ds")
			w, err := lds.Create(ctx, uri, dsSchema, lds.WithStorageVersion(sv), lds.WithMaxRowsPerFile(3000))
			if err != nil {
				t.Fatal(err)
			}
			planarWrite(t, w, 0, 5000, 1024)
			if w, err = lds.Append(ctx, uri, lds.WithMaxRowsPerFile(3000)); err != nil {
				t.Fatal(err)
			}
			planarWrite(t, w, 5000, 4000, 1000)
			for v, n := range map[uint64]int64{1: 5000, 2: 9000} {
				arrow := filepath.Join(dir, fmt.Sprintf("v%d.arrow", v))
				writeDatasetIPC(t, arrow, [2]int64{0, n})
				res := pyDataset(t, py, "check", uri, arrow, fmt.Sprint(v))
				if res["storage"] != sv {
					t.Fatalf("pylance sees storage %v, want %s", res["storage"], sv)
				}
			}
			tail := filepath.Join(dir, "tail.arrow")
			writeDatasetIPC(t, tail, [2]int64{9000, 1500})
			if res := pyDataset(t, py, "append", uri, tail); res["version"] != 3.0 {
				t.Fatalf("pylance appended version %v", res["version"])
			}
			planarCheck(t, uri, 3, 10500)
			// planar appends over pylance's version, and pylance reads it.
			if w, err = lds.Append(ctx, uri); err != nil {
				t.Fatal(err)
			}
			planarWrite(t, w, 10500, 500, 500)
			all := filepath.Join(dir, "all.arrow")
			writeDatasetIPC(t, all, [2]int64{0, 11000})
			res := pyDataset(t, py, "check", uri, all, "4")
			if vs, _ := res["versions"].([]any); len(vs) != 4 {
				t.Fatalf("pylance lists versions %v", res["versions"])
			}
		})
	}
}

// TestDatasetPylanceToPlanar: pylance creates a dataset (2.2 and 2.3);
// planar reads it, appends to it, and pylance reads planar's version.
func TestDatasetPylanceToPlanar(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	for _, sv := range []string{lds.StorageVersion2_2, lds.StorageVersion2_3} {
		t.Run(sv, func(t *testing.T) {
			dir := t.TempDir()
			uri := filepath.Join(dir, "ds")
			head := filepath.Join(dir, "head.arrow")
			writeDatasetIPC(t, head, [2]int64{0, 3000})
			pyDataset(t, py, "create", uri, head, sv)
			planarCheck(t, uri, 1, 3000)
			other := lds.StorageVersion2_3
			if sv == other {
				other = lds.StorageVersion2_2
			}
			if _, err := lds.Append(ctx, uri, lds.WithStorageVersion(other)); err == nil {
				t.Fatalf("appending %s to a %s dataset succeeded", other, sv)
			}
			w, err := lds.Append(ctx, uri)
			if err != nil {
				t.Fatal(err)
			}
			d := planarWrite(t, w, 3000, 2000, 700)
			if d.Version() != 2 || d.StorageVersion() != sv {
				t.Fatalf("planar appended version %d storage %s", d.Version(), d.StorageVersion())
			}
			all := filepath.Join(dir, "all.arrow")
			writeDatasetIPC(t, all, [2]int64{0, 5000})
			pyDataset(t, py, "check", uri, all, "2")
			planarCheck(t, uri, 2, 5000)
		})
	}
}

// dsConcat builds one batch of the given ranges of rows, in order.
func dsConcat(t *testing.T, ranges [][2]int64) arrow.RecordBatch {
	t.Helper()
	recs := make([]arrow.RecordBatch, len(ranges))
	for i, r := range ranges {
		recs[i] = dsBatch(r[0], r[1])
		defer recs[i].Release()
	}
	cols := make([]arrow.Array, dsSchema.NumFields())
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		cols[c] = a
	}
	return array.NewRecordBatch(dsSchema, cols, n)
}

// TestDatasetConcurrentAppends: a planar append and a pylance append start
// from the same version; each commits after the other's commit and rebases
// over it (pylance reading planar's transaction file, planar reading
// pylance's). Then a writer dies mid-write: its data file and a temporary
// manifest are left behind, and both libraries still open the last version.
func TestDatasetConcurrentAppends(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	dir := t.TempDir()
	uri := filepath.Join(dir, "ds")
	w, err := lds.Create(ctx, uri, dsSchema)
	if err != nil {
		t.Fatal(err)
	}
	planarWrite(t, w, 0, 1000, 1000)
	// planar's append reads version 1 ...
	pw, err := lds.Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	rec := dsBatch(1000, 500)
	err = pw.Write(rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	// ... pylance commits version 2 meanwhile ...
	b := filepath.Join(dir, "b.arrow")
	writeDatasetIPC(t, b, [2]int64{1500, 500})
	pyDataset(t, py, "append", uri, b)
	// ... and planar's commit rebases over it.
	d, err := pw.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Version() != 3 {
		t.Fatalf("planar committed version %d, want 3", d.Version())
	}
	// pylance commits an append read at version 1: it rebases over
	// pylance's version 2 and planar's version 3.
	c := filepath.Join(dir, "c.arrow")
	writeDatasetIPC(t, c, [2]int64{2000, 500})
	if res := pyDataset(t, py, "stale_append", uri, c, "1"); res["version"] != 4.0 {
		t.Fatalf("pylance's stale append committed version %v", res["version"])
	}
	order := [][2]int64{{0, 1000}, {1500, 500}, {1000, 500}, {2000, 500}}
	all := filepath.Join(dir, "all.arrow")
	writeDatasetIPC(t, all, order...)
	pyDataset(t, py, "check", uri, all, "4")
	planarCheck(t, uri, 4, 2500, order...)

	// A writer dies after writing a data file and a temporary manifest.
	dead, err := lds.Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	rec = dsBatch(2500, 100)
	err = dead.Write(rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(uri, "_versions", ".18446744073709551610.manifest.deadbeef.tmp")
	if err := os.WriteFile(junk, []byte("half a manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	pyDataset(t, py, "check", uri, all, "4")
	planarCheck(t, uri, 4, 2500, order...)
	latest, err := lds.Open(ctx, uri)
	if err != nil || latest.Version() != 4 {
		t.Fatalf("latest version after the crash: %v %v", latest, err)
	}
	// Both keep appending.
	pyDataset(t, py, "append", uri, c)
	if w, err = lds.Append(ctx, uri); err != nil {
		t.Fatal(err)
	}
	planarWrite(t, w, 0, 10, 10)
	order = append(order, [2]int64{2000, 500}, [2]int64{0, 10})
	writeDatasetIPC(t, all, order...)
	pyDataset(t, py, "check", uri, all, "6")
	planarCheck(t, uri, 6, 3010, order...)
}

// TestDatasetOverwrite: planar overwrites a dataset; pylance reads the new
// version and the old one, and appends over planar's overwrite.
func TestDatasetOverwrite(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	dir := t.TempDir()
	uri := filepath.Join(dir, "ds")
	w, err := lds.Create(ctx, uri, dsSchema, lds.WithMaxRowsPerFile(400))
	if err != nil {
		t.Fatal(err)
	}
	planarWrite(t, w, 0, 1000, 1000)
	if w, err = lds.Overwrite(ctx, uri, dsSchema); err != nil {
		t.Fatal(err)
	}
	planarWrite(t, w, 5000, 300, 300)
	v1 := filepath.Join(dir, "v1.arrow")
	writeDatasetIPC(t, v1, [2]int64{0, 1000})
	pyDataset(t, py, "check", uri, v1, "1")
	v2 := filepath.Join(dir, "v2.arrow")
	writeDatasetIPC(t, v2, [2]int64{5000, 300})
	pyDataset(t, py, "check", uri, v2, "2")
	tail := filepath.Join(dir, "tail.arrow")
	writeDatasetIPC(t, tail, [2]int64{0, 10})
	pyDataset(t, py, "append", uri, tail)
	planarCheck(t, uri, 3, 310, [2]int64{5000, 300}, [2]int64{0, 10})
}

// TestDatasetConcurrentWriters: two planar writers (goroutines) and one
// pylance process append at the same time, many rounds each; every row of
// every append is there exactly once, in pylance's view and planar's.
func TestDatasetConcurrentWriters(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	dir := t.TempDir()
	uri := filepath.Join(dir, "ds")
	w, err := lds.Create(ctx, uri, dsSchema)
	if err != nil {
		t.Fatal(err)
	}
	planarWrite(t, w, 0, 100, 100)
	const rounds, rows = 20, 50
	pyRows := filepath.Join(dir, "py.arrow")
	writeDatasetIPC(t, pyRows, [2]int64{100, rounds * rows})
	pyDone := make(chan error, 1)
	go func() {
		out, err := exec.Command(py, "dataset_check.py", "append_loop", uri, pyRows, fmt.Sprint(rounds)).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("pylance append loop: %v\n%s", err, out)
		}
		pyDone <- err
	}()
	// The planar writers start once pylance has committed its first append,
	// so that the three overlap.
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		if d, err := lds.Open(ctx, uri); err == nil && d.Version() > 1 {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatal("pylance did not commit within a minute")
		}
	}
	goDone := make(chan error, 2)
	var retried [2]int
	for g := range 2 {
		go func() {
			for r := range rounds {
				a, err := lds.Append(ctx, uri, lds.WithMaxCommitRetries(100))
				if err == nil {
					first := int64(100 + (1+g)*rounds*rows + r*rows)
					rec := dsBatch(first, rows)
					err = a.Write(rec)
					rec.Release()
				}
				if err == nil {
					var d *lds.Dataset
					if d, err = a.Commit(ctx); err == nil && d.Version() > a.ReadVersion()+1 {
						retried[g]++
					}
				}
				if err != nil {
					goDone <- fmt.Errorf("planar writer %d round %d: %w", g, r, err)
					return
				}
			}
			goDone <- nil
		}()
	}
	for range 2 {
		if err := <-goDone; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-pyDone; err != nil {
		t.Fatal(err)
	}
	const total = 100 + 3*rounds*rows
	res := pyDataset(t, py, "ids", uri, fmt.Sprint(total))
	if res["version"] != float64(1+3*rounds) {
		t.Fatalf("pylance sees version %v, want %d", res["version"], 1+3*rounds)
	}
	d, err := lds.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, total)
	for rec, err := range d.Scan(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64)
		for i := range ids.Len() {
			if id := ids.Value(i); seen[id] {
				t.Fatalf("row %d twice", id)
			} else {
				seen[id] = true
			}
		}
		rec.Release()
	}
	if d.CountRows() != total {
		t.Fatalf("planar counts %d rows, want %d", d.CountRows(), total)
	}
	t.Logf("%d versions; planar commits that rebased: %v", d.Version(), retried)
}

// TestDatasetKilledWriter runs a planar writer in a child process that
// appends in a loop and kills it (SIGKILL) at several moments; after each
// kill, pylance and planar open the latest committed version and read every
// row of it, and both keep appending.
func TestDatasetKilledWriter(t *testing.T) {
	if uri := os.Getenv("PLANAR_DATASET_KILLED_WRITER"); uri != "" {
		killedWriterChild(uri)
		return
	}
	py := python(t)
	ctx := context.Background()
	dir := t.TempDir()
	uri := filepath.Join(dir, "ds")
	w, err := lds.Create(ctx, uri, dsSchema)
	if err != nil {
		t.Fatal(err)
	}
	planarWrite(t, w, 0, killedBatch, killedBatch)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for round, delay := range []time.Duration{150, 400, 900} {
		cmd := exec.Command(exe, "-test.run=^TestDatasetKilledWriter$")
		cmd.Env = append(os.Environ(), "PLANAR_DATASET_KILLED_WRITER="+uri)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay * time.Millisecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		d, err := lds.Open(ctx, uri)
		if err != nil {
			t.Fatalf("round %d: open after kill: %v", round, err)
		}
		// Every version holds whole batches: ids 0..n-1.
		n := d.CountRows()
		if n%killedBatch != 0 {
			t.Fatalf("round %d: %d rows is not whole batches", round, n)
		}
		planarCheck(t, uri, d.Version(), n)
		want := filepath.Join(dir, fmt.Sprintf("r%d.arrow", round))
		writeDatasetIPC(t, want, [2]int64{0, n})
		pyDataset(t, py, "check", uri, want, fmt.Sprint(d.Version()))
		// Both append after the crash: pylance, then planar.
		tail := filepath.Join(dir, fmt.Sprintf("t%d.arrow", round))
		writeDatasetIPC(t, tail, [2]int64{n, killedBatch / 2})
		pyDataset(t, py, "append", uri, tail)
		if w, err = lds.Append(ctx, uri); err != nil {
			t.Fatal(err)
		}
		planarWrite(t, w, n+killedBatch/2, killedBatch/2, killedBatch)
		t.Logf("round %d: killed after %v at version %d (%d rows)", round, delay*time.Millisecond, d.Version(), n)
	}
}

const killedBatch = 2000

// killedWriterChild appends batches of killedBatch rows until it is killed.
func killedWriterChild(uri string) {
	ctx := context.Background()
	for {
		d, err := lds.Open(ctx, uri)
		if err != nil {
			os.Exit(2)
		}
		w, err := lds.Append(ctx, uri, lds.WithMaxRowsPerFile(killedBatch/2))
		if err != nil {
			os.Exit(2)
		}
		rec := dsBatch(d.CountRows(), killedBatch)
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			os.Exit(2)
		}
		if _, err := w.Commit(ctx); err != nil {
			os.Exit(2)
		}
	}
}

// TestDatasetWriterSurvivesABadBatch: a batch the writer refuses (invalid
// UTF-8 in a string column, here one that would span two files) between
// good ones leaves the writer usable; pylance reads exactly the good rows
// of the commit.
func TestDatasetWriterSurvivesABadBatch(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	dir := t.TempDir()
	uri := filepath.Join(dir, "ds")
	w, err := lds.Create(ctx, uri, dsSchema, lds.WithMaxRowsPerFile(700))
	if err != nil {
		t.Fatal(err)
	}
	for at := int64(0); at < 600; at += 300 {
		rec := dsBatch(at, 300)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	bad := dsBatch(5000, 300)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for i := range 300 {
		if i == 200 {
			sb.Append("\xff\xfe")
		} else {
			sb.Append(fmt.Sprintf("bad-%d", i))
		}
	}
	names := sb.NewArray()
	cols := append([]arrow.Array{bad.Column(0), names}, bad.Columns()[2:]...)
	badRec := array.NewRecordBatch(dsSchema, cols, 300)
	if err := w.Write(badRec); !errors.Is(err, writer.ErrInvalidBatch) {
		t.Fatalf("a batch with invalid UTF-8: %v, want writer.ErrInvalidBatch", err)
	}
	badRec.Release()
	bad.Release()
	names.Release()
	d := planarWrite(t, w, 600, 400, 200)
	if d.CountRows() != 1000 {
		t.Fatalf("%d rows committed, want the 1000 good ones", d.CountRows())
	}
	want := filepath.Join(dir, "want.arrow")
	writeDatasetIPC(t, want, [2]int64{0, 1000})
	pyDataset(t, py, "check", uri, want, fmt.Sprint(d.Version()))
}
