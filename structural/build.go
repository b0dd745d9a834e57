package structural

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/internal/par"
)

// ErrInvalidArray reports an Arrow array whose structure is inconsistent
// (offsets that decrease or point past the child, a child shorter than its
// parent, a dictionary key past the dictionary).
var ErrInvalidArray = errors.New("planar/structural: invalid array")

// StepKind is the kind of one node on the path from a top-level field to a
// leaf column.
type StepKind int

const (
	// StepStruct is a (non-empty) struct; Step.Child selects the child.
	StepStruct StepKind = iota
	// StepList is a list, large_list or map (a map is a list of its entries
	// struct, which follows as a StepStruct step).
	StepList
	// StepFSL is a structural fixed-size list (one whose child is a struct);
	// Step.Dim is its dimension.
	StepFSL
	// StepLeaf is the leaf column itself.
	StepLeaf
)

func (k StepKind) String() string {
	switch k {
	case StepStruct:
		return "struct"
	case StepList:
		return "list"
	case StepFSL:
		return "fsl"
	case StepLeaf:
		return "leaf"
	}
	return fmt.Sprintf("StepKind(%d)", int(k))
}

// Step is one node on the path from a top-level field to a leaf column.
type Step struct {
	Kind  StepKind
	Child int // struct child index (StepStruct)
	Dim   int // FSL dimension (StepFSL)
}

// ElementsPerRow is the product of the structural fixed-size list
// dimensions on path: a page of the leaf counts rows times this many
// elements (1 without such a layer).
func ElementsPerRow(path []Step) int {
	d := 1
	for _, st := range path {
		if st.Kind == StepFSL {
			d *= st.Dim
		}
	}
	return d
}

// HasStep reports whether a step of kind k is on path.
func HasStep(path []Step, k StepKind) bool {
	for _, st := range path {
		if st.Kind == k {
			return true
		}
	}
	return false
}

// LeafPaths returns the steps from a top-level Arrow type to each of its leaf
// columns, in Lance column order (depth-first, left to right).
//
// Leaves are the types without Lance-schema children: primitives, strings and
// binaries, fixed-size binary, dictionaries, null, empty structs and
// fixed-size lists of a non-struct (a primitive FSL is a leaf: its vectors are
// the leaf values). Structs, lists, large lists, maps (a list layer followed by
// the entries struct) and fixed-size lists of a struct are interior.
// Extension types are walked through their storage type. Every other type
// (list views, unions, run-end encoded, ...) is reported as a leaf.
func LeafPaths(dt arrow.DataType) [][]Step {
	var out [][]Step
	leafPaths(dt, nil, &out)
	return out
}

// LeafPathsField is LeafPaths for a field: a struct field marked packed
// (Packed) is one leaf, its children stored together in each value.
func LeafPathsField(f arrow.Field) [][]Step {
	if Packed(f) {
		return [][]Step{{{Kind: StepLeaf}}}
	}
	return LeafPaths(f.Type)
}

// Packed reports whether f is a struct whose children Lance stores packed
// into one column: metadata "lance-encoding:packed" or "packed" set to
// "true" (any case). Lance's schema code accepts other truthy spellings, but
// pylance 14's reader aborts on files where the legacy key says "yes", so
// planar only treats "true" as packed.
func Packed(f arrow.Field) bool {
	if st, ok := f.Type.(*arrow.StructType); !ok || st.NumFields() == 0 {
		return false
	}
	for _, k := range []string{"packed", "lance-encoding:packed"} {
		if i := f.Metadata.FindKey(k); i >= 0 {
			if strings.EqualFold(f.Metadata.Values()[i], "true") {
				return true
			}
		}
	}
	return false
}

// leafPathsOf is leafPaths for a child field: a packed struct ends the path.
func leafPathsOf(f arrow.Field, prefix []Step, out *[][]Step) {
	if Packed(f) {
		*out = append(*out, append(slices.Clone(prefix), Step{Kind: StepLeaf}))
		return
	}
	leafPaths(f.Type, prefix, out)
}

