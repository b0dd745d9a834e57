package structural_test

import (
	"fmt"
	"math/rand/v2"
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
	check := func(what string, arrs []arrow.Array, path []structural.Step) {
		t.Helper()
		d, _, err := structural.BuildDense(arrs, path)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want, err := structural.UnravelPath(d.Layers, path, d.Rep, d.Def, d.NumRows, d.NumVisible)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got, ok := structural.ListLayers(arrs, path)
		if !ok {
			t.Fatalf("%s: ListLayers declined", what)
		}
		if err := sameLayers(got, want); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for ti, name := range []string{"list_i32", "large_list_str"} {
		for ni, nulls := range []corpus.Nulls{corpus.NoNulls, corpus.SomeNulls, corpus.Alternating, corpus.Trailing} {
			nc := corpus.NestedCase{TypeCase: corpus.TypeByName(name), Nulls: nulls, Rows: 5000}
			rec := corpus.NestedRecord(mem, []corpus.NestedCase{nc}, uint64(10*ti+ni))
			col := rec.Column(0)
			path := structural.LeafPaths(col.DataType())[0]
			check(fmt.Sprintf("%s nulls %d", name, ni), []arrow.Array{col}, path)
			var parts []arrow.Array
			for lo := 0; lo < col.Len(); {
				hi := min(col.Len(), lo+1+r.IntN(1500))
				parts = append(parts, array.NewSlice(col, int64(lo), int64(hi)))
				lo = hi
			}
			check(fmt.Sprintf("%s nulls %d, %d slices", name, ni, len(parts)), parts, path)
			for _, p := range parts {
				p.Release()
			}
			rec.Release()
		}
	}
	for k := range 40 {
		var arrs []arrow.Array
		for range 1 + r.IntN(3) {
			a := listWithGarbage(r, 1+r.IntN(300), k%2 == 1)
			s := array.NewSlice(a, int64(r.IntN(3)), int64(a.Len()))
			a.Release()
			arrs = append(arrs, s)
		}
		check(fmt.Sprintf("garbage under null lists, case %d", k), arrs, structural.LeafPaths(arrs[0].DataType())[0])
		for _, a := range arrs {
			a.Release()
		}
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
	st := corpus.NestedRecord(mem, []corpus.NestedCase{{TypeCase: corpus.TypeByName("struct_list"), Nulls: corpus.SomeNulls, Rows: 100}}, 1)
	defer st.Release()
	for _, path := range structural.LeafPaths(st.Column(0).DataType()) {
		if _, ok := structural.ListLayers(st.Columns(), path); ok {
			t.Fatalf("struct_list path %v: ListLayers took it", path)
		}
	}
}
