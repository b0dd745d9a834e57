package structural

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ---- helpers (prefixed nt: nested test) ----

func ntJSON(t testing.TB, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(memory.NewGoAllocator(), dt, strings.NewReader(js))
	if err != nil {
		t.Fatalf("FromJSON %s: %v", js, err)
	}
	return a
}

func ntNullable(name string, dt arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true}
}

// ntBitmap returns a validity buffer for valid (nil: no bitmap) and the
// null count.
func ntBitmap(valid []bool) (*memory.Buffer, int) {
	if valid == nil {
		return nil, 0
	}
	bm := make([]byte, bitutil.BytesForBits(int64(len(valid))))
	nulls := 0
	for i, v := range valid {
		if v {
			bitutil.SetBit(bm, i)
		} else {
			nulls++
		}
	}
	return memory.NewBufferBytes(bm), nulls
}

func ntInt32(vals []int32, valid []bool) arrow.Array {
	bm, nulls := ntBitmap(valid)
	data := array.NewData(arrow.PrimitiveTypes.Int32, len(vals),
		[]*memory.Buffer{bm, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(vals))}, nil, nulls, 0)
	return array.MakeFromData(data)
}

// ntStruct builds a struct of n slots at data offset off over children (each
// at least off+n long); valid covers off+n slots (nil: no bitmap).
func ntStruct(fields []arrow.Field, children []arrow.Array, valid []bool, off, n int) arrow.Array {
	bm, _ := ntBitmap(valid)
	cd := make([]arrow.ArrayData, len(children))
	for i, c := range children {
		cd[i] = c.Data()
	}
	nulls := 0
	if valid != nil {
		nulls = array.UnknownNullCount
	}
	data := array.NewData(arrow.StructOf(fields...), n, []*memory.Buffer{bm}, cd, nulls, off)
	return array.MakeFromData(data)
}

// ntList builds a list (large when large) of len(offsets)-1-off slots at data
// offset off.
func ntList(elem arrow.Field, large bool, offsets []int64, valid []bool, off int, child arrow.Array) arrow.Array {
	bm, _ := ntBitmap(valid)
	var dt arrow.DataType
	var ob *memory.Buffer
	if large {
		dt = arrow.LargeListOfField(elem)
		ob = memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(offsets))
	} else {
		dt = arrow.ListOfField(elem)
		o32 := make([]int32, len(offsets))
		for i, o := range offsets {
			o32[i] = int32(o)
		}
		ob = memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(o32))
	}
	nulls := 0
	if valid != nil {
		nulls = array.UnknownNullCount
	}
	data := array.NewData(dt, len(offsets)-1-off, []*memory.Buffer{bm, ob}, []arrow.ArrayData{child.Data()}, nulls, off)
	return array.MakeFromData(data)
}

// ntMap builds a map of len(offsets)-1-off slots over entries keys/items.
func ntMap(keys, items arrow.Array, offsets []int32, valid []bool, off int) arrow.Array {
	dt := arrow.MapOf(keys.DataType(), items.DataType())
	st := dt.Elem().(*arrow.StructType)
	entries := array.NewData(st, keys.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{keys.Data(), items.Data()}, 0, 0)
	bm, _ := ntBitmap(valid)
	nulls := 0
	if valid != nil {
		nulls = array.UnknownNullCount
	}
	data := array.NewData(dt, len(offsets)-1-off,
		[]*memory.Buffer{bm, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))},
		[]arrow.ArrayData{entries}, nulls, off)
	return array.MakeFromData(data)
}

// ntFSL builds a fixed-size list of n slots at data offset off.
func ntFSL(elem arrow.Field, dim int, valid []bool, off, n int, child arrow.Array) arrow.Array {
	bm, _ := ntBitmap(valid)
	nulls := 0
	if valid != nil {
		nulls = array.UnknownNullCount
	}
	data := array.NewData(arrow.FixedSizeListOfField(int32(dim), elem), n, []*memory.Buffer{bm}, []arrow.ArrayData{child.Data()}, nulls, off)
	return array.MakeFromData(data)
}

func ntBuild(t testing.TB, arrs []arrow.Array, path []Step) (Dense, []Segment) {
	t.Helper()
	d, segs, err := BuildDense(arrs, path)
	if err != nil {
		t.Fatalf("BuildDense %v: %v", path, err)
	}
	n := 0
	for _, s := range segs {
		if s.Start < 0 || s.End > s.Arr.Len() || s.Start >= s.End {
			t.Fatalf("bad segment %d..%d of %d", s.Start, s.End, s.Arr.Len())
		}
		n += s.End - s.Start
	}
	if n != d.NumVisible {
		t.Fatalf("segments hold %d values, NumVisible %d", n, d.NumVisible)
	}
	if (d.Rep != nil) != HasRep(d.Layers) || (d.Def != nil) != HasDef(d.Layers) {
		t.Fatalf("rep/def presence %v/%v for layers %v", d.Rep != nil, d.Def != nil, d.Layers)
	}
	if d.Rep != nil && len(d.Rep) != d.NumItems || d.Def != nil && len(d.Def) != d.NumItems {
		t.Fatalf("rep %d def %d entries, NumItems %d", len(d.Rep), len(d.Def), d.NumItems)
	}
	return d, segs
}

