package structural

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// int32s builds an int32 array; nil entries are nulls.
func int32s(t *testing.T, mem memory.Allocator, vals ...*int32) *array.Int32 {
	t.Helper()
	b := array.NewInt32Builder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(*v)
		}
	}
	return b.NewInt32Array()
}

func p(v int32) *int32 { return &v }

// pattern builds n values where row i is null iff null(i).
func pattern(t *testing.T, mem memory.Allocator, n int, null func(int) bool) *array.Int32 {
	t.Helper()
	vals := make([]*int32, n)
	for i := range vals {
		if !null(i) {
			vals[i] = p(int32(i))
		}
	}
	return int32s(t, mem, vals...)
}

// leafPath is the path of a flat (un-nested) leaf column.
var leafPath = []Step{{Kind: StepLeaf}}

// flatLeaf builds the dense plane of a flat leaf column page.
func flatLeaf(t *testing.T, arrs []arrow.Array) Dense {
	t.Helper()
	d, _, err := BuildDense(arrs, leafPath)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func wantDef(a arrow.Array) []uint16 {
	out := make([]uint16, a.Len())
	for i := range out {
		if a.IsNull(i) {
			out[i] = 1
		}
	}
	return out
}

func TestFlatLeafNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := int32s(t, mem, p(1), nil, p(3), nil, nil, p(6))
	defer a.Release()
	d := flatLeaf(t, []arrow.Array{a})
	if !slices.Equal(d.Layers, []Layer{NullableItem}) {
		t.Fatalf("layers %v", d.Layers)
	}
	if want := []uint16{0, 1, 0, 1, 1, 0}; !slices.Equal(d.Def, want) {
		t.Fatalf("def %v, want %v", d.Def, want)
	}
	if d.Rep != nil {
		t.Fatalf("rep %v on a flat leaf", d.Rep)
	}
	if d.NumItems != 6 || d.NumVisible != 6 || d.NumRows != 6 {
		t.Fatalf("counts %+v", d)
	}
}

func TestFlatLeafNoNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := int32s(t, mem, p(1), p(2), p(3))
	defer a.Release()
	d := flatLeaf(t, []arrow.Array{a})
	if !slices.Equal(d.Layers, []Layer{AllValidItem}) {
		t.Fatalf("layers %v", d.Layers)
	}
	if d.Def != nil || d.Rep != nil {
		t.Fatalf("def %v rep %v, want nil", d.Def, d.Rep)
	}
	if d.NumItems != 3 || d.NumVisible != 3 || d.NumRows != 3 {
		t.Fatalf("counts %+v", d)
	}
	if !IsDegenerate(d.Layers) {
		t.Fatal("all-valid page is not degenerate")
	}
	// No arrays at all.
	e := flatLeaf(t, nil)
	if !slices.Equal(e.Layers, []Layer{AllValidItem}) || e.Def != nil || e.NumRows != 0 {
		t.Fatalf("empty page %+v", e)
	}
}

func TestFlatLeafMultipleArrays(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := int32s(t, mem, p(1), p(2))     // no nulls, no bitmap
	b := int32s(t, mem, nil, p(4), nil) // nulls
	c := int32s(t, mem, p(5))           // no nulls
	defer a.Release()
	defer b.Release()
	defer c.Release()
	d := flatLeaf(t, []arrow.Array{a, b, c})
	if !slices.Equal(d.Layers, []Layer{NullableItem}) {
		t.Fatalf("layers %v", d.Layers)
	}
	if want := []uint16{0, 0, 1, 0, 1, 0}; !slices.Equal(d.Def, want) {
		t.Fatalf("def %v, want %v", d.Def, want)
	}
	if d.NumRows != 6 {
		t.Fatalf("rows %d", d.NumRows)
	}
}

func TestFlatLeafSliced(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// Parent: null every third row, 40 rows (several bitmap bytes).
	parent := pattern(t, mem, 40, func(i int) bool { return i%3 == 0 })
	defer parent.Release()
	for _, r := range [][2]int64{{1, 11}, {3, 40}, {7, 8}, {9, 33}, {13, 13}, {17, 39}} {
		s := array.NewSlice(parent, r[0], r[1])
		d := flatLeaf(t, []arrow.Array{s})
		want := wantDef(s)
		if s.NullN() == 0 {
			if d.Def != nil || !slices.Equal(d.Layers, []Layer{AllValidItem}) {
				t.Errorf("slice %v: def %v layers %v, want all-valid", r, d.Def, d.Layers)
			}
		} else if !slices.Equal(d.Def, want) {
			t.Errorf("slice %v: def %v, want %v", r, d.Def, want)
		}
		if d.NumRows != s.Len() {
			t.Errorf("slice %v: rows %d, want %d", r, d.NumRows, s.Len())
		}
		s.Release()
	}
	// A slice of a nullable array that happens to hold no nulls.
	s := array.NewSlice(parent, 1, 3)
	defer s.Release()
	if s.NullN() != 0 {
		t.Fatalf("slice [1,3) has %d nulls", s.NullN())
	}
	if d := flatLeaf(t, []arrow.Array{s}); d.Def != nil || !slices.Equal(d.Layers, []Layer{AllValidItem}) {
		t.Errorf("null-free slice: %+v", d)
	}
	// Two slices together.
	s1 := array.NewSlice(parent, 2, 5)
	s2 := array.NewSlice(parent, 10, 14)
	defer s1.Release()
	defer s2.Release()
	d := flatLeaf(t, []arrow.Array{s1, s2})
	want := append(wantDef(s1), wantDef(s2)...)
	if !slices.Equal(d.Def, want) {
		t.Errorf("two slices: def %v, want %v", d.Def, want)
	}
}

