package writer

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/structural"
)

// TestListShellSameBytes writes list columns whose pages are over the level
// budget (so stored sparse) with their levels left out and built: the
// files are byte for byte the same, under both policies, for several list
// types, null patterns, nullable or required items, batch splits and page
// budgets, lists as a struct's field, and the test checks that some pages
// were over the budget.
func TestListShellSameBytes(t *testing.T) {
	mem := memory.NewGoAllocator()
	over := 0
	for ti, name := range []string{"list_i32", "large_list_str", "list_bool", "list_i32_const", "struct_list"} {
		for ni, nulls := range []corpus.Nulls{corpus.SomeNulls, corpus.Alternating, corpus.Trailing} {
			rec := corpus.NestedRecord(mem, []corpus.NestedCase{{TypeCase: corpus.TypeByName(name), Nulls: nulls, Rows: 150_000}}, uint64(10*ti+ni))
			col := rec.Column(0)
			paths := structural.LeafPaths(col.DataType())
			path := paths[len(paths)-1] // (struct_list: its list field)
			if _, _, _, ok := structural.ListShell([]arrow.Array{col}, path, nil); ok {
				over++
			}
			for _, pol := range []selector.Policy{selector.PolicyCost, selector.PolicyLance} {
				for _, pageBytes := range []int64{0, 256 << 10} {
					write := func(shell bool) []byte {
						listShell = shell
						defer func() { listShell = true }()
						opts := []Option{WithFormat(Format2_3), WithPolicy(pol)}
						if pageBytes > 0 {
							opts = append(opts, WithMaxPageBytes(pageBytes))
						}
						var cuts []int64
						for lo := int64(0); lo < rec.NumRows(); lo += 40_000 {
							cuts = append(cuts, lo)
						}
						b, _ := writeCut(t, rec, append(cuts, rec.NumRows()), opts...)
						return b
					}
					what := fmt.Sprintf("%s nulls %d %v pages %d", name, ni, pol, pageBytes)
					if got, want := write(true), write(false); !bytes.Equal(got, want) {
						t.Fatalf("%s: %d bytes without levels, %d with, and they differ", what, len(got), len(want))
					}
				}
			}
			rec.Release()
		}
	}
	// A page built without levels whose plan is dense (mini-block asked):
	// its levels are built and it is encoded again, as if built with them.
	rec := corpus.NestedRecord(mem, []corpus.NestedCase{{TypeCase: corpus.TypeByName("list_i32"), Nulls: corpus.Alternating, Rows: 150_000}}, 3)
	defer rec.Release()
	if _, _, _, ok := structural.ListShell(rec.Columns(), structural.LeafPaths(rec.Column(0).DataType())[0], nil); !ok {
		t.Fatal("the mini-block case is within the level budget; the test needs one over it")
	}
	write := func(asked bool) []byte {
		listShellAsked = asked
		defer func() { listShellAsked = false }()
		b, rep := writeCut(t, rec, []int64{0, rec.NumRows()}, WithFormat(Format2_3),
			WithColumnOptions(rec.Schema().Field(0).Name, map[string]string{selector.KeyStructuralEncoding: "miniblock"}))
		if cell := rep[0].Cell; cell != "dense x chunked" {
			t.Fatalf("mini-block asked: %s", cell)
		}
		return b
	}
	if got, want := write(true), write(false); !bytes.Equal(got, want) {
		t.Fatalf("mini-block asked: %d bytes through the fallback, %d built with levels, and they differ", len(got), len(want))
	}
	if over < 4 {
		t.Fatalf("%d cases over the level budget; the test means several", over)
	}
}
