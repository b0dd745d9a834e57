package structural

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// lanceSim mirrors, for one page, what Lance 14's reader does with dense
// rep/def levels (lance-encoding src/repdef.rs, RepDefUnraveler): the def
// level to repetition depth map it builds from the layer kinds, and how it
// unravels validity and list offsets layer by layer, from the leaf outwards.
// It exists to check that planar's layer classification gives Lance the
// structure planar meant, for every nesting.
type lanceSim struct {
	rep, def    []uint16
	meaning     []Layer // inner-most first
	levelsToRep []uint16
	curDef      uint16
	curRep      uint16
	layer       int
	numItems    int
}

func newLanceSim(layers []Layer, rep, def []uint16, numItems int) *lanceSim {
	s := &lanceSim{rep: slices.Clone(rep), def: slices.Clone(def), meaning: layers, numItems: numItems}
	s.levelsToRep = []uint16{0}
	rc := uint16(0)
	for _, m := range layers {
		switch m {
		case NullableItem:
			s.levelsToRep = append(s.levelsToRep, rc)
		case NullableList, EmptyableList:
			rc++
			s.levelsToRep = append(s.levelsToRep, rc)
		case NullAndEmptyList:
			rc++
			s.levelsToRep = append(s.levelsToRep, rc, rc)
		}
	}
	return s
}

// allValid is RepDefUnraveler::is_all_valid.
func (s *lanceSim) allValid() bool {
	if s.def == nil {
		return true
	}
	switch s.meaning[s.layer] {
	case AllValidItem, AllValidList, EmptyableList:
		return true
	}
	return false
}

// skip is skip_validity.
func (s *lanceSim) skip() { s.layer++ }

// validity is unravel_validity: it appends the layer's validity to out.
func (s *lanceSim) validity(out []bool) ([]bool, error) {
	m := s.meaning[s.layer]
	s.layer++
	if m == AllValidItem || s.def == nil {
		for range s.numItems {
			out = append(out, true)
		}
		return out, nil
	}
	cmp := s.curDef
	s.curDef++
	for _, l := range s.def {
		if int(l) >= len(s.levelsToRep) {
			return out, fmt.Errorf("def level %d past the %d levels", l, len(s.levelsToRep))
		}
		if s.levelsToRep[l] <= s.curRep {
			out = append(out, l <= cmp)
		}
	}
	return out, nil
}

// decimate is RepDefUnraveler::decimate (an FSL layer).
func (s *lanceSim) decimate(dim int) error {
	if s.rep != nil {
		return fmt.Errorf("Lance 14 cannot decimate levels with repetition (FSL<...List<...>>)")
	}
	if s.def == nil {
		return nil
	}
	w := 0
	for r := 0; r < len(s.def); r += dim {
		s.def[w] = s.def[r]
		w++
	}
	s.def = s.def[:w]
	return nil
}

// offsets is unravel_offsets: it appends the page's list offsets (shifted to
// continue offs, whose last entry it replaces) and, when valid is not nil,
// the list validity.
func (s *lanceSim) offsets(offs []int, valid *[]bool) ([]int, error) {
	if s.rep == nil {
		return offs, fmt.Errorf("no repetition levels for a list layer")
	}
	validLevel := s.curDef
	var nullLevel, emptyLevel uint16
	switch s.meaning[s.layer] {
	case NullableList:
		s.curDef++
		nullLevel = validLevel + 1
	case EmptyableList:
		s.curDef++
		emptyLevel = validLevel + 1
	case NullAndEmptyList:
		s.curDef += 2
		nullLevel, emptyLevel = validLevel+1, validLevel+2
	case AllValidList:
	default:
		return offs, fmt.Errorf("layer %d is %v, not a list", s.layer, s.meaning[s.layer])
	}
	s.layer++
	maxLevel := max(nullLevel, emptyLevel, validLevel)
	upperNull := maxLevel
	for _, m := range s.meaning[s.layer:] {
		if m == NullableItem {
			maxLevel++
		} else if m != AllValidItem {
			break
		}
	}
	cur := 0
	if len(offs) > 0 {
		cur = offs[len(offs)-1]
		offs = offs[:len(offs)-1]
	}
	push := func(v bool) {
		if valid != nil {
			*valid = append(*valid, v)
		}
	}
	s.curRep++
	w := 0
	for i, r := range s.rep {
		if r == 0 {
			cur++
			continue
		}
		s.rep[w] = r - 1
		if s.def == nil {
			offs = append(offs, cur)
			push(true)
			cur++
			w++
			continue
		}
		d := s.def[i]
		s.def[w] = d
		w++
		switch {
		case d == 0:
			offs = append(offs, cur)
			cur++
			push(true)
		case d > maxLevel:
		case d == nullLevel || d > upperNull:
			offs = append(offs, cur)
			push(false)
		case d == emptyLevel:
			offs = append(offs, cur)
			push(true)
		default:
			offs = append(offs, cur)
			cur++
			push(true)
		}
	}
	offs = append(offs, cur)
	s.rep = s.rep[:w]
	if s.def != nil {
		s.def = s.def[:w]
	}
	return offs, nil
}