func TestFlatLeafUnravelInverts(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for name, null := range map[string]func(int) bool{
		"none":  func(int) bool { return false },
		"all":   func(int) bool { return true },
		"third": func(i int) bool { return i%3 == 0 },
		"tail":  func(i int) bool { return i > 20 },
	} {
		a := pattern(t, mem, 29, null)
		for _, r := range [][2]int64{{0, 29}, {5, 22}} {
			s := array.NewSlice(a, r[0], r[1])
			d := flatLeaf(t, []arrow.Array{s})
			lds, err := UnravelPath(d.Layers, leafPath, d.Rep, d.Def, d.NumRows, d.NumVisible)
			if err != nil {
				t.Fatalf("%s %v: %v", name, r, err)
			}
			valid := lds[0].Valid
			nulls := 0
			for i := 0; i < s.Len(); i++ {
				ok := valid == nil || valid[i]
				if !ok {
					nulls++
				}
				if ok != s.IsValid(i) {
					t.Errorf("%s %v: row %d valid=%v, want %v", name, r, i, ok, s.IsValid(i))
				}
			}
			if nulls != s.NullN() {
				t.Errorf("%s %v: %d nulls, want %d", name, r, nulls, s.NullN())
			}
			s.Release()
		}
		a.Release()
	}
	if lds, err := UnravelPath([]Layer{AllValidItem}, leafPath, nil, nil, 0, 0); err != nil || len(lds) != 1 || lds[0].Len != 0 {
		t.Errorf("empty: %+v %v", lds, err)
	}
}

func TestLayerPredicates(t *testing.T) {
	for _, c := range []struct {
		l                    Layer
		list, rep, def, degn bool
		levels               int
	}{
		{AllValidItem, false, false, false, true, 0},
		{AllValidList, true, true, false, false, 0},
		{NullableItem, false, false, true, false, 1},
		{NullableList, true, true, true, false, 1},
		{EmptyableList, true, true, true, false, 1},
		{NullAndEmptyList, true, true, true, false, 2},
	} {
		t.Run(c.l.String(), func(t *testing.T) {
			if got := IsList(c.l); got != c.list {
				t.Errorf("IsList = %v", got)
			}
			if got := HasRep([]Layer{c.l}); got != c.rep {
				t.Errorf("HasRep = %v", got)
			}
			if got := HasDef([]Layer{c.l}); got != c.def {
				t.Errorf("HasDef = %v", got)
			}
			if got := DefLevels(c.l); got != c.levels {
				t.Errorf("DefLevels = %d, want %d", got, c.levels)
			}
			if got := IsDegenerate([]Layer{c.l}); got != c.degn {
				t.Errorf("IsDegenerate = %v", got)
			}
			// Under an all-valid item layer, the layer alone decides.
			stack := []Layer{AllValidItem, c.l}
			if HasRep(stack) != c.rep || HasDef(stack) != c.def || IsDegenerate(stack) != c.degn {
				t.Errorf("stack %v: rep %v def %v degenerate %v", stack, HasRep(stack), HasDef(stack), IsDegenerate(stack))
			}
		})
	}
	if HasRep(nil) || HasDef(nil) || !IsDegenerate(nil) {
		t.Error("empty layer list")
	}
	if IsList(0) || DefLevels(0) != 0 {
		t.Error("unspecified layer")
	}
}

// TestNullableItems: an all-valid item layer asked for becomes nullable with
// a band no level uses; the levels of the layers outside it move up, those
// inside stay; layers not asked for, or nullable already, are kept.
func TestNullableItems(t *testing.T) {
	S := AllValidItem
	N := NullableItem
	L := NullAndEmptyList
	for _, tc := range []struct {
		name    string
		layers  []Layer
		def     []uint16
		items   []bool
		want    []Layer
		wantDef []uint16
	}{
		// leaf, struct, list<null, empty>: old levels 1, 2 are the list's.
		{"struct", []Layer{N, S, L}, []uint16{0, 1, 2, 3}, []bool{true, true, false},
			[]Layer{N, N, L}, []uint16{0, 1, 3, 4}},
		{"leaf and struct", []Layer{S, S, L}, []uint16{0, 1, 2}, []bool{true, true, false},
			[]Layer{N, N, L}, []uint16{0, 3, 4}},
		{"no def levels", []Layer{S, S, AllValidList}, nil, []bool{true, false},
			[]Layer{N, S, AllValidList}, []uint16{0, 0, 0}},
		{"not asked", []Layer{N, S, L}, []uint16{0, 1, 2}, []bool{true, false, false},
			[]Layer{N, S, L}, []uint16{0, 1, 2}},
	} {
		d := Dense{Layers: tc.layers, Def: tc.def, NumItems: max(len(tc.def), 3)}
		got := NullableItems(d, tc.items)
		if !slices.Equal(got.Layers, tc.want) || !slices.Equal(got.Def, tc.wantDef) {
			t.Errorf("%s: layers %v def %v, want %v %v", tc.name, got.Layers, got.Def, tc.want, tc.wantDef)
		}
		if !slices.Equal(d.Layers, tc.layers) {
			t.Errorf("%s: the input's layers changed", tc.name)
		}
	}
}