// ntValues concatenates the segments' values into one array.
func ntValues(t testing.TB, segs []Segment) arrow.Array {
	t.Helper()
	parts := make([]arrow.Array, len(segs))
	for i, s := range segs {
		parts[i] = array.NewSlice(s.Arr, int64(s.Start), int64(s.End))
	}
	v, err := array.Concatenate(parts, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ---- reference: expected per-layer structure, straight from the Arrow API ----

type ntRefLayer struct {
	valid   []bool
	offsets []int32
	n       int
}

type ntLeafSlot struct {
	arr arrow.Array
	i   int
}

type ntRef struct {
	layers []ntRefLayer
	leaf   []ntLeafSlot
}

func ntReference(arrs []arrow.Array, path []Step) ntRef {
	r := ntRef{layers: make([]ntRefLayer, len(path))}
	for d, st := range path {
		if st.Kind == StepList {
			r.layers[d].offsets = []int32{0}
		}
	}
	var walk func(d int, a arrow.Array, i int, pushed bool)
	walk = func(d int, a arrow.Array, i int, pushed bool) {
		l := &r.layers[d]
		add := func(v bool) { l.valid = append(l.valid, v); l.n++ }
		switch path[d].Kind {
		case StepLeaf:
			null := a.IsNull(i) || a.DataType().ID() == arrow.NULL
			if dict, ok := a.(*array.Dictionary); ok && !null {
				null = dict.Dictionary().IsNull(dict.GetValueIndex(i))
			}
			add(!pushed && !null)
			r.leaf = append(r.leaf, ntLeafSlot{a, i})
		case StepStruct:
			v := !pushed && a.IsValid(i)
			add(v)
			walk(d+1, a.(*array.Struct).Field(path[d].Child), i, !v)
		case StepFSL:
			v := !pushed && a.IsValid(i)
			add(v)
			f := a.(*array.FixedSizeList)
			s, e := f.ValueOffsets(i)
			for j := s; j < e; j++ {
				walk(d+1, f.ListValues(), int(j), !v)
			}
		case StepList:
			ll := a.(array.ListLike)
			if pushed || a.IsNull(i) {
				add(false)
			} else {
				add(true)
				s, e := ll.ValueOffsets(i)
				for j := s; j < e; j++ {
					walk(d+1, ll.ListValues(), int(j), false)
				}
			}
			l.offsets = append(l.offsets, int32(r.layers[d+1].n))
		}
	}
	for _, a := range arrs {
		for i := 0; i < a.Len(); i++ {
			walk(0, a, i, false)
		}
	}
	return r
}

// ntCheckUnravel unravels d and compares it with the reference of arrs.
func ntCheckUnravel(t testing.TB, arrs []arrow.Array, path []Step, d Dense, segs []Segment) {
	t.Helper()
	got, err := UnravelPath(d.Layers, path, d.Rep, d.Def, d.NumRows, d.NumVisible)
	if err != nil {
		t.Fatalf("UnravelPath: %v (layers %v rep %v def %v)", err, d.Layers, d.Rep, d.Def)
	}
	want := ntReference(arrs, path)
	if len(got) != len(path) {
		t.Fatalf("%d layers, want %d", len(got), len(path))
	}
	for i := range got {
		g, w := got[i], want.layers[i]
		if g.Layer != d.Layers[len(path)-1-i] {
			t.Errorf("layer %d: kind %v, want %v", i, g.Layer, d.Layers[len(path)-1-i])
		}
		if g.Len != w.n {
			t.Fatalf("layer %d: Len %d, want %d", i, g.Len, w.n)
		}
		gv := g.Valid
		if gv == nil {
			gv = make([]bool, g.Len)
			for j := range gv {
				gv[j] = true
			}
		}
		if !slices.Equal(gv, w.valid) && !(len(gv) == 0 && len(w.valid) == 0) {
			t.Errorf("layer %d: valid %v, want %v", i, gv, w.valid)
		}
		if !slices.Equal(g.Offsets, w.offsets) {
			t.Errorf("layer %d: offsets %v, want %v", i, g.Offsets, w.offsets)
		}
		if path[i].Kind == StepFSL && g.Dim != path[i].Dim || path[i].Kind != StepFSL && g.Dim != 0 {
			t.Errorf("layer %d: Dim %d", i, g.Dim)
		}
	}
	if last := got[len(got)-1]; last.Len != d.NumVisible {
		t.Errorf("leaf Len %d, NumVisible %d", last.Len, d.NumVisible)
	}
	// The segments are exactly the reference's leaf slots, in order.
	k := 0
	for _, s := range segs {
		for i := s.Start; i < s.End; i++ {
			if k >= len(want.leaf) || want.leaf[k].arr != s.Arr || want.leaf[k].i != i {
				t.Fatalf("visible value %d: segment slot %d differs from reference", k, i)
			}
			k++
		}
	}
	if k != len(want.leaf) {
		t.Fatalf("segments hold %d values, reference %d", k, len(want.leaf))
	}
}

// ntCheckMinimal checks planar's classification: every band value of every
// layer occurs in the def stream, except the null band of a list layer that
// Lance's reader needs (readableLists).
func ntCheckMinimal(t testing.TB, d Dense) {
	t.Helper()
	seen := map[uint16]bool{}
	top := uint16(0)
	for _, v := range d.Def {
		seen[v] = true
		top = max(top, v)
	}
	v := 1
	for j, l := range d.Layers {
		for k := range DefLevels(l) {
			// A struct/FSL band or a list's null band may be unused
			// when an outer condition masks slots of the layer
			// (BuildDense); a list's null band also for readableLists.
			masked := j > 0 && l == NullableItem && top > uint16(v)
			listNull := k == 0 && (l == NullableList || l == NullAndEmptyList)
			if !seen[uint16(v)] && !listNull && !masked {
				t.Errorf("layers %v: band value %d never used", d.Layers, v)
			}
			v++
		}
	}
}

// ---- worked examples of spec §1.6 ----

type ntExample struct {
	name    string
	arrs    []arrow.Array
	path    []Step
	layers  []Layer
	rep     []uint16
	def     []uint16
	items   int
	visible int
	rows    int
	values  string // JSON of the visible leaf values ("" = skip)
}

func ntExamples(t testing.TB) []ntExample {
	i32 := arrow.PrimitiveTypes.Int32
	listI32 := arrow.ListOf(i32)
	structC := arrow.StructOf(ntNullable("a", arrow.ListOf(arrow.BinaryTypes.String)))
	fslF := arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)
	mapT := arrow.MapOf(arrow.BinaryTypes.String, i32)

	// E: built by hand so the struct slots under the null FSL row stay
	// valid, exactly as in the spec.
	xs := ntInt32([]int32{0, 1, 0, 0, 4, 0}, []bool{true, true, true, true, true, false})
	structE := ntStruct([]arrow.Field{ntNullable("x", i32)}, []arrow.Array{xs}, []bool{true, true, true, true, false, true}, 0, 6)
	fslE := ntFSL(ntNullable("item", structE.DataType()), 2, []bool{true, false, true}, 0, 3, structE)

	return []ntExample{
		{
			name: "A", arrs: []arrow.Array{ntJSON(t, i32, `[10, null, 30, null]`)},
			path:   []Step{{Kind: StepLeaf}},
			layers: []Layer{NullableItem}, def: []uint16{0, 1, 0, 1},
			items: 4, visible: 4, rows: 4, values: `[10, null, 30, null]`,
		},
		{
			name: "B", arrs: []arrow.Array{ntJSON(t, listI32, `[[1, 2], null, [], [3, null]]`)},
			path:   []Step{{Kind: StepList}, {Kind: StepLeaf}},
			layers: []Layer{NullableItem, NullAndEmptyList},
			rep:    []uint16{1, 0, 1, 1, 1, 0}, def: []uint16{0, 0, 2, 3, 0, 1},
			items: 6, visible: 4, rows: 4, values: `[1, 2, 3, null]`,
		},
		{
			name: "B-empty", arrs: []arrow.Array{ntJSON(t, listI32, `[[1, 2], [], [3]]`)},
			path:   []Step{{Kind: StepList}, {Kind: StepLeaf}},
			layers: []Layer{AllValidItem, EmptyableList},
			rep:    []uint16{1, 0, 1, 1}, def: []uint16{0, 0, 1, 0},
			items: 4, visible: 3, rows: 3, values: `[1, 2, 3]`,
		},
		{
			name: "B-valid", arrs: []arrow.Array{ntJSON(t, listI32, `[[1, 2], [3]]`)},
			path:   []Step{{Kind: StepList}, {Kind: StepLeaf}},
			layers: []Layer{AllValidItem, AllValidList},
			rep:    []uint16{1, 0, 1},
			items:  3, visible: 3, rows: 2, values: `[1, 2, 3]`,
		},
		{
			name: "C", arrs: []arrow.Array{ntJSON(t, structC, `[{"a": ["x", "y"]}, null, {"a": null}, {"a": []}, {"a": [null, "z"]}]`)},
			path:   []Step{{Kind: StepStruct}, {Kind: StepList}, {Kind: StepLeaf}},
			layers: []Layer{NullableItem, NullAndEmptyList, NullableItem},
			rep:    []uint16{1, 0, 1, 1, 1, 1, 0}, def: []uint16{0, 0, 4, 2, 3, 1, 0},
			items: 7, visible: 4, rows: 5, values: `["x", "y", null, "z"]`,
		},
		{
			name: "D", arrs: []arrow.Array{ntJSON(t, fslF, `[[1, 2], null, [3, 4]]`)},
			path:   []Step{{Kind: StepLeaf}},
			layers: []Layer{NullableItem}, def: []uint16{0, 1, 0},
			items: 3, visible: 3, rows: 3,
		},
		{
			name: "E", arrs: []arrow.Array{fslE},
			path:   []Step{{Kind: StepFSL, Dim: 2}, {Kind: StepStruct}, {Kind: StepLeaf}},
			layers: []Layer{NullableItem, NullableItem, NullableItem},
			def:    []uint16{0, 0, 3, 3, 2, 1},
			items:  6, visible: 6, rows: 6,
		},
		{
			name: "F-values", arrs: []arrow.Array{ntJSON(t, mapT, `[[{"key": "a", "value": 1}], null, [], [{"key": "b", "value": null}, {"key": "c", "value": 3}]]`)},
			path:   []Step{{Kind: StepList}, {Kind: StepStruct, Child: 1}, {Kind: StepLeaf}},
			layers: []Layer{NullableItem, AllValidItem, NullAndEmptyList},
			rep:    []uint16{1, 1, 1, 1, 0}, def: []uint16{0, 2, 3, 1, 0},
			items: 5, visible: 3, rows: 4, values: `[1, null, 3]`,
		},
		{
			name: "F-keys", arrs: []arrow.Array{ntJSON(t, mapT, `[[{"key": "a", "value": 1}], null, [], [{"key": "b", "value": null}, {"key": "c", "value": 3}]]`)},
			path:   []Step{{Kind: StepList}, {Kind: StepStruct, Child: 0}, {Kind: StepLeaf}},
			layers: []Layer{AllValidItem, AllValidItem, NullAndEmptyList},
			rep:    []uint16{1, 1, 1, 1, 0}, def: []uint16{0, 1, 2, 0, 0},
			items: 5, visible: 3, rows: 4, values: `["a", "b", "c"]`,
		},
		{
			name: "G", arrs: []arrow.Array{ntJSON(t, arrow.ListOf(listI32), `[[[1, 2], []], [[3]]]`)},
			path:   []Step{{Kind: StepList}, {Kind: StepList}, {Kind: StepLeaf}},
			layers: []Layer{AllValidItem, EmptyableList, AllValidList},
			rep:    []uint16{2, 0, 1, 2}, def: []uint16{0, 0, 1, 0},
			items: 4, visible: 3, rows: 2, values: `[1, 2, 3]`,
		},
		{
			name: "H", arrs: []arrow.Array{ntJSON(t, arrow.ListOf(arrow.ListOf(listI32)), `[[[[0, 1], [], [2]], [[3]], []], [], [[[4]]]]`)},
			path:   []Step{{Kind: StepList}, {Kind: StepList}, {Kind: StepList}, {Kind: StepLeaf}},
			layers: []Layer{AllValidItem, EmptyableList, EmptyableList, EmptyableList},
			rep:    []uint16{3, 0, 1, 1, 2, 2, 3, 3}, def: []uint16{0, 0, 1, 0, 0, 2, 3, 0},
			items: 8, visible: 5, rows: 3, values: `[0, 1, 2, 3, 4]`,
		},
	}
}

func TestBuildDenseExamples(t *testing.T) {
	for _, ex := range ntExamples(t) {
		t.Run(ex.name, func(t *testing.T) {
			paths := LeafPaths(ex.arrs[0].DataType())
			if !slices.ContainsFunc(paths, func(p []Step) bool { return slices.Equal(p, ex.path) }) {
				t.Fatalf("path %v not among LeafPaths %v", ex.path, paths)
			}
			d, segs := ntBuild(t, ex.arrs, ex.path)
			if !slices.Equal(d.Layers, ex.layers) {
				t.Errorf("layers %v, want %v", d.Layers, ex.layers)
			}
			if !slices.Equal(d.Rep, ex.rep) || (d.Rep == nil) != (ex.rep == nil) {
				t.Errorf("rep %v, want %v", d.Rep, ex.rep)
			}
			if !slices.Equal(d.Def, ex.def) || (d.Def == nil) != (ex.def == nil) {
				t.Errorf("def %v, want %v", d.Def, ex.def)
			}
			if d.NumItems != ex.items || d.NumVisible != ex.visible || d.NumRows != ex.rows {
				t.Errorf("items/visible/rows %d/%d/%d, want %d/%d/%d", d.NumItems, d.NumVisible, d.NumRows, ex.items, ex.visible, ex.rows)
			}
			if ex.values != "" {
				got := ntValues(t, segs)
				want := ntJSON(t, got.DataType(), ex.values)
				if !array.Equal(got, want) {
					t.Errorf("values %v, want %v", got, want)
				}
			}
			ntCheckMinimal(t, d)
			ntCheckUnravel(t, ex.arrs, ex.path, d, segs)
		})
	}
}

// TestBuildDenseExampleDValues checks the primitive FSL leaf's segments are the
// whole vectors.
func TestBuildDenseExampleDValues(t *testing.T) {
	a := ntJSON(t, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), `[[1, 2], null, [3, 4]]`)
	_, segs := ntBuild(t, []arrow.Array{a}, []Step{{Kind: StepLeaf}})
	if len(segs) != 1 || segs[0].Arr != a || segs[0].Start != 0 || segs[0].End != 3 {
		t.Fatalf("segments %+v", segs)
	}
}

