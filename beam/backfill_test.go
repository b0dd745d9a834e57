package planarbeam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/planarlance/planar/dataset"
)

const dim = 8

var (
	tableSchema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	embSchema = arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
)

// committed is the version the last pipeline's commit made (Prism runs the
// workers in this process).
var committed atomic.Int64

func noteVersion(v int64) { committed.Store(v) }

func init() {
	beam.RegisterFunction(noteVersion)
	RegisterCompute("embed", embed)
	RegisterCompute("embed-failing-once", embedFailingOnce)
	beam.RegisterFunction(toKV)
}

// vectorOf is the vector every test gives row id.
func vectorOf(id int64) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(id) + float32(j)/8
	}
	return v
}

// hasVector says which rows Compute gives a vector: every 97th id.
func hasVector(id int64) bool { return id%97 == 3 }

// embed is the Compute function of the tests: the new column from id.
func embed(in arrow.RecordBatch) (arrow.RecordBatch, error) {
	ids := in.Column(0).(*array.Int64)
	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, dim, arrow.PrimitiveTypes.Float32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	for _, id := range ids.Int64Values() {
		if !hasVector(id) {
			b.AppendNull()
			continue
		}
		b.Append(true)
		vb.AppendValues(vectorOf(id), nil)
	}
	a := b.NewArray()
	defer a.Release()
	return array.NewRecordBatch(embSchema, []arrow.Array{a}, int64(a.Len())), nil
}

// failOnce makes embedFailingOnce fail on the first batch it sees with an
// id of the third fragment, once.
var failOnce atomic.Bool

func embedFailingOnce(in arrow.RecordBatch) (arrow.RecordBatch, error) {
	if in.Column(0).(*array.Int64).Value(0) >= 2*fragRows && failOnce.CompareAndSwap(false, true) {
		return nil, errors.New("a worker failed mid-fragment")
	}
	return embed(in)
}

type given struct {
	ID  int64
	Vec []float32
}

func toKV(g given) (int64, []byte) { return g.ID, VectorBytes(g.Vec) }

const (
	rows     = 20000
	fragRows = 5000
)

// makeTable creates a planar 2.2 dataset of rows rows in fragments of
// fragRows, in a directory of its own ("t.lance"), and returns the URI.
func makeTable(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	// Not t.TempDir: when a pipeline fails, Prism returns while other
	// bundles may still be writing their fragments' files, and TempDir's
	// cleanup fails on a directory that is still filling.
	dir, err := os.MkdirTemp("", "planarbeam")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 50 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	uri := filepath.Join(dir, "t.lance")
	w, err := dataset.Create(ctx, uri, tableSchema, dataset.WithMaxRowsPerFile(fragRows))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, tableSchema)
	defer b.Release()
	for i := int64(0); i < rows; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("text %d", i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return uri
}

// run executes a pipeline on Prism in-process and returns the version its
// commit made.
func run(t *testing.T, build func(s beam.Scope) (beam.PCollection, error)) (int64, error) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	out, err := build(s)
	if err != nil {
		return 0, err
	}
	committed.Store(0)
	beam.ParDo0(s, noteVersion, out)
	if _, err := prism.Execute(context.Background(), p); err != nil {
		return 0, err
	}
	return committed.Load(), nil
}

// python is pylance 14's interpreter (interop/.venv); under CI=true it must
// be there.
func python(t *testing.T) string {
	t.Helper()
	py := os.Getenv("PLANAR_PYTHON")
	if py == "" {
		py, _ = filepath.Abs(filepath.Join("..", "interop", ".venv", "bin", "python"))
	}
	out, err := exec.Command(py, "-c", "import lance, lancedb; print(lance.__version__, lancedb.__version__)").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("pylance and LanceDB not available at %s (%v: %s); run `sh interop/setup.sh`", py, err, bytes.TrimSpace(out))
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: " + msg)
		}
		t.Skip("!!!!! SKIPPING: " + msg + " !!!!!")
	}
	return py
}

