package structural_test

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/structural"
)

// TestBuildDenseInGroups: a large page of several arrays is walked in
// groups side by side; its levels, layers, counts and segments equal one
// walk's, for nested types with several null patterns (one with nulls in
// the first group only), the arrays being slices of one batch or separate
// batches.
func TestBuildDenseInGroups(t *testing.T) {
	mem := memory.NewGoAllocator()
	names := []string{"list_i32", "list_list_i64", "struct_list", "list_struct", "map_str_i32", "large_list_str", "struct_nested", "list_dict_str", "fsl_f32_8", "string"}
	for ti, name := range names {
		for ni, nulls := range []corpus.Nulls{corpus.NoNulls, corpus.SomeNulls, corpus.Alternating, corpus.Leading} {
			var arrs []arrow.Array
			for k, rows := range []int{30_000, 180_000, 20_000} {
				nc := corpus.NestedCase{TypeCase: corpus.TypeByName(name), Nulls: nulls, Rows: rows}
				if nulls == corpus.Leading && k > 0 {
					nc.Nulls = corpus.NoNulls // nulls in the first group only
				}
				rec := corpus.NestedRecord(mem, []corpus.NestedCase{nc}, uint64(100*ti+10*ni+k))
				col := rec.Column(0)
				if k == 1 { // slices of one batch, cut unevenly, the groups' seams among them
					for _, c := range [][2]int64{{0, 1}, {1, 50_000}, {50_000, 50_000}, {50_000, 120_000}, {120_000, 180_000}} {
						arrs = append(arrs, array.NewSlice(col, c[0], c[1]))
					}
				} else {
					col.Retain()
					arrs = append(arrs, col)
				}
				rec.Release()
			}
			for _, path := range structural.LeafPaths(arrs[0].DataType()) {
				prev := runtime.GOMAXPROCS(1)
				one, oneSegs, err1 := structural.BuildDense(arrs, path)
				runtime.GOMAXPROCS(4)
				groups, groupSegs, err4 := structural.BuildDense(arrs, path)
				runtime.GOMAXPROCS(prev)
				if err1 != nil || err4 != nil {
					t.Fatalf("%s nulls %d: %v / %v", name, ni, err1, err4)
				}
				if !reflect.DeepEqual(one, groups) || !reflect.DeepEqual(oneSegs, groupSegs) {
					t.Fatalf("%s nulls %d path %v: groups differ from one walk (%d/%d items, %d/%d segments)",
						name, ni, path, one.NumItems, groups.NumItems, len(oneSegs), len(groupSegs))
				}
			}
			for _, a := range arrs {
				a.Release()
			}
		}
	}
}

// TestBuildDenseFlatNoNulls: a page of one leaf whose arrays have no null
// (some with a validity bitmap all set, some sliced, one empty) has no
// levels at all, one all-valid layer and a segment per non-empty array,
// whether walked whole or in groups; one null anywhere brings the levels
// back, that slot alone at level 1.
func TestBuildDenseFlatNoNulls(t *testing.T) {
	mem := memory.NewGoAllocator()
	var arrs []arrow.Array
	for k, rows := range []int{100_000, 0, 70_000, 5, 90_000} {
		b := array.NewInt64Builder(mem)
		for i := range rows + 10 {
			if k == 2 {
				b.AppendValues([]int64{int64(i)}, []bool{true}) // a bitmap, all valid
			} else {
				b.Append(int64(i))
			}
		}
		a := b.NewArray()
		arrs = append(arrs, array.NewSlice(a, 10, int64(rows+10)))
	}
	path := structural.LeafPaths(arrs[0].DataType())[0]
	rows := 0
	var want []structural.Segment
	for _, a := range arrs {
		rows += a.Len()
		if a.Len() > 0 {
			want = append(want, structural.Segment{Arr: a, Start: 0, End: a.Len()})
		}
	}
	for _, procs := range []int{1, 4} {
		d, segs := buildWith(t, procs, arrs, path)
		if d.Def != nil || d.Rep != nil || d.NumItems != rows || d.NumVisible != rows || d.NumRows != rows ||
			!reflect.DeepEqual(d.Layers, []structural.Layer{structural.AllValidItem}) || !reflect.DeepEqual(segs, want) {
			t.Fatalf("procs %d: %d items, %d visible, %d rows (want %d), layers %v, def %v, %d segments (want %d)",
				procs, d.NumItems, d.NumVisible, d.NumRows, rows, d.Layers, d.Def != nil, len(segs), len(want))
		}
	}
	// One null in the fourth array.
	b := array.NewInt64Builder(mem)
	b.AppendValues([]int64{1, 2, 3}, []bool{true, false, true})
	arrs[3] = b.NewArray()
	for _, procs := range []int{1, 4} {
		d, _ := buildWith(t, procs, arrs, path)
		at := arrs[0].Len() + arrs[1].Len() + arrs[2].Len() + 1
		if len(d.Def) != d.NumItems || d.NumItems != rows-2 || d.Layers[0] != structural.NullableItem {
			t.Fatalf("procs %d with a null: %d levels for %d items (want %d), layers %v", procs, len(d.Def), d.NumItems, rows-2, d.Layers)
		}
		for i, v := range d.Def {
			if (v != 0) != (i == at) {
				t.Fatalf("procs %d with a null: level %d at %d", procs, v, i)
			}
		}
	}
}

// buildWith is BuildDense run with GOMAXPROCS procs.
func buildWith(t *testing.T, procs int, arrs []arrow.Array, path []structural.Step) (structural.Dense, []structural.Segment) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	d, segs, err := structural.BuildDense(arrs, path)
	if err != nil {
		t.Fatal(err)
	}
	return d, segs
}
