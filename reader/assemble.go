package reader

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/structural"
)

// fieldColumns maps every top-level field to its physical columns.
type fieldColumns struct {
	field arrow.Field
	cols  []int               // physical column indices, in order
	paths [][]structural.Step // path of each column
}

func (f *File) fieldLayout() ([]fieldColumns, error) {
	if len(f.leaves) != len(f.columns) {
		return nil, fmt.Errorf("schema has %d leaves, file %d columns: %w", len(f.leaves), len(f.columns), ErrCorrupt)
	}
	out := make([]fieldColumns, f.schema.NumFields())
	for i := range out {
		out[i].field = f.schema.Field(i)
	}
	for ci, c := range f.leaves {
		fc := &out[c.Top]
		fc.cols = append(fc.cols, ci)
		fc.paths = append(fc.paths, c.Steps)
	}
	return out, nil
}

// pathTypes returns the Arrow type at every step of a path (the type the step
// applies to), plus the leaf type last.
func pathTypes(dt arrow.DataType, path []structural.Step) ([]arrow.DataType, error) {
	types := make([]arrow.DataType, 0, len(path))
	for _, s := range path {
		types = append(types, dt)
		switch s.Kind {
		case structural.StepStruct:
			st, ok := dt.(*arrow.StructType)
			if !ok || s.Child >= st.NumFields() {
				return nil, fmt.Errorf("path step struct on %s: %w", dt, ErrCorrupt)
			}
			dt = st.Field(s.Child).Type
		case structural.StepList:
			switch t := dt.(type) {
			case *arrow.ListType:
				dt = t.Elem()
			case *arrow.LargeListType:
				dt = t.Elem()
			case *arrow.MapType:
				dt = t.Elem()
			default:
				return nil, fmt.Errorf("path step list on %s: %w", dt, ErrCorrupt)
			}
		case structural.StepFSL:
			t, ok := dt.(*arrow.FixedSizeListType)
			if !ok {
				return nil, fmt.Errorf("path step fsl on %s: %w", dt, ErrCorrupt)
			}
			dt = t.Elem()
		}
	}
	return types, nil
}

// projected builds, for one decoded page of one leaf column, the array of the
// top-level type restricted to that leaf's path (structs keep only the child
// on the path; maps are kept as lists of a one-child struct).
func projected(types []arrow.DataType, path []structural.Step, layers []structural.LayerData, leaf arrow.ArrayData) (arrow.ArrayData, error) {
	cur := leaf
	cur.Retain()
	for i := len(path) - 2; i >= 0; i-- {
		ld := layers[i]
		vb, nulls := bitmapFrom(ld.Valid)
		var next arrow.ArrayData
		switch path[i].Kind {
		case structural.StepStruct:
			st := types[i].(*arrow.StructType)
			f := st.Field(path[i].Child)
			f.Type = cur.DataType()
			next = array.NewData(arrow.StructOf(f), ld.Len, []*memory.Buffer{vb}, []arrow.ArrayData{cur}, nulls, 0)
		case structural.StepList:
			if len(ld.Offsets) != ld.Len+1 {
				cur.Release()
				return nil, fmt.Errorf("list layer with %d offsets for %d slots: %w", len(ld.Offsets), ld.Len, ErrCorrupt)
			}
			var elem arrow.Field
			var lt arrow.DataType
			var ob *memory.Buffer
			switch t := types[i].(type) {
			case *arrow.ListType:
				elem = t.ElemField()
				elem.Type = cur.DataType()
				lt = arrow.ListOfField(elem)
				ob = memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(ld.Offsets))
			case *arrow.MapType:
				elem = t.ElemField()
				elem.Type = cur.DataType()
				lt = arrow.ListOfField(elem)
				ob = memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(ld.Offsets))
			case *arrow.LargeListType:
				elem = t.ElemField()
				elem.Type = cur.DataType()
				lt = arrow.LargeListOfField(elem)
				o64 := make([]int64, len(ld.Offsets))
				for k, o := range ld.Offsets {
					o64[k] = int64(o)
				}
				ob = memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(o64))
			}
			next = array.NewData(lt, ld.Len, []*memory.Buffer{vb, ob}, []arrow.ArrayData{cur}, nulls, 0)
		case structural.StepFSL:
			t := types[i].(*arrow.FixedSizeListType)
			elem := t.ElemField()
			elem.Type = cur.DataType()
			next = array.NewData(arrow.FixedSizeListOfField(t.Len(), elem), ld.Len, []*memory.Buffer{vb}, []arrow.ArrayData{cur}, nulls, 0)
		default:
			cur.Release()
			return nil, fmt.Errorf("path step %v: %w", path[i].Kind, ErrCorrupt)
		}
		cur.Release()
		cur = next
	}
	return cur, nil
}

