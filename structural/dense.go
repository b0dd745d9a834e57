package structural

import (
	"slices"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Layer is the kind of one structural layer (inner-most first in a Dense).
type Layer = enc21pb.RepDefLayer

// Layer kinds, as Lance numbers them.
const (
	AllValidItem     = enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
	AllValidList     = enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST
	NullableItem     = enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM
	NullableList     = enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST
	EmptyableList    = enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST
	NullAndEmptyList = enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST
)

// IsList reports whether a layer is a list layer (it implies a rep stream).
func IsList(l Layer) bool {
	switch l {
	case AllValidList, NullableList, EmptyableList, NullAndEmptyList:
		return true
	}
	return false
}

// DefLevels is the number of definition values a layer uses.
func DefLevels(l Layer) int {
	switch l {
	case NullableItem, NullableList, EmptyableList:
		return 1
	case NullAndEmptyList:
		return 2
	}
	return 0
}

// HasRep reports whether layers imply a repetition stream.
func HasRep(layers []Layer) bool { return NumLists(layers) > 0 }

// HasDef reports whether layers imply a definition stream.
func HasDef(layers []Layer) bool {
	for _, l := range layers {
		if DefLevels(l) > 0 {
			return true
		}
	}
	return false
}

// IsDegenerate reports whether layers describe trivial structure: every
// layer all-valid, no lists (zero structural bytes).
func IsDegenerate(layers []Layer) bool {
	for _, l := range layers {
		if l != AllValidItem {
			return false
		}
	}
	return true
}

// Dense is one page's dense structural plane: the layers and the level
// streams they imply. Rep is nil when there is no list layer, Def is nil when
// every layer is all-valid.
type Dense struct {
	Layers     []Layer // inner-most first
	Rep, Def   []uint16
	NumItems   int // entries of the level streams
	NumVisible int // leaf value slots
	NumRows    int
	// LevelsOmitted: the page has levels but they were not built (Rep and
	// Def are nil; ListShell): only a sparse cell can be encoded from it.
	LevelsOmitted bool
}

// NumLists is the number of list layers (the maximum repetition level).
func NumLists(layers []Layer) int {
	r := 0
	for _, l := range layers {
		if IsList(l) {
			r++
		}
	}
	return r
}

// MaxVisibleDef is the largest definition level of a visible entry: the sum
// of the def bands of the layers inside the inner-most list (layers are
// inner-most first).
func MaxVisibleDef(layers []Layer) int {
	m := 0
	for _, l := range layers {
		if IsList(l) {
			break
		}
		m += DefLevels(l)
	}
	return m
}

// CountVisible is the number of visible entries of def levels: those at
// most maxVis (MaxVisibleDef of the layers).
func CountVisible(def []uint16, maxVis int) int {
	c := 0
	for _, d := range def {
		if int(d) <= maxVis {
			c++
		}
	}
	return c
}

// NullableItems returns d with every item layer i (innermost first, as
// Layers) for which items[i] holds described as NULLABLE_ITEM when it is
// ALL_VALID_ITEM: the layer gains a null band that no level uses, and the
// levels of the layers outside it move up by one. d itself is not changed.
//
// Lance 13's reader needs this for fixed-width full-zip pages with
// repetition, whose item layers must be described alike in every page of a
// read batch:
//   - the leaf: Lance 13 gives such a page's unraveler the page's row count
//     where the item count belongs, and a page without def levels then
//     contributes one validity entry per row, not per item, whenever another
//     page of the batch has null items ("Structural validity has 3 entries
//     for an array with 4 values"); with def levels the entries are counted
//     from the levels (differential seed 101213);
//   - a struct between the leaf and a list: a page whose struct layer is
//     ALL_VALID_ITEM next to one where it is nullable gives the struct a
//     wrong null count ("Incorrect number of nulls for StructArray",
//     differential seed 108899).
//
// Lance 14 reads either form.
func NullableItems(d Dense, items []bool) Dense {
	changed := false
	for i, l := range d.Layers {
		changed = changed || i < len(items) && items[i] && l == AllValidItem
	}
	if !changed {
		return d
	}
	// to[v] is the new level of old level v: each layer's bands keep their
	// order, after the bands (old and new) of the layers inside it.
	layers := slices.Clone(d.Layers)
	to := []uint16{0}
	next := uint16(1)
	for i, l := range d.Layers {
		if i < len(items) && items[i] && l == AllValidItem {
			layers[i] = NullableItem
			next++ // the new, unused null band
		}
		for range DefLevels(l) {
			to = append(to, next)
			next++
		}
	}
	def := make([]uint16, d.NumItems)
	for i, v := range d.Def {
		if int(v) < len(to) {
			def[i] = to[v]
		} else {
			def[i] = v // not a level of these layers; the writer's checks report it
		}
	}
	d.Layers, d.Def = layers, def
	return d
}
