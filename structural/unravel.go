package structural

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/planarlance/planar/internal/par"
)

// ErrCorruptLevels reports repetition/definition levels (or the counts that
// go with them) that no Arrow data could have produced.
var ErrCorruptLevels = errors.New("planar/structural: corrupt levels")

// LayerData is the Arrow structure of one layer of a decoded page, outer-most
// first.
type LayerData struct {
	Layer   Layer
	Len     int     // number of slots of this layer
	Valid   []bool  // nil = all valid; else len Len
	Offsets []int32 // list layers only: Len+1 offsets into the next layer's slots, starting at 0
	Dim     int     // structural FSL layers: children per slot (0 otherwise)
}

// Unravel turns one page's levels into per-layer structure. layers is
// inner-most first (as stored), kinds gives the StepKind of each layer
// outer-most first, numRows is the page length (elements, see BuildDense) and
// numVisible the number of leaf values decoded. The result is outer-most
// first; its last entry is the leaf validity layer (Len == numVisible).
//
// kinds carries no FSL dimension, so a path with a StepFSL layer must use
// UnravelPath.
func Unravel(layers []Layer, kinds []StepKind, rep, def []uint16, numRows, numVisible int) ([]LayerData, error) {
	path := make([]Step, len(kinds))
	for i, k := range kinds {
		if k == StepFSL {
			return nil, errors.New("planar/structural: Unravel cannot know the dimension of a structural FSL layer; use UnravelPath")
		}
		path[i] = Step{Kind: k}
	}
	return UnravelPath(layers, path, rep, def, numRows, numVisible)
}

// UnravelPath is Unravel with the full path (as from LeafPaths), which also
// gives the dimension of structural FSL layers. Struct child indices are
// ignored.
//
// Slots below a null struct or FSL slot are reported null (the push-down of
// BuildDense), whatever the child layer's kind; a list below one is a null
// list of length 0. Null and empty lists have equal offsets. Every
// inconsistency (a level past the layers' bands, a repetition level that does
// not fit the nesting, an entry under a null slot that does not carry its
// level, counts that disagree) returns an error wrapping ErrCorruptLevels.
func UnravelPath(layers []Layer, path []Step, rep, def []uint16, numRows, numVisible int) ([]LayerData, error) {
	L := len(path)
	if L == 0 || len(layers) != L {
		return nil, corrupt("%d layers for a path of %d steps", len(layers), L)
	}
	if numRows < 0 || numVisible < 0 {
		return nil, corrupt("negative counts (rows %d, visible %d)", numRows, numVisible)
	}
	u := &unraveler{
		path:      path,
		listBelow: make([]int, L+1),
		out:       make([]LayerData, L),
		anyNull:   make([]bool, L),
	}
	dims := 1
	for d := L - 1; d >= 0; d-- {
		st := path[d]
		l := layers[L-1-d]
		u.out[d].Layer = l
		u.listBelow[d] = u.listBelow[d+1]
		switch st.Kind {
		case StepLeaf:
			if d != L-1 {
				return nil, corrupt("leaf step at %d of a %d-step path", d, L)
			}
		case StepStruct, StepFSL, StepList:
			if d == L-1 {
				return nil, corrupt("path ends with a %v step, not a leaf", st.Kind)
			}
		default:
			return nil, corrupt("path step %d has unknown kind %v", d, st.Kind)
		}
		switch l {
		case AllValidItem, NullableItem:
			if st.Kind == StepList {
				return nil, corrupt("layer %d is %v for a list step", d, l)
			}
		case AllValidList, NullableList, EmptyableList, NullAndEmptyList:
			if st.Kind != StepList {
				return nil, corrupt("layer %d is %v for a %v step", d, l, st.Kind)
			}
		default:
			return nil, corrupt("layer %d has unknown kind %v", d, l)
		}
		switch st.Kind {
		case StepList:
			u.listBelow[d]++
			u.out[d].Offsets = []int32{0}
		case StepFSL:
			if st.Dim <= 0 {
				return nil, corrupt("structural FSL step %d has dimension %d", d, st.Dim)
			}
			if dims > math.MaxInt32/st.Dim {
				return nil, corrupt("structural FSL dimensions overflow")
			}
			dims *= st.Dim
			u.out[d].Dim = st.Dim
		}
	}

	// Def bands, inner-most first: value → (layer, empty?).
	u.condLayer = []int{L} // value 0: no condition
	u.condEmpty = []bool{false}
	for j := range L {
		d := L - 1 - j
		switch layers[j] {
		case NullableItem, NullableList:
			u.condLayer, u.condEmpty = append(u.condLayer, d), append(u.condEmpty, false)
		case EmptyableList:
			u.condLayer, u.condEmpty = append(u.condLayer, d), append(u.condEmpty, true)
		case NullAndEmptyList:
			u.condLayer, u.condEmpty = append(u.condLayer, d, d), append(u.condEmpty, false, true)
		}
	}

	R := u.listBelow[0]
	switch {
	case R == 0 && len(rep) > 0:
		return nil, corrupt("repetition levels without a list layer")
	case R > 0 && rep == nil && (len(def) > 0 || numVisible > 0 || numRows > 0):
		return nil, corrupt("no repetition levels for %d list layers", R)
	}
	if R > 0 {
		u.n = len(rep)
		if def != nil && len(def) != u.n {
			return nil, corrupt("%d repetition and %d definition levels", len(rep), len(def))
		}
	} else if def != nil {
		u.n = len(def)
	} else {
		return trivial(u.out, dims, numRows, numVisible)
	}
	if R > 0 {
		u.rep = rep
	}
	u.def = def
	if L == 1 && flatUnravel {
		// A flat leaf: one slot per entry, its definition level its
		// validity (the common case, without the walk).
		return unravelFlat(u.out, u.condLayer, def, numRows, numVisible)
	}
	if R <= 1 && !HasStep(path, StepFSL) && flatUnravel {
		// Structs and at most one list: one pass over the entries.
		return u.chain(numRows, numVisible)
	}

	rows := 0
	for u.pos < u.n {
		if err := u.slot(0, -1, true); err != nil {
			return nil, err
		}
		rows++
	}
	if u.visible != numVisible {
		return nil, corrupt("levels give %d visible items, page has %d", u.visible, numVisible)
	}
	if rows > math.MaxInt/dims || rows*dims != numRows {
		return nil, corrupt("levels give %d rows (×%d), page has %d", rows, dims, numRows)
	}
	for d := range u.out {
		if !u.anyNull[d] {
			u.out[d].Valid = nil
		}
	}
	return u.out, nil
}

