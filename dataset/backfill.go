package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/proto/txnpb"
)

// A backfill is AddColumns cut into pieces that can run on other machines:
// PlanBackfill reads the manifest and returns one task per fragment; each
// task's Write, anywhere, writes that fragment's new data file from the
// fragment's live rows of the new columns; CommitBackfill commits every
// task's result as one Merge. The plan, its tasks and the results marshal
// to JSON, so they travel between processes. AddColumns is these three
// calls over one ordered reader.

// BackfillPlan is the plan of adding columns to one version of a dataset.
type BackfillPlan struct {
	URI         string `json:"uri"`
	ReadVersion uint64 `json:"read_version"`
	// TransactionID is the Merge's transaction uuid: a CommitBackfill
	// retried after it succeeded finds its version by it.
	TransactionID string `json:"transaction_id"`
	// Storage and Fields are every task's (a dataset without fragments
	// has no task, and still gains the columns).
	Storage string         `json:"storage"`
	Fields  []byte         `json:"fields"`
	Tasks   []BackfillTask `json:"tasks"`
}

// BackfillTask is the work of one fragment: it carries all a worker needs.
type BackfillTask struct {
	URI          string `json:"uri"`
	ReadVersion  uint64 `json:"read_version"`
	FragmentID   uint64 `json:"fragment_id"`
	PhysicalRows uint64 `json:"physical_rows"`
	// LiveRows is how many rows the task's reader must yield: the
	// fragment's rows less its deleted ones, in scan order.
	LiveRows uint64 `json:"live_rows"`
	// Deletion is the fragment's deletion file (its deleted rows are
	// written as nulls), nil when it has none.
	Deletion *DeletionFile `json:"deletion,omitempty"`
	// Storage is the storage version of the new data file.
	Storage string `json:"storage"`
	// Fields are the new columns with their field ids, a serialized
	// lance.file.Schema.
	Fields []byte `json:"fields"`
}

// DeletionFile names a fragment's deletion file (Lance's DeletionFile).
type DeletionFile struct {
	Bitmap         bool   `json:"bitmap"` // a roaring bitmap; else an Arrow file
	ReadVersion    uint64 `json:"read_version"`
	ID             uint64 `json:"id"`
	NumDeletedRows uint64 `json:"num_deleted_rows"`
}

// BackfillResult is what a task wrote: the fragment's new data file.
type BackfillResult struct {
	FragmentID uint64   `json:"fragment_id"`
	File       DataFile `json:"file"`
}

// PlanBackfill plans adding the columns of schema to the latest version of
// the dataset at uri, with AddColumns's rules (a name already a column is
// ErrColumnExists; a non-nullable column on a table with deleted rows is
// ErrSchemaMismatch; field ids come after every id given out). Nothing is
// written. WithStorageVersion with WithMixedVersions picks another storage
// version for the new files.
func PlanBackfill(ctx context.Context, uri string, schema *arrow.Schema, opts ...Option) (*BackfillPlan, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	d, err := Open(ctx, uri, opts...)
	if err != nil {
		return nil, err
	}
	w, fields, err := addColumnsWriter(d, schema, o)
	if err != nil {
		return nil, fmt.Errorf("add columns to %s: %w", uri, err)
	}
	// Refuse, before anything is written, a table whose fragments planar
	// cannot read.
	if _, err := d.plan(d.tops); err != nil {
		return nil, fmt.Errorf("add columns to %s: %w", uri, err)
	}
	fb, err := proto.Marshal(&filepb.Schema{Fields: fields})
	if err != nil {
		return nil, err
	}
	p := &BackfillPlan{URI: uri, ReadVersion: d.Version(), TransactionID: uuidString(newUUID()), Storage: w.storage, Fields: fb}
	for i, f := range d.mf.m.Fragments {
		t := BackfillTask{
			URI: uri, ReadVersion: p.ReadVersion, FragmentID: f.Id, PhysicalRows: f.PhysicalRows,
			LiveRows: uint64(d.starts[i+1] - d.starts[i]), Storage: w.storage, Fields: fb,
		}
		if df := f.DeletionFile; df != nil {
			t.Deletion = &DeletionFile{Bitmap: df.FileType == tablepb.DeletionFile_BITMAP, ReadVersion: df.ReadVersion, ID: df.Id, NumDeletedRows: df.NumDeletedRows}
		}
		p.Tasks = append(p.Tasks, t)
	}
	return p, nil
}

