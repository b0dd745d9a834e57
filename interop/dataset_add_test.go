package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	lds "github.com/planarlance/planar/dataset"
)

// dsAddSchema is the columns planar's AddColumns adds in the interop test.
var dsAddSchema = arrow.NewSchema([]arrow.Field{
	{Name: "vec", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// dsAddBatch builds the added columns of rows first..first+n-1.
func dsAddBatch(first, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, dsAddSchema)
	defer b.Release()
	vec := b.Field(0).(*array.FixedSizeListBuilder)
	vv := vec.ValueBuilder().(*array.Float32Builder)
	note := b.Field(1).(*array.StringBuilder)
	for i := first; i < first+n; i++ {
		if i%4 == 2 {
			vec.AppendNull()
		} else {
			vec.Append(true)
			for k := range 8 {
				vv.Append(float32(i)*0.5 - float32(k))
			}
		}
		if i%9 == 0 {
			note.AppendNull()
		} else {
			note.Append(fmt.Sprintf("n%d", i*7))
		}
	}
	return b.NewRecordBatch()
}

// dsWideBatch is dsBatch with the added columns after its own.
func dsWideBatch(first, n int64) arrow.RecordBatch {
	a, b := dsBatch(first, n), dsAddBatch(first, n)
	defer a.Release()
	defer b.Release()
	fields := append(append([]arrow.Field(nil), dsSchema.Fields()...), dsAddSchema.Fields()...)
	cols := append(append([]arrow.Array(nil), a.Columns()...), b.Columns()...)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n)
}

func writeWideIPC(t *testing.T, path string, n int64) {
	t.Helper()
	rec := dsWideBatch(0, n)
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDatasetAddColumns: pylance creates a two-fragment dataset; planar
// adds columns (a nullable fsl<f32,8> and a string); pylance reads the new
// version with every column and the old one without the new columns; then
// pylance adds a column itself and planar reads that version.
func TestDatasetAddColumns(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	for _, sv := range []string{lds.StorageVersion2_2, lds.StorageVersion2_3} {
		t.Run(sv, func(t *testing.T) {
			dir := t.TempDir()
			uri := filepath.Join(dir, "ds")
			head := filepath.Join(dir, "head.arrow")
			writeDatasetIPC(t, head, [2]int64{0, 3000})
			pyDataset(t, py, "create", uri, head, sv)
			tail := filepath.Join(dir, "tail.arrow")
			writeDatasetIPC(t, tail, [2]int64{3000, 1000})
			pyDataset(t, py, "append", uri, tail)
			const n = 4000
			var recs []arrow.RecordBatch
			for at := int64(0); at < n; at += 700 {
				recs = append(recs, dsAddBatch(at, min(700, n-at)))
			}
			r, err := array.NewRecordReader(dsAddSchema, recs)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				rec.Release()
			}
			d, err := lds.AddColumns(ctx, uri, r)
			r.Release()
			if err != nil {
				t.Fatal(err)
			}
			if d.Version() != 3 || d.NumFragments() != 2 {
				t.Fatalf("version %d, %d fragments", d.Version(), d.NumFragments())
			}
			wide := filepath.Join(dir, "wide.arrow")
			writeWideIPC(t, wide, n)
			pyDataset(t, py, "check", uri, wide, "3")
			old := filepath.Join(dir, "old.arrow")
			writeDatasetIPC(t, old, [2]int64{0, n})
			pyDataset(t, py, "check", uri, old, "2")

			// pylance's own add_columns over planar's version.
			if res := pyDataset(t, py, "add_columns", uri, "-"); res["version"] != 4.0 {
				t.Fatalf("pylance add_columns made version %v", res["version"])
			}
			d, err = lds.OpenVersion(ctx, uri, 4)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.ReadAll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			want := dsWideBatch(0, n)
			defer want.Release()
			if got.NumCols() != want.NumCols()+1 || got.NumRows() != n {
				t.Fatalf("planar reads %d columns, %d rows", got.NumCols(), got.NumRows())
			}
			for i := range want.NumCols() {
				if !array.Equal(got.Column(int(i)), want.Column(int(i))) {
					t.Fatalf("planar: column %s differs", want.ColumnName(int(i)))
				}
			}
			ids := got.Column(0).(*array.Int64)
			twice, ok := got.Column(int(want.NumCols())).(*array.Int64)
			if !ok {
				t.Fatalf("twice is %s", got.Column(int(want.NumCols())).DataType())
			}
			for i := range int(n) {
				if twice.Value(i) != 2*ids.Value(i) {
					t.Fatalf("row %d: twice %d, id %d", i, twice.Value(i), ids.Value(i))
				}
			}
		})
	}
}

// pyMerge commits planar's backfill results with pylance's own
// LanceOperation.Merge: each fragment of the plan's read version gains the
// result's data file, and the schema gains the new fields.
const pyMerge = `
import json, sys
import lance, pyarrow as pa
from lance.fragment import DataFile
uri, read_version, results = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
ds = lance.dataset(uri, version=read_version)
by_frag = {r["fragment_id"]: r["file"] for r in results}
frags = []
for f in ds.get_fragments():
    m = f.metadata
    r = by_frag[m.id]
    m.files.append(DataFile(r["path"], r["fields"], r["column_indices"], r["file_major_version"], r["file_minor_version"], r["file_size_bytes"]))
    frags.append(m)
new = pa.schema([pa.field("vec", pa.list_(pa.float32(), 8)), pa.field("note", pa.string())])
schema = pa.schema(list(ds.schema) + list(new))
op = lance.LanceOperation.Merge(frags, schema, preserves_nullability=True)
d = lance.LanceDataset.commit(uri, op, read_version=read_version)
d.validate()
print(json.dumps({"version": d.version}))
`

// TestPylanceCommitsPlanarBackfill: planar plans and writes a backfill's
// files, pylance commits them with its own LanceOperation.Merge, and both
// read the new version as the data written.
func TestPylanceCommitsPlanarBackfill(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	dir := t.TempDir()
	uri := filepath.Join(dir, "ds")
	head := filepath.Join(dir, "head.arrow")
	writeDatasetIPC(t, head, [2]int64{0, 3000})
	pyDataset(t, py, "create", uri, head, lds.StorageVersion2_2)
	tail := filepath.Join(dir, "tail.arrow")
	writeDatasetIPC(t, tail, [2]int64{3000, 1000})
	pyDataset(t, py, "append", uri, tail)
	plan, err := lds.PlanBackfill(ctx, uri, dsAddSchema)
	if err != nil {
		t.Fatal(err)
	}
	var results []lds.BackfillResult
	start := int64(0)
	for _, task := range plan.Tasks {
		rec := dsAddBatch(start, int64(task.LiveRows))
		r, _ := array.NewRecordReader(dsAddSchema, []arrow.RecordBatch{rec})
		rec.Release()
		res, err := task.Write(ctx, r)
		r.Release()
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
		start += int64(task.LiveRows)
	}
	rf := filepath.Join(dir, "results.json")
	b, _ := json.Marshal(results)
	if err := os.WriteFile(rf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", pyMerge, uri, fmt.Sprint(plan.ReadVersion), rf).CombinedOutput()
	if err != nil {
		t.Fatalf("pylance Merge of planar's files: %v\n%s", err, out)
	}
	t.Logf("pylance: %s", bytes.TrimSpace(out))
	wide := filepath.Join(dir, "wide.arrow")
	writeWideIPC(t, wide, start)
	pyDataset(t, py, "check", uri, wide, "3")
	d, err := lds.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want := dsWideBatch(0, start)
	defer want.Release()
	for c := range int(want.NumCols()) {
		if !array.Equal(got.Column(c), want.Column(c)) {
			t.Fatalf("planar reads column %s of pylance's Merge differently", want.ColumnName(c))
		}
	}
	// CommitBackfill of the same plan now finds pylance's version newer:
	// a conflict, nothing committed twice.
	if _, err := lds.CommitBackfill(ctx, plan, results); !errors.Is(err, lds.ErrConflict) {
		t.Fatalf("planar's commit after pylance's: %v, want ErrConflict", err)
	}
}
