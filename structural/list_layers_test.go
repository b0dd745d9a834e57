package structural_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/structural"
)

// sameLayers compares layers as BuildSparse reads them: lengths, offsets,
// and validity, a layer with every slot valid equal to one without.
func sameLayers(a, b []structural.LayerData) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d layers, want %d", len(a), len(b))
	}
	valid := func(ld structural.LayerData) []bool {
		if ld.Valid != nil {
			return ld.Valid
		}
		v := make([]bool, ld.Len)
		for i := range v {
			v[i] = true
		}
		return v
	}
	for i := range a {
		if a[i].Len != b[i].Len {
			return fmt.Errorf("layer %d: %d slots, want %d", i, a[i].Len, b[i].Len)
		}
		if !slices.Equal(a[i].Offsets, b[i].Offsets) {
			return fmt.Errorf("layer %d: offsets differ", i)
		}
		if !slices.Equal(valid(a[i]), valid(b[i])) {
			return fmt.Errorf("layer %d: validity differs", i)
		}
	}
	return nil
}

// listWithGarbage builds a list<int32> of n lists from buffers: null lists
// whose offsets still span items (Arrow allows it; they hold none), empty
// lists, null items, offsets not starting at 0.
func listWithGarbage(r *rand.Rand, n int, large bool) arrow.Array {
	valid := make([]byte, (n+7)/8)
	ends := []int64{int64(r.IntN(5))}
	for i := range n {
		if r.IntN(3) > 0 {
			bitutil.SetBit(valid, i)
		}
		ends = append(ends, ends[len(ends)-1]+int64(r.IntN(4)))
	}
	items := int(ends[n]) + r.IntN(3)
	child := array.NewInt32Builder(memory.NewGoAllocator())
	for range items {
		if r.IntN(4) == 0 {
			child.AppendNull()
		} else {
			child.Append(r.Int32())
		}
	}
	ch := child.NewArray()
	defer ch.Release()
	dt := arrow.DataType(arrow.ListOf(arrow.PrimitiveTypes.Int32))
	if large {
		dt = arrow.LargeListOf(arrow.PrimitiveTypes.Int32)
	}
	offs := corpus.OffsetsBuffer(ends, large)
	d := array.NewData(dt, n, []*memory.Buffer{memory.NewBufferBytes(valid), memory.NewBufferBytes(offs)}, []arrow.ArrayData{ch.Data()}, array.UnknownNullCount, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// TestListLayers: the layers ListLayers reads from a page's list arrays are
// those UnravelPath gives for the page's dense levels, for list and
// large-list columns of ints and strings under several null patterns,
// sliced and in several arrays, null lists spanning items, empty lists and
// null items; other paths are left to UnravelPath.
func TestListLayers(t *testing.T) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(2, 3))
	taken := 0
	check := func(what string, arrs []arrow.Array, path []structural.Step) {
		t.Helper()
		got, ok := structural.ListLayers(arrs, path)
		if !ok && (path[0].Kind == structural.StepStruct || len(path) > 2 && path[1].Kind != structural.StepList) {
			return // (paths ListLayers does not take: checked below)
		}
		taken++
		d, _, err := structural.BuildDense(arrs, path)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want, err := structural.UnravelPath(d.Layers, path, d.Rep, d.Def, d.NumRows, d.NumVisible)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !ok {
			t.Fatalf("%s: ListLayers declined", what)
		}
		if err := sameLayers(got, want); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for ti, name := range []string{"list_i32", "large_list_str", "struct_list"} {
		for ni, nulls := range []corpus.Nulls{corpus.NoNulls, corpus.SomeNulls, corpus.Alternating, corpus.Trailing} {
			nc := corpus.NestedCase{TypeCase: corpus.TypeByName(name), Nulls: nulls, Rows: 5000}
			rec := corpus.NestedRecord(mem, []corpus.NestedCase{nc}, uint64(10*ti+ni))
			col := rec.Column(0)
			parts := cutSlices(r, col, 1500)
			for _, path := range structural.LeafPaths(col.DataType()) {
				check(fmt.Sprintf("%s nulls %d path %v", name, ni, path), []arrow.Array{col}, path)
				check(fmt.Sprintf("%s nulls %d path %v, %d slices", name, ni, path, len(parts)), parts, path)
			}
			release(parts)
			rec.Release()
		}
	}
	for k := range 40 {
		arrs := garbagePage(r, 1, 300, k%2 == 1)
		check(fmt.Sprintf("garbage under null lists, case %d", k), arrs, structural.LeafPaths(arrs[0].DataType())[0])
		wrapped := inStructs(r, arrs)
		check(fmt.Sprintf("garbage under null lists and structs, case %d", k), wrapped, structural.LeafPaths(wrapped[0].DataType())[1])
		release(wrapped)
		release(arrs)
	}
	if taken < 60 {
		t.Fatalf("ListLayers compared on %d pages; the test means more", taken)
	}
	// Items whose validity is not their bitmap's: declined.
	nb := array.NewListBuilder(mem, arrow.Null)
	for i := range 50 {
		if i%5 == 0 {
			nb.AppendNull()
			continue
		}
		nb.Append(true)
		for range i % 3 {
			nb.ValueBuilder().AppendNull()
		}
	}
	nullItems := nb.NewArray()
	defer nullItems.Release()
	dictRec := corpus.NestedRecord(mem, []corpus.NestedCase{{TypeCase: corpus.TypeByName("list_dict_str"), Nulls: corpus.SomeNulls, Rows: 100}}, 1)
	defer dictRec.Release()
	for _, a := range []arrow.Array{nullItems, dictRec.Column(0)} {
		if _, ok := structural.ListLayers([]arrow.Array{a}, structural.LeafPaths(a.DataType())[0]); ok {
			t.Fatalf("%s: ListLayers took items whose validity is not their bitmap's", a.DataType())
		}
	}
	// Other paths: declined.
	for _, name := range []string{"list_struct", "list_list_i64"} {
		st := corpus.NestedRecord(mem, []corpus.NestedCase{{TypeCase: corpus.TypeByName(name), Nulls: corpus.SomeNulls, Rows: 100}}, 1)
		for _, path := range structural.LeafPaths(st.Column(0).DataType()) {
			if _, ok := structural.ListLayers(st.Columns(), path); ok {
				t.Fatalf("%s path %v: ListLayers took it", name, path)
			}
		}
		st.Release()
	}
}

// inStructs puts each list array as the second field of a struct<x: int32,
// l: list> whose rows are null at random, over lists that may hold items
// (Arrow allows it; the walk masks them).
func inStructs(r *rand.Rand, lists []arrow.Array) []arrow.Array {
	var out []arrow.Array
	for _, l := range lists {
		n := l.Len()
		valid := make([]byte, (n+7)/8)
		for i := range n {
			if r.IntN(4) > 0 {
				bitutil.SetBit(valid, i)
			}
		}
		xb := array.NewInt32Builder(memory.NewGoAllocator())
		for i := range n {
			xb.Append(int32(i))
		}
		x := xb.NewArray()
		st := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "l", Type: l.DataType(), Nullable: true})
		d := array.NewData(st, n, []*memory.Buffer{memory.NewBufferBytes(valid)}, []arrow.ArrayData{x.Data(), l.Data()}, array.UnknownNullCount, 0)
		out = append(out, array.MakeFromData(d))
		d.Release()
		x.Release()
	}
	return out
}

