package dataset

import (
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// rowSplitter cuts one ordered record reader into consecutive readers of
// given row counts (AddColumns: one per fragment, from the caller's one
// reader of every live row). A batch that straddles two is sliced.
type rowSplitter struct {
	src   array.RecordReader
	carry arrow.RecordBatch // the unread rest of the last batch
	done  bool
}

// next returns a reader of the next n rows (fewer if the source ends).
func (s *rowSplitter) next(n int64) array.RecordReader {
	r := &splitReader{s: s, left: n}
	r.refs.Store(1)
	return r
}

// take returns up to n rows from the carry or the source; nil at the end.
func (s *rowSplitter) take(n int64) arrow.RecordBatch {
	if s.carry == nil && !s.done {
		if s.src.Next() {
			s.carry = s.src.RecordBatch()
			s.carry.Retain()
		} else {
			s.done = true
		}
	}
	if s.carry == nil {
		return nil
	}
	rec := s.carry
	if rec.NumRows() <= n {
		s.carry = nil
		return rec
	}
	out := rec.NewSlice(0, n)
	s.carry = rec.NewSlice(n, rec.NumRows())
	rec.Release()
	return out
}

// more reports whether the source holds rows beyond what was taken.
func (s *rowSplitter) more() bool {
	for {
		if s.carry != nil && s.carry.NumRows() > 0 {
			return true
		}
		if s.carry != nil {
			s.carry.Release()
			s.carry = nil
		}
		if s.done || !s.src.Next() {
			s.done = true
			return false
		}
		s.carry = s.src.RecordBatch()
		s.carry.Retain()
	}
}

func (s *rowSplitter) err() error { return s.src.Err() }

func (s *rowSplitter) release() {
	if s.carry != nil {
		s.carry.Release()
		s.carry = nil
	}
}

// splitReader reads one share of a rowSplitter.
type splitReader struct {
	refs atomic.Int64
	s    *rowSplitter
	left int64
	cur  arrow.RecordBatch
}

func (r *splitReader) Schema() *arrow.Schema { return r.s.src.Schema() }

func (r *splitReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for r.left > 0 {
		rec := r.s.take(r.left)
		if rec == nil {
			return false
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		r.left -= rec.NumRows()
		r.cur = rec
		return true
	}
	return false
}

func (r *splitReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch.
//
// Deprecated: use RecordBatch, as arrow-go does.
func (r *splitReader) Record() arrow.RecordBatch { return r.cur }

func (r *splitReader) Err() error {
	if err := r.s.src.Err(); err != nil {
		return fmt.Errorf("reading the new columns: %w", err)
	}
	return nil
}

func (r *splitReader) Retain() { r.refs.Add(1) }

func (r *splitReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}