// lancePage is one page's unraveler in Lance 14's reader: a dense page
// (lanceSim, RepDefUnraveler over rep/def levels) or a sparse one
// (lanceSparse, SparseStructuralUnraveler over sparse structural sets).
type lancePage interface {
	allValid() bool
	skip()
	validity(out []bool) ([]bool, error)
	decimate(dim int) error
	offsets(offs []int, valid *[]bool) ([]int, error)
}

// lanceSparse mirrors Lance 14's SparseStructuralUnraveler
// (encodings/logical/primitive/sparse.rs) over the sparse structural plan
// planar writes for a page (writer/cell_sparse.go: one layer per path depth, the
// structure UnravelPath gives), consumed from the leaf outwards.
type lanceSparse struct {
	layers []LayerData // outer-most first
	next   int         // layers not yet consumed
}

func newLanceSparse(layers []LayerData) *lanceSparse {
	return &lanceSparse{layers: layers, next: len(layers)}
}

func (s *lanceSparse) cur() *LayerData { return &s.layers[s.next-1] }

// allValid is is_all_valid: the layer's validity set has no null.
func (s *lanceSparse) allValid() bool {
	if s.next == 0 {
		return true
	}
	return !slices.Contains(s.cur().Valid, false)
}

func (s *lanceSparse) skip() { s.next-- }

// validity appends one entry per slot of the layer.
func (s *lanceSparse) validity(out []bool) ([]bool, error) {
	l := s.cur()
	s.next--
	if l.Valid == nil {
		for range l.Len {
			out = append(out, true)
		}
		return out, nil
	}
	return append(out, l.Valid...), nil
}

func (s *lanceSparse) decimate(int) error { return nil }

// offsets is unravel_offsets: one offset and one validity entry per slot,
// continuing offs.
func (s *lanceSparse) offsets(offs []int, valid *[]bool) ([]int, error) {
	l := s.cur()
	s.next--
	if l.Offsets == nil {
		return offs, fmt.Errorf("sparse layer is not a list layer")
	}
	cur := 0
	if len(offs) > 0 {
		cur = offs[len(offs)-1]
	} else {
		offs = append(offs, 0)
	}
	for i := range l.Len {
		if valid != nil {
			*valid = append(*valid, l.Valid == nil || l.Valid[i])
		}
		cur += int(l.Offsets[i+1] - l.Offsets[i])
		offs = append(offs, cur)
	}
	return offs, nil
}

// lanceUnravel runs Lance's composite unraveler over the pages (one lancePage
// each) of one leaf column and returns the validity (nil = all valid, Lance's
// None) and the offsets of every layer, outer-most first, as Lance would
// build them.
func lanceUnravel(path []Step, pages []lancePage) ([][]bool, [][]int, error) {
	L := len(path)
	valid := make([][]bool, L)
	offs := make([][]int, L)
	for d := L - 1; d >= 0; d-- {
		all := true
		for _, p := range pages {
			all = all && p.allValid()
		}
		switch path[d].Kind {
		case StepList:
			var v *[]bool
			if !all {
				v = new([]bool)
			}
			var o []int
			for _, p := range pages {
				var err error
				if o, err = p.offsets(o, v); err != nil {
					return nil, nil, err
				}
			}
			if len(o) == 0 {
				o = []int{0}
			}
			offs[d] = o
			if v != nil {
				valid[d] = *v
			}
			continue
		case StepFSL:
			for _, p := range pages {
				if err := p.decimate(path[d].Dim); err != nil {
					return nil, nil, err
				}
			}
			all = true
			for _, p := range pages {
				all = all && p.allValid()
			}
		}
		if all {
			for _, p := range pages {
				p.skip()
			}
			continue
		}
		var v []bool
		for _, p := range pages {
			var err error
			if v, err = p.validity(v); err != nil {
				return nil, nil, err
			}
		}
		valid[d] = v
	}
	return valid, offs, nil
}

