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