func leafPaths(dt arrow.DataType, prefix []Step, out *[][]Step) {
	switch t := dt.(type) {
	case arrow.ExtensionType:
		leafPaths(t.StorageType(), prefix, out)
		return
	case *arrow.StructType:
		if t.NumFields() > 0 {
			for i, f := range t.Fields() {
				leafPathsOf(f, append(prefix, Step{Kind: StepStruct, Child: i}), out)
			}
			return
		}
	case *arrow.ListType:
		leafPathsOf(t.ElemField(), append(prefix, Step{Kind: StepList}), out)
		return
	case *arrow.LargeListType:
		leafPathsOf(t.ElemField(), append(prefix, Step{Kind: StepList}), out)
		return
	case *arrow.MapType:
		leafPaths(t.Elem(), append(prefix, Step{Kind: StepList}), out)
		return
	case *arrow.FixedSizeListType:
		elem := t.Elem()
		if ext, ok := elem.(arrow.ExtensionType); ok {
			elem = ext.StorageType()
		}
		if _, ok := elem.(*arrow.StructType); ok {
			leafPaths(t.Elem(), append(prefix, Step{Kind: StepFSL, Dim: int(t.Len())}), out)
			return
		}
	}
	// Siblings share prefix's backing array, so the leaf path is a copy.
	*out = append(*out, append(slices.Clone(prefix), Step{Kind: StepLeaf}))
}

// Segment is a run of visible leaf values: slots [Start, End) of the leaf
// array Arr, in Arr's own logical indexing (array.NewSlice(Arr, Start, End) is
// the run).
type Segment struct {
	Arr        arrow.Array
	Start, End int
}

// BuildDense builds the dense plane of one leaf column for a page made of the
// given top-level arrays (the page's arrays of the top-level column, in order),
// following path (one of LeafPaths of the column's type). It returns the
// levels and the visible leaf values as segments in order (their total length
// is NumVisible).
//
// Dense.Layers is inner-most first; Rep is nil exactly when there is no list
// layer and Def is nil exactly when every layer is all-valid. NumItems counts
// the level entries, NumVisible the leaf value slots and NumRows the elements:
// top-level rows times the dimension of every structural FSL on the path.
//
// The entries are the depth-first walk of spec §1.5: a null struct or FSL slot
// pushes its null into every slot below it (a list below becomes a null list
// of length 0); a null list with a non-zero Arrow length ("garbage") has no
// children; a null FSL slot keeps its dimension child slots, all visible and
// all carrying the FSL's level. Each entry's definition level is the band
// value of the outermost null/empty condition on its path, and its repetition
// level the number (1 = inner-most) of the outermost list layer beginning a new
// slot at it.
//
// Classification (planar's choice; Lance looks at bitmap presence instead):
// a leaf layer is nullable iff at least one entry's outermost condition is a
// null at that layer; a list layer is emptyable iff at least one valid empty
// list lies below all-valid ancestors. A struct, FSL or list layer is
// nullable iff one of its slots is null, counting the slots below a null
// struct or FSL slot (with no list between, so the slots exist): those
// entries carry the ancestor's level, which is what Lance writes too, so such
// a band may never be used. The leaf never counts the slots below a null
// ancestor (struct push-down, nulls below a null FSL slot), so an all-valid
// bitmap makes no layer nullable. With bitmaps attached exactly where nulls
// occur, the levels equal Lance's byte for byte; otherwise the layer kinds
// differ (fewer bands) while every row still decodes to the same values.
//
// Why the slots below a null ancestor count: Lance 14's struct decoder
// unravels a struct's validity, and the offsets and validity of every list
// above it, from each child column and, when several of them have sparse
// pages, requires them equal (CompositeRepDefUnraveler compatibility checks,
// "Structural sibling fields have incompatible validity metadata"), the
// slots below a null ancestor included. A sparse page reports those slots
// null; a dense page reports them null when the layer has a band and valid
// when it has none. Classifying the shared layers by what their slots hold,
// ancestors included, makes every column under a struct report the same
// validity for every row, whatever the pages of each column and whichever of
// them are sparse.
//
// Two exceptions keep every page readable by Lance 14 (see readableLists and
// BuildDenseKeep): a list layer that would be all-valid is NULLABLE_LIST (an
// unused band) when a used band outside it could otherwise be miscounted by
// Lance's reader, and BuildDenseKeep makes chosen item layers nullable even
// without nulls.
func BuildDense(arrs []arrow.Array, path []Step) (Dense, []Segment, error) {
	return BuildDenseKeep(arrs, path, nil)
}