// Planar classifies by the conditions that actually decide levels, where
// Lance looks at bitmap presence. These pages are where the two differ; the
// comments give what Lance would write.
func TestBuildDensePlanarClassification(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	t.Run("all-valid bitmap", func(t *testing.T) {
		// Lance: [NULLABLE_ITEM], def 0 0 0.
		a := ntInt32([]int32{1, 2, 3}, []bool{true, true, true})
		if a.NullBitmapBytes() == nil {
			t.Fatal("test wants a bitmap")
		}
		d, _ := ntBuild(t, []arrow.Array{a}, []Step{{Kind: StepLeaf}})
		if !slices.Equal(d.Layers, []Layer{AllValidItem}) || d.Def != nil {
			t.Fatalf("layers %v def %v", d.Layers, d.Def)
		}
	})
	t.Run("struct push-down only", func(t *testing.T) {
		// a's only null is under the null struct row (FromJSON appends a
		// child null there). Lance pushes the struct bitmap into a:
		// [NULLABLE_ITEM, NULLABLE_ITEM], def 0 2 0. Planar keeps a
		// all-valid: [ALL_VALID_ITEM, NULLABLE_ITEM], def 0 1 0.
		dt := arrow.StructOf(ntNullable("a", i32))
		a := ntJSON(t, dt, `[{"a": 1}, null, {"a": 3}]`)
		path := []Step{{Kind: StepStruct}, {Kind: StepLeaf}}
		d, segs := ntBuild(t, []arrow.Array{a}, path)
		if !slices.Equal(d.Layers, []Layer{AllValidItem, NullableItem}) || !slices.Equal(d.Def, []uint16{0, 1, 0}) {
			t.Fatalf("layers %v def %v", d.Layers, d.Def)
		}
		ntCheckUnravel(t, []arrow.Array{a}, path, d, segs)
	})
	t.Run("struct push-down into list", func(t *testing.T) {
		// Lance: list NULL_AND_EMPTY (pushed bitmap + empty), struct
		// NULLABLE: def 0 4 3 0 (values all valid). Planar: the list has no
		// null of its own, but a slot below the null struct row, so it
		// keeps a null band nobody uses: [ALL_VALID_ITEM, NULL_AND_EMPTY_LIST,
		// NULLABLE_ITEM], def 0 3 2 0.
		dt := arrow.StructOf(ntNullable("a", arrow.ListOf(i32)))
		a := ntJSON(t, dt, `[{"a": [1]}, null, {"a": []}, {"a": [2]}]`)
		path := []Step{{Kind: StepStruct}, {Kind: StepList}, {Kind: StepLeaf}}
		d, segs := ntBuild(t, []arrow.Array{a}, path)
		if !slices.Equal(d.Layers, []Layer{AllValidItem, NullAndEmptyList, NullableItem}) ||
			!slices.Equal(d.Def, []uint16{0, 3, 2, 0}) || !slices.Equal(d.Rep, []uint16{1, 1, 1, 1}) {
			t.Fatalf("layers %v rep %v def %v", d.Layers, d.Rep, d.Def)
		}
		ntCheckUnravel(t, []arrow.Array{a}, path, d, segs)
	})
	t.Run("list bitmap without nulls", func(t *testing.T) {
		// Lance: [ALL_VALID_ITEM, NULLABLE_LIST], def 0 0 0.
		vals := ntInt32([]int32{1, 2, 3}, nil)
		a := ntList(ntNullable("item", i32), false, []int64{0, 2, 3}, []bool{true, true}, 0, vals)
		d, _ := ntBuild(t, []arrow.Array{a}, []Step{{Kind: StepList}, {Kind: StepLeaf}})
		if !slices.Equal(d.Layers, []Layer{AllValidItem, AllValidList}) || d.Def != nil || !slices.Equal(d.Rep, []uint16{1, 0, 1}) {
			t.Fatalf("layers %v rep %v def %v", d.Layers, d.Rep, d.Def)
		}
	})
	t.Run("nulls under a null FSL slot", func(t *testing.T) {
		// FixedSizeListBuilder.AppendNull appends null children. Lance:
		// [NULLABLE_ITEM x3], def 0 0 3 3. Planar: the leaf has no null of
		// its own; the struct's slots below the null FSL row give it a
		// band nobody uses: def 0 0 2 2.
		dt := arrow.FixedSizeListOf(2, arrow.StructOf(ntNullable("x", i32)))
		a := ntJSON(t, dt, `[[{"x": 0}, {"x": 1}], null]`)
		path := []Step{{Kind: StepFSL, Dim: 2}, {Kind: StepStruct}, {Kind: StepLeaf}}
		d, segs := ntBuild(t, []arrow.Array{a}, path)
		if !slices.Equal(d.Layers, []Layer{AllValidItem, NullableItem, NullableItem}) || !slices.Equal(d.Def, []uint16{0, 0, 2, 2}) {
			t.Fatalf("layers %v def %v", d.Layers, d.Def)
		}
		ntCheckUnravel(t, []arrow.Array{a}, path, d, segs)
	})
}

