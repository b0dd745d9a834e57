package dataset

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/reader"
)

// RecordReader streams one version's live rows in fragment order as record
// batches of at most a chosen number of rows (a batch does not span
// fragments; rows deleted from a fragment are left out of its batches), with
// a column projection: an arrow-go array.RecordReader. One fragment's data
// files are open at a time, each read through reader.RecordReader, so
// memory is about a batch and the pages it spans. It is not safe for
// concurrent use.
type RecordReader struct {
	refs    atomic.Int64
	ctx     context.Context
	d       *Dataset
	schema  *arrow.Schema
	proj    []topField
	plans   []*fragPlan
	first   int // the manifest index of plans[0]
	batch   int64
	frag    int // the next fragment to open
	of      *openFragment
	readers []*reader.RecordReader
	at      int64 // the fragment's next physical row
	cur     arrow.RecordBatch
	err     error
}

var _ array.RecordReader = (*RecordReader)(nil)

// NewRecordReader returns a reader of this version's live rows in batches of
// at most batchRows rows (DefaultScanBatchRows when batchRows <= 0), of the
// named top-level columns in the given order (every column when none is
// named). An unknown or repeated name is ErrInvalidOption. Every fragment is
// checked against the manifest first: a table that cannot be read is
// refused here (ErrUnsupported, naming the feature), before any row.
func (d *Dataset) NewRecordReader(ctx context.Context, batchRows int64, columns ...string) (*RecordReader, error) {
	schema, proj, err := d.projection(columns)
	if err != nil {
		return nil, err
	}
	plans, err := d.plan(proj)
	if err != nil {
		return nil, err
	}
	return d.newRecordReader(ctx, batchRows, schema, proj, plans, 0), nil
}

// FragmentReader returns a reader of the live rows of the fragment with the
// given id, as NewRecordReader reads them (the same batches, columns and
// checks): a backfill worker reads its fragment's input with it. An id not
// in this version is ErrNoFragment.
func (d *Dataset) FragmentReader(ctx context.Context, id uint64, batchRows int64, columns ...string) (*RecordReader, error) {
	i := slices.IndexFunc(d.mf.m.Fragments, func(f *tablepb.DataFragment) bool { return f.Id == id })
	if i < 0 {
		return nil, fmt.Errorf("dataset %s version %d has no fragment %d: %w", d.root, d.mf.m.Version, id, ErrNoFragment)
	}
	schema, proj, err := d.projection(columns)
	if err != nil {
		return nil, err
	}
	p, err := planFragment(d.mf.m.Fragments[i], proj)
	if err != nil {
		return nil, fmt.Errorf("dataset %s version %d: %w", d.root, d.mf.m.Version, err)
	}
	return d.newRecordReader(ctx, batchRows, schema, proj, []*fragPlan{p}, i), nil
}

// projection returns the schema and fields of the named top-level columns
// (all when none is named).
func (d *Dataset) projection(columns []string) (*arrow.Schema, []topField, error) {
	if len(columns) == 0 {
		return d.schema, d.tops, nil
	}
	fields := make([]arrow.Field, 0, len(columns))
	proj := make([]topField, 0, len(columns))
	for i, name := range columns {
		k := d.schema.FieldIndices(name)
		if len(k) != 1 || slices.Contains(columns[:i], name) {
			return nil, nil, fmt.Errorf("column %q: not a top-level column of the dataset, or named twice: %w", name, ErrInvalidOption)
		}
		fields = append(fields, d.schema.Field(k[0]))
		proj = append(proj, d.tops[k[0]])
	}
	md := d.schema.Metadata()
	return arrow.NewSchema(fields, &md), proj, nil
}

