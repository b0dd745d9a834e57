package reader

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/internal/par"
)

// ErrInvalidOption is wrapped by NewRecordReader for options it cannot
// honour (a column the file does not have, a batch size or row range out of
// bounds).
var ErrInvalidOption = errors.New("planar/reader: invalid option")

// DefaultBatchRows is the rows per batch of a RecordReader without
// WithBatchRows.
const DefaultBatchRows = 64 << 10

// ReadOption configures NewRecordReader.
type ReadOption func(*readOptions) error

type readOptions struct {
	batchRows  int64
	columns    []string
	start, end int64 // end -1: the file's last row
}

// WithBatchRows sets the rows of every batch but the last (default
// DefaultBatchRows).
func WithBatchRows(n int64) ReadOption {
	return func(o *readOptions) error {
		if n <= 0 {
			return fmt.Errorf("batch of %d rows: %w", n, ErrInvalidOption)
		}
		o.batchRows = n
		return nil
	}
}

// WithColumns reads only the named top-level fields, in the given order
// (each at most once). The batches' schema holds those fields.
func WithColumns(names ...string) ReadOption {
	return func(o *readOptions) error {
		o.columns = append([]string(nil), names...)
		if o.columns == nil {
			o.columns = []string{}
		}
		return nil
	}
}

// WithRowRange reads rows [start, start+n) only.
func WithRowRange(start, n int64) ReadOption {
	return func(o *readOptions) error {
		if start < 0 || n < 0 {
			return fmt.Errorf("row range [%d, +%d): %w", start, n, ErrInvalidOption)
		}
		o.start, o.end = start, start+n
		return nil
	}
}

// RecordReader streams a file's rows as record batches of a chosen size,
// with a column projection; it is an arrow-go array.RecordReader. Memory is
// bounded by a batch and the pages it spans: dense chunked and zipped
// pages, sparse and constant pages are decoded by window (the chunks or
// values of the batch's rows), other pages once and dropped as soon as the
// reader has passed them. It is not safe for concurrent use.
type RecordReader struct {
	refs   atomic.Int64
	f      *File
	schema *arrow.Schema
	fields []fieldColumns
	next   int64
	end    int64
	batch  int64
	caches [][]pageCache // per field, per leaf column: fields and their leaves are decoded concurrently
	cur    arrow.RecordBatch
	err    error
}

var _ array.RecordReader = (*RecordReader)(nil)

// NewRecordReader returns a reader of the file's rows in batches. The file
// must stay open while the reader is used.
func (f *File) NewRecordReader(opts ...ReadOption) (*RecordReader, error) {
	o := readOptions{batchRows: DefaultBatchRows, end: -1}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if o.end < 0 {
		o.end = f.numRows
	}
	if o.start > f.numRows || o.end > f.numRows {
		return nil, fmt.Errorf("row range [%d, %d) of %d rows: %w", o.start, o.end, f.numRows, ErrInvalidOption)
	}
	schema, fields, err := f.projection(o.columns)
	if err != nil {
		return nil, classify(err)
	}
	r := &RecordReader{f: f, schema: schema, fields: fields, next: o.start, end: o.end, batch: o.batchRows,
		caches: make([][]pageCache, len(fields))}
	for i := range r.caches {
		r.caches[i] = make([]pageCache, len(fields[i].cols))
		for k := range r.caches[i] {
			r.caches[i][k] = newPageCache()
		}
	}
	r.refs.Store(1)
	return r, nil
}

// Schema is the schema of the batches.
func (r *RecordReader) Schema() *arrow.Schema { return r.schema }

// Next reads the next batch; it returns false at the end or on an error
// (see Err).
func (r *RecordReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || r.next >= r.end {
		return false
	}
	n := min(r.batch, r.end-r.next)
	rec, err := r.f.readFields(r.schema, r.fields, r.next, n, func(i, k int) pageCache { return r.caches[i][k] }, true)
	if err != nil {
		r.err = classify(err)
		r.drop()
		return false
	}
	r.next += n
	r.evict()
	r.cur = rec
	return true
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

// Release drops a reference; the last one frees the current batch and the
// decoded pages.
func (r *RecordReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.drop()
	}
}

// evict drops what the next batches cannot need: whole pages that end at
// or before the next row, and the per-batch caches of windows (a chunk on a
// batch boundary is decoded again by the next batch).
func (r *RecordReader) evict() {
	for _, leaves := range r.caches {
		for i, c := range leaves {
			for k, a := range c.arrays {
				p := r.f.columns[k[0]][k[1]]
				if p.firstRow+p.rows <= uint64(r.next)*r.f.dims[k[0]] {
					a.Release()
					delete(c.arrays, k)
				}
			}
			fresh := newPageCache()
			fresh.arrays = c.arrays
			leaves[i] = fresh
		}
	}
}

func (r *RecordReader) drop() {
	for _, leaves := range r.caches {
		for i, c := range leaves {
			c.release()
			leaves[i] = newPageCache()
		}
	}
}

// readFields reads rows [start, start+n) of the given fields as a batch of
// schema, leaf k of field i with cache(i, k). With parallel, fields and
// their leaves are decoded on up to GOMAXPROCS goroutines (their caches
// must then be distinct: the File's own caches are safe for concurrent
// use, a pageCache is not); the batch and its errors do not depend on it.
func (f *File) readFields(schema *arrow.Schema, fields []fieldColumns, start, n int64, cache func(i, k int) pageCache, parallel bool) (arrow.RecordBatch, error) {
	if start < 0 || n < 0 || start > f.numRows || n > f.numRows-start {
		return nil, fmt.Errorf("range [%d, +%d) of %d rows: %w", start, n, f.numRows, ErrOutOfRange)
	}
	cols := make([]arrow.Array, len(fields))
	errs := make([]error, len(fields))
	read := func(i int) {
		fc := fields[i]
		a, err := f.readField(fc, start, start+n, func(k int) pageCache { return cache(i, k) }, parallel)
		if err != nil {
			errs[i] = fmt.Errorf("field %q: %w", fc.field.Name, err)
			return
		}
		cols[i] = a
	}
	run := par.InTurn
	if parallel {
		run = par.Each
	}
	_ = run(len(fields), func(i int) error { read(i); return errs[i] })
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(schema, cols, n), nil
}