func TestLeafPaths(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	dt := arrow.StructOf(
		ntNullable("a", i32),
		ntNullable("b", arrow.ListOf(arrow.StructOf(ntNullable("c", arrow.BinaryTypes.String), ntNullable("d", arrow.StructOf())))),
		ntNullable("e", arrow.MapOf(arrow.BinaryTypes.String, arrow.LargeListOf(i32))),
		ntNullable("f", arrow.FixedSizeListOf(3, arrow.StructOf(ntNullable("g", i32)))),
		ntNullable("h", arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32)),
		ntNullable("i", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}),
		ntNullable("j", arrow.Null),
	)
	S := func(c int) Step { return Step{Kind: StepStruct, Child: c} }
	Lst := Step{Kind: StepList}
	Leaf := Step{Kind: StepLeaf}
	want := [][]Step{
		{S(0), Leaf},
		{S(1), Lst, S(0), Leaf},
		{S(1), Lst, S(1), Leaf}, // empty struct is a leaf
		{S(2), Lst, S(0), Leaf},
		{S(2), Lst, S(1), Lst, Leaf},
		{S(3), {Kind: StepFSL, Dim: 3}, S(0), Leaf},
		{S(4), Leaf},
		{S(5), Leaf},
		{S(6), Leaf},
	}
	got := LeafPaths(dt)
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("leaf %d: %v, want %v", i, got[i], want[i])
		}
	}
	if got := LeafPaths(i32); len(got) != 1 || !slices.Equal(got[0], []Step{Leaf}) {
		t.Errorf("int32: %v", got)
	}
}

