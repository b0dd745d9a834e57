package dataset

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/reader"
)

// RecordReader streams one version's rows in fragment order as record
// batches of at most a chosen number of rows (a batch does not span
// fragments), with a column projection: an arrow-go array.RecordReader. One
// fragment's data files are open at a time, each read through
// reader.RecordReader, so memory is about a batch and the pages it spans.
// It is not safe for concurrent use.
type RecordReader struct {
	refs    atomic.Int64
	ctx     context.Context
	d       *Dataset
	schema  *arrow.Schema
	names   []string
	batch   int64
	frag    int // the next fragment to open
	ff      *fragmentFiles
	readers []*reader.RecordReader
	place   [][]int // per reader: the batch positions of its columns
	cur     arrow.RecordBatch
	err     error
}

var _ array.RecordReader = (*RecordReader)(nil)

// NewRecordReader returns a reader of this version's rows in batches of at
// most batchRows rows (DefaultScanBatchRows when batchRows <= 0), of the
// named top-level columns in the given order (every column when none is
// named). An unknown or repeated name is ErrInvalidOption.
func (d *Dataset) NewRecordReader(ctx context.Context, batchRows int64, columns ...string) (*RecordReader, error) {
	if batchRows <= 0 {
		batchRows = DefaultScanBatchRows
	}
	schema := d.schema
	if len(columns) > 0 {
		fields := make([]arrow.Field, 0, len(columns))
		for i, name := range columns {
			k := d.schema.FieldIndices(name)
			if len(k) != 1 || slices.Contains(columns[:i], name) {
				return nil, fmt.Errorf("column %q: not a top-level column of the dataset, or named twice: %w", name, ErrInvalidOption)
			}
			fields = append(fields, d.schema.Field(k[0]))
		}
		md := d.schema.Metadata()
		schema = arrow.NewSchema(fields, &md)
	}
	names := make([]string, schema.NumFields())
	for i := range names {
		names[i] = schema.Field(i).Name
	}
	r := &RecordReader{ctx: ctx, d: d, schema: schema, names: names, batch: batchRows}
	r.refs.Store(1)
	return r, nil
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
		if r.ff == nil {
			if r.frag >= len(r.d.mf.m.Fragments) {
				return false
			}
			if err := r.open(r.frag); err != nil {
				r.fail(fmt.Errorf("fragment %d: %w", r.d.mf.m.Fragments[r.frag].Id, err))
				return false
			}
			r.frag++
		}
		rec, ok, err := r.read()
		if err != nil {
			r.fail(fmt.Errorf("fragment %d: %w", r.d.mf.m.Fragments[r.frag-1].Id, err))
			return false
		}
		if ok {
			r.cur = rec
			return true
		}
		r.closeFragment()
	}
	return false
}

// open opens fragment i's data files and a reader for each file that holds
// a projected column (the first file always, for the row count).
func (r *RecordReader) open(i int) error {
	ff, err := r.d.openFragment(i)
	if err != nil {
		return err
	}
	r.ff = ff
	for k, f := range ff.files {
		var cols []string
		var place []int
		fs := f.Schema()
		for pos, name := range r.names {
			if len(fs.FieldIndices(name)) == 1 {
				cols = append(cols, name)
				place = append(place, pos)
			}
		}
		if len(cols) == 0 && k > 0 {
			continue
		}
		rr, err := f.NewRecordReader(reader.WithBatchRows(r.batch), reader.WithColumns(cols...))
		if err != nil {
			return err
		}
		r.readers = append(r.readers, rr)
		r.place = append(r.place, place)
	}
	return nil
}

// read joins the next batch of every open file's reader; ok is false when
// the fragment is done.
func (r *RecordReader) read() (arrow.RecordBatch, bool, error) {
	cols := make([]arrow.Array, len(r.names))
	rows := int64(-1)
	for k, rr := range r.readers {
		if !rr.Next() {
			if err := rr.Err(); err != nil {
				return nil, false, err
			}
			if k > 0 {
				return nil, false, fmt.Errorf("data files end at different rows: %w", ErrCorrupt)
			}
			return nil, false, nil
		}
		rec := rr.RecordBatch()
		if rows >= 0 && rec.NumRows() != rows {
			return nil, false, fmt.Errorf("data files read %d and %d rows: %w", rows, rec.NumRows(), ErrCorrupt)
		}
		rows = rec.NumRows()
		for j, pos := range r.place[k] {
			c := rec.Column(j)
			if !arrow.TypeEqual(c.DataType(), r.schema.Field(pos).Type) {
				return nil, false, fmt.Errorf("data file field %q is %s, dataset has %s: %w", r.names[pos], c.DataType(), r.schema.Field(pos).Type, ErrSchemaMismatch)
			}
			cols[pos] = c
		}
	}
	for pos, c := range cols {
		if c == nil {
			return nil, false, fmt.Errorf("column %q is in no data file: %w", r.names[pos], ErrCorrupt)
		}
	}
	return array.NewRecordBatch(r.schema, cols, rows), true, nil
}

func (r *RecordReader) closeFragment() {
	for _, rr := range r.readers {
		rr.Release()
	}
	r.readers, r.place = nil, nil
	if r.ff != nil {
		_ = r.ff.Close()
		r.ff = nil
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