// schema returns the task's new columns and their leaf field ids.
func (t *BackfillTask) schema() (*arrow.Schema, []int32, error) {
	var ls filepb.Schema
	if err := proto.Unmarshal(t.Fields, &ls); err != nil {
		return nil, nil, fmt.Errorf("backfill task fields: %v: %w", err, ErrInvalidOption)
	}
	s, cols, err := format.SchemaFromLance(&ls)
	if err != nil {
		return nil, nil, fmt.Errorf("backfill task fields: %w", err)
	}
	ids := make([]int32, len(cols))
	for i, c := range cols {
		ids[i] = c.ID
	}
	return s, ids, nil
}

// fragment is the task's fragment as far as the writer needs it.
func (t *BackfillTask) fragment() *tablepb.DataFragment {
	f := &tablepb.DataFragment{Id: t.FragmentID, PhysicalRows: t.PhysicalRows}
	if d := t.Deletion; d != nil {
		f.DeletionFile = &tablepb.DeletionFile{ReadVersion: d.ReadVersion, Id: d.ID, NumDeletedRows: d.NumDeletedRows}
		if d.Bitmap {
			f.DeletionFile.FileType = tablepb.DeletionFile_BITMAP
		}
	}
	return f
}

// Schema is the schema of the new columns the task writes: the batches
// Write takes (WriteAt's follow its OffsetColumn).
func (t *BackfillTask) Schema() (*arrow.Schema, error) {
	s, _, err := t.schema()
	return s, err
}

// Read returns a reader of the task's fragment at the plan's read version:
// its live rows, deleted rows left out, in the order Write takes them, of
// the named existing columns (every column when none is named), in batches
// of at most batchRows rows (DefaultScanBatchRows when <= 0). A worker
// computes the new columns from it. The caller releases the reader.
func (t *BackfillTask) Read(ctx context.Context, batchRows int64, columns []string, opts ...Option) (*RecordReader, error) {
	d, err := OpenVersion(ctx, t.URI, t.ReadVersion, opts...)
	if err != nil {
		return nil, fmt.Errorf("fragment %d: %w", t.FragmentID, err)
	}
	return d.FragmentReader(ctx, t.FragmentID, batchRows, columns...)
}

// Write writes the task's fragment's new data file under the dataset's
// data/ folder from r, which must yield exactly LiveRows rows of the new
// columns (ErrRowCount otherwise), in the fragment's scan order; the
// fragment's deleted rows are stored as nulls. Memory is bounded by a batch
// and the pages in flight. Nothing is committed; on error the file is
// removed. Writer options (WithWriterOptions, storage options) apply.
func (t *BackfillTask) Write(ctx context.Context, r array.RecordReader, opts ...Option) (BackfillResult, error) {
	return t.writeFile(ctx, opts, func(s *arrow.Schema) error { return compatible(s, r.Schema()) },
		func(w *Writer, del deletions, live int64) error { return w.writeLive(ctx, del, live, r) })
}