// ---- sliced inputs ----

func TestBuildDenseSliced(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	cases := []struct {
		dt arrow.DataType
		js string
	}{
		{arrow.ListOf(i32), `[[1, 2], null, [], [3, null], [4], null, [5, 6, 7], [], [8]]`},
		{arrow.StructOf(ntNullable("a", arrow.ListOf(arrow.BinaryTypes.String))),
			`[{"a": ["x", "y"]}, null, {"a": null}, {"a": []}, {"a": [null, "z"]}, {"a": ["w"]}, null, {"a": ["v", null]}]`},
		{arrow.MapOf(arrow.BinaryTypes.String, i32),
			`[[{"key": "a", "value": 1}], null, [], [{"key": "b", "value": null}, {"key": "c", "value": 3}], [{"key": "d", "value": 4}], null]`},
		{arrow.LargeListOf(arrow.ListOf(i32)), `[[[1, 2], []], [[3]], null, [], [null, [4, null]], [[5]]]`},
		{arrow.FixedSizeListOf(2, arrow.StructOf(ntNullable("x", i32), ntNullable("y", arrow.ListOf(i32)))),
			`[[{"x": 0, "y": [1]}, {"x": 1, "y": null}], null, [null, {"x": null, "y": []}], [{"x": 5, "y": [6, 7]}, {"x": 8, "y": [9]}]]`},
		{arrow.ListOf(arrow.StructOf(ntNullable("a", i32), ntNullable("b", arrow.ListOf(arrow.PrimitiveTypes.Int64)))),
			`[[{"a": 1, "b": [1, 2]}, null], null, [], [{"a": null, "b": null}, {"a": 3, "b": []}], [{"a": 4, "b": [null]}]]`},
	}
	for ci, c := range cases {
		full := ntJSON(t, c.dt, c.js)
		for _, path := range LeafPaths(c.dt) {
			for off := 0; off < full.Len(); off++ {
				for end := off; end <= full.Len(); end++ {
					name := fmt.Sprintf("case%d/%v/%d-%d", ci, path, off, end)
					sl := array.NewSlice(full, int64(off), int64(end))
					fresh, err := array.Concatenate([]arrow.Array{sl}, memory.NewGoAllocator())
					if err != nil {
						t.Fatal(err)
					}
					ds, ss := ntBuild(t, []arrow.Array{sl}, path)
					df, sf := ntBuild(t, []arrow.Array{fresh}, path)
					ntSameDense(t, name, ds, df)
					if ds.NumVisible > 0 && !array.Equal(ntValues(t, ss), ntValues(t, sf)) {
						t.Errorf("%s: values differ", name)
					}
					ntCheckUnravel(t, []arrow.Array{sl}, path, ds, ss)
					// The page as two arrays equals the page as one.
					if mid := (off + end) / 2; mid > off && mid < end {
						parts := []arrow.Array{array.NewSlice(full, int64(off), int64(mid)), array.NewSlice(full, int64(mid), int64(end))}
						dp, sp := ntBuild(t, parts, path)
						ntSameDense(t, name+"/split", dp, ds)
						if ds.NumVisible > 0 && !array.Equal(ntValues(t, sp), ntValues(t, ss)) {
							t.Errorf("%s: split values differ", name)
						}
					}
				}
			}
		}
	}
}

