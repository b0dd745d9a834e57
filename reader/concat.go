package reader

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// concatenate is array.Concatenate, safe for zero-length dictionary arrays.
// When the chunks' dictionaries differ, arrow-go unifies them and transposes
// every chunk's indices; its SIMD transpose kernels take the address of
// element 0 of the indices and of the transposition map, and so fail on a
// chunk without values (Concatenate recovers the panic into an error such
// as "index out of range [0] with length 0"). A zero-length dictionary array
// (a page of empty lists, or of no rows) is normal, so such chunks, at any
// depth, are given an (empty) validity bitmap first: arrow then takes its
// null-aware path, which transposes nothing for them.
func concatenate(chunks []arrow.Array) (arrow.Array, error) {
	if len(chunks) > 1 && hasDictionary(chunks[0].DataType()) {
		guarded := make([]arrow.Array, len(chunks))
		for i, c := range chunks {
			guarded[i] = c
			if c.Data().Offset() != 0 || c.DataType().ID() != arrow.DICTIONARY {
				// A slice (or a parent of dictionaries) may reach an
				// empty range of a dictionary child that is not itself
				// empty: copy it alone first (one dictionary, nothing to
				// transpose), which cuts every child to the range used.
				n, err := array.Concatenate([]arrow.Array{c}, memory.DefaultAllocator)
				if err != nil {
					return nil, err
				}
				defer n.Release()
				guarded[i], c = n, n
			}
			if d, ok := guardEmptyDictionaries(c.Data()); ok {
				guarded[i] = array.MakeFromData(d)
				d.Release()
				defer guarded[i].Release()
			}
		}
		chunks = guarded
	}
	return array.Concatenate(chunks, memory.DefaultAllocator)
}

// hasDictionary reports whether a dictionary type occurs in dt.
func hasDictionary(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return true
	case arrow.NestedType:
		for _, f := range t.Fields() {
			if hasDictionary(f.Type) {
				return true
			}
		}
	}
	return false
}

// guardEmptyDictionaries returns d with every zero-length dictionary node
// given a validity bitmap, and whether anything changed.
func guardEmptyDictionaries(d arrow.ArrayData) (arrow.ArrayData, bool) {
	if !hasDictionary(d.DataType()) {
		return nil, false
	}
	changed := false
	var kids []arrow.ArrayData
	for i, c := range d.Children() {
		if g, ok := guardEmptyDictionaries(c); ok {
			if kids == nil {
				kids = append([]arrow.ArrayData{}, d.Children()...)
			}
			kids[i] = g
			defer g.Release()
			changed = true
		}
	}
	if kids == nil {
		kids = d.Children()
	}
	bufs := d.Buffers()
	if d.DataType().ID() == arrow.DICTIONARY && d.Len() == 0 && len(bufs) == 2 && (bufs[0] == nil || bufs[1] == nil) {
		// (arrow also reads the indices buffer, which builders leave nil
		// when empty.)
		bufs = []*memory.Buffer{bufs[0], bufs[1]}
		if bufs[0] == nil {
			bufs[0] = memory.NewBufferBytes([]byte{0})
		}
		if bufs[1] == nil {
			bufs[1] = memory.NewBufferBytes(nil)
		}
		changed = true
	}
	if !changed {
		return nil, false
	}
	out := array.NewData(d.DataType(), d.Len(), bufs, kids, d.NullN(), d.Offset())
	if dict := d.Dictionary(); dict != nil {
		out.SetDictionary(dict)
	}
	return out, true
}