// writeFile writes the task's new data file: check vets the new columns'
// schema, body writes the fragment's physical rows to the open file, given
// the fragment's deletions and live row count. On error the file is
// removed.
func (t *BackfillTask) writeFile(ctx context.Context, opts []Option, check func(*arrow.Schema) error, body func(w *Writer, del deletions, live int64) error) (BackfillResult, error) {
	o, root, err := locate(t.URI, opts)
	if err != nil {
		return BackfillResult{}, err
	}
	s, ids, err := t.schema()
	if err != nil {
		return BackfillResult{}, err
	}
	if err := check(s); err != nil {
		return BackfillResult{}, fmt.Errorf("fragment %d: %w", t.FragmentID, err)
	}
	w := &Writer{root: root, schema: s, opts: o, leafIDs: ids}
	if err := w.setStorage(t.Storage); err != nil {
		return BackfillResult{}, err
	}
	frag := t.fragment()
	err = func() error {
		del, err := loadDeletions(ctx, w.root, frag)
		if err != nil {
			return err
		}
		live := int64(t.LiveRows)
		if got := int64(frag.PhysicalRows) - int64(len(del)); got != live {
			return fmt.Errorf("%d live rows, the task says %d: %w", got, live, ErrCorrupt)
		}
		if err := w.openFile(); err != nil {
			return err
		}
		if err := body(w, del, live); err != nil {
			return err
		}
		// Rows past the last written are null (deleted, or not given).
		if n := int64(frag.PhysicalRows) - w.cur.rows; n > 0 {
			if err := w.writeNulls(n); err != nil {
				return err
			}
		}
		return w.closeFile()
	}()
	if err != nil {
		_ = w.Abort()
		return BackfillResult{}, fmt.Errorf("fragment %d: %w", t.FragmentID, err)
	}
	w.root.syncData()
	w.done = true
	return BackfillResult{FragmentID: t.FragmentID, File: fragmentFromProto(w.frags[0]).Files[0]}, nil
}

