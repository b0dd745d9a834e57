package dataset

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/proto/tablepb"
)

// AddColumns adds the columns of r's schema to every row of the latest
// version of the dataset at uri (the backfill of pylance's
// LanceDataset.add_columns). r yields the new columns' values for every live
// row, in scan order (the order of Scan and ReadAll, deleted rows left
// out): its batches may have any size, and are split across fragments by
// their live row counts. Each fragment gets one new data file holding only
// the new fields, one row per physical row: the rows deleted from the
// fragment are stored as nulls (they are never read), so the fragment's
// deletion file stays valid as it is. Field ids continue after the largest
// id the schema or any data file holds (a dropped column's id stays taken,
// its data still being in the old files); the existing data files are
// neither read nor rewritten. The new version is committed as Lance's
// Merge, the operation pylance commits for add_columns; on a table with
// stable row ids every row keeps its id.
//
// A new column whose name is already a column is ErrColumnExists; r yielding
// more or fewer rows than the dataset has is ErrRowCount; a non-nullable new
// column on a table with deleted rows is ErrSchemaMismatch (the deleted rows
// are stored as nulls). Any commit landing between the read and the commit
// is ErrConflict (a Merge replaces every fragment). On error nothing is
// committed and the new data files are removed. Writer options
// (WithWriterOptions and the like) apply; file size limits do not, one file
// per fragment being the layout.
func AddColumns(ctx context.Context, uri string, r array.RecordReader, opts ...Option) (*Dataset, error) {
	plan, err := PlanBackfill(ctx, uri, r.Schema(), opts...)
	if err != nil {
		return nil, err
	}
	results, err := writeTasks(ctx, plan, r, opts)
	if err != nil {
		_ = AbortBackfill(context.Background(), plan, results, opts...)
		return nil, fmt.Errorf("add columns to %s: %w", uri, err)
	}
	d, err := CommitBackfill(ctx, plan, results, opts...)
	if err != nil {
		_ = AbortBackfill(context.Background(), plan, results, opts...)
		return nil, err
	}
	return d, nil
}

// addColumnsWriter checks the new schema against the dataset and returns a
// Writer for the new data files with the new fields' Lance ids.
func addColumnsWriter(d *Dataset, s *arrow.Schema, o options) (*Writer, []*filepb.Field, error) {
	if s == nil || s.NumFields() == 0 {
		return nil, nil, fmt.Errorf("no new columns: %w", ErrInvalidOption)
	}
	for _, f := range s.Fields() {
		if d.schema.HasField(f.Name) {
			return nil, nil, fmt.Errorf("column %q: %w", f.Name, ErrColumnExists)
		}
	}
	m := d.mf.m
	if err := checkFeatureFlags(m); err != nil {
		return nil, nil, err
	}
	for _, f := range m.Fragments {
		if f.DeletionFile == nil {
			continue
		}
		for _, nf := range s.Fields() {
			if !nf.Nullable {
				return nil, nil, fmt.Errorf("column %q is not nullable, but fragment %d has deleted rows, which are stored as nulls: %w", nf.Name, f.Id, ErrSchemaMismatch)
			}
		}
	}
	ls, cols, err := format.SchemaToLance(s)
	if err != nil {
		return nil, nil, err
	}
	w := &Writer{root: d.root, schema: s, base: d.mf, opts: o}
	w.leafIDs = shiftFieldIDs(ls.Fields, cols, maxFieldID(m)+1)
	if o.storageVersion != "" && o.storageVersion != d.storage && !o.mixedVersions {
		return nil, nil, fmt.Errorf("data storage version %s, asked for %s (WithMixedVersions mixes them): %w", d.storage, o.storageVersion, ErrVersionMismatch)
	}
	if err := w.setDatasetStorage(d.storage, o); err != nil {
		return nil, nil, err
	}
	return w, ls.Fields, nil
}

// nullBatchRows bounds the rows of one batch of nulls written for deleted
// rows (a null 768-d vector still takes 3 KiB in Arrow).
const nullBatchRows = 16 << 10

// writeNulls writes n rows of nulls to the current data file, as slices
// of one batch of nulls made once per writer (Arrow stores a null 768-d
// vector as 3 KiB of zeros: making it per run would cost every null row).
func (w *Writer) writeNulls(n int64) error {
	for n > 0 {
		k := min(n, nullBatchRows)
		if w.nulls == nil || w.nulls.NumRows() < k {
			if w.nulls != nil {
				w.nulls.Release()
			}
			rows := min(nullBatchRows, max(k, 1024))
			cols := make([]arrow.Array, w.schema.NumFields())
			for i, f := range w.schema.Fields() {
				cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(rows))
			}
			w.nulls = array.NewRecordBatch(w.schema, cols, rows)
			for _, c := range cols {
				c.Release()
			}
		}
		rec := w.nulls.NewSlice(0, k)
		err := w.cur.w.WriteBatch(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("data file %s: null rows: %w", w.cur.name, err)
		}
		w.cur.rows += k
		n -= k
	}
	return nil
}

