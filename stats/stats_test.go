package stats

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestFixedWidth(t *testing.T) {
	b := array.NewInt32Builder(memory.NewGoAllocator())
	b.AppendValues([]int32{5, 5, 9, 0, 9, 9}, []bool{true, true, true, false, true, true})
	a := b.NewArray()
	s := array.NewSlice(a, 1, 6) // 5, 9, null, 9, 9
	p := FixedWidth([]arrow.Array{s}, 32)
	if p.NumValues != 5 || p.NullCount != 1 || p.MaxBitWidth != 4 || p.Runs != 2 || p.Constant {
		t.Errorf("got %+v", p)
	}
	c := array.NewInt32Builder(memory.NewGoAllocator())
	c.AppendValues([]int32{7, 7}, nil)
	q := FixedWidth([]arrow.Array{c.NewArray(), array.NewSlice(a, 0, 2)}, 32)
	if q.Constant || q.Runs != 2 || q.NumValues != 4 {
		t.Errorf("two arrays: %+v", q)
	}
	if r := FixedWidth([]arrow.Array{array.NewSlice(a, 3, 4)}, 32); r.Constant || r.NullCount != 1 {
		t.Errorf("all null: %+v", r)
	}
}
