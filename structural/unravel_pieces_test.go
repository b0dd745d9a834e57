package structural_test

import (
	"errors"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/structural"
)

// TestUnravelInPieces: the levels of a large page of structs and at most
// one list are unraveled in pieces cut at row starts; the layers equal one
// pass's for several types and null patterns, and damaged levels give one
// pass's error.
func TestUnravelInPieces(t *testing.T) {
	mem := memory.NewGoAllocator()
	for ti, name := range []string{"list_i32", "struct_list", "list_struct", "struct_flat", "large_list_str", "map_str_i32"} {
		for ni, nulls := range []corpus.Nulls{corpus.NoNulls, corpus.SomeNulls, corpus.Alternating, corpus.Trailing} {
			nc := corpus.NestedCase{TypeCase: corpus.TypeByName(name), Nulls: nulls, Rows: 200_000}
			rec := corpus.NestedRecord(mem, []corpus.NestedCase{nc}, uint64(10*ti+ni))
			for _, path := range structural.LeafPaths(rec.Column(0).DataType()) {
				d, _, err := structural.BuildDense(rec.Columns(), path)
				if err != nil {
					t.Fatal(err)
				}
				unravel := func(procs int, rep, def []uint16) ([]structural.LayerData, error) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					return structural.UnravelPath(d.Layers, path, rep, def, d.NumRows, d.NumVisible)
				}
				one, err1 := unravel(1, d.Rep, d.Def)
				pieces, err4 := unravel(4, d.Rep, d.Def)
				if err1 != nil || err4 != nil {
					t.Fatalf("%s nulls %d: %v / %v", name, ni, err1, err4)
				}
				if !reflect.DeepEqual(one, pieces) {
					t.Fatalf("%s nulls %d path %v: pieces differ from one pass", name, ni, path)
				}
				// Damage: a repetition level past the lists, and a
				// definition level past the bands, late in the page.
				if d.Rep != nil {
					rep := slices.Clone(d.Rep)
					rep[len(rep)-1000] = 7
					_, e1 := unravel(1, rep, d.Def)
					_, e4 := unravel(4, rep, d.Def)
					if e1 == nil || e4 == nil || e1.Error() != e4.Error() || !errors.Is(e4, structural.ErrCorruptLevels) {
						t.Fatalf("%s: damaged repetition: one pass %v, pieces %v", name, e1, e4)
					}
				}
				if d.Def != nil {
					def := slices.Clone(d.Def)
					def[len(def)/2+3] = 60000
					def[len(def)-5] = 60001
					_, e1 := unravel(1, d.Rep, def)
					_, e4 := unravel(4, d.Rep, def)
					if e1 == nil || e4 == nil || e1.Error() != e4.Error() {
						t.Fatalf("%s: damaged definition: one pass %v, pieces %v", name, e1, e4)
					}
				}
			}
			rec.Release()
		}
	}
}

// BenchmarkUnravelList unravels a 1M-row page of list<int32> with nulls
// (one list layer: the one-pass chain, in pieces on several cores).
func BenchmarkUnravelList(b *testing.B) {
	nc := corpus.NestedCase{TypeCase: corpus.TypeByName("list_i32"), Nulls: corpus.SomeNulls, Rows: 1 << 20}
	rec := corpus.NestedRecord(memory.NewGoAllocator(), []corpus.NestedCase{nc}, 1)
	defer rec.Release()
	path := structural.LeafPaths(rec.Column(0).DataType())[0]
	d, _, err := structural.BuildDense(rec.Columns(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(2 * len(d.Def)))
	for b.Loop() {
		if _, err := structural.UnravelPath(d.Layers, path, d.Rep, d.Def, d.NumRows, d.NumVisible); err != nil {
			b.Fatal(err)
		}
	}
}
