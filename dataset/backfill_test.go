package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// backfillTable makes a dataset of rows rows in fragments of perFile rows.
func backfillTable(t *testing.T, rows, perFile int64) string {
	t.Helper()
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "t.lance")
	w, err := Create(ctx, uri, testSchema, WithMaxRowsPerFile(perFile))
	if err != nil {
		t.Fatal(err)
	}
	rec := testBatch(0, rows)
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return uri
}

// TestBackfillTasksAnywhere: a plan travels as JSON; its tasks are written
// out of order and concurrently, each from its own reader of its
// fragment's rows; one commit makes them one Merge, which reads back as
// the new columns of every row; a retried commit returns the same version.
func TestBackfillTasksAnywhere(t *testing.T) {
	ctx := context.Background()
	uri := backfillTable(t, 1000, 300)
	p, err := PlanBackfill(ctx, uri, addSchema)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var plan BackfillPlan
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Tasks) != 4 || plan.ReadVersion != 1 {
		t.Fatalf("plan %s", b)
	}
	results := make([]BackfillResult, len(plan.Tasks))
	var wg sync.WaitGroup
	errs := make([]error, len(plan.Tasks))
	for i := len(plan.Tasks) - 1; i >= 0; i-- {
		// Each worker gets its task as JSON, as another process would.
		tb, _ := json.Marshal(plan.Tasks[i])
		var task BackfillTask
		if err := json.Unmarshal(tb, &task); err != nil {
			t.Fatal(err)
		}
		start := int64(0)
		for _, x := range plan.Tasks[:i] {
			start += int64(x.LiveRows)
		}
		wg.Add(1)
		go func(i int, start int64) {
			defer wg.Done()
			r := addReader(start+int64(task.LiveRows), 70)
			defer r.Release()
			res, err := task.Write(ctx, skipRows(r, start))
			results[i], errs[i] = res, err
		}(i, start)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rb, _ := json.Marshal(results)
	var back []BackfillResult
	if err := json.Unmarshal(rb, &back); err != nil {
		t.Fatal(err)
	}
	// Partial and repeated sets are refused, and commit nothing.
	if _, err := CommitBackfill(ctx, &plan, back[:3]); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("3 of 4 results: %v", err)
	}
	if _, err := CommitBackfill(ctx, &plan, append(back[:3:3], back[0])); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("a fragment twice: %v", err)
	}
	d, err := CommitBackfill(ctx, &plan, back)
	if err != nil {
		t.Fatal(err)
	}
	again, err := CommitBackfill(ctx, &plan, back)
	if err != nil || again.Version() != d.Version() || d.Version() != 2 {
		t.Fatalf("retried commit: %v, version %d, first %d", err, again.Version(), d.Version())
	}
	if vs, _ := d.Versions(); len(vs) != 2 {
		t.Fatalf("%d versions after a retried commit", len(vs))
	}
	got, err := d.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want := addBatch(0, 1000)
	defer want.Release()
	for c := range 2 {
		if !array.Equal(got.Column(5+c), want.Column(c)) {
			t.Errorf("column %s differs", want.ColumnName(c))
		}
	}
}

// skipRows returns r without its first n rows.
func skipRows(r array.RecordReader, n int64) array.RecordReader {
	s := &rowSplitter{src: r}
	drop := s.next(n)
	for drop.Next() {
	}
	return s.next(1 << 62)
}

// TestBackfillRefusals: a task fed the wrong number of rows leaves no
// file; a commit after another version landed is ErrConflict.
func TestBackfillRefusals(t *testing.T) {
	ctx := context.Background()
	uri := backfillTable(t, 600, 300)
	plan, err := PlanBackfill(ctx, uri, addSchema)
	if err != nil {
		t.Fatal(err)
	}
	r := addReader(299, 100)
	if _, err := plan.Tasks[0].Write(ctx, r); !errors.Is(err, ErrRowCount) {
		t.Fatalf("299 rows for 300: %v", err)
	}
	r.Release()
	r = addReader(301, 100)
	if _, err := plan.Tasks[0].Write(ctx, r); !errors.Is(err, ErrRowCount) {
		t.Fatalf("301 rows for 300: %v", err)
	}
	r.Release()
	if n := countDataFiles(t, uri); n != 2 {
		t.Fatalf("%d data files after refused tasks, want the table's 2", n)
	}
	var results []BackfillResult
	for i, task := range plan.Tasks {
		r := addReader(int64(i+1)*300, 100)
		res, err := task.Write(ctx, skipRows(r, int64(i)*300))
		r.Release()
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	rec := testBatch(600, 10)
	defer rec.Release()
	appendRows(t, uri, rec)
	if _, err := CommitBackfill(ctx, plan, results); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit over a newer version: %v", err)
	}
	if err := AbortBackfill(ctx, plan, results); err != nil {
		t.Fatal(err)
	}
	if n := countDataFiles(t, uri); n != 3 {
		t.Fatalf("%d data files after the abort, want 3", n)
	}
	if _, err := PlanBackfill(ctx, uri, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)); !errors.Is(err, ErrColumnExists) {
		t.Fatalf("existing column: %v", err)
	}
}