// lanceColumn is one leaf column as Lance 14 reads it in one batch: the
// validity and offsets of every layer (outer-most first, from lanceUnravel)
// and the structure planar meant (UnravelPath over all the arrays at once).
type lanceColumn struct {
	valid [][]bool
	offs  [][]int
	want  []LayerData
	fsl   bool // Lance 14 cannot read the column from dense levels (FSL<...List<...>>)
}

// unravelColumn builds the pages of one leaf column (arrays cut into pages as
// given, layers kept nullable per keep; page i sparse when sparse[i], as
// planar writes all-null and constant pages in 2.3) and unravels them all at
// once as Lance's reader does.
func unravelColumn(t testing.TB, pages [][]arrow.Array, path []Step, keep, sparse []bool) lanceColumn {
	t.Helper()
	var all []arrow.Array
	var sims []lancePage
	for i, arrs := range pages {
		all = append(all, arrs...)
		d, _, err := BuildDenseKeep(arrs, path, keep)
		if err != nil {
			t.Fatal(err)
		}
		if testing.Verbose() {
			t.Logf("page %d: layers %v rep %v def %v visible %d sparse %v", i, d.Layers, d.Rep, d.Def, d.NumVisible, sparse != nil && sparse[i])
		}
		if sparse != nil && sparse[i] {
			lds, err := UnravelPath(d.Layers, path, d.Rep, d.Def, d.NumRows, d.NumVisible)
			if err != nil {
				t.Fatal(err)
			}
			sims = append(sims, newLanceSparse(lds))
			continue
		}
		sims = append(sims, newLanceSim(d.Layers, d.Rep, d.Def, d.NumVisible))
	}
	whole, _, err := BuildDense(all, path)
	if err != nil {
		t.Fatal(err)
	}
	var c lanceColumn
	if c.want, err = UnravelPath(whole.Layers, path, whole.Rep, whole.Def, whole.NumRows, whole.NumVisible); err != nil {
		t.Fatal(err)
	}
	if c.valid, c.offs, err = lanceUnravel(path, sims); err != nil {
		for _, st := range path {
			if st.Kind == StepFSL && whole.Rep != nil {
				c.fsl = true // Lance 14 cannot read these from dense levels at all
				return c
			}
		}
		t.Fatalf("Lance unravel: %v", err)
	}
	return c
}

// maskedSlots returns, per layer of want (outer-most first), the slots below
// a null slot of an outer layer.
func maskedSlots(path []Step, want []LayerData) [][]bool {
	masked := make([][]bool, len(want))
	for d, w := range want {
		masked[d] = make([]bool, w.Len)
		if d == 0 {
			continue
		}
		p := want[d-1]
		for i := range masked[d] {
			var ps int
			switch path[d-1].Kind {
			case StepList:
				ps = -1
				for k := 0; k < p.Len; k++ {
					if int(p.Offsets[k]) <= i && i < int(p.Offsets[k+1]) {
						ps = k
						break
					}
				}
			case StepFSL:
				ps = i / p.Dim
			default:
				ps = i
			}
			if ps >= 0 && (masked[d-1][ps] || p.Valid != nil && !p.Valid[ps]) {
				masked[d][i] = true
			}
		}
	}
	return masked
}

