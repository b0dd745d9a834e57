package dataset

import (
	"fmt"
	"sync"
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

// pipeReader is a record reader fed from another goroutine: AddColumns
// reads the caller's reader in order and hands each fragment's share to
// that fragment's writer through one, so fragments are written side by side
// while the source is read once.
type pipeReader struct {
	refs   atomic.Int64
	schema *arrow.Schema
	ch     chan arrow.RecordBatch
	done   chan struct{} // closed by the reading side when it stops
	stop   sync.Once
	end    sync.Once
	err    error // the feeding side's error, set before ch is closed
	cur    arrow.RecordBatch
}

func newPipeReader(schema *arrow.Schema) *pipeReader {
	p := &pipeReader{schema: schema, ch: make(chan arrow.RecordBatch, 2), done: make(chan struct{})}
	p.refs.Store(1)
	return p
}

// send hands rec (retained by the caller) to the reader; false, with rec
// released, when the reader has stopped.
func (p *pipeReader) send(rec arrow.RecordBatch) bool {
	select {
	case p.ch <- rec:
		return true
	case <-p.done:
		rec.Release()
		return false
	}
}

// finish ends the stream with err (nil: the end of the rows); later calls
// do nothing.
func (p *pipeReader) finish(err error) {
	p.end.Do(func() {
		p.err = err
		close(p.ch)
	})
}

// hangUp is called by the reading side when it stops: batches sent after
// it are dropped, those already queued released. It returns once the
// feeding side has finished the stream; it may be called more than once.
func (p *pipeReader) hangUp() {
	p.stop.Do(func() { close(p.done) })
	for rec := range p.ch {
		rec.Release()
	}
}

func (p *pipeReader) Schema() *arrow.Schema { return p.schema }

func (p *pipeReader) Next() bool {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	rec, ok := <-p.ch
	if ok {
		p.cur = rec
	}
	return ok
}

func (p *pipeReader) RecordBatch() arrow.RecordBatch { return p.cur }

// Record is RecordBatch.
//
// Deprecated: use RecordBatch, as arrow-go does.
func (p *pipeReader) Record() arrow.RecordBatch { return p.cur }

// Err is the feeding side's error, once Next has returned false (the
// close of the channel orders the write of err before this read).
func (p *pipeReader) Err() error { return p.err }

func (p *pipeReader) Retain() { p.refs.Add(1) }

func (p *pipeReader) Release() {
	if p.refs.Add(-1) == 0 && p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
}
