package structural

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func ntKinds(path []Step) []StepKind {
	k := make([]StepKind, len(path))
	for i, s := range path {
		k[i] = s.Kind
	}
	return k
}

func ntHasFSL(path []Step) bool {
	return slices.ContainsFunc(path, func(s Step) bool { return s.Kind == StepFSL })
}

// TestUnravelExamples spells out the decoded structure of some examples of
// spec §1.6 (outer-most layer first).
func TestUnravelExamples(t *testing.T) {
	T, F := true, false
	cases := []struct {
		name   string
		layers []Layer
		path   []Step
		rep    []uint16
		def    []uint16
		rows   int
		vis    int
		want   []LayerData
	}{
		{
			name: "B", layers: []Layer{NullableItem, NullAndEmptyList},
			path: []Step{{Kind: StepList}, {Kind: StepLeaf}},
			rep:  []uint16{1, 0, 1, 1, 1, 0}, def: []uint16{0, 0, 2, 3, 0, 1}, rows: 4, vis: 4,
			want: []LayerData{
				{Layer: NullAndEmptyList, Len: 4, Valid: []bool{T, F, T, T}, Offsets: []int32{0, 2, 2, 2, 4}},
				{Layer: NullableItem, Len: 4, Valid: []bool{T, T, T, F}},
			},
		},
		{
			name: "C", layers: []Layer{NullableItem, NullAndEmptyList, NullableItem},
			path: []Step{{Kind: StepStruct}, {Kind: StepList}, {Kind: StepLeaf}},
			rep:  []uint16{1, 0, 1, 1, 1, 1, 0}, def: []uint16{0, 0, 4, 2, 3, 1, 0}, rows: 5, vis: 4,
			want: []LayerData{
				{Layer: NullableItem, Len: 5, Valid: []bool{T, F, T, T, T}},
				{Layer: NullAndEmptyList, Len: 5, Valid: []bool{T, F, F, T, T}, Offsets: []int32{0, 2, 2, 2, 2, 4}},
				{Layer: NullableItem, Len: 4, Valid: []bool{T, T, F, T}},
			},
		},
		{
			name: "E", layers: []Layer{NullableItem, NullableItem, NullableItem},
			path: []Step{{Kind: StepFSL, Dim: 2}, {Kind: StepStruct}, {Kind: StepLeaf}},
			def:  []uint16{0, 0, 3, 3, 2, 1}, rows: 6, vis: 6,
			want: []LayerData{
				{Layer: NullableItem, Len: 3, Valid: []bool{T, F, T}, Dim: 2},
				{Layer: NullableItem, Len: 6, Valid: []bool{T, T, F, F, F, T}},
				{Layer: NullableItem, Len: 6, Valid: []bool{T, T, F, F, F, F}},
			},
		},
		{
			name: "F-keys", layers: []Layer{AllValidItem, AllValidItem, NullAndEmptyList},
			path: []Step{{Kind: StepList}, {Kind: StepStruct}, {Kind: StepLeaf}},
			rep:  []uint16{1, 1, 1, 1, 0}, def: []uint16{0, 1, 2, 0, 0}, rows: 4, vis: 3,
			want: []LayerData{
				{Layer: NullAndEmptyList, Len: 4, Valid: []bool{T, F, T, T}, Offsets: []int32{0, 1, 1, 1, 3}},
				{Layer: AllValidItem, Len: 3},
				{Layer: AllValidItem, Len: 3},
			},
		},
		{
			name: "G", layers: []Layer{AllValidItem, EmptyableList, AllValidList},
			path: []Step{{Kind: StepList}, {Kind: StepList}, {Kind: StepLeaf}},
			rep:  []uint16{2, 0, 1, 2}, def: []uint16{0, 0, 1, 0}, rows: 2, vis: 3,
			want: []LayerData{
				{Layer: AllValidList, Len: 2, Offsets: []int32{0, 2, 3}},
				{Layer: EmptyableList, Len: 3, Offsets: []int32{0, 2, 2, 3}},
				{Layer: AllValidItem, Len: 3},
			},
		},
		{
			name: "H", layers: []Layer{AllValidItem, EmptyableList, EmptyableList, EmptyableList},
			path: []Step{{Kind: StepList}, {Kind: StepList}, {Kind: StepList}, {Kind: StepLeaf}},
			rep:  []uint16{3, 0, 1, 1, 2, 2, 3, 3}, def: []uint16{0, 0, 1, 0, 0, 2, 3, 0}, rows: 3, vis: 5,
			want: []LayerData{
				{Layer: EmptyableList, Len: 3, Offsets: []int32{0, 3, 3, 4}},
				{Layer: EmptyableList, Len: 4, Offsets: []int32{0, 3, 4, 4, 5}},
				{Layer: EmptyableList, Len: 5, Offsets: []int32{0, 2, 2, 3, 4, 5}},
				{Layer: AllValidItem, Len: 5},
			},
		},
		{
			name: "flat-fsl-trivial", layers: []Layer{AllValidItem, AllValidItem, AllValidItem},
			path: []Step{{Kind: StepFSL, Dim: 3}, {Kind: StepStruct}, {Kind: StepLeaf}},
			rows: 6, vis: 6,
			want: []LayerData{
				{Layer: AllValidItem, Len: 2, Dim: 3},
				{Layer: AllValidItem, Len: 6},
				{Layer: AllValidItem, Len: 6},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := UnravelPath(c.layers, c.path, c.rep, c.def, c.rows, c.vis)
			if err != nil {
				t.Fatal(err)
			}
			ntSameLayers(t, got, c.want)
			if !ntHasFSL(c.path) {
				got2, err := Unravel(c.layers, ntKinds(c.path), c.rep, c.def, c.rows, c.vis)
				if err != nil {
					t.Fatal(err)
				}
				ntSameLayers(t, got2, c.want)
			}
		})
	}
}

