package structural

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

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
func HasRep(layers []Layer) bool {
	for _, l := range layers {
		if IsList(l) {
			return true
		}
	}
	return false
}

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
}

// FlatLeaf builds the dense plane of a flat (un-nested) leaf column page made
// of the given arrays. A page with at least one null gets a NullableItem layer
// and a def stream (1 = null); otherwise the degenerate AllValidItem form. def
// is reused if it has capacity.
func FlatLeaf(arrs []arrow.Array, def []uint16) Dense {
	n, nulls := 0, 0
	for _, a := range arrs {
		n += a.Len()
		nulls += a.NullN()
	}
	d := Dense{NumItems: n, NumVisible: n, NumRows: n}
	if nulls == 0 {
		d.Layers = []Layer{AllValidItem}
		return d
	}
	d.Layers = []Layer{NullableItem}
	def = def[:0]
	for _, a := range arrs {
		bm := a.NullBitmapBytes()
		off := a.Data().Offset()
		if a.NullN() == 0 || bm == nil {
			for i := 0; i < a.Len(); i++ {
				def = append(def, 0)
			}
			continue
		}
		for i := 0; i < a.Len(); i++ {
			if bitutil.BitIsSet(bm, off+i) {
				def = append(def, 0)
			} else {
				def = append(def, 1)
			}
		}
	}
	d.Def = def
	return d
}

// FlatValidity turns the def stream of a flat leaf page back into an Arrow
// validity bitmap (appended to dst, bit i = row i). It returns the bitmap and
// the null count. A nil def means every row is valid.
func FlatValidity(dst []byte, def []uint16, n int) ([]byte, int) {
	nb := bitutil.BytesForBits(int64(n))
	start := len(dst)
	dst = append(dst, make([]byte, nb)...)
	bm := dst[start:]
	if def == nil {
		bitutil.SetBitsTo(bm, 0, int64(n), true)
		return dst, 0
	}
	nulls := 0
	for i := 0; i < n; i++ {
		if def[i] == 0 {
			bitutil.SetBit(bm, i)
		} else {
			nulls++
		}
	}
	return dst, nulls
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