// BuildDenseKeep is BuildDense where keep[d] (for a struct or structural FSL
// step d) makes that layer NULLABLE_ITEM even in a page without nulls there,
// so that all pages of a column agree on it (see KeepNullable). keep may be
// nil.
func BuildDenseKeep(arrs []arrow.Array, path []Step, keep []bool) (Dense, []Segment, error) {
	if err := checkPath(path); err != nil {
		return Dense{}, nil, err
	}
	L := len(path)
	if keep != nil && len(keep) != L {
		return Dense{}, nil, fmt.Errorf("structural: %d keep flags for a path of %d steps", len(keep), L)
	}
	b := &builder{path: path, listNum: make([]uint16, L), used: make([]uint8, L)}
	b.noDef = L == 1 && path[0].Kind == StepLeaf && (keep == nil || !keep[0]) && !slices.ContainsFunc(arrs, func(a arrow.Array) bool {
		return hasNulls(a) || a.DataType().ID() == arrow.DICTIONARY
	})
	dims := 1
	for d := L - 1; d >= 0; d-- {
		if path[d].Kind == StepList {
			b.R++
			b.listNum[d] = uint16(b.R)
		}
	}
	rows := 0
	for _, a := range arrs {
		rows += a.Len()
	}
	chain, err := b.walkArrays(arrs, rows)
	if err != nil {
		return Dense{}, nil, err
	}
	// Elements per row: the dimensions of the structural FSLs on the path
	// (all of them, as Lance's FSL encoder multiplies the row count it hands
	// down whether or not a list lies above it).
	for d, st := range path {
		switch {
		case st.Kind != StepFSL:
		case len(arrs) > 0:
			dims *= chain[d].dim
		case st.Dim > 0:
			dims *= st.Dim
		}
	}

	layers, level := classifyLayers(path, b.used, keep)
	dense := Dense{
		Layers:     layers,
		Rep:        b.rep,
		NumItems:   b.items + len(b.def),
		NumVisible: b.visible,
		NumRows:    rows * dims,
	}
	if b.noDef && slices.Max(level) > 0 {
		b.def = make([]uint16, b.items) // (not so for a leaf without nulls: classification gives it no band)
	}
	if slices.Max(level) > 0 {
		// Codes become band levels; a page whose used codes are their
		// own levels (a nullable leaf alone, say) needs no pass.
		identity := true
		for c, l := range level {
			identity = identity && (l == 0 || int(l) == c)
		}
		if !identity {
			par.EachPiece(par.Pieces(len(b.def), par.MinValues), func(_, lo, hi int) error {
				for i, c := range b.def[lo:hi] {
					b.def[lo+i] = level[c]
				}
				return nil
			})
		}
		dense.Def = b.def
	}
	return dense, b.segs, nil
}