// newRecordReader reads plans, the plans of the manifest's fragments from
// index first on.
func (d *Dataset) newRecordReader(ctx context.Context, batchRows int64, schema *arrow.Schema, proj []topField, plans []*fragPlan, first int) *RecordReader {
	if batchRows <= 0 {
		batchRows = DefaultScanBatchRows
	}
	r := &RecordReader{ctx: ctx, d: d, schema: schema, proj: proj, plans: plans, first: first, batch: batchRows}
	r.refs.Store(1)
	return r
}

// Schema is the schema of the batches.
func (r *RecordReader) Schema() *arrow.Schema { return r.schema }

// Next reads the next batch; false at the end or on an error (see Err).
func (r *RecordReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for r.err == nil {
		if err := r.ctx.Err(); err != nil {
			r.fail(err)
			return false
		}
		if r.of == nil {
			if r.frag >= len(r.plans) {
				return false
			}
			if err := r.open(r.frag); err != nil {
				r.fail(fmt.Errorf("fragment %d: %w", r.d.mf.m.Fragments[r.first+r.frag].Id, err))
				return false
			}
			r.frag++
		}
		rec, ok, err := r.read()
		if err != nil {
			r.fail(fmt.Errorf("fragment %d: %w", r.d.mf.m.Fragments[r.first+r.frag-1].Id, err))
			return false
		}
		if !ok {
			r.closeFragment()
			continue
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		r.cur = rec
		return true
	}
	return false
}

// open opens fragment i's planned data files and a reader for each.
func (r *RecordReader) open(i int) error {
	of, err := r.plans[i].open(r.ctx, r.d.root, r.proj)
	if err != nil {
		return err
	}
	r.of, r.at = of, 0
	for k, f := range of.files {
		rr, err := f.NewRecordReader(reader.WithBatchRows(r.batch), reader.WithColumns(of.names[k]...))
		if err != nil {
			return err
		}
		r.readers = append(r.readers, rr)
	}
	return nil
}

// read joins the next batch of every open file's reader (with nulls for
// the columns no file holds) and drops the deleted rows; ok is false when
// the fragment is done.
func (r *RecordReader) read() (arrow.RecordBatch, bool, error) {
	rows := min(r.batch, r.of.rows-r.at)
	if rows <= 0 {
		return nil, false, nil
	}
	recs := make([]arrow.RecordBatch, 0, len(r.readers))
	for _, rr := range r.readers {
		if !rr.Next() {
			if err := rr.Err(); err != nil {
				return nil, false, err
			}
			return nil, false, fmt.Errorf("a data file ends at row %d of %d: %w", r.at, r.of.rows, ErrCorrupt)
		}
		recs = append(recs, rr.RecordBatch())
	}
	rec, err := r.of.join(r.schema, recs, rows)
	if err != nil {
		return nil, false, err
	}
	start := r.at
	r.at += rows
	mask := r.of.del.liveMask(memory.DefaultAllocator, start, rows)
	if mask == nil {
		return rec, true, nil
	}
	defer mask.Release()
	defer rec.Release()
	out, err := compute.FilterRecordBatch(r.ctx, rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, false, fmt.Errorf("dropping deleted rows: %w", err)
	}
	return out, true, nil
}

func (r *RecordReader) closeFragment() {
	for _, rr := range r.readers {
		rr.Release()
	}
	r.readers = nil
	if r.of != nil {
		_ = r.of.Close()
		r.of = nil
	}
}

func (r *RecordReader) fail(err error) {
	r.err = err
	r.closeFragment()
}

// RecordBatch is the current batch, valid until the next call to Next or
// Release (Retain it to keep it).
func (r *RecordReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch.
//
// Deprecated: use RecordBatch, as arrow-go does.
func (r *RecordReader) Record() arrow.RecordBatch { return r.cur }

// Err is the error that ended the batches, if any.
func (r *RecordReader) Err() error { return r.err }

// Retain adds a reference.
func (r *RecordReader) Retain() { r.refs.Add(1) }

// Release drops a reference; the last one closes the open data files.
func (r *RecordReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.closeFragment()
	}
}
