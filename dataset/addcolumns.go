package dataset

import (
	"context"
	"fmt"

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
	var results []BackfillResult
	fail := func(err error) (*Dataset, error) {
		_ = AbortBackfill(context.Background(), plan, results, opts...)
		return nil, fmt.Errorf("add columns to %s: %w", uri, err)
	}
	src := &rowSplitter{src: r}
	defer src.release()
	for i := range plan.Tasks {
		t := &plan.Tasks[i]
		res, err := t.Write(ctx, src.next(int64(t.LiveRows)), opts...)
		if err != nil {
			return fail(err)
		}
		results = append(results, res)
	}
	if src.more() {
		return fail(fmt.Errorf("more than the dataset's %d rows: %w", plan.rows(), ErrRowCount))
	}
	if err := src.err(); err != nil {
		return fail(err)
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

// writeNulls writes n rows of nulls to the current data file.
func (w *Writer) writeNulls(n int64) error {
	for n > 0 {
		k := min(n, nullBatchRows)
		cols := make([]arrow.Array, w.schema.NumFields())
		for i, f := range w.schema.Fields() {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(k))
		}
		rec := array.NewRecordBatch(w.schema, cols, k)
		for _, c := range cols {
			c.Release()
		}
		err := w.cur.w.WriteBatch(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("data file %s: deleted rows: %w", w.cur.name, err)
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