// walkArrays walks the page's arrays (rows in all) into b's entries, and
// returns the chain of the last one. A large page of several arrays is
// walked in groups of consecutive arrays side by side, each group by a
// builder of its own, then joined: entries, used conditions and segments
// are what one walk gives (a walk carries nothing from one top-level row to
// the next but the segment it may extend), and the error is the first
// failing array's.
func (b *builder) walkArrays(arrs []arrow.Array, rows int) ([]node, error) {
	L := len(b.path)
	groups := []int{0, len(arrs)}
	if rows >= 2*par.MinValues && len(arrs) > 1 {
		groups = arrayGroups(arrs, par.Pieces(rows, par.MinValues))
	}
	subs := make([]*builder, len(groups)-1)
	chains := make([][]node, len(groups)-1)
	walk := func(g int) error {
		sb := b
		if len(subs) > 1 {
			sb = &builder{path: b.path, listNum: b.listNum, R: b.R, used: make([]uint8, L), noDef: b.noDef}
		}
		n := 0
		for _, a := range arrs[groups[g]:groups[g+1]] {
			n += a.Len()
		}
		if !b.noDef {
			sb.def = make([]uint16, 0, n)
		}
		if b.R > 0 {
			sb.rep = make([]uint16, 0, n)
		}
		chain := make([]node, L)
		for ai := groups[g]; ai < groups[g+1]; ai++ {
			a := arrs[ai]
			if err := prepare(a, b.path, chain); err != nil {
				return fmt.Errorf("array %d: %w", ai, err)
			}
			if err := sb.walk(chain, 0, 0, a.Len(), 0); err != nil {
				return fmt.Errorf("array %d: %w", ai, err)
			}
		}
		subs[g], chains[g] = sb, chain
		return nil
	}
	if len(subs) == 1 {
		err := walk(0)
		return chains[0], err
	}
	if err := par.Each(len(subs), walk); err != nil {
		return nil, err
	}
	// Join: entries copied side by side to their places.
	at := make([]int, len(subs)+1)
	for g, sb := range subs {
		at[g+1] = at[g] + len(sb.def)
		b.items += sb.items
		for d, u := range sb.used {
			b.used[d] |= u
		}
		b.visible += sb.visible
		for k, sg := range sb.segs {
			if l := len(b.segs) - 1; k == 0 && l >= 0 && b.segs[l].Arr == sg.Arr && b.segs[l].End == sg.Start {
				b.segs[l].End = sg.End
				continue
			}
			b.segs = append(b.segs, sg)
		}
	}
	if !b.noDef {
		b.def = make([]uint16, at[len(subs)])
	}
	if b.R > 0 {
		b.rep = make([]uint16, at[len(subs)])
	}
	par.Each(len(subs), func(g int) error {
		copy(b.def[at[g]:], subs[g].def)
		if b.R > 0 {
			copy(b.rep[at[g]:], subs[g].rep)
		}
		return nil
	})
	return chains[len(chains)-1], nil
}

// arrayGroups cuts arrs into groups of consecutive arrays, one per piece
// of cuts (of their rows): group g is arrays [groups[g], groups[g+1]) and
// ends with the first array that reaches its piece's end. Groups with no
// array are dropped.
func arrayGroups(arrs []arrow.Array, cuts []int) []int {
	groups := []int{0}
	seen, ai := 0, 0
	for _, end := range cuts[1:] {
		for ai < len(arrs) && seen < end {
			seen += arrs[ai].Len()
			ai++
		}
		if ai > groups[len(groups)-1] {
			groups = append(groups, ai)
		}
	}
	if groups[len(groups)-1] != len(arrs) {
		groups = append(groups, len(arrs))
	}
	return groups
}

// checkPath validates the shape of a path: non-empty, a leaf last and only
// last, known kinds.
func checkPath(path []Step) error {
	if len(path) == 0 {
		return errors.New("planar/structural: empty path")
	}
	if len(path) > 1<<13 {
		return fmt.Errorf("structural: path of %d steps is too deep", len(path))
	}
	for d, st := range path {
		switch st.Kind {
		case StepStruct, StepList, StepFSL:
			if d == len(path)-1 {
				return fmt.Errorf("structural: path ends with a %v step, not a leaf", st.Kind)
			}
		case StepLeaf:
			if d != len(path)-1 {
				return fmt.Errorf("structural: leaf step at %d of a %d-step path", d, len(path))
			}
		default:
			return fmt.Errorf("structural: path step %d has unknown kind %v", d, st.Kind)
		}
	}
	return nil
}

