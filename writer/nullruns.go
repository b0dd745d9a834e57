package writer

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/selector"
)

// runEnd returns the end of the run of equal validity bits that starts at
// slot i of a validity bitmap (bit offset off), looking no further than
// end, and whether the run is valid. Whole 64-bit words are skipped at
// once, so finding the runs of n slots costs O(n/64 + runs).
func runEnd(bitmap []byte, off, i, end int) (int, bool) {
	bit := func(j int) bool { return bitmap[(off+j)>>3]>>((off+j)&7)&1 == 1 }
	valid := bit(i)
	j := i + 1
	// Bit by bit up to a byte boundary of the bitmap.
	for j < end && (off+j)&7 != 0 {
		if bit(j) != valid {
			return j, valid
		}
		j++
	}
	var same uint64 // a word of the run's bits
	if valid {
		same = ^uint64(0)
	}
	for j+64 <= end {
		w := binary.LittleEndian.Uint64(bitmap[(off+j)>>3:])
		if d := w ^ same; d != 0 {
			return j + bits.TrailingZeros64(d), valid
		}
		j += 64
	}
	for j < end && bit(j) == valid {
		j++
	}
	return j, valid
}

// nullBlockRows is the rows of the shared all-null array that stands for
// the rows of a null-run page: such a page needs no payload, so it holds
// references to one block instead of the caller's arrays.
const nullBlockRows = 1024

// maxNullPageRows bounds the rows of one all-null page.
const maxNullPageRows = 1 << 22

// nullBlock returns the column's shared all-null array of its top-level
// type (made once).
func (c *column) nullBlock(t arrow.DataType) arrow.Array {
	if c.nulls == nil {
		c.nulls = array.MakeArrayOfNull(memory.DefaultAllocator, t, nullBlockRows)
	}
	return c.nulls
}

// rowSpan is a run of rows [start, end) that are all valid or all null.
type rowSpan struct {
	start, end int
	valid      bool
}

// appendRuns appends a top-level array to a column whose null runs are cut
// into pages of their own: a null run of at least the length the selector
// chooses for the batch (or one that continues a pending null page) goes
// to an all-null page made of references to the shared null block, so its
// payload is never read; every other run is appended as a slice through
// the size budget.
func (c *column) appendRuns(a arrow.Array, w *Writer) error {
	n := a.Len()
	bitmap := a.NullBitmapBytes()
	if a.NullN() == 0 || bitmap == nil {
		_, c.cutWork = selector.MinNullRun(nil, int64(n), c.nullRowBytes, c.opts, c.cutWork)
		// All valid: after the null page before it, if any.
		if c.pendNull {
			if err := c.flush(w); err != nil {
				return err
			}
		}
		return c.appendValid(a, w)
	}
	// The batch's runs, found once; the null runs' lengths for the
	// selector to say which get pages.
	off := a.Data().Offset()
	c.spans, c.runs = c.spans[:0], c.runs[:0]
	for i := 0; i < n; {
		j, valid := n, false
		if a.NullN() < n {
			j, valid = runEnd(bitmap, off, i, n)
		}
		c.spans = append(c.spans, rowSpan{i, j, valid})
		if !valid {
			c.runs = append(c.runs, int64(j-i))
		}
		i = j
	}
	var minRun int64
	minRun, c.cutWork = selector.MinNullRun(c.runs, int64(n), c.nullRowBytes, c.opts, c.cutWork)
	cut := func(s rowSpan) bool { return !s.valid && int64(s.end-s.start) >= minRun }
	for k := 0; k < len(c.spans); {
		s := c.spans[k]
		if !s.valid && (c.pendNull || cut(s)) {
			if err := c.appendNullRun(a.DataType(), int64(s.end-s.start), w); err != nil {
				return err
			}
			k++
			continue
		}
		// A valid run (with the short null runs after it, up to the next
		// cut), or a null run too short to cut: through the budget, after
		// the null page before it.
		last := k
		for s.valid && last+1 < len(c.spans) && !cut(c.spans[last+1]) {
			last++
		}
		if c.pendNull {
			if err := c.flush(w); err != nil {
				return err
			}
		}
		part := array.NewSlice(a, int64(s.start), int64(c.spans[last].end))
		err := c.appendValid(part, w)
		part.Release()
		if err != nil {
			return err
		}
		k = last + 1
	}
	return nil
}

// appendNullRun adds rows null rows to the pending all-null page, first
// ending a pending page of other rows.
func (c *column) appendNullRun(t arrow.DataType, rows int64, w *Writer) error {
	if !c.pendNull && len(c.pending) > 0 {
		if err := c.flush(w); err != nil {
			return err
		}
	}
	block := c.nullBlock(t)
	for rows > 0 {
		if c.pendNullRows >= maxNullPageRows {
			if err := c.flush(w); err != nil {
				return err
			}
		}
		k := min(rows, nullBlockRows, maxNullPageRows-c.pendNullRows)
		var part arrow.Array
		if k == nullBlockRows {
			block.Retain()
			part = block
		} else {
			part = array.NewSlice(block, 0, k)
		}
		settleNullCounts(part)
		c.pending = append(c.pending, part)
		c.pendNull = true
		c.pendNullRows += k
		rows -= k
	}
	return nil
}
