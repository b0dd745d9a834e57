package structural

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestOverLevelBudget follows Lance 14's mini-block level budget
// (repdef.rs normalize_specials_and_plan_splits): rows with more levels than
// values may not push a page past MaxLevelsPerChunk levels.
func TestOverLevelBudget(t *testing.T) {
	mem := memory.NewGoAllocator()
	list := func(rows func(b *array.ListBuilder, vb *array.Int32Builder)) Dense {
		b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
		defer b.Release()
		rows(b, b.ValueBuilder().(*array.Int32Builder))
		a := b.NewArray()
		defer a.Release()
		d, _, err := BuildDense([]arrow.Array{a}, LeafPathsField(arrow.Field{Name: "l", Type: a.DataType(), Nullable: true})[0])
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name string
		rows func(b *array.ListBuilder, vb *array.Int32Builder)
		want bool
	}{
		{"one value behind 70000 empty lists", func(b *array.ListBuilder, vb *array.Int32Builder) {
			for i := 0; i < 70000; i++ {
				b.Append(true)
			}
			b.Append(true)
			vb.Append(1)
		}, true},
		{"20000 rows, 99% null or empty", func(b *array.ListBuilder, vb *array.Int32Builder) {
			for i := 0; i < 20000; i++ {
				switch {
				case i%100 == 0:
					b.Append(true)
					vb.AppendValues([]int32{1, 2, 3}, nil)
				case i%2 == 0:
					b.AppendNull()
				default:
					b.Append(true)
				}
			}
		}, false},
		{"100000 rows, all with values", func(b *array.ListBuilder, vb *array.Int32Builder) {
			for i := 0; i < 100000; i++ {
				b.Append(true)
				vb.Append(int32(i))
			}
		}, false},
		{"100000 rows, half null", func(b *array.ListBuilder, vb *array.Int32Builder) {
			for i := 0; i < 100000; i++ {
				if i%2 == 0 {
					b.AppendNull()
					continue
				}
				b.Append(true)
				vb.Append(int32(i))
			}
		}, true},
	} {
		d := list(tc.rows)
		if got := OverLevelBudget(d, false); got != tc.want {
			t.Errorf("%s: %v, want %v (%d levels, %d bits per level, limit %d)", tc.name, got, tc.want, d.NumItems, BitsPerLevel(d.Layers), MaxLevelsPerChunk(BitsPerLevel(d.Layers)))
		}
		if OverLevelBudget(d, true) {
			t.Errorf("%s: over budget with a structural FSL (Lance does not plan those)", tc.name)
		}
	}
	if MaxLevelsPerChunk(1) != 65535 || MaxLevelsPerChunk(3) != 43690 {
		t.Errorf("limits %d %d", MaxLevelsPerChunk(1), MaxLevelsPerChunk(3))
	}
}
