package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/dataset"
)

// takeReader reads rows [next, end) of a dataset version with Take, batch
// rows at a time, keeping the named columns: an array.RecordReader for cat
// ranges that do not start at row 0 (Take decodes only the chunks holding
// the rows, where a scan would decode every row before the range).
type takeReader struct {
	ctx       context.Context
	d         *dataset.Dataset
	schema    *arrow.Schema
	cols      []int // dataset column of each output column
	next, end int64
	batch     int64
	rows      []int64
	cur       arrow.RecordBatch
	err       error
}

func newTakeReader(ctx context.Context, d *dataset.Dataset, start, n, batch int64, columns []string) (*takeReader, error) {
	r := &takeReader{ctx: ctx, d: d, next: start, end: d.CountRows(), batch: batch}
	if n >= 0 && start+n < r.end {
		r.end = start + n
	}
	ds := d.Schema()
	if len(columns) == 0 {
		for i := range ds.NumFields() {
			columns = append(columns, ds.Field(i).Name)
		}
	}
	fields := make([]arrow.Field, 0, len(columns))
	for i, name := range columns {
		k := ds.FieldIndices(name)
		if len(k) != 1 || slices.Contains(columns[:i], name) {
			return nil, fmt.Errorf("column %q: not a top-level column of the dataset, or named twice", name)
		}
		r.cols = append(r.cols, k[0])
		fields = append(fields, ds.Field(k[0]))
	}
	md := ds.Metadata()
	r.schema = arrow.NewSchema(fields, &md)
	return r, nil
}

func (r *takeReader) Next() bool {
	r.drop()
	if r.err != nil || r.next >= r.end {
		return false
	}
	n := min(r.batch, r.end-r.next)
	r.rows = r.rows[:0]
	for i := range n {
		r.rows = append(r.rows, r.next+i)
	}
	rec, err := r.d.Take(r.ctx, r.rows)
	if err != nil {
		r.err = err
		return false
	}
	defer rec.Release()
	cols := make([]arrow.Array, len(r.cols))
	for i, c := range r.cols {
		cols[i] = rec.Column(c)
	}
	r.cur = array.NewRecordBatch(r.schema, cols, n)
	r.next += n
	return true
}

func (r *takeReader) drop() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *takeReader) Retain()                        {}
func (r *takeReader) Release()                       { r.drop() }
func (r *takeReader) Schema() *arrow.Schema          { return r.schema }
func (r *takeReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *takeReader) Record() arrow.RecordBatch      { return r.cur }
func (r *takeReader) Err() error                     { return r.err }