const (
	usedNull  = 1
	usedEmpty = 2
	// usedMasked: a struct or FSL slot below a null struct or FSL slot
	// (with no list between them) occurs.
	usedMasked = 4
)

// Condition codes written into the def stream during the walk and mapped to
// def levels once the layers are classified: 0 = no condition, else the layer
// (outer-most = 0) and whether it is null or empty.
func nullCode(d int) uint16  { return uint16(1 + 2*d) }
func emptyCode(d int) uint16 { return uint16(2 + 2*d) }

// node is the array of one top-level array's chain at one depth of the path,
// with what the walk needs from it.
type node struct {
	arr   arrow.Array
	off   int    // the array's data offset
	bm    []byte // validity bitmap (nil: use arr.IsNull)
	nulls bool   // the array has at least one null

	// list
	off32    []int32 // whole offsets buffer (List, Map)
	off64    []int64 // whole offsets buffer (LargeList)
	childLen int

	// structural FSL
	dim int

	// dictionary leaf whose dictionary has nulls
	dict     *array.Dictionary
	dictArr  arrow.Array
	keyNulls bool // some key is null
}

func (n *node) isNull(i int) bool {
	if !n.nulls {
		return false
	}
	if n.bm != nil {
		return !bitutil.BitIsSet(n.bm, n.off+i)
	}
	// Nulls without a bitmap: the null type (arrow-go's Null.IsNull
	// reports false); setValidity leaves every other bitmap-less array
	// all valid.
	return true
}

// listRange returns the child slots of list slot i, validated.
func (n *node) listRange(i int) (int, int, error) {
	j := n.off + i
	var s, e int64
	if n.off32 != nil {
		s, e = int64(n.off32[j]), int64(n.off32[j+1])
	} else {
		s, e = n.off64[j], n.off64[j+1]
	}
	if s < 0 || s > e || e > int64(n.childLen) {
		return 0, 0, fmt.Errorf("%w: list slot %d has offsets [%d, %d) for a child of %d slots", ErrInvalidArray, i, s, e, n.childLen)
	}
	return int(s), int(e), nil
}

// setValidity reads a's nulls as Arrow defines them: an array without a
// validity bitmap has none, whatever its null count says; the null type is
// all null.
func setValidity(n *node, a arrow.Array) {
	if a.DataType().ID() == arrow.NULL {
		n.nulls = a.Len() > 0
		return
	}
	if hasNulls(a) {
		n.nulls, n.bm = true, a.NullBitmapBytes()
	}
}

// hasNulls reports whether a has a null slot (setValidity's rule: a null
// array's slots, or a validity bitmap with a null).
func hasNulls(a arrow.Array) bool {
	if a.DataType().ID() == arrow.NULL {
		return a.Len() > 0
	}
	return len(a.NullBitmapBytes()) > 0 && a.NullN() > 0
}

// dictNode marks a dictionary leaf whose dictionary has nulls: a key that
// points at a null value is a null slot (Lance normalizes dictionary nulls
// the same way). The key's own validity stays in n.bm.
func dictNode(n *node, dict *array.Dictionary) {
	da := dict.Dictionary()
	if len(da.NullBitmapBytes()) == 0 || da.NullN() == 0 {
		return
	}
	n.keyNulls = n.nulls
	n.dict, n.dictArr = dict, da
	n.nulls = true
}