// checkClients has pylance and LanceDB read the committed version: every
// row's vector is want's (null where want has none), and a vector search
// finds a backfilled row.
func checkClients(t *testing.T, uri string, version int64, want map[int64][]float32) {
	t.Helper()
	py := python(t)
	vecs := map[string][]float32{}
	for id, v := range want {
		vecs[fmt.Sprint(id)] = v
	}
	b, _ := json.Marshal(map[string]any{"rows": rows, "vectors": vecs})
	ef := filepath.Join(t.TempDir(), "expect.json")
	if err := os.WriteFile(ef, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join("testdata", "check.py"), filepath.Dir(uri),
		strings.TrimSuffix(filepath.Base(uri), ".lance"), fmt.Sprint(version), ef).CombinedOutput()
	if err != nil {
		t.Fatalf("pylance/LanceDB: %v: %s", err, out)
	}
	t.Logf("clients: %s", bytes.TrimSpace(out))
}

// checkPlanar reads the dataset's latest version with planar.
func checkPlanar(t *testing.T, uri string, version int64, want map[int64][]float32) {
	t.Helper()
	d, err := dataset.Open(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	if int64(d.Version()) != version {
		t.Fatalf("latest version %d, the pipeline committed %d", d.Version(), version)
	}
	got, err := d.ReadAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	ids := got.Column(0).(*array.Int64)
	emb := got.Column(2).(*array.FixedSizeList)
	vals := emb.ListValues().(*array.Float32).Float32Values()
	n := 0
	for i := 0; i < ids.Len(); i++ {
		w, ok := want[ids.Value(i)]
		if !ok {
			if emb.IsValid(i) {
				t.Fatalf("id %d has a vector", ids.Value(i))
			}
			continue
		}
		n++
		for j := range dim {
			if vals[i*dim+j] != w[j] {
				t.Fatalf("id %d: %v, want %v", ids.Value(i), vals[i*dim:(i+1)*dim], w)
			}
		}
	}
	if n != len(want) {
		t.Fatalf("%d rows with a vector, want %d", n, len(want))
	}
}

func computed() map[int64][]float32 {
	want := map[int64][]float32{}
	for id := int64(0); id < rows; id++ {
		if hasVector(id) {
			want[id] = vectorOf(id)
		}
	}
	return want
}

// TestCompute: each fragment's vectors computed from its ids on Prism, one
// Merge; planar, pylance and LanceDB read every row back; running the
// same plan again returns the version the first run made.
func TestCompute(t *testing.T) {
	ctx := context.Background()
	uri := makeTable(t)
	plan, err := dataset.PlanBackfill(ctx, uri, embSchema)
	if err != nil {
		t.Fatal(err)
	}
	build := func(s beam.Scope) (beam.PCollection, error) {
		return Compute(s, plan, []string{"id"}, "embed", Options{BatchRows: 1000})
	}
	v, err := run(t, build)
	if err != nil {
		t.Fatal(err)
	}
	if v != 2 {
		t.Fatalf("committed version %d, want 2", v)
	}
	checkPlanar(t, uri, v, computed())
	checkClients(t, uri, v, computed())
	again, err := run(t, build)
	if err != nil || again != v {
		t.Fatalf("the same plan again: version %d, %v; want %d", again, err, v)
	}
}

// TestComputeRetry: a worker fails mid-fragment; the pipeline fails and
// commits nothing, leaving no partial file; run again, the same plan
// commits, and the data is right.
func TestComputeRetry(t *testing.T) {
	ctx := context.Background()
	uri := makeTable(t)
	plan, err := dataset.PlanBackfill(ctx, uri, embSchema)
	if err != nil {
		t.Fatal(err)
	}
	failOnce.Store(false)
	build := func(s beam.Scope) (beam.PCollection, error) {
		return Compute(s, plan, []string{"id"}, "embed-failing-once", Options{BatchRows: 1000})
	}
	if _, err := run(t, build); err == nil || !strings.Contains(err.Error(), "failed mid-fragment") {
		// Prism retries nothing: the job fails with the worker's error.
		t.Fatalf("first run: %v, want the worker's failure", err)
	}
	if d, err := dataset.Open(ctx, uri); err != nil || d.Version() != 1 {
		t.Fatalf("after the failure: %v, version %d", err, d.Version())
	}
	tmp, _ := filepath.Glob(filepath.Join(uri, "data", "*.tmp*"))
	if len(tmp) > 0 {
		t.Fatalf("partial files left: %v", tmp)
	}
	v, err := run(t, build)
	if err != nil {
		t.Fatal(err)
	}
	checkPlanar(t, uri, v, computed())
}

// TestComputeConflict: pylance appends, or compacts the fragments the
// tasks are for, between the plan and the commit; the Merge is refused
// (Lance's rules: a Merge conflicts with any commit after its read
// version) and pylance's version stays the latest.
func TestComputeConflict(t *testing.T) {
	ctx := context.Background()
	py := python(t)
	for _, c := range []struct {
		name, script string
		rows         int64
		frags        int
	}{
		{"append", `import sys, lance, pyarrow as pa
lance.write_dataset(pa.table({"id": pa.array([-1], pa.int64()), "text": ["appended"]}), sys.argv[1], mode="append")`, rows + 1, 5},
		{"compaction", `import sys, lance
print(lance.dataset(sys.argv[1]).optimize.compact_files())`, rows, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			uri := makeTable(t)
			plan, err := dataset.PlanBackfill(ctx, uri, embSchema)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(py, "-c", c.script, uri).CombinedOutput(); err != nil {
				t.Fatalf("pylance %s: %v: %s", c.name, err, out)
			}
			_, err = run(t, func(s beam.Scope) (beam.PCollection, error) {
				return Compute(s, plan, []string{"id"}, "embed", Options{})
			})
			if err == nil || !strings.Contains(err.Error(), dataset.ErrConflict.Error()) {
				t.Fatalf("commit over pylance's %s: %v, want a conflict", c.name, err)
			}
			d, err := dataset.Open(ctx, uri)
			if err != nil || d.CountRows() != c.rows || d.NumFragments() != c.frags || d.Schema().HasField("emb") {
				t.Fatalf("after the refused commit: %v, version %d, %d rows, %d fragments, schema %s", err, d.Version(), d.CountRows(), d.NumFragments(), d.Schema())
			}
		})
	}
}