func ntSameDense(t testing.TB, name string, a, b Dense) {
	t.Helper()
	if !slices.Equal(a.Layers, b.Layers) || !slices.Equal(a.Rep, b.Rep) || !slices.Equal(a.Def, b.Def) ||
		(a.Rep == nil) != (b.Rep == nil) || (a.Def == nil) != (b.Def == nil) ||
		a.NumItems != b.NumItems || a.NumVisible != b.NumVisible || a.NumRows != b.NumRows {
		t.Errorf("%s: dense differs:\n %+v\n %+v", name, a, b)
	}
}

// Struct slicing in Arrow keeps the children unsliced with an offset on the
// struct; list offsets need not start at 0; garbage under null lists is
// dropped. Built by hand so each case is explicit.
func TestBuildDenseHandBuilt(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	item := ntNullable("item", i32)

	// list<int32> with data offset 1 and offsets starting at 5; slot 1 of
	// the view is null with garbage [7, 9).
	vals := ntInt32([]int32{0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7}, nil)
	l := ntList(item, false, []int64{0, 5, 7, 9, 9, 11, 12}, []bool{true, true, false, true, true, true}, 1, vals)
	path := []Step{{Kind: StepList}, {Kind: StepLeaf}}
	d, segs := ntBuild(t, []arrow.Array{l}, path)
	if !slices.Equal(d.Layers, []Layer{AllValidItem, NullAndEmptyList}) ||
		!slices.Equal(d.Rep, []uint16{1, 0, 1, 1, 1, 0, 1}) || !slices.Equal(d.Def, []uint16{0, 0, 1, 2, 0, 0, 0}) {
		t.Fatalf("list: %+v", d)
	}
	if len(segs) != 2 || segs[0].Start != 5 || segs[0].End != 7 || segs[1].Start != 9 || segs[1].End != 12 {
		t.Fatalf("list segments %+v", segs)
	}
	ntCheckUnravel(t, []arrow.Array{l}, path, d, segs)

	// The same as a large list.
	ll := ntList(item, true, []int64{0, 5, 7, 9, 9, 11, 12}, []bool{true, true, false, true, true, true}, 1, vals)
	d2, segs2 := ntBuild(t, []arrow.Array{ll}, path)
	ntSameDense(t, "large", d2, d)
	ntCheckUnravel(t, []arrow.Array{ll}, path, d2, segs2)

	// struct<a: int32> of 3 slots at data offset 2 over children of 6.
	xs := ntInt32([]int32{0, 0, 10, 11, 12, 0}, []bool{false, false, true, false, true, true})
	st := ntStruct([]arrow.Field{ntNullable("a", i32)}, []arrow.Array{xs}, []bool{true, true, true, true, false, true}, 2, 3)
	spath := []Step{{Kind: StepStruct}, {Kind: StepLeaf}}
	d, segs = ntBuild(t, []arrow.Array{st}, spath)
	if !slices.Equal(d.Layers, []Layer{NullableItem, NullableItem}) || !slices.Equal(d.Def, []uint16{0, 1, 2}) || d.NumRows != 3 {
		t.Fatalf("struct: %+v", d)
	}
	ntCheckUnravel(t, []arrow.Array{st}, spath, d, segs)

	// FSL<struct<x>, 2> of 2 slots at data offset 1.
	xs = ntInt32([]int32{9, 9, 1, 2, 3, 4}, []bool{true, true, true, false, true, true})
	fst := ntStruct([]arrow.Field{ntNullable("x", i32)}, []arrow.Array{xs}, nil, 0, 6)
	fsl := ntFSL(ntNullable("item", fst.DataType()), 2, []bool{false, true, false}, 1, 2, fst)
	fpath := []Step{{Kind: StepFSL, Dim: 2}, {Kind: StepStruct}, {Kind: StepLeaf}}
	d, segs = ntBuild(t, []arrow.Array{fsl}, fpath)
	// The struct slots below the null FSL row make the struct layer nullable.
	if !slices.Equal(d.Layers, []Layer{NullableItem, NullableItem, NullableItem}) || !slices.Equal(d.Def, []uint16{0, 1, 3, 3}) || d.NumRows != 4 {
		t.Fatalf("fsl: %+v", d)
	}
	if len(segs) != 1 || segs[0].Start != 2 || segs[0].End != 6 {
		t.Fatalf("fsl segments %+v", segs)
	}
	ntCheckUnravel(t, []arrow.Array{fsl}, fpath, d, segs)

	// A dictionary leaf: nulls come from the keys and from the dictionary.
	dictT := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	keys := array.MakeFromData(array.NewData(arrow.PrimitiveTypes.Int8, 4,
		[]*memory.Buffer{ntBitmapBuf([]bool{true, false, true, true}), memory.NewBufferBytes([]byte{0, 0, 1, 2})}, nil, 1, 0))
	dictVals := ntJSON(t, arrow.BinaryTypes.String, `["a", null, "c"]`)
	dict := array.NewDictionaryArray(dictT, keys, dictVals)
	lst := ntList(ntNullable("item", dictT), false, []int64{0, 3, 4}, nil, 0, dict)
	d, segs = ntBuild(t, []arrow.Array{lst}, path)
	if !slices.Equal(d.Layers, []Layer{NullableItem, AllValidList}) || !slices.Equal(d.Def, []uint16{0, 1, 1, 0}) {
		t.Fatalf("dictionary: %+v", d)
	}
	if len(segs) != 1 || segs[0].Arr != lst.(*array.List).ListValues() {
		t.Fatalf("dictionary segments %+v", segs)
	}
	ntCheckUnravel(t, []arrow.Array{lst}, path, d, segs)

	// A null-type leaf under a list: every value is null.
	nulls := array.NewNull(3)
	nl := ntList(ntNullable("item", arrow.Null), false, []int64{0, 2, 2, 3}, []bool{true, false, true}, 0, nulls)
	d, segs = ntBuild(t, []arrow.Array{nl}, path)
	if !slices.Equal(d.Layers, []Layer{NullableItem, NullableList}) || !slices.Equal(d.Def, []uint16{1, 1, 2, 1}) {
		t.Fatalf("null leaf: %+v", d)
	}
	ntCheckUnravel(t, []arrow.Array{nl}, path, d, segs)

	// Empty page.
	d, segs = ntBuild(t, nil, path)
	if d.NumItems != 0 || d.NumRows != 0 || len(segs) != 0 || d.Rep == nil {
		t.Fatalf("empty: %+v", d)
	}
}