func ntSameLayers(t testing.TB, got, want []LayerData) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d layers, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Layer != w.Layer || g.Len != w.Len || g.Dim != w.Dim || !slices.Equal(g.Valid, w.Valid) ||
			(g.Valid == nil) != (w.Valid == nil) || !slices.Equal(g.Offsets, w.Offsets) {
			t.Errorf("layer %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestUnravelFSLNeedsPath(t *testing.T) {
	_, err := Unravel([]Layer{AllValidItem, AllValidItem, AllValidItem}, []StepKind{StepFSL, StepStruct, StepLeaf}, nil, nil, 4, 4)
	if err == nil {
		t.Fatal("Unravel with a StepFSL kind: no error")
	}
}

func TestUnravelCorrupt(t *testing.T) {
	list := []Step{{Kind: StepList}, {Kind: StepLeaf}}
	cStruct := []Step{{Kind: StepStruct}, {Kind: StepList}, {Kind: StepLeaf}}
	ll := []Step{{Kind: StepList}, {Kind: StepList}, {Kind: StepLeaf}}
	fsl := []Step{{Kind: StepFSL, Dim: 2}, {Kind: StepStruct}, {Kind: StepLeaf}}
	nB := []Layer{NullableItem, NullAndEmptyList}
	nC := []Layer{NullableItem, NullAndEmptyList, NullableItem}
	nG := []Layer{AllValidItem, EmptyableList, AllValidList}
	nE := []Layer{NullableItem, NullableItem, NullableItem}
	cases := []struct {
		name      string
		layers    []Layer
		path      []Step
		rep, def  []uint16
		rows, vis int
	}{
		{"def past max", nB, list, []uint16{1, 0}, []uint16{0, 4}, 1, 2},
		{"rep past R", nB, list, []uint16{2, 0}, []uint16{0, 0}, 1, 2},
		{"first rep not R", nG, ll, []uint16{1, 0, 1, 2}, []uint16{0, 0, 1, 0}, 2, 3},
		{"first rep zero", nB, list, []uint16{0, 1}, []uint16{0, 0}, 2, 2},
		{"visible mismatch", nB, list, []uint16{1, 0, 1, 1, 1, 0}, []uint16{0, 0, 2, 3, 0, 1}, 4, 5},
		{"rows mismatch", nB, list, []uint16{1, 0, 1, 1, 1, 0}, []uint16{0, 0, 2, 3, 0, 1}, 3, 4},
		{"rep/def length", nB, list, []uint16{1, 0, 1}, []uint16{0, 0}, 2, 2},
		{"rep without list", []Layer{NullableItem}, []Step{{Kind: StepLeaf}}, []uint16{0}, []uint16{0}, 1, 1},
		{"missing rep", nB, list, nil, []uint16{0, 0}, 1, 2},
		{"layers/path length", nB, cStruct, []uint16{1}, []uint16{0}, 1, 1},
		{"list layer for struct", []Layer{NullableItem, NullAndEmptyList, NullableList}, cStruct, []uint16{1}, []uint16{0}, 1, 1},
		{"item layer for list", []Layer{NullableItem, NullableItem}, list, []uint16{1}, []uint16{0}, 1, 1},
		{"unknown layer", []Layer{Layer(0), NullableList}, list, []uint16{1}, []uint16{0}, 1, 1},
		{"leaf not last", []Layer{AllValidItem, AllValidItem}, []Step{{Kind: StepLeaf}, {Kind: StepLeaf}}, nil, nil, 1, 1},
		{"no leaf", []Layer{AllValidList}, []Step{{Kind: StepList}}, []uint16{1}, nil, 1, 0},
		// the empty list is followed by a child of it
		{"child of empty list", nB, list, []uint16{1, 0}, []uint16{3, 0}, 1, 1},
		// entry 1 continues an inner list that ended (rep 0 after a complete child of the outer)
		{"rep gap", nG, ll, []uint16{2, 1, 0}, []uint16{0, 1, 0}, 1, 2},
		// child under a valid list carries the list's null level
		{"outer level inside", nB, list, []uint16{1, 0}, []uint16{0, 2}, 1, 2},
		// null struct row continues into a second entry
		{"null struct continues", nC, cStruct, []uint16{1, 0}, []uint16{4, 0}, 1, 1},
		// second FSL child lacks the FSL null level
		{"fsl null mismatch", nE, fsl, nil, []uint16{3, 0}, 2, 2},
		{"fsl truncated", nE, fsl, nil, []uint16{0, 0, 0}, 3, 3},
		{"trivial fsl not multiple", []Layer{AllValidItem, AllValidItem, AllValidItem}, fsl, nil, nil, 3, 3},
		{"trivial rows != visible", []Layer{AllValidItem}, []Step{{Kind: StepLeaf}}, nil, nil, 3, 4},
		{"negative", []Layer{AllValidItem}, []Step{{Kind: StepLeaf}}, nil, nil, -1, -1},
		{"fsl dim 0", nE, []Step{{Kind: StepFSL}, {Kind: StepStruct}, {Kind: StepLeaf}}, nil, []uint16{0}, 1, 1},
		{"def without bands", []Layer{AllValidItem}, []Step{{Kind: StepLeaf}}, nil, []uint16{1}, 1, 1},
	}
	for _, c := range cases {
		_, err := UnravelPath(c.layers, c.path, c.rep, c.def, c.rows, c.vis)
		if !errors.Is(err, ErrCorruptLevels) {
			t.Errorf("%s: err %v", c.name, err)
		}
	}
}

// ---- Lance's reader algorithm (spec §1.8), as a cross-check ----

// ntLanceUnravel decodes levels the way spec §1.8 describes Lance's reader:
// inner-most layer first, with a running threshold and compaction after every
// list layer. Paths without structural FSL only. Results are outer-most first;
// Valid is always filled.
func ntLanceUnravel(layers []Layer, rep, def []uint16, nv int) []LayerData {
	L := len(layers)
	n := nv
	if rep != nil {
		n = len(rep)
	} else if def != nil {
		n = len(def)
	}
	cr := make([]int, n)
	cd := make([]int, n)
	for i := range n {
		if rep != nil {
			cr[i] = int(rep[i])
		}
		if def != nil {
			cd[i] = int(def[i])
		}
	}
	out := make([]LayerData, L) // inner-first while building
	fl := slices.IndexFunc(layers, IsList)
	if fl < 0 {
		fl = L
	}
	maxVis := 0
	for _, l := range layers[:fl] {
		maxVis += DefLevels(l)
	}
	t := 0
	items := func(j int, keep func(d int) bool) {
		for i := range cd {
			if keep(cd[i]) {
				out[j].Valid = append(out[j].Valid, layers[j] != NullableItem || cd[i] < t+1)
				out[j].Len++
			}
		}
		out[j].Layer = layers[j]
		if layers[j] == NullableItem {
			t++
		}
	}
	j := 0
	for ; j < fl; j++ {
		items(j, func(d int) bool { return d <= maxVis })
	}
	for j < L {
		l := layers[j]
		nullL, emptyL := -1, -1
		switch l {
		case NullableList:
			nullL = t + 1
		case EmptyableList:
			emptyL = t + 1
		case NullAndEmptyList:
			nullL, emptyL = t+1, t+2
		}
		top := t + DefLevels(l)
		reach := top
		for k := j + 1; k < L && !IsList(layers[k]); k++ {
			reach += DefLevels(layers[k])
		}
		o := &out[j]
		o.Layer = l
		count := 0
		for i := range cd {
			r, d := cr[i], cd[i]
			if r == 0 {
				count++
				continue
			}
			if d > reach {
				continue
			}
			o.Offsets = append(o.Offsets, int32(count))
			o.Len++
			switch {
			case d == 0:
				o.Valid = append(o.Valid, true)
				count++
			case d == nullL || d > top:
				o.Valid = append(o.Valid, false)
			case d == emptyL:
				o.Valid = append(o.Valid, true)
			default:
				o.Valid = append(o.Valid, true)
				count++
			}
		}
		o.Offsets = append(o.Offsets, int32(count))
		k := 0
		for i := range cr {
			if cr[i] != 0 {
				cr[k], cd[k] = cr[i]-1, cd[i]
				k++
			}
		}
		cr, cd = cr[:k], cd[:k]
		t = top
		j++
		for ; j < L && !IsList(layers[j]); j++ {
			items(j, func(d int) bool { return d <= reach })
		}
	}
	slices.Reverse(out)
	return out
}

// ntEffective returns each layer's validity with ancestors' nulls pushed down
// (a slot is valid iff it and all its ancestors are), using the structure of
// ls (outer-most first).
func ntEffective(ls []LayerData, path []Step) [][]bool {
	eff := make([][]bool, len(ls))
	for d, l := range ls {
		eff[d] = make([]bool, l.Len)
		for i := range eff[d] {
			eff[d][i] = l.Valid == nil || l.Valid[i]
		}
		if d == 0 {
			continue
		}
		p := ls[d-1]
		switch path[d-1].Kind {
		case StepStruct:
			for i := range eff[d] {
				eff[d][i] = eff[d][i] && eff[d-1][i]
			}
		case StepFSL:
			for i := range eff[d] {
				eff[d][i] = eff[d][i] && eff[d-1][i/p.Dim]
			}
		case StepList:
			for s := 0; s < p.Len; s++ {
				for i := p.Offsets[s]; i < p.Offsets[s+1]; i++ {
					eff[d][i] = eff[d][i] && eff[d-1][s]
				}
			}
		}
	}
	return eff
}

// TestUnravelMatchesLance decodes random pages with both UnravelPath and the
// §1.8 algorithm: same offsets, same validity once ancestors' nulls are
// pushed down (Lance leaves slots under a null ancestor valid when their
// own layer is all-valid).
func TestUnravelMatchesLance(t *testing.T) {
	i32, i64 := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64
	types := []arrow.DataType{
		arrow.ListOf(arrow.StructOf(ntNullable("a", i32), ntNullable("b", arrow.ListOf(i64)))),
		arrow.MapOf(arrow.BinaryTypes.String, i32),
		arrow.StructOf(ntNullable("s", arrow.StructOf(ntNullable("l", arrow.ListOf(arrow.ListOf(i32)))))),
		arrow.ListOf(arrow.StructOf(ntNullable("m", arrow.ListOf(arrow.StructOf(ntNullable("z", i32)))))),
	}
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 300 {
		g := &ntGen{r: r, pNull: []float64{0, 0.1, 0.3, 0.6}[iter%4]}
		for _, dt := range types {
			arrs := []arrow.Array{g.gen(dt, r.IntN(8)), g.gen(dt, r.IntN(4))}
			for _, path := range LeafPaths(dt) {
				d, _ := ntBuild(t, arrs, path)
				mine, err := UnravelPath(d.Layers, path, d.Rep, d.Def, d.NumRows, d.NumVisible)
				if err != nil {
					t.Fatal(err)
				}
				lance := ntLanceUnravel(d.Layers, d.Rep, d.Def, d.NumVisible)
				for k := range mine {
					if mine[k].Len != lance[k].Len || !slices.Equal(mine[k].Offsets, lance[k].Offsets) {
						t.Fatalf("%s %v layer %d: mine %+v lance %+v (dense %+v)", dt, path, k, mine[k], lance[k], d)
					}
				}
				em, el := ntEffective(mine, path), ntEffective(lance, path)
				for k := range em {
					if !slices.Equal(em[k], el[k]) {
						t.Fatalf("%s %v layer %d: validity mine %v lance %v (dense %+v)", dt, path, k, em[k], el[k], d)
					}
				}
			}
		}
	}
}

// ---- fuzzing ----

// ntFuzzInput decodes fuzz bytes into an Unravel call.
func ntFuzzInput(data []byte) (layers []Layer, path []Step, rep, def []uint16, rows, vis int) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	L := 1 + next()%5
	path = make([]Step, L)
	layers = make([]Layer, L)
	for d := range L {
		b := next()
		path[d] = Step{Kind: StepKind((b & 7) % 5), Dim: (b >> 3) % 4}
		layers[L-1-d] = Layer(next() % 8)
	}
	rows, vis = next(), next()
	flags := next()
	n := next() % 64
	if flags&1 != 0 {
		rep = make([]uint16, 0, n)
	}
	if flags&2 != 0 {
		def = make([]uint16, 0, n)
	}
	for range n {
		if rep != nil {
			rep = append(rep, uint16(next()%6))
		}
		if def != nil {
			def = append(def, uint16(next()%10))
		}
	}
	if flags&4 != 0 && len(data) >= 2 {
		vis = int(binary.LittleEndian.Uint16(data))
	}
	return
}