// flatUnravel enables unravelFlat (tests compare it with the walk).
var flatUnravel = true

// unravelFlat unravels the definition levels of a one-layer page (a leaf
// without ancestors): entry i is slot i, null when its level names the
// leaf's own condition. It gives what the walk gives, in one pass.
func unravelFlat(out []LayerData, condLayer []int, def []uint16, numRows, numVisible int) ([]LayerData, error) {
	n := len(def)
	if n != numVisible {
		return nil, corrupt("levels give %d visible items, page has %d", n, numVisible)
	}
	if n != numRows {
		return nil, corrupt("levels give %d rows (×1), page has %d", n, numRows)
	}
	maxDef := uint16(len(condLayer) - 1)
	// First, branch-free, whether any entry is null or out of range; then
	// the validity. Both passes run in pieces side by side on large pages.
	cuts := []int{0, n}
	if n >= 2*par.MinValues {
		cuts = par.Pieces(n, par.MinValues)
	}
	ors, tops := make([]uint16, len(cuts)-1), make([]uint16, len(cuts)-1)
	par.EachPiece(cuts, func(j, lo, hi int) error {
		var or, top uint16
		for _, v := range def[lo:hi] {
			or |= v
			top = max(top, v)
		}
		ors[j], tops[j] = or, top
		return nil
	})
	or, top := uint16(0), slices.Max(tops)
	for _, o := range ors {
		or |= o
	}
	if top > maxDef {
		i := slices.IndexFunc(def, func(v uint16) bool { return v > maxDef })
		return nil, corrupt("entry %d has definition %d, maximum is %d", i, def[i], maxDef)
	}
	var valid []bool // nil: every entry valid
	if or != 0 {
		valid = make([]bool, n)
		par.EachPiece(cuts, func(_, lo, hi int) error {
			out := valid[lo:hi]
			for i, v := range def[lo:hi] {
				out[i] = v == 0
			}
			return nil
		})
	}
	out[0].Len = n
	out[0].Valid = valid
	return out, nil
}