// prepare fills chain with the arrays of top-level array a along path.
func prepare(a arrow.Array, path []Step, chain []node) error {
	for d, st := range path {
		n := &chain[d]
		*n = node{}
		if st.Kind != StepLeaf {
			if ext, ok := a.(array.ExtensionArray); ok {
				a = ext.Storage()
			}
		}
		n.arr = a
		n.off = a.Data().Offset()
		setValidity(n, a)
		switch st.Kind {
		case StepStruct:
			s, ok := a.(*array.Struct)
			if !ok {
				return fmt.Errorf("structural: path step %d is a struct, array is %s", d, a.DataType())
			}
			if st.Child < 0 || st.Child >= s.NumField() {
				return fmt.Errorf("structural: path step %d selects child %d of a %d-field struct", d, st.Child, s.NumField())
			}
			c := s.Field(st.Child)
			if c.Len() != s.Len() {
				return fmt.Errorf("%w: struct child %d has %d slots for a struct of %d", ErrInvalidArray, st.Child, c.Len(), s.Len())
			}
			a = c
		case StepList:
			var child arrow.Array
			offs := 0
			switch l := a.(type) {
			case *array.List:
				n.off32, child, offs = l.Offsets(), l.ListValues(), len(l.Offsets())
			case *array.Map:
				n.off32, child, offs = l.Offsets(), l.ListValues(), len(l.Offsets())
			case *array.LargeList:
				n.off64, child, offs = l.Offsets(), l.ListValues(), len(l.Offsets())
			default:
				return fmt.Errorf("structural: path step %d is a list, array is %s", d, a.DataType())
			}
			if a.Len() > 0 && offs < n.off+a.Len()+1 {
				return fmt.Errorf("%w: list of %d slots at offset %d has %d offsets", ErrInvalidArray, a.Len(), n.off, offs)
			}
			n.childLen = child.Len()
			a = child
		case StepFSL:
			f, ok := a.(*array.FixedSizeList)
			if !ok {
				return fmt.Errorf("structural: path step %d is a fixed-size list, array is %s", d, a.DataType())
			}
			dim := int(f.DataType().(*arrow.FixedSizeListType).Len())
			if st.Dim != 0 && st.Dim != dim {
				return fmt.Errorf("structural: path step %d has dimension %d, array has %d", d, st.Dim, dim)
			}
			if dim <= 0 {
				return fmt.Errorf("%w: structural fixed-size list of dimension %d", ErrInvalidArray, dim)
			}
			child := f.ListValues()
			if child.Len() < (n.off+f.Len())*dim {
				return fmt.Errorf("%w: fixed-size list of %d×%d slots at offset %d has a child of %d", ErrInvalidArray, f.Len(), dim, n.off, child.Len())
			}
			n.dim = dim
			a = child
		case StepLeaf:
			if dict, ok := a.(*array.Dictionary); ok {
				dictNode(n, dict)
			}
		}
	}
	return nil
}

type builder struct {
	path    []Step
	listNum []uint16 // list layer number (1 = inner-most) per list step
	R       int
	used    []uint8 // usedNull / usedEmpty per depth
	rep     []uint16
	def     []uint16 // condition codes until classification
	pending uint16   // rep of the next entry
	segs    []Segment
	visible int
	// noDef: the page is one leaf without nulls, whose entries are all
	// code 0: they are counted in items, not stored in def.
	noDef bool
	items int
}

// emit appends one entry (a list slot without children).
func (b *builder) emit(code uint16) {
	if b.R > 0 {
		b.rep = append(b.rep, b.pending)
	}
	b.pending = 0
	b.def = append(b.def, code)
}

func grow(s []uint16, n int, v uint16) []uint16 {
	l := len(s)
	s = slices.Grow(s, n)[:l+n]
	t := s[l:]
	if v == 0 {
		clear(t)
	} else {
		for i := range t {
			t[i] = v
		}
	}
	return s
}