// TestListShell: for pages of lists of leaves, ListShell takes exactly the
// pages whose dense levels are over the mini-block budget, and gives the
// layers, counts and segments BuildDenseKeep gives them (without levels),
// under the column's keep flags, for several null patterns, list types,
// slices and arrays whose null lists span items.
func TestListShell(t *testing.T) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(6, 1))
	took := 0
	check := func(what string, arrs []arrow.Array, keep []bool) {
		t.Helper()
		paths := structural.LeafPaths(arrs[0].DataType())
		path := paths[len(paths)-1] // (the list of a struct_list: its last field)
		if keep != nil && len(keep) != len(path) {
			keep = append(make([]bool, len(path)-len(keep)), keep...)
		}
		d, segs, err := structural.BuildDenseKeep(arrs, path, keep)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		over := structural.OverLevelBudget(d, false)
		sd, ssegs, lds, ok := structural.ListShell(arrs, path, keep)
		if ok != over {
			t.Fatalf("%s: shell taken %v, levels over the budget %v", what, ok, over)
		}
		if !ok {
			return
		}
		took++
		d.Rep, d.Def, d.LevelsOmitted = nil, nil, true
		if !reflect.DeepEqual(sd, d) {
			t.Fatalf("%s: shell %+v, want %+v", what, sd, d)
		}
		if !reflect.DeepEqual(ssegs, segs) {
			t.Fatalf("%s: %d segments, want %d (or they differ)", what, len(ssegs), len(segs))
		}
		if len(lds) != len(path) || lds[len(lds)-1].Len != d.NumVisible {
			t.Fatalf("%s: %d layers, of %d leaf slots for %d visible", what, len(lds), lds[len(lds)-1].Len, d.NumVisible)
		}
	}
	for ti, name := range []string{"list_i32", "large_list_str", "list_bool", "struct_list"} {
		for ni, nulls := range []corpus.Nulls{corpus.NoNulls, corpus.SomeNulls, corpus.Alternating, corpus.Trailing} {
			for _, rows := range []int{2000, 120_000} {
				rec := corpus.NestedRecord(mem, []corpus.NestedCase{{TypeCase: corpus.TypeByName(name), Nulls: nulls, Rows: rows}}, uint64(10*ti+ni))
				col := rec.Column(0)
				check(fmt.Sprintf("%s nulls %d rows %d", name, ni, rows), []arrow.Array{col}, nil)
				check(fmt.Sprintf("%s nulls %d rows %d, leaf kept nullable", name, ni, rows), []arrow.Array{col}, []bool{false, true})
				parts := cutSlices(r, col, 40000)
				check(fmt.Sprintf("%s nulls %d rows %d, %d slices", name, ni, rows, len(parts)), parts, nil)
				release(parts)
				rec.Release()
			}
		}
	}
	for k := range 20 {
		arrs := garbagePage(r, 20000, 40000, k%2 == 1)
		check(fmt.Sprintf("null lists spanning items, case %d", k), arrs, nil)
		wrapped := inStructs(r, arrs)
		check(fmt.Sprintf("null lists and structs spanning items, case %d", k), wrapped, nil)
		check(fmt.Sprintf("null lists and structs spanning items, case %d, struct kept nullable", k), wrapped, []bool{true, false, false})
		release(wrapped)
		release(arrs)
	}
	// Lists without nulls under structs with some: the list layer's null
	// band comes from the masked slots alone.
	for _, nulls := range []corpus.Nulls{corpus.NoNulls, corpus.Trailing} {
		rec := corpus.NestedRecord(mem, []corpus.NestedCase{{TypeCase: corpus.TypeByName("list_i32"), Nulls: nulls, Rows: 120_000}}, 5)
		wrapped := inStructs(r, rec.Columns())
		before := took
		check(fmt.Sprintf("list_i32 nulls %d under null structs", nulls), wrapped, nil)
		if took == before {
			t.Fatalf("list_i32 nulls %d under null structs: not over the budget; the case needs it", nulls)
		}
		release(wrapped)
		rec.Release()
	}
	if took < 10 {
		t.Fatalf("the shell was taken for %d pages; the test means many", took)
	}
}

// cutSlices cuts a into consecutive slices of 1 to most slots.
func cutSlices(r *rand.Rand, a arrow.Array, most int) []arrow.Array {
	var parts []arrow.Array
	for lo := 0; lo < a.Len(); {
		hi := min(a.Len(), lo+1+r.IntN(most))
		parts = append(parts, array.NewSlice(a, int64(lo), int64(hi)))
		lo = hi
	}
	return parts
}

func release(arrs []arrow.Array) {
	for _, a := range arrs {
		a.Release()
	}
}

// garbagePage is one to three listWithGarbage arrays of least to
// least+spread lists, each sliced from its first few slots.
func garbagePage(r *rand.Rand, least, spread int, large bool) []arrow.Array {
	var arrs []arrow.Array
	for range 1 + r.IntN(3) {
		a := listWithGarbage(r, least+r.IntN(spread), large)
		arrs = append(arrs, array.NewSlice(a, int64(r.IntN(3)), int64(a.Len())))
		a.Release()
	}
	return arrs
}