func countDataFiles(t *testing.T, uri string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(uri, "data", "*.lance"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// TestAbortAfterCommitKeepsData: aborting a plan that was committed removes
// nothing (its files are a version's data).
func TestAbortAfterCommitKeepsData(t *testing.T) {
	ctx := context.Background()
	uri := backfillTable(t, 300, 300)
	plan, err := PlanBackfill(ctx, uri, addSchema)
	if err != nil {
		t.Fatal(err)
	}
	r := addReader(300, 100)
	res, err := plan.Tasks[0].Write(ctx, r)
	r.Release()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CommitBackfill(ctx, plan, []BackfillResult{res}); err != nil {
		t.Fatal(err)
	}
	if err := AbortBackfill(ctx, plan, []BackfillResult{res}); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("abort after commit: %v", err)
	}
	d, err := Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got.Release()
}

// TestBackfillEmptyTable: a dataset without fragments gains the columns
// (a plan with no task still carries them).
func TestBackfillEmptyTable(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "t.lance")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := addReader(0, 10)
	defer r.Release()
	d, err := AddColumns(ctx, uri, r)
	if err != nil {
		t.Fatal(err)
	}
	if d.Schema().NumFields() != testSchema.NumFields()+addSchema.NumFields() || d.CountRows() != 0 {
		t.Fatalf("schema %s, %d rows", d.Schema(), d.CountRows())
	}
}

// TestBackfillTaskRead: each worker reads its own fragment's column through
// its task and writes a column computed from it; the commit reads back as
// that function of every row. A fragment the version lacks is ErrNoFragment.
func TestBackfillTaskRead(t *testing.T) {
	ctx := context.Background()
	uri := backfillTable(t, 1000, 300)
	twice := arrow.NewSchema([]arrow.Field{{Name: "twice", Type: arrow.PrimitiveTypes.Int64}}, nil)
	plan, err := PlanBackfill(ctx, uri, twice)
	if err != nil {
		t.Fatal(err)
	}
	var results []BackfillResult
	for _, task := range plan.Tasks {
		in, err := task.Read(ctx, 64, []string{"id"})
		if err != nil {
			t.Fatal(err)
		}
		var out []arrow.RecordBatch
		for in.Next() {
			ids := in.RecordBatch().Column(0).(*array.Int64)
			b := array.NewInt64Builder(memory.DefaultAllocator)
			for _, v := range ids.Int64Values() {
				b.Append(2 * v)
			}
			a := b.NewArray()
			out = append(out, array.NewRecordBatch(twice, []arrow.Array{a}, int64(a.Len())))
			a.Release()
			b.Release()
		}
		if err := in.Err(); err != nil {
			t.Fatal(err)
		}
		in.Release()
		r, err := array.NewRecordReader(twice, out)
		if err != nil {
			t.Fatal(err)
		}
		res, err := task.Write(ctx, r)
		r.Release()
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	d, err := CommitBackfill(ctx, plan, results)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	ids, tw := got.Column(0).(*array.Int64), got.Column(5).(*array.Int64)
	for i := 0; i < ids.Len(); i++ {
		if tw.Value(i) != 2*ids.Value(i) {
			t.Fatalf("row %d: twice %d, id %d", i, tw.Value(i), ids.Value(i))
		}
	}
	bad := plan.Tasks[0]
	bad.FragmentID = 99
	if _, err := bad.Read(ctx, 0, nil); !errors.Is(err, ErrNoFragment) {
		t.Fatalf("fragment 99: %v, want ErrNoFragment", err)
	}
}