// walk emits the entries of slots [s, e) of the array at depth d, below an
// inherited condition cond (0 = none).
func (b *builder) walk(chain []node, d, s, e int, cond uint16) error {
	if s >= e {
		return nil
	}
	n := &chain[d]
	switch b.path[d].Kind {
	case StepLeaf:
		return b.leaf(n, d, s, e, cond)
	case StepStruct, StepFSL:
		scale, base := 1, 0
		if b.path[d].Kind == StepFSL {
			// FSL slot i (physical n.off+i) owns child slots
			// [(n.off+i)*dim, (n.off+i+1)*dim) of the unsliced child.
			scale, base = n.dim, n.off
		}
		if cond != 0 {
			// Slots below a null struct or FSL slot (see BuildDense).
			b.used[d] |= usedMasked
		}
		if cond != 0 || !n.nulls {
			return b.walk(chain, d+1, (base+s)*scale, (base+e)*scale, cond)
		}
		for i := s; i < e; {
			null := n.isNull(i)
			j := i + 1
			for j < e && n.isNull(j) == null {
				j++
			}
			c := uint16(0)
			if null {
				c = nullCode(d)
				b.used[d] |= usedNull
			}
			if err := b.walk(chain, d+1, (base+i)*scale, (base+j)*scale, c); err != nil {
				return err
			}
			i = j
		}
		return nil
	case StepList:
		if cond == 0 && b.path[d+1].Kind == StepLeaf && chain[d+1].dict == nil {
			return b.listOfLeaf(chain, d, s, e)
		}
		for i := s; i < e; i++ {
			if err := b.listSlot(chain, d, i, cond); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("structural: path step %d has unknown kind %v", d, b.path[d].Kind)
}

// levelsInPieces is bitmap.Levels over dst, a large run in pieces side by
// side; it reports whether any slot is null.
func levelsInPieces(dst []uint16, bm []byte, off int, code uint16) bool {
	n := len(dst)
	if n < 2*par.MinValues {
		return bitmap.Levels(dst, bm, off, code) > 0
	}
	cuts := par.Pieces(n, par.MinValues)
	nulls := make([]int, len(cuts)-1)
	par.EachPiece(cuts, func(j, lo, hi int) error {
		nulls[j] = bitmap.Levels(dst[lo:hi], bm, off+lo, code)
		return nil
	})
	return slices.ContainsFunc(nulls, func(k int) bool { return k > 0 })
}

// leaf emits one visible entry per leaf slot of [s, e).
func (b *builder) leaf(n *node, d, s, e int, cond uint16) error {
	cnt := e - s
	if b.R > 0 {
		b.rep = append(b.rep, b.pending)
		b.rep = grow(b.rep, cnt-1, 0)
	}
	b.pending = 0
	switch {
	case b.noDef:
		if cond != 0 || n.nulls {
			return fmt.Errorf("structural: leaf slots %d..%d: a page found without nulls has one", s, e)
		}
		b.items += cnt
	case cond != 0:
		b.def = grow(b.def, cnt, cond)
	case !n.nulls:
		b.def = grow(b.def, cnt, 0)
	case n.dict != nil:
		code := nullCode(d)
		dictLen := n.dictArr.Len()
		for i := s; i < e; i++ {
			null := n.keyNulls && (n.bm == nil || !bitutil.BitIsSet(n.bm, n.off+i))
			if !null {
				k := n.dict.GetValueIndex(i)
				if k < 0 || k >= dictLen {
					return fmt.Errorf("%w: dictionary key %d at slot %d of a %d-entry dictionary", ErrInvalidArray, k, i, dictLen)
				}
				null = n.dictArr.IsNull(k)
			}
			if null {
				b.used[d] |= usedNull
				b.def = append(b.def, code)
			} else {
				b.def = append(b.def, 0)
			}
		}
	case n.bm != nil:
		at := len(b.def)
		b.def = slices.Grow(b.def, cnt)[:at+cnt]
		if levelsInPieces(b.def[at:], n.bm, n.off+s, nullCode(d)) {
			b.used[d] |= usedNull
		}
	default: // nulls without a bitmap: every slot null (see isNull)
		if cnt > 0 {
			b.used[d] |= usedNull
		}
		b.def = grow(b.def, cnt, nullCode(d))
	}
	b.visible += cnt
	if l := len(b.segs) - 1; l >= 0 && b.segs[l].Arr == n.arr && b.segs[l].End == s {
		b.segs[l].End = e
	} else {
		b.segs = append(b.segs, Segment{Arr: n.arr, Start: s, End: e})
	}
	return nil
}
