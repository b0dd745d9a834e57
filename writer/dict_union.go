package writer

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/structural"
)

// dictUnion guards a dictionary column whose key type addresses few items
// (8- and 16-bit keys). Readers return a column as one dictionary array, so
// the distinct values of all its batches' dictionaries must fit the keys
// together (arrow's concatenation unifies dictionaries by value, and fails
// past one fewer than the keys address); a batch that would push the column past it is refused before
// anything of it is written.
type dictUnion struct {
	capacity int
	seen     map[string]struct{}
	last     arrow.ArrayData // the dictionary checked last (batches often share one)
}

func newDictUnion(dt arrow.DataType) *dictUnion {
	t, ok := storageType(dt).(*arrow.DictionaryType)
	if !ok {
		return nil
	}
	switch t.IndexType.ID() {
	case arrow.INT8, arrow.UINT8, arrow.INT16, arrow.UINT16:
		// One less than the keys address: arrow's dictionary unification
		// (arrow-go, which readers use to join pages) refuses a unified
		// dictionary longer than the key type's largest value (128 items
		// under int8 keys).
		return &dictUnion{capacity: int(maxKeys(t)) - 1, seen: map[string]struct{}{}}
	}
	return nil
}

// leafDictionary is the dictionary of the leaf array reached from a by path.
func leafDictionary(a arrow.Array, path []structural.Step) arrow.ArrayData {
	d := a.Data()
	for _, st := range path {
		switch st.Kind {
		case structural.StepStruct:
			d = d.Children()[st.Child]
		case structural.StepList, structural.StepFSL:
			d = d.Children()[0]
		}
	}
	dict := d.Dictionary()
	if isNil(dict) {
		return nil
	}
	return dict
}

// check returns the values of dict the column has not seen, or an error when
// they do not fit the keys with those seen.
func (u *dictUnion) check(dict arrow.ArrayData) ([]string, error) {
	if dict == nil || dict == u.last {
		return nil, nil
	}
	vals := array.MakeFromData(dict)
	defer vals.Release()
	var fresh []string
	var dup map[string]struct{}
	for i := 0; i < vals.Len(); i++ {
		if vals.IsNull(i) {
			continue
		}
		k := dictValueKey(vals, i)
		if _, ok := u.seen[k]; ok {
			continue
		}
		if _, ok := dup[k]; ok {
			continue
		}
		if dup == nil {
			dup = map[string]struct{}{}
		}
		dup[k] = struct{}{}
		fresh = append(fresh, k)
	}
	if len(u.seen)+len(fresh) > u.capacity {
		return nil, fmt.Errorf("its batches' dictionaries hold %d distinct values, more than its %d-item keys address (a reader could not return the column as one array)",
			len(u.seen)+len(fresh), u.capacity)
	}
	return fresh, nil
}

func (u *dictUnion) commit(dict arrow.ArrayData, fresh []string) {
	for _, k := range fresh {
		u.seen[k] = struct{}{}
	}
	if dict != nil {
		u.last = dict
	}
}

// dictValueKey is value i of a dictionary's values as a map key.
func dictValueKey(a arrow.Array, i int) string {
	switch v := a.(type) {
	case *array.String:
		return v.Value(i)
	case *array.LargeString:
		return v.Value(i)
	case *array.Binary:
		return string(v.Value(i))
	case *array.LargeBinary:
		return string(v.Value(i))
	case *array.FixedSizeBinary:
		return string(v.Value(i))
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok && fw.BitWidth()%8 == 0 {
		w := fw.BitWidth() / 8
		d := a.Data()
		if b := d.Buffers()[1]; b != nil {
			p := (d.Offset() + i) * w
			return string(b.Bytes()[p : p+w])
		}
	}
	return a.ValueStr(i)
}