// merge combines the projected arrays of every leaf of a top-level field
// (all covering the same rows, offsets normalized) into one array of type dt.
func merge(dt arrow.DataType, parts []arrow.Array, paths [][]structural.Step, depth int) (arrow.Array, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("no columns for %s: %w", dt, ErrCorrupt)
	}
	p0 := parts[0]
	if len(paths) == 1 && depth < len(paths[0]) && paths[0][depth].Kind == structural.StepLeaf {
		// The column holds this whole value (a packed struct).
		p0.Retain()
		return p0, nil
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		if t.NumFields() == 0 {
			break
		}
		children := make([]arrow.ArrayData, t.NumFields())
		for c := 0; c < t.NumFields(); c++ {
			var sub []arrow.Array
			var subPaths [][]structural.Step
			for k, p := range paths {
				if p[depth].Child == c {
					sub = append(sub, parts[k].(*array.Struct).Field(0))
					subPaths = append(subPaths, p)
				}
			}
			m, err := merge(t.Field(c).Type, sub, subPaths, depth+1)
			if err != nil {
				return nil, err
			}
			defer m.Release()
			children[c] = m.Data()
		}
		d := p0.Data()
		data := array.NewData(dt, d.Len(), []*memory.Buffer{d.Buffers()[0]}, children, d.NullN(), d.Offset())
		defer data.Release()
		return array.MakeFromData(data), nil
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		var sub []arrow.Array
		for _, p := range parts {
			sub = append(sub, listChild(p))
		}
		elem := listElem(dt)
		m, err := merge(elem, sub, paths, depth+1)
		if err != nil {
			return nil, err
		}
		defer m.Release()
		d := p0.Data()
		data := array.NewData(dt, d.Len(), d.Buffers()[:2], []arrow.ArrayData{m.Data()}, d.NullN(), d.Offset())
		defer data.Release()
		return array.MakeFromData(data), nil
	case *arrow.FixedSizeListType:
		if _, isStruct := t.Elem().(*arrow.StructType); isStruct {
			var sub []arrow.Array
			for _, p := range parts {
				sub = append(sub, p.(*array.FixedSizeList).ListValues())
			}
			m, err := merge(t.Elem(), sub, paths, depth+1)
			if err != nil {
				return nil, err
			}
			defer m.Release()
			d := p0.Data()
			data := array.NewData(dt, d.Len(), d.Buffers()[:1], []arrow.ArrayData{m.Data()}, d.NullN(), d.Offset())
			defer data.Release()
			return array.MakeFromData(data), nil
		}
	}
	if len(parts) != 1 {
		return nil, fmt.Errorf("%d columns for leaf type %s: %w", len(parts), dt, ErrCorrupt)
	}
	p0.Retain()
	return p0, nil
}

func listElem(dt arrow.DataType) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.ListType:
		return t.Elem()
	case *arrow.LargeListType:
		return t.Elem()
	case *arrow.MapType:
		return t.Elem()
	}
	return nil
}

func listChild(a arrow.Array) arrow.Array {
	switch l := a.(type) {
	case *array.List:
		return l.ListValues()
	case *array.LargeList:
		return l.ListValues()
	case *array.Map:
		return l.ListValues()
	}
	return nil
}
