package structural

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestNullCountWithoutBitmap: an array that has a null count but no validity
// bitmap has no nulls (Arrow's rule, and what arrow-go's IsNull says), at
// the leaf, a struct and a list layer, also when sliced (null count unknown);
// the null type stays all null (issue #9.6).
func TestNullCountWithoutBitmap(t *testing.T) {
	drop := func(a arrow.Array, nulls int) arrow.Array {
		d := a.Data()
		bufs := append([]*memory.Buffer{nil}, d.Buffers()[1:]...)
		return array.MakeFromData(array.NewData(d.DataType(), d.Len(), bufs, d.Children(), nulls, d.Offset()))
	}
	i32 := arrow.PrimitiveTypes.Int32
	leaf := drop(ntJSON(t, i32, `[1, 2, 3]`), 2)
	st := arrow.StructOf(ntNullable("x", i32))
	sa := drop(ntJSON(t, st, `[{"x": 1}, {"x": 2}]`), 1)
	lt := arrow.ListOf(i32)
	la := drop(ntJSON(t, lt, `[[1], [2, 3]]`), 2)
	for _, tc := range []struct {
		name string
		arr  arrow.Array
		path []Step
	}{
		{"leaf", leaf, []Step{{Kind: StepLeaf}}},
		{"leaf sliced", array.NewSlice(leaf, 1, 3), []Step{{Kind: StepLeaf}}},
		{"struct", sa, []Step{{Kind: StepStruct}, {Kind: StepLeaf}}},
		{"list", la, []Step{{Kind: StepList}, {Kind: StepLeaf}}},
	} {
		d, _ := ntBuild(t, []arrow.Array{tc.arr}, tc.path)
		if d.Def != nil {
			t.Errorf("%s: def levels %v, want none (no bitmap, no nulls)", tc.name, d.Def)
		}
	}
	d, _ := ntBuild(t, []arrow.Array{array.NewNull(3)}, []Step{{Kind: StepLeaf}})
	if len(d.Def) != 3 || d.Def[0] == 0 {
		t.Errorf("null type: def %v, want every slot null", d.Def)
	}
}