// checkLanceReads checks that Lance's unraveling of all the pages of one leaf
// column at once gives the structure planar's own unraveling of one page over
// all the arrays gives (slots below a null slot may have either validity).
func checkLanceReads(t testing.TB, pages [][]arrow.Array, path []Step, keep, sparse []bool) lanceColumn {
	t.Helper()
	c := unravelColumn(t, pages, path, keep, sparse)
	if c.fsl {
		return c
	}
	masked := maskedSlots(path, c.want)
	for d, w := range c.want {
		if path[d].Kind == StepList {
			o := make([]int, len(w.Offsets))
			for i, x := range w.Offsets {
				o[i] = int(x)
			}
			if !slices.Equal(c.offs[d], o) {
				t.Errorf("layer %d (list): Lance offsets %v, want %v", d, c.offs[d], o)
			}
		}
		got := c.valid[d]
		if got == nil {
			continue // all valid, whatever the length
		}
		if len(got) != w.Len {
			t.Errorf("layer %d (%v): Lance unravels %d validity entries for %d slots", d, path[d].Kind, len(got), w.Len)
			continue
		}
		for i, v := range got {
			if wv := w.Valid == nil || w.Valid[i]; v != wv && !masked[d][i] {
				t.Errorf("layer %d (%v) slot %d: Lance valid=%v, want %v", d, path[d].Kind, i, v, wv)
				break
			}
		}
	}
	return c
}

// TestLanceReadsEveryNesting: for random data of many nestings and null
// rates, cut into pages at random, Lance's reader (simulated) unravels
// planar's levels to the intended structure: list layers below nullable
// parents (issue #9.3) and item layers whose kind could differ between pages
// (issue #9.10).
func TestLanceReadsEveryNesting(t *testing.T) {
	i32, i64, str := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String
	types := []arrow.DataType{
		arrow.StructOf(ntNullable("a", arrow.ListOf(i32))),
		arrow.ListOf(arrow.StructOf(ntNullable("a", i32), ntNullable("b", arrow.ListOf(str)))),
		arrow.ListOf(arrow.StructOf(ntNullable("a", i32), ntNullable("b", arrow.ListOf(i64)))),
		arrow.StructOf(ntNullable("s", arrow.StructOf(ntNullable("l", arrow.ListOf(arrow.ListOf(i32)))))),
		arrow.ListOf(arrow.ListOf(arrow.StructOf(ntNullable("x", i32)))),
		arrow.ListOf(arrow.StructOf(ntNullable("l", arrow.ListOf(arrow.StructOf(ntNullable("m", arrow.ListOf(i32))))))),
		arrow.MapOf(str, arrow.ListOf(i32)),
		arrow.StructOf(ntNullable("m", arrow.MapOf(str, i32))),
		arrow.FixedSizeListOf(2, arrow.StructOf(ntNullable("x", i32))),
		arrow.StructOf(ntNullable("s", arrow.FixedSizeListOf(3, arrow.StructOf(ntNullable("x", i32))))),
	}
	r := rand.New(rand.NewPCG(7, 11))
	checked := 0
	for iter := range 300 {
		g := &ntGen{r: r, pNull: []float64{0, 0.1, 0.3, 0.7, 1}[iter%5]}
		for ti, dt := range types {
			var pages [][]arrow.Array
			for range r.IntN(3) + 1 {
				var arrs []arrow.Array
				// Pages of one column can have very different content.
				g.pNull = []float64{0, 0.1, 0.5, 1}[r.IntN(4)]
				for range r.IntN(2) + 1 {
					arrs = append(arrs, g.gen(dt, r.IntN(6)+1))
				}
				pages = append(pages, arrs)
			}
			f := arrow.Field{Name: "c", Type: dt, Nullable: true}
			for _, path := range LeafPathsField(f) {
				hasFSL := false
				for _, st := range path {
					hasFSL = hasFSL || st.Kind == StepFSL
				}
				if hasFSL && len(pages) > 1 {
					pages = pages[:1] // written as one page (FORMAT.md 5b)
				}
				checkLanceReads(t, pages, path, KeepNullable(f, path), nil)
				checked++
				if t.Failed() {
					t.Fatalf("iter %d type %d (%s) path %v", iter, ti, dt, path)
				}
			}
		}
	}
	t.Logf("%d columns checked", checked)
}