// chain unravels a path of struct layers and at most one list layer (no
// structural FSL) in one pass, giving what the walk gives. An entry's
// condition layer c (len(path): none) makes every slot it opens above c
// valid and the slots at and below c null; with a list at depth k, an entry
// of repetition 1 starts a row and one of repetition 0 adds a child to the
// row's list, which must have children (c > k).
func (u *unraveler) chain(numRows, numVisible int) ([]LayerData, error) {
	L := len(u.path)
	k := L // depth of the list layer (L: none)
	for d, st := range u.path {
		if st.Kind == StepList {
			k = d
		}
	}
	if k < L && u.n > math.MaxInt32 {
		return nil, corrupt("page of %d entries has more than 2^31-1 slots", u.n)
	}
	cuts := []int{0, u.n}
	if u.n >= 2*par.MinValues {
		cuts = u.rowCuts(k < L)
	}
	parts := make([]chainPart, len(cuts)-1)
	if err := par.EachPiece(cuts, func(j, lo, hi int) error {
		return u.chainPiece(&parts[j], k, lo, hi)
	}); err != nil {
		return nil, err
	}
	// Join the pieces: slots one after another per layer, the list
	// offsets running on past the children of the pieces before.
	out := parts[0].out
	rows, visible := parts[0].rows, parts[0].visible
	anyNull := parts[0].anyNull
	if len(parts) > 1 {
		out = u.out
		for d := range out {
			n := 0
			for _, p := range parts {
				n += p.out[d].Len
			}
			out[d].Len = n
			out[d].Valid = make([]bool, 0, n)
		}
		if k < L {
			n := 1
			for _, p := range parts {
				n += len(p.out[k].Offsets)
			}
			out[k].Offsets = make([]int32, 1, n)
		}
		children := int32(0)
		for j, p := range parts {
			if j > 0 {
				rows, visible = rows+p.rows, visible+p.visible
				for d := range anyNull {
					anyNull[d] = anyNull[d] || p.anyNull[d]
				}
			}
			for d := range out {
				out[d].Valid = append(out[d].Valid, p.out[d].Valid...)
			}
			if k < L {
				for _, o := range p.out[k].Offsets[1:] {
					out[k].Offsets = append(out[k].Offsets, o+children)
				}
				children += int32(p.out[k+1].Len)
			}
		}
	}
	if visible != numVisible {
		return nil, corrupt("levels give %d visible items, page has %d", visible, numVisible)
	}
	if rows != numRows {
		return nil, corrupt("levels give %d rows (×1), page has %d", rows, numRows)
	}
	for d := range out {
		if !anyNull[d] {
			out[d].Valid = nil
		}
	}
	return out, nil
}

// rowCuts cuts the entries into pieces at row starts (with a list layer,
// entries of repetition 1), about par.Pieces's; a cut that finds no row
// start before the next one is dropped.
func (u *unraveler) rowCuts(list bool) []int {
	cuts := par.Pieces(u.n, par.MinValues)
	out := []int{0}
	for _, c := range cuts[1 : len(cuts)-1] {
		if list {
			for c < u.n && u.rep[c] != 1 {
				c++
			}
		}
		if c > out[len(out)-1] && c < u.n {
			out = append(out, c)
		}
	}
	return append(out, u.n)
}

// chainPart is what chain unravels of one piece of a page's entries: per
// layer its slots (list offsets from 0, counted over the piece's own
// children), which layers have a null slot, and its rows and visible
// items.
type chainPart struct {
	out           []LayerData
	anyNull       []bool
	rows, visible int
}

// chainPiece unravels entries [lo, hi), lo a row start, into p (the list
// layer at depth k; L when none).
func (u *unraveler) chainPiece(p *chainPart, k, lo, hi int) error {
	L := len(u.path)
	p.out = make([]LayerData, L)
	p.anyNull = make([]bool, L)
	for d := range p.out {
		p.out[d].Layer, p.out[d].Dim = u.out[d].Layer, u.out[d].Dim
	}
	// Slots above the list open once a row, those below once an entry.
	rowCap := hi - lo
	if k < L {
		rowCap = 0
		for _, r := range u.rep[lo:hi] {
			if r == 1 {
				rowCap++
			}
		}
		p.out[k].Offsets = make([]int32, 1, rowCap+1)
	}
	for d := range p.out {
		c := hi - lo
		if d <= k {
			c = rowCap
		}
		p.out[d].Valid = make([]bool, 0, c)
	}
	cond := func(i int) (int, bool, error) {
		if u.def == nil {
			return L, false, nil
		}
		v := int(u.def[i])
		if v >= len(u.condLayer) {
			return 0, false, corrupt("entry %d has definition %d, maximum is %d", i, v, len(u.condLayer)-1)
		}
		return u.condLayer[v], u.condEmpty[v], nil
	}
	out, anyNull := p.out, p.anyNull
	// push opens the slots of depths [from, to) for an entry of condition c.
	push := func(from, to, c int) {
		for d := from; d < to; d++ {
			o := &out[d]
			o.Valid = append(o.Valid, c > d)
			o.Len++
			if c <= d {
				anyNull[d] = true
			}
		}
	}
	rows, visible, open := 0, 0, false
	for i := lo; i < hi; i++ {
		c, empty, err := cond(i)
		if err != nil {
			return err
		}
		if k == L {
			push(0, L, c)
			rows++
			visible++ // every entry reaches the leaf
			continue
		}
		switch r := u.rep[i]; {
		case r == 1:
			if open {
				out[k].Offsets = append(out[k].Offsets, int32(out[k+1].Len))
			}
			rows++
			push(0, k, c)
			if c <= k {
				// A list without children: null, empty or under a null.
				o := &out[k]
				valid := c == k && empty
				o.Valid = append(o.Valid, valid)
				o.Len++
				if !valid {
					anyNull[k] = true
				}
				open = false
				out[k].Offsets = append(out[k].Offsets, int32(out[k+1].Len))
				continue
			}
			push(k, L, c)
			open = true
		case r == 0 && open:
			if c <= k {
				return corrupt("entry %d has the condition of layer %d inside a valid slot of it", i, c)
			}
			push(k+1, L, c)
		case r == 0:
			return corrupt("entry %d has repetition 0, a new slot of layer 0 needs 1", i)
		default:
			return corrupt("entry %d has repetition %d, at most 1 for one list layer", i, r)
		}
		visible++ // a child of the list reaches the leaf
	}
	if open {
		out[k].Offsets = append(out[k].Offsets, int32(out[k+1].Len))
	}
	p.rows, p.visible = rows, visible
	return nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorruptLevels}, args...)...)
}

