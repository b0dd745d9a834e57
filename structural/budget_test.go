package structural

import (
	"math/rand/v2"
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

// TestBudgetPackerStopsEarly: the packer's walk, stopped at the first row
// that settles the verdict, agrees with packing every row by the rule
// (rows with overhead may not push a page past the limit; over when a
// single row with overhead exceeds it, or when rows with overhead exist
// and the rows need more than one page).
func TestBudgetPackerStopsEarly(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := 0; trial < 3000; trial++ {
		limit := 1 + r.IntN(40)
		rows := make([][2]int, 1+r.IntN(60)) // levels, visible values
		for i := range rows {
			vals := r.IntN(8)
			n := max(vals, 1)
			if r.IntN(5) == 0 {
				n += r.IntN(3) // more levels than values: overhead
			}
			rows[i] = [2]int{n, vals}
		}
		// The rule, every row packed.
		want, overhead, pages, levels, count, pageOver := false, false, 1, 0, 0, false
		for _, rw := range rows {
			over := rw[0] > rw[1]
			if over && rw[0] > limit {
				want = true
			}
			overhead = overhead || over
			if count > 0 && (pageOver || over) && levels+rw[0] > limit {
				pages++
				levels, count, pageOver = 0, 0, false
			}
			count++
			levels += rw[0]
			pageOver = pageOver || over
		}
		want = want || overhead && pages > 1
		p := budgetPacker{limit: limit, pages: 1}
		got := false
		for _, rw := range rows {
			if p.row(rw[0], rw[1]) {
				got = true
				break
			}
		}
		got = got || p.over()
		if got != want {
			t.Fatalf("trial %d (limit %d, rows %v): packer says %v, the rule %v", trial, limit, rows, got, want)
		}
	}
}
