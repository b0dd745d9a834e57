package structural

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
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

// lanceUnravel runs Lance's composite unraveler over the pages (one lanceSim
// each) of one leaf column and returns the validity (nil = all valid) and
// the offsets of every layer, outer-most first, as Lance would build them.
func lanceUnravel(path []Step, pages []*lanceSim) ([][]bool, [][]int, error) {
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

// checkLanceReads builds the pages of one leaf column (arrays cut into pages
// as given, layers kept nullable per keep) and checks that Lance's
// unraveling of all the pages at once gives the structure planar's own
// unraveling of one page over all the arrays gives.
func checkLanceReads(t testing.TB, pages [][]arrow.Array, path []Step, keep []bool) {
	t.Helper()
	var all []arrow.Array
	var sims []*lanceSim
	for _, arrs := range pages {
		all = append(all, arrs...)
		d, _, err := BuildDenseKeep(arrs, path, keep)
		if err != nil {
			t.Fatal(err)
		}
		sims = append(sims, newLanceSim(d.Layers, d.Rep, d.Def, d.NumVisible))
		if testing.Verbose() {
			t.Logf("page: layers %v rep %v def %v visible %d", d.Layers, d.Rep, d.Def, d.NumVisible)
		}
	}
	whole, _, err := BuildDense(all, path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := UnravelPath(whole.Layers, path, whole.Rep, whole.Def, whole.NumRows, whole.NumVisible)
	if err != nil {
		t.Fatal(err)
	}
	valid, offs, err := lanceUnravel(path, sims)
	if err != nil {
		for _, st := range path {
			if st.Kind == StepFSL && whole.Rep != nil {
				return // Lance 14 cannot read these from dense levels at all
			}
		}
		t.Fatalf("Lance unravel: %v", err)
	}
	// A slot below a null slot is null whatever its own bit: compare only
	// the slots whose ancestors are all valid.
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
	for d, w := range want {
		if path[d].Kind == StepList {
			o := make([]int, len(w.Offsets))
			for i, x := range w.Offsets {
				o[i] = int(x)
			}
			if !slices.Equal(offs[d], o) {
				t.Errorf("layer %d (list): Lance offsets %v, want %v", d, offs[d], o)
			}
		}
		got := valid[d]
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
				checkLanceReads(t, pages, path, KeepNullable(f, path))
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
				checkLanceReads(t, pages, path, KeepNullable(f, path))
			}
		})
	}
}