// trivial is a page without level streams and without lists: every slot is
// valid and every entry visible.
func trivial(out []LayerData, dims, numRows, numVisible int) ([]LayerData, error) {
	if numRows != numVisible || numRows%dims != 0 {
		return nil, corrupt("page of %d rows has %d visible items (dimensions %d)", numRows, numVisible, dims)
	}
	n := numRows / dims
	for d := range out {
		out[d].Len = n
		if out[d].Dim > 0 {
			n *= out[d].Dim
		}
	}
	return out, nil
}

type unraveler struct {
	path      []Step
	listBelow []int  // list layers at depth ≥ d
	condLayer []int  // def value → layer depth of its condition (len(path) = none)
	condEmpty []bool // def value → the condition is an empty list
	rep, def  []uint16
	n, pos    int
	visible   int
	out       []LayerData
	anyNull   []bool
}

func (u *unraveler) push(d int, valid bool) {
	o := &u.out[d]
	o.Valid = append(o.Valid, valid)
	o.Len++
	if !valid {
		u.anyNull[d] = true
	}
}

// slot parses one slot of layer d starting at the current entry. inh is the
// layer of an ancestor's null condition (-1 = none); checkRep says the slot
// is not the first child of its parent, so its first entry must carry the
// repetition level of a new slot at depth d.
func (u *unraveler) slot(d, inh int, checkRep bool) error {
	if u.pos >= u.n {
		return corrupt("levels end inside a slot of layer %d", d)
	}
	if checkRep && u.rep != nil {
		if r := int(u.rep[u.pos]); r != u.listBelow[d] {
			return corrupt("entry %d has repetition %d, a new slot of layer %d needs %d", u.pos, r, d, u.listBelow[d])
		}
	}
	c, empty := len(u.path), false
	if u.def != nil {
		v := int(u.def[u.pos])
		if v >= len(u.condLayer) {
			return corrupt("entry %d has definition %d, maximum is %d", u.pos, v, len(u.condLayer)-1)
		}
		c, empty = u.condLayer[v], u.condEmpty[v]
	}
	if inh >= 0 {
		if c != inh {
			return corrupt("entry %d below a null slot of layer %d has definition of layer %d", u.pos, inh, c)
		}
	} else if c < d {
		return corrupt("entry %d has the condition of layer %d inside a valid slot of it", u.pos, c)
	}
	st := u.path[d]
	switch st.Kind {
	case StepLeaf:
		u.push(d, inh < 0 && c != d)
		u.pos++
		u.visible++
		return nil
	case StepStruct, StepFSL:
		u.push(d, inh < 0 && c != d)
		ninh := inh
		if inh < 0 && c == d {
			ninh = d
		}
		reps := 1
		if st.Kind == StepFSL {
			reps = st.Dim
		}
		for i := range reps {
			if err := u.slot(d+1, ninh, i > 0); err != nil {
				return err
			}
		}
		return nil
	}
	// List layer.
	k := u.listBelow[d]
	if inh >= 0 || c == d {
		// A slot without children: pushed-down null, null or empty list.
		u.push(d, inh < 0 && empty)
		u.pos++
		return u.closeList(d)
	}
	u.push(d, true)
	if err := u.slot(d+1, -1, false); err != nil {
		return err
	}
	for u.pos < u.n {
		r := int(u.rep[u.pos])
		if r >= k {
			break
		}
		if r != k-1 {
			return corrupt("entry %d has repetition %d after a complete child of list layer %d (number %d)", u.pos, r, d, k)
		}
		if err := u.slot(d+1, -1, true); err != nil {
			return err
		}
	}
	return u.closeList(d)
}

func (u *unraveler) closeList(d int) error {
	n := u.out[d+1].Len
	if n > math.MaxInt32 {
		return corrupt("layer %d has more than 2^31-1 slots", d+1)
	}
	u.out[d].Offsets = append(u.out[d].Offsets, int32(n))
	return nil
}