// maxFieldID is the largest field id the manifest has given out: in its
// schema, in any data file of any fragment (a dropped column's data stays in
// its files, so its id may not be reused), and Lance's persistent high-water
// mark (max_allocated_field_id) when the table keeps one.
func maxFieldID(m *tablepb.Manifest) int32 {
	top := int32(-1)
	for _, f := range m.Fields {
		top = max(top, f.Id)
	}
	for _, f := range m.Fragments {
		for _, df := range f.Files {
			for _, id := range df.Fields {
				top = max(top, id)
			}
		}
	}
	if m.MaxAllocatedFieldId != nil {
		top = max(top, *m.MaxAllocatedFieldId)
	}
	return top
}

// shiftFieldIDs numbers fields (as SchemaToLance numbered them, from 0) from
// base instead, and returns the leaves' new ids in column order.
func shiftFieldIDs(fields []*filepb.Field, cols []format.Column, base int32) []int32 {
	for _, f := range fields {
		f.Id += base
		if f.ParentId >= 0 {
			f.ParentId += base
		}
	}
	leaves := make([]int32, len(cols))
	for i, c := range cols {
		leaves[i] = c.ID + base
	}
	return leaves
}

// writeTasks writes every task of plan from r, split by the tasks' live row
// counts: r is read once, in order, by one goroutine that feeds each
// fragment's share through a pipeReader to that fragment's writer, while up
// to GOMAXPROCS fragments' files are written side by side (runTasks).
func writeTasks(ctx context.Context, plan *BackfillPlan, r array.RecordReader, opts []Option) ([]BackfillResult, error) {
	pipes := make([]*pipeReader, len(plan.Tasks))
	for i := range pipes {
		pipes[i] = newPipeReader(r.Schema())
	}
	fed := make(chan error, 1)
	go func() { fed <- feedTasks(plan, r, pipes) }()
	results, err := runTasks(ctx, plan, func(ctx context.Context, i int) (BackfillResult, error) {
		p := pipes[i]
		defer p.hangUp()
		return plan.Tasks[i].Write(ctx, p, opts...)
	})
	for _, p := range pipes {
		p.hangUp() // unblocks the feeder if a task stopped or never ran
		p.Release()
	}
	if ferr := <-fed; err == nil {
		err = ferr
	}
	return results, err
}

// feedTasks reads r in order and hands each task's live rows to its pipe;
// every pipe is finished when it returns. It returns the source's error, or
// ErrRowCount when r holds more rows than the plan.
func feedTasks(plan *BackfillPlan, r array.RecordReader, pipes []*pipeReader) error {
	src := &rowSplitter{src: r}
	defer src.release()
	next := 0
	defer func() {
		for _, p := range pipes[next:] {
			p.finish(nil)
		}
	}()
	for i, t := range plan.Tasks {
		part := src.next(int64(t.LiveRows))
		p := pipes[i]
		for part.Next() {
			rec := part.RecordBatch()
			rec.Retain()
			if !p.send(rec) {
				part.Release()
				p.finish(nil)
				next = i + 1
				return nil // the task stopped, and reports why
			}
		}
		err := part.Err()
		part.Release()
		p.finish(err)
		next = i + 1
		if err != nil {
			return err
		}
	}
	if src.more() {
		return fmt.Errorf("more than the dataset's %d rows: %w", plan.rows(), ErrRowCount)
	}
	return src.err()
}

// runTasks runs do for every task of plan, up to GOMAXPROCS side by side,
// and returns the results of the tasks done (in task order) and the first
// error in task order; a failure cancels the tasks not yet done.
func runTasks(ctx context.Context, plan *BackfillPlan, do func(ctx context.Context, task int) (BackfillResult, error)) ([]BackfillResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]BackfillResult, len(plan.Tasks))
	errs := make([]error, len(plan.Tasks))
	slots := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i := range plan.Tasks {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			results[i], errs[i] = do(ctx, i)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	var done []BackfillResult
	var first error
	for i, err := range errs {
		if err != nil {
			if first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled) {
				first = err
			}
			continue
		}
		if results[i].File.Path != "" {
			done = append(done, results[i])
		}
	}
	if first == nil && len(done) != len(plan.Tasks) {
		first = ctx.Err()
	}
	return done, first
}