// TestLanceReadsIssueExamples: the literal cases of issue #9.3 and #9.10.
func TestLanceReadsIssueExamples(t *testing.T) {
	mk := func(dt arrow.DataType, js string) arrow.Array { return ntJSON(t, dt, js) }
	s1 := arrow.StructOf(ntNullable("a", arrow.ListOf(arrow.PrimitiveTypes.Int32)))
	s2 := arrow.ListOf(arrow.StructOf(ntNullable("a", arrow.PrimitiveTypes.Int32), ntNullable("b", arrow.ListOf(arrow.BinaryTypes.String))))
	cases := []struct {
		name  string
		dt    arrow.DataType
		pages []string
	}{
		{"struct_list_null_parent", s1, []string{`[{"a": [null]}, null, {"a": [1, 2]}]`}},
		{"list_struct_list", s2, []string{`[[{"a": 1, "b": [null, "x"]}, null], [{"a": 2, "b": ["y"]}]]`}},
		{"pages_null_then_null_child", s1, []string{`[null, null, null, null, null]`, `[{"a": null}, {"a": null}, {"a": null}, {"a": null}, {"a": null}]`}},
		{"pages_valid_then_null", s1, []string{`[{"a": [1]}, {"a": [2, 3]}]`, `[null, {"a": [4]}]`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var pages [][]arrow.Array
			for _, js := range c.pages {
				pages = append(pages, []arrow.Array{mk(c.dt, js)})
			}
			f := arrow.Field{Name: "c", Type: c.dt, Nullable: true}
			for _, path := range LeafPathsField(f) {
				checkLanceReads(t, pages, path, KeepNullable(f, path), nil)
			}
		})
	}
}

// nullBuffersEqual is CompositeRepDefUnraveler::null_buffers_equal: two
// validities (nil = None, all valid) of a layer of n slots agree when both
// are None, or both have n entries and are equal, or one is None and the
// other has n entries, all valid.
func nullBuffersEqual(a, b []bool, n int) bool {
	switch {
	case a == nil && b == nil:
		return true
	case a == nil:
		return len(b) == n && !slices.Contains(b, false)
	case b == nil:
		return len(a) == n && !slices.Contains(a, false)
	}
	return len(a) == n && len(b) == n && slices.Equal(a, b)
}