func ntFuzzEncode(layers []Layer, path []Step, rep, def []uint16, rows, vis int) []byte {
	L := len(path)
	b := []byte{byte(L - 1)}
	for d := range L {
		b = append(b, byte(path[d].Kind)|byte(path[d].Dim)<<3, byte(layers[L-1-d]))
	}
	flags := byte(0)
	n := max(len(rep), len(def))
	if rep != nil {
		flags |= 1
	}
	if def != nil {
		flags |= 2
	}
	b = append(b, byte(rows), byte(vis), flags, byte(n))
	for i := range n {
		if rep != nil {
			b = append(b, byte(rep[i]))
		}
		if def != nil {
			b = append(b, byte(def[i]))
		}
	}
	return b
}

func FuzzUnravel(f *testing.F) {
	for _, ex := range ntExamples(f) {
		d, _, err := BuildDense(ex.arrs, ex.path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(ntFuzzEncode(d.Layers, ex.path, d.Rep, d.Def, d.NumRows, d.NumVisible))
	}
	f.Add([]byte{})
	f.Add([]byte{4, 1, 1, 2, 3, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		layers, path, rep, def, rows, vis := ntFuzzInput(data)
		got, err := UnravelPath(layers, path, rep, def, rows, vis)
		if _, err2 := Unravel(layers, ntKinds(path), rep, def, rows, vis); err2 == nil && ntHasFSL(path) {
			t.Fatal("Unravel accepted a StepFSL kind")
		}
		if err != nil {
			if !errors.Is(err, ErrCorruptLevels) {
				t.Fatalf("error not wrapping ErrCorruptLevels: %v", err)
			}
			return
		}
		// Structural invariants of a successful result.
		if len(got) != len(path) || got[len(got)-1].Len != vis {
			t.Fatalf("shape: %+v", got)
		}
		for d, l := range got {
			if l.Valid != nil && len(l.Valid) != l.Len {
				t.Fatalf("layer %d: %d valid for %d slots", d, len(l.Valid), l.Len)
			}
			if d == len(got)-1 {
				continue
			}
			next := got[d+1].Len
			switch path[d].Kind {
			case StepStruct:
				if next != l.Len {
					t.Fatalf("struct layer %d: child %d slots, %d", d, next, l.Len)
				}
			case StepFSL:
				if next != l.Len*l.Dim {
					t.Fatalf("fsl layer %d: child %d slots, %d×%d", d, next, l.Len, l.Dim)
				}
			case StepList:
				if len(l.Offsets) != l.Len+1 || l.Offsets[0] != 0 || int(l.Offsets[l.Len]) != next {
					t.Fatalf("list layer %d: offsets %v for %d slots over %d", d, l.Offsets, l.Len, next)
				}
				for s := 0; s < l.Len; s++ {
					if l.Offsets[s] > l.Offsets[s+1] {
						t.Fatalf("list layer %d: offsets %v", d, l.Offsets)
					}
					if l.Valid != nil && !l.Valid[s] && l.Offsets[s] != l.Offsets[s+1] {
						t.Fatalf("list layer %d: null slot %d has children", d, s)
					}
				}
			}
		}
	})
}

// The fuzz seeds built from the examples decode: the encoding round-trips.
func TestFuzzSeedsDecode(t *testing.T) {
	for _, ex := range ntExamples(t) {
		d, _ := ntBuild(t, ex.arrs, ex.path)
		layers, path, rep, def, rows, vis := ntFuzzInput(ntFuzzEncode(d.Layers, ex.path, d.Rep, d.Def, d.NumRows, d.NumVisible))
		if !slices.Equal(layers, d.Layers) || !slices.Equal(rep, d.Rep) || !slices.Equal(def, d.Def) || rows != d.NumRows || vis != d.NumVisible {
			t.Fatalf("%s: seed does not round-trip", ex.name)
		}
		for i := range path {
			path[i].Child = ex.path[i].Child
		}
		if !slices.Equal(path, ex.path) {
			t.Fatalf("%s: path %v, want %v", ex.name, path, ex.path)
		}
		if _, err := UnravelPath(layers, path, rep, def, rows, vis); err != nil {
			t.Fatalf("%s: %v", ex.name, err)
		}
	}
}

// BenchmarkUnravelFlat: the definition levels of a 1M-slot nullable leaf
// (10% null) into its validity.
func BenchmarkUnravelFlat(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 1))
	def := make([]uint16, n)
	for i := range def {
		if rng.IntN(10) == 0 {
			def[i] = 1
		}
	}
	path := []Step{{Kind: StepLeaf}}
	b.SetBytes(2 * n)
	for b.Loop() {
		if _, err := UnravelPath([]Layer{NullableItem}, path, nil, def, n, n); err != nil {
			b.Fatal(err)
		}
	}
}