func ntBitmapBuf(valid []bool) *memory.Buffer {
	b, _ := ntBitmap(valid)
	return b
}

func TestBuildDenseErrors(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	item := ntNullable("item", i32)
	path := []Step{{Kind: StepList}, {Kind: StepLeaf}}
	vals := ntInt32([]int32{1, 2, 3}, nil)
	for name, offs := range map[string][]int64{
		"decreasing": {0, 2, 1, 3},
		"past child": {0, 2, 4},
		"negative":   {-1, 2},
	} {
		l := ntList(item, false, offs, nil, 0, vals)
		if _, _, err := BuildDense([]arrow.Array{l}, path); !errors.Is(err, ErrInvalidArray) {
			t.Errorf("%s: err %v", name, err)
		}
		ll := ntList(item, true, offs, nil, 0, vals)
		if _, _, err := BuildDense([]arrow.Array{ll}, path); !errors.Is(err, ErrInvalidArray) {
			t.Errorf("%s large: err %v", name, err)
		}
	}
	// Wrong path for the array, bad paths.
	if _, _, err := BuildDense([]arrow.Array{vals}, path); err == nil {
		t.Error("list path on int32: no error")
	}
	for _, p := range [][]Step{nil, {{Kind: StepList}}, {{Kind: StepLeaf}, {Kind: StepLeaf}}, {{Kind: StepKind(9)}}} {
		if _, _, err := BuildDense([]arrow.Array{vals}, p); err == nil {
			t.Errorf("path %v: no error", p)
		}
	}
	st := ntJSON(t, arrow.StructOf(ntNullable("a", i32)), `[{"a": 1}]`)
	if _, _, err := BuildDense([]arrow.Array{st}, []Step{{Kind: StepStruct, Child: 1}, {Kind: StepLeaf}}); err == nil {
		t.Error("struct child out of range: no error")
	}
	fsl := ntJSON(t, arrow.FixedSizeListOf(2, arrow.StructOf(ntNullable("x", i32))), `[[{"x": 1}, {"x": 2}]]`)
	if _, _, err := BuildDense([]arrow.Array{fsl}, []Step{{Kind: StepFSL, Dim: 3}, {Kind: StepStruct}, {Kind: StepLeaf}}); err == nil {
		t.Error("FSL dimension mismatch: no error")
	}
	// Dictionary key past the dictionary.
	dictT := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	keys := array.MakeFromData(array.NewData(arrow.PrimitiveTypes.Int8, 2,
		[]*memory.Buffer{nil, memory.NewBufferBytes([]byte{0, 5})}, nil, 0, 0))
	dict := array.NewDictionaryArray(dictT, keys, ntJSON(t, arrow.BinaryTypes.String, `["a", null]`))
	if _, _, err := BuildDense([]arrow.Array{dict}, []Step{{Kind: StepLeaf}}); !errors.Is(err, ErrInvalidArray) {
		t.Errorf("dictionary key: err %v", err)
	}
}

// ---- randomized property test ----

type ntGen struct {
	r     *rand.Rand
	pNull float64
	// noNull makes the next array generated have no nulls of its own (a
	// non-nullable field); its descendants still get nulls.
	noNull bool
}

func (g *ntGen) validity(n int) []bool {
	if g.r.IntN(4) == 0 {
		return nil
	}
	v := make([]bool, n)
	for i := range v {
		v[i] = g.r.Float64() >= g.pNull
	}
	return v
}