// cutPages cuts the rows of arrs into pages at random rows (each page the
// slices of arrs it covers), as the pages of sibling columns are cut where
// each column's own page budget runs out.
func cutPages(r *rand.Rand, arrs []arrow.Array, maxPages int) [][]arrow.Array {
	rows := 0
	for _, a := range arrs {
		rows += a.Len()
	}
	cuts := []int{0, rows}
	for range r.IntN(maxPages + 1) {
		cuts = append(cuts, r.IntN(rows+1))
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var pages [][]arrow.Array
	for k := 0; k+1 < len(cuts); k++ {
		var page []arrow.Array
		base := 0
		for _, a := range arrs {
			s, e := max(cuts[k]-base, 0), min(cuts[k+1]-base, a.Len())
			if s < e {
				page = append(page, array.NewSlice(a, int64(s), int64(e)))
			}
			base += a.Len()
		}
		pages = append(pages, page)
	}
	return pages
}

// TestLanceReadsSiblings: Lance 14's struct decoder unravels a struct's
// validity (and the offsets and validity of every list above it) from each
// child column and, when one of them holds a sparse page, requires them all
// equal (CompositeRepDefUnraveler::add_compatibility_check: "Structural
// sibling fields have incompatible validity metadata"), slots below a null
// ancestor included. The columns of one struct are cut into pages at
// different rows, and any page may be sparse (all-null and constant pages):
// for random data of many nestings, every pair of columns under a struct
// must give Lance the same structure for every layer they share.
func TestLanceReadsSiblings(t *testing.T) {
	i32, i64, str := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String
	req := func(name string, dt arrow.DataType) arrow.Field { return arrow.Field{Name: name, Type: dt} }
	xy := arrow.StructOf(ntNullable("x", i32), ntNullable("y", i32))
	fields := []arrow.Field{
		// The shape of differential seed 101958.
		ntNullable("c", arrow.StructOf(
			ntNullable("f1", arrow.StructOf(
				req("f2", arrow.ListOf(arrow.StructOf(ntNullable("f3", i32), ntNullable("f4", str)))),
				ntNullable("f6", i32), ntNullable("f7", i64))),
			ntNullable("f8", arrow.ListOf(i64)))),
		ntNullable("c", arrow.StructOf(ntNullable("s", xy), ntNullable("c", i32))),
		ntNullable("c", arrow.StructOf(ntNullable("s", arrow.StructOf(ntNullable("t", xy), req("u", i32))), req("v", i32))),
		ntNullable("c", arrow.ListOf(arrow.StructOf(ntNullable("s", arrow.StructOf(ntNullable("a", i32), ntNullable("l", arrow.ListOf(i32)))), ntNullable("b", i32)))),
		ntNullable("c", arrow.StructOf(req("s", arrow.StructOf(ntNullable("l", arrow.ListOf(i32)), ntNullable("a", i32))), ntNullable("b", i32))),
		ntNullable("c", arrow.StructOf(req("s", arrow.StructOf(req("t", arrow.StructOf(ntNullable("l", arrow.ListOf(i32)))), ntNullable("a", i32))), ntNullable("b", i32))),
		ntNullable("c", arrow.StructOf(ntNullable("m", arrow.MapOf(str, arrow.ListOf(i32))), ntNullable("n", i32))),
		ntNullable("c", arrow.StructOf(ntNullable("a", arrow.FixedSizeListOf(2, xy)), ntNullable("b", i32))),
		ntNullable("c", arrow.StructOf(ntNullable("a", arrow.ListOf(arrow.FixedSizeListOf(2, xy))), ntNullable("b", i32))),
		ntNullable("c", arrow.FixedSizeListOf(2, arrow.StructOf(ntNullable("x", i32), ntNullable("s", xy)))),
		req("c", arrow.StructOf(ntNullable("s", arrow.StructOf(ntNullable("l", arrow.ListOf(i32)))), ntNullable("t", xy))),
	}
	r := rand.New(rand.NewPCG(13, 17))
	compared := 0
	for iter := range 300 {
		for fi, f := range fields {
			g := &ntGen{r: r, pNull: []float64{0, 0.1, 0.3, 0.7, 1}[iter%5]}
			var arrs []arrow.Array
			for range r.IntN(3) + 1 {
				g.pNull = []float64{0, 0.1, 0.5, 1}[r.IntN(4)]
				g.noNull = !f.Nullable
				arrs = append(arrs, g.gen(f.Type, r.IntN(6)+1))
			}
			paths := LeafPathsField(f)
			cols := make([]lanceColumn, len(paths))
			for pi, path := range paths {
				fsl, list := false, false
				for _, st := range path {
					fsl = fsl || st.Kind == StepFSL
					list = list || st.Kind == StepList
				}
				maxPages := 4
				if fsl {
					maxPages = 0 // written as one page (FORMAT.md 5b)
				}
				pages := cutPages(r, arrs, maxPages)
				sparse := make([]bool, len(pages))
				for i := range sparse {
					// FSL with a list: sparse pages only (FORMAT.md 5b).
					sparse[i] = fsl && list || r.IntN(3) == 0
				}
				cols[pi] = checkLanceReads(t, pages, path, KeepNullable(f, path), sparse)
				if t.Failed() {
					t.Fatalf("iter %d field %d (%s) path %v", iter, fi, f.Type, path)
				}
			}
			for i := range paths {
				for j := i + 1; j < len(paths); j++ {
					if cols[i].fsl || cols[j].fsl {
						continue
					}
					for d := 0; d < len(paths[i])-1 && d < len(paths[j])-1; d++ {
						if d > 0 && paths[i][d-1] != paths[j][d-1] {
							break
						}
						compared++
						n := cols[i].want[d].Len
						if paths[i][d].Kind == StepList {
							if !slices.Equal(cols[i].offs[d], cols[j].offs[d]) {
								t.Errorf("layer %d (list): offsets %v (column %d) and %v (column %d)", d, cols[i].offs[d], i, cols[j].offs[d], j)
							}
						}
						if !nullBuffersEqual(cols[i].valid[d], cols[j].valid[d], n) {
							t.Errorf("layer %d (%v) of %d slots: validity %v (column %d) and %v (column %d)", d, paths[i][d].Kind, n, cols[i].valid[d], i, cols[j].valid[d], j)
						}
					}
					if t.Failed() {
						t.Fatalf("iter %d field %d (%s) columns %v and %v", iter, fi, f.Type, paths[i], paths[j])
					}
				}
			}
		}
	}
	t.Logf("%d shared layers compared", compared)
}
