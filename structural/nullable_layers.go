package structural

import "github.com/apache/arrow-go/v18/arrow"

// Which layers a column's pages describe as nullable whatever a page holds,
// derived from the schema once per column: KeepNullable (for Lance 14's
// reader) and NullableItemLayers (for Lance 13's, see NullableItems).

// KeepNullable returns, per depth of path (one of LeafPathsField(f)), whether
// the layer must be NULLABLE_ITEM in every page of the column, nulls or not:
// the struct and structural FSL layers that have a list layer inside them
// and that can hold a null slot: their field is nullable, or a nullable
// struct or FSL lies above them with no list between (its null rows then
// make the layer nullable, see BuildDense). nil when there is none.
//
// Lance 14's reader unravels the validity of an item layer across all pages
// of a read batch when any page has nulls there, and an ALL_VALID_ITEM page
// then contributes one valid entry per visible leaf value
// (RepDefUnraveler::unravel_validity appends num_items), which is the layer's
// slot count only when no list lies inside it. Classifying these layers by the
// schema keeps the kind the same in every page of the column, as the pages
// of one column are encoded one by one; layers with no list inside keep the
// per-page classification (their counts agree either way).
func KeepNullable(f arrow.Field, path []Step) []bool {
	var keep []bool
	dt, nullable := f.Type, f.Nullable
	masked := false // a nullable struct or FSL lies above, with no list between
	for d, st := range path {
		if ext, ok := dt.(arrow.ExtensionType); ok {
			dt = ext.StorageType()
		}
		switch st.Kind {
		case StepStruct, StepFSL:
			inner := false
			for _, s := range path[d+1:] {
				inner = inner || s.Kind == StepList
			}
			if inner && (nullable || masked) {
				if keep == nil {
					keep = make([]bool, len(path))
				}
				keep[d] = true
			}
			masked = masked || nullable
		case StepList:
			masked = false
		}
		next, ok := stepField(dt, st)
		if !ok {
			return keep
		}
		dt, nullable = next.Type, next.Nullable
	}
	return keep
}

// stepField is the field that step st of a path leads to from a value of
// type dt (its storage type); false when dt has none there.
func stepField(dt arrow.DataType, st Step) (arrow.Field, bool) {
	switch t := dt.(type) {
	case *arrow.StructType:
		if st.Kind != StepStruct || st.Child < 0 || st.Child >= t.NumFields() {
			return arrow.Field{}, false
		}
		return t.Field(st.Child), true
	case *arrow.MapType:
		// The entries struct is never null.
		return arrow.Field{Type: t.Elem(), Nullable: false}, true
	case arrow.ListLikeType:
		return t.ElemField(), true
	}
	return arrow.Field{}, false
}

// NullableItemLayers returns, per layer of path's pages (innermost first,
// as Dense.Layers), whether it is the item layer of a nullable field: a
// struct step or the leaf. See NullableItems.
func NullableItemLayers(f arrow.Field, path []Step) []bool {
	out := make([]bool, len(path))
	dt, nullable := f.Type, f.Nullable
	for d, st := range path {
		if ext, ok := dt.(arrow.ExtensionType); ok {
			dt = ext.StorageType()
		}
		if nullable && (st.Kind == StepStruct || st.Kind == StepLeaf) {
			out[len(path)-1-d] = true
		}
		next, ok := stepField(dt, st)
		if !ok {
			break
		}
		dt, nullable = next.Type, next.Nullable
	}
	return out
}