// gen returns an array of n slots of type dt with random nulls, empties,
// garbage under null lists, data offsets and children longer than needed.
func (g *ntGen) gen(dt arrow.DataType, n int) arrow.Array {
	noNull := g.noNull
	g.noNull = false
	own := func(n int) []bool {
		if noNull {
			return nil
		}
		return g.validity(n)
	}
	off := 0
	if g.r.IntN(2) == 0 {
		off = g.r.IntN(3)
	}
	tail := g.r.IntN(3)
	total := off + n + tail
	switch t := dt.(type) {
	case *arrow.Int32Type:
		vals := make([]int32, total)
		for i := range vals {
			vals[i] = int32(g.r.IntN(100))
		}
		return array.NewSlice(ntInt32(vals, own(total)), int64(off), int64(off+n))
	case *arrow.Int64Type:
		b := array.NewInt64Builder(memory.NewGoAllocator())
		for range total {
			if !noNull && g.r.Float64() < g.pNull {
				b.AppendNull()
			} else {
				b.Append(g.r.Int64N(100))
			}
		}
		return array.NewSlice(b.NewArray(), int64(off), int64(off+n))
	case *arrow.StringType:
		b := array.NewStringBuilder(memory.NewGoAllocator())
		for range total {
			b.Append(fmt.Sprint(g.r.IntN(1000)))
		}
		return array.NewSlice(b.NewArray(), int64(off), int64(off+n))
	case *arrow.StructType:
		kids := make([]arrow.Array, t.NumFields())
		for i, f := range t.Fields() {
			g.noNull = !f.Nullable
			kids[i] = g.gen(f.Type, total)
		}
		return ntStruct(t.Fields(), kids, own(total), off, n)
	case *arrow.FixedSizeListType:
		dim := int(t.Len())
		g.noNull = !t.ElemField().Nullable
		child := g.gen(t.Elem(), total*dim)
		return ntFSL(t.ElemField(), dim, own(total), off, n, child)
	case *arrow.ListType, *arrow.MapType:
		valid := own(total)
		lead := g.r.IntN(3)
		offs := []int64{int64(lead)}
		for i := range total {
			ln := g.r.IntN(4)
			if valid != nil && !valid[i] && g.r.IntN(2) == 0 {
				ln = 0 // a clean null; otherwise garbage
			}
			offs = append(offs, offs[len(offs)-1]+int64(ln))
		}
		clen := int(offs[len(offs)-1]) + g.r.IntN(3)
		if mt, ok := t.(*arrow.MapType); ok {
			keys := g.gen(mt.KeyType(), clen)
			keys = ntDropNulls(keys)
			items := g.gen(mt.ItemType(), clen)
			o32 := make([]int32, len(offs))
			for i, o := range offs {
				o32[i] = int32(o)
			}
			return array.NewSlice(ntMap(keys, items, o32, valid, off), 0, int64(n))
		}
		lt := t.(*arrow.ListType)
		g.noNull = !lt.ElemField().Nullable
		child := g.gen(lt.Elem(), clen)
		return array.NewSlice(ntList(lt.ElemField(), false, offs, valid, off, child), 0, int64(n))
	}
	panic(fmt.Sprintf("ntGen: %s", dt))
}

// ntDropNulls returns a copy of a string array without nulls (map keys).
func ntDropNulls(a arrow.Array) arrow.Array {
	b := array.NewStringBuilder(memory.NewGoAllocator())
	s := a.(*array.String)
	for i := 0; i < s.Len(); i++ {
		b.Append(s.Value(i))
	}
	return b.NewArray()
}

func TestBuildUnravelRandom(t *testing.T) {
	i32, i64 := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64
	types := []arrow.DataType{
		arrow.ListOf(arrow.StructOf(ntNullable("a", i32), ntNullable("b", arrow.ListOf(i64)))),
		arrow.MapOf(arrow.BinaryTypes.String, i32),
		arrow.FixedSizeListOf(2, arrow.StructOf(ntNullable("x", i32))),
		arrow.StructOf(ntNullable("s", arrow.FixedSizeListOf(3, arrow.StructOf(ntNullable("l", arrow.ListOf(i32)))))),
		arrow.ListOf(arrow.FixedSizeListOf(2, arrow.StructOf(ntNullable("y", arrow.ListOf(i32))))),
		arrow.ListOf(i32), // a list of a leaf at the top (builder.listOfLeaf)
	}
	r := rand.New(rand.NewPCG(1, 2))
	items, visible := 0, 0
	kinds := map[Layer]int{}
	for iter := range 400 {
		g := &ntGen{r: r, pNull: []float64{0, 0.1, 0.3, 0.7}[iter%4]}
		for ti, dt := range types {
			var arrs []arrow.Array
			for range r.IntN(3) + 1 {
				a := g.gen(dt, r.IntN(8))
				if a.Len() > 1 && r.IntN(2) == 0 {
					s := r.IntN(a.Len())
					a = array.NewSlice(a, int64(s), int64(s+r.IntN(a.Len()-s+1)))
				}
				arrs = append(arrs, a)
			}
			for _, path := range LeafPaths(dt) {
				d, segs, err := BuildDense(arrs, path)
				if err != nil {
					t.Fatalf("iter %d type %d path %v: %v", iter, ti, path, err)
				}
				ntCheckMinimal(t, d)
				ntCheckUnravel(t, arrs, path, d, segs)
				items += d.NumItems
				visible += d.NumVisible
				for _, l := range d.Layers {
					kinds[l]++
				}
				if t.Failed() {
					t.Fatalf("iter %d type %d (%s) path %v: dense %+v", iter, ti, dt, path, d)
				}
			}
		}
	}
	// The generator reaches every layer kind and a fair amount of data.
	t.Logf("%d items, %d visible, layer kinds %v", items, visible, kinds)
	for _, l := range []Layer{AllValidItem, NullableItem, AllValidList, NullableList, EmptyableList, NullAndEmptyList} {
		if kinds[l] < 20 {
			t.Errorf("layer kind %v seen %d times", l, kinds[l])
		}
	}
	if visible < 10000 || items <= visible {
		t.Errorf("%d items, %d visible", items, visible)
	}
}

func BenchmarkBuildDenseList(b *testing.B) {
	g := &ntGen{r: rand.New(rand.NewPCG(3, 4)), pNull: 0.1}
	dt := arrow.ListOf(arrow.StructOf(ntNullable("a", arrow.PrimitiveTypes.Int32), ntNullable("b", arrow.ListOf(arrow.PrimitiveTypes.Int64))))
	a := g.gen(dt, 20000)
	path := LeafPaths(dt)[1]
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := BuildDense([]arrow.Array{a}, path); err != nil {
			b.Fatal(err)
		}
	}
}