// writeLive writes the fragment's live rows from r (exactly live of them),
// its deleted rows as nulls.
func (w *Writer) writeLive(ctx context.Context, del deletions, live int64, r array.RecordReader) error {
	rows := live + int64(len(del))
	// nulls writes the deleted rows at the file's current position.
	nulls := func() error {
		if n := del.deletedRun(w.cur.rows, rows); n > 0 {
			return w.writeNulls(n)
		}
		return nil
	}
	if err := nulls(); err != nil {
		return err
	}
	var got int64
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := r.RecordBatch()
		if err := compatible(w.schema, rec.Schema()); err != nil {
			return err
		}
		got += rec.NumRows()
		if got > live {
			return fmt.Errorf("more than the fragment's %d live rows: %w", live, ErrRowCount)
		}
		for off := int64(0); off < rec.NumRows(); {
			// The live run at the current position.
			n := min(rec.NumRows()-off, del.nextDeleted(w.cur.rows, rows)-w.cur.rows)
			if err := w.writeRows(rec, off, off+n, 0); err != nil {
				return err
			}
			off += n
			if err := nulls(); err != nil {
				return err
			}
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if got != live {
		return fmt.Errorf("%d rows, the fragment has %d live rows: %w", got, live, ErrRowCount)
	}
	return nil
}

// writeRows writes rows [i, j) of rec, its columns from skip on, to the
// current file under the writer's schema.
func (w *Writer) writeRows(rec arrow.RecordBatch, i, j int64, skip int) error {
	part := rec.NewSlice(i, j)
	if skip > 0 {
		fields := part.Schema().Fields()[skip:]
		p2 := array.NewRecordBatch(arrow.NewSchema(fields, nil), part.Columns()[skip:], j-i)
		part.Release()
		part = p2
	}
	p2, err := conformBatch(w.schema, part)
	part.Release()
	if err != nil {
		return err
	}
	part = p2
	err = w.cur.w.WriteBatch(part)
	part.Release()
	if err != nil {
		return fmt.Errorf("data file %s: %w", w.cur.name, err)
	}
	w.cur.rows += j - i
	return nil
}

// CommitBackfill commits the results of every task of plan as one Merge
// (Lance's add_columns commit): each fragment keeps its id and gains its
// new data file; the schema gains the new columns. It refuses a partial or
// repeated set of results (ErrInvalidOption) and results whose files do
// not match their tasks (ErrSchemaMismatch, ErrCorrupt). Any version
// committed after the plan's read version makes it ErrConflict, as a Merge
// replaces every fragment; but a retry of a CommitBackfill that already
// succeeded returns the version it made.
func CommitBackfill(ctx context.Context, plan *BackfillPlan, results []BackfillResult, opts ...Option) (*Dataset, error) {
	if plan == nil {
		return nil, fmt.Errorf("commit backfill: no plan: %w", ErrInvalidOption)
	}
	o, root, err := locate(plan.URI, opts)
	if err != nil {
		return nil, err
	}
	txnName := transactionFileName(plan.ReadVersion, plan.TransactionID)
	if d, err := committedAs(ctx, root, plan.ReadVersion, txnName); err != nil || d != nil {
		return d, err
	}
	d, err := openVersion(ctx, root, plan.ReadVersion)
	if err != nil {
		return nil, err
	}
	prev := d.mf.m
	if len(plan.Tasks) != len(prev.Fragments) {
		return nil, fmt.Errorf("commit backfill: %d tasks for %d fragments: %w", len(plan.Tasks), len(prev.Fragments), ErrInvalidOption)
	}
	byFrag := make(map[uint64]*BackfillResult, len(results))
	for i := range results {
		r := &results[i]
		if byFrag[r.FragmentID] != nil {
			return nil, fmt.Errorf("commit backfill: fragment %d has two results: %w", r.FragmentID, ErrInvalidOption)
		}
		byFrag[r.FragmentID] = r
	}
	// Every task carries the plan's new fields and storage version.
	var ls filepb.Schema
	if err := proto.Unmarshal(plan.Fields, &ls); err != nil {
		return nil, fmt.Errorf("commit backfill: fields: %v: %w", err, ErrInvalidOption)
	}
	fields := ls.Fields
	_, ids, err := (&BackfillTask{Fields: plan.Fields}).schema()
	if err != nil {
		return nil, err
	}
	w := &Writer{root: root, opts: o}
	if err := w.setStorage(plan.Storage); err != nil {
		return nil, err
	}
	w.mixed = plan.Storage != d.storage
	frags := make([]*tablepb.DataFragment, len(prev.Fragments))
	for i, f := range prev.Fragments {
		t := &plan.Tasks[i]
		switch {
		case t.FragmentID != f.Id:
			return nil, fmt.Errorf("commit backfill: task %d is fragment %d, the version's is %d: %w", i, t.FragmentID, f.Id, ErrInvalidOption)
		case !bytes.Equal(t.Fields, plan.Fields) || t.Storage != plan.Storage:
			return nil, fmt.Errorf("commit backfill: task %d has other fields or storage than its plan: %w", i, ErrInvalidOption)
		}
		r := byFrag[f.Id]
		if r == nil {
			return nil, fmt.Errorf("commit backfill: no result for fragment %d (%d of %d results): %w", f.Id, len(results), len(plan.Tasks), ErrInvalidOption)
		}
		df := r.File
		switch {
		case !slices.Equal(df.Fields, ids):
			return nil, fmt.Errorf("commit backfill: fragment %d: file %s holds fields %v, want %v: %w", f.Id, df.Path, df.Fields, ids, ErrSchemaMismatch)
		case fmt.Sprintf("%d.%d", df.FileMajorVersion, df.FileMinorVersion) != t.Storage:
			return nil, fmt.Errorf("commit backfill: fragment %d: file %s is %d.%d, want %s: %w", f.Id, df.Path, df.FileMajorVersion, df.FileMinorVersion, t.Storage, ErrVersionMismatch)
		case len(df.ColumnIndices) != len(df.Fields):
			return nil, fmt.Errorf("commit backfill: fragment %d: file %s: %w", f.Id, df.Path, ErrCorrupt)
		}
		nf := proto.Clone(f).(*tablepb.DataFragment)
		nf.Files = append(nf.Files, &tablepb.DataFile{
			Path: df.Path, Fields: slices.Clone(df.Fields), ColumnIndices: slices.Clone(df.ColumnIndices),
			FileMajorVersion: df.FileMajorVersion, FileMinorVersion: df.FileMinorVersion, FileSizeBytes: df.FileSizeBytes,
		})
		frags[i] = nf
	}
	if len(results) != len(plan.Tasks) {
		return nil, fmt.Errorf("commit backfill: %d results for %d tasks: %w", len(results), len(plan.Tasks), ErrInvalidOption)
	}
	if err := checkNewFiles(ctx, root, frags); err != nil {
		return nil, err
	}
	allFields := append(append([]*filepb.Field(nil), prev.Fields...), fields...)
	preserves := true
	for _, f := range fields {
		preserves = preserves && f.Nullable
	}
	txn := &txnpb.Transaction{
		ReadVersion: prev.Version,
		Uuid:        plan.TransactionID,
		Operation: &txnpb.Transaction_Merge_{Merge: &txnpb.Transaction_Merge{
			Fragments: frags, Schema: allFields, SchemaMetadata: prev.SchemaMetadata,
			PreservesNullability: preserves,
		}},
	}
	spec := commitSpec{root: root, txn: txn, maxRetries: o.maxRetries, keepIndex: true,
		build: func(pm *tablepb.Manifest) (*tablepb.Manifest, error) {
			m := proto.Clone(pm).(*tablepb.Manifest)
			w.markMixed(m)
			m.Fields = allFields
			m.Fragments = make([]*tablepb.DataFragment, len(frags))
			for i, f := range frags {
				nf := proto.Clone(f).(*tablepb.DataFragment)
				// Stable row ids: every row keeps its id; the rows'
				// last-updated version moves to this commit, as Lance's
				// Merge records a fragment whose files changed.
				if stableRowIDs(pm) {
					if err := stampMergedFragment(pm.Fragments[i], nf, pm.Version+1); err != nil {
						return nil, err
					}
				}
				m.Fragments[i] = nf
			}
			return m, nil
		}}
	spec.txnMayExist = true // the plan's own uuid: written by an earlier try
	mf, err := commit(ctx, spec, d.mf)
	if errors.Is(err, ErrConflict) {
		// A commit of this very plan may have landed concurrently.
		if d, cerr := committedAs(ctx, root, plan.ReadVersion, txnName); cerr != nil || d != nil {
			return d, cerr
		}
	}
	if err != nil {
		return nil, err
	}
	return newDataset(ctx, root, mf)
}

// checkNewFiles checks that the last data file of every fragment exists
// with its recorded size and row count, 16 at a time (an object store
// answers each in a round trip or two; 10^5 fragments one by one would take
// most of an hour).
func checkNewFiles(ctx context.Context, root *location, frags []*tablepb.DataFragment) error {
	errs := make([]error, len(frags))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(16, len(frags)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(frags) || ctx.Err() != nil {
					return
				}
				f := frags[i]
				df := f.Files[len(f.Files)-1]
				if err := checkDataFile(root, df.Path, df.FileSizeBytes, f.PhysicalRows); err != nil {
					errs[i] = fmt.Errorf("commit backfill: fragment %d: data file %s: %w", f.Id, df.Path, err)
					next.Store(int64(len(frags))) // stop the others
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // the first, in fragment order
		}
	}
	return ctx.Err()
}

// committedAs returns the version after readVersion whose transaction file
// is txnName, nil when none is.
func committedAs(ctx context.Context, root *location, readVersion uint64, txnName string) (*Dataset, error) {
	vs, err := listVersions(ctx, root)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		if v <= readVersion {
			continue
		}
		mf, err := readManifestVersion(ctx, root, v)
		if err != nil {
			return nil, err
		}
		if mf.m.TransactionFile == txnName {
			return newDataset(ctx, root, mf)
		}
	}
	return nil, nil
}

// AbortBackfill removes the data files of results that will not be
// committed; missing files are not an error. It removes nothing, and says
// so (ErrInvalidOption), when the plan was committed after all: its files
// are then the data of a version.
func AbortBackfill(ctx context.Context, plan *BackfillPlan, results []BackfillResult, opts ...Option) error {
	_, root, err := locate(plan.URI, opts)
	if err != nil {
		return err
	}
	d, err := committedAs(ctx, root, plan.ReadVersion, transactionFileName(plan.ReadVersion, plan.TransactionID))
	if err != nil {
		return fmt.Errorf("abort backfill: %w", err)
	}
	if d != nil {
		return fmt.Errorf("abort backfill: the plan was committed as version %d; nothing removed: %w", d.Version(), ErrInvalidOption)
	}
	var first error
	for _, r := range results {
		if err := root.st.Delete(ctx, dataKey(r.File.Path)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// rows is the live rows of the plan's version.
func (p *BackfillPlan) rows() uint64 {
	var n uint64
	for _, t := range p.Tasks {
		n += t.LiveRows
	}
	return n
}