// givenVectors is a PCollection of KV<id, vector> for ids.
func givenVectors(s beam.Scope, ids []int64) beam.PCollection {
	gs := make([]given, len(ids))
	for i, id := range ids {
		gs[i] = given{id, vectorOf(id)}
	}
	return beam.ParDo(s, toKV, beam.CreateList(s, gs))
}

// TestByKey: vectors given for a few ids (out of order, across fragment
// edges) land on those rows only; planar, pylance and LanceDB agree.
func TestByKey(t *testing.T) {
	ctx := context.Background()
	uri := makeTable(t)
	plan, err := dataset.PlanBackfill(ctx, uri, embSchema)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int64{19999, 0, 4999, 5000, 5001, 12345, 77, 15000}
	v, err := run(t, func(s beam.Scope) (beam.PCollection, error) {
		return ByKey(s, plan, "id", givenVectors(s, ids), Options{})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64][]float32{}
	for _, id := range ids {
		want[id] = vectorOf(id)
	}
	checkPlanar(t, uri, v, want)
	checkClients(t, uri, v, want)
}

// TestByKeyRefusals: a key given twice, or found in no row, fails the
// pipeline before the commit.
func TestByKeyRefusals(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		ids  []int64
		want error
	}{
		{"duplicate", []int64{4, 9, 4}, dataset.ErrDuplicateKey},
		{"unknown", []int64{4, rows + 5}, dataset.ErrUnknownKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			uri := makeTable(t)
			plan, err := dataset.PlanBackfill(ctx, uri, embSchema)
			if err != nil {
				t.Fatal(err)
			}
			_, err = run(t, func(s beam.Scope) (beam.PCollection, error) {
				return ByKey(s, plan, "id", givenVectors(s, c.ids), Options{})
			})
			if err == nil || !strings.Contains(err.Error(), c.want.Error()) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if d, err := dataset.Open(ctx, uri); err != nil || d.Version() != 1 {
				t.Fatalf("after the refusal: %v, version %d", err, d.Version())
			}
		})
	}
}

func TestMain(m *testing.M) {
	beam.Init()
	os.Exit(m.Run())
}
