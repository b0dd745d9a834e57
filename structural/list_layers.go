package structural

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/internal/bitmap"
)

// ListLayers gives the layers of a page of a list column whose items are
// its leaf (path [StepList, StepLeaf], or such a list as a struct's child:
// [StepStruct, StepList, StepLeaf]), read from the page's top-level arrays
// themselves: the structs' validity, the lists' validity (a list under a
// null struct is null) and child counts, then the validity of the items of
// valid lists. They are the layers UnravelPath gives for the page's dense
// levels (a layer without nulls may come with every slot valid where
// UnravelPath gives none; the sparse sets are the same), in one pass over
// the lists and one over their items' bitmaps, where unraveling decodes a
// level per list and item. ok is false for other paths and arrays (the
// caller unravels the levels).
func ListLayers(arrs []arrow.Array, path []Step) ([]LayerData, bool) {
	lists, outer, ok := pageLists(arrs, path)
	if !ok {
		return nil, false
	}
	rows, nulls, outerNulls := 0, 0, 0
	for i, l := range lists {
		rows += l.Len()
		nulls += l.NullN()
		if outer {
			outerNulls += arrs[i].NullN()
		}
	}
	var top LayerData // the structs' layer
	if outer {
		top.Len = rows
		if outerNulls > 0 {
			top.Valid = make([]bool, rows)
		}
	}
	list := LayerData{Len: rows, Offsets: make([]int32, rows+1)}
	if nulls+outerNulls > 0 {
		list.Valid = make([]bool, rows)
	}
	// Lists: validity (and their structs'), and child counts (none for a
	// null list, whatever range its offsets give).
	row, items := 0, 0
	for i, l := range lists {
		n := l.Len()
		if list.Valid != nil {
			validOf(list.Valid[row:row+n], l)
		}
		if top.Valid != nil {
			sv := top.Valid[row : row+n]
			validOf(sv, arrs[i])
			for k, v := range sv {
				list.Valid[row+k] = list.Valid[row+k] && v
			}
		}
		var ok bool
		if items, ok = childCounts(l, list.Offsets[row+1:row+n+1], list.Valid, row, items); !ok {
			return nil, false
		}
		row += n
	}
	// Items of valid lists: their validity, a run of valid lists (whose
	// items lie back to back in the child) at a time.
	leaf := LayerData{Len: items}
	if itemNulls(lists) {
		leaf.Valid = make([]bool, items)
		row, at := 0, 0
		for _, l := range lists {
			child := l.(array.ListLike).ListValues()
			cd := child.Data()
			bm := child.NullBitmapBytes()
			n := l.Len()
			for i := 0; i < n; {
				if list.Valid != nil && !list.Valid[row+i] {
					i++
					continue
				}
				j := i + 1
				for j < n && (list.Valid == nil || list.Valid[row+j]) {
					j++
				}
				lo, hi := listStart(l, i), listStart(l, j) // (list j-1 ends where j starts)
				dst := leaf.Valid[at : at+hi-lo]
				if len(bm) > 0 && child.NullN() > 0 {
					bitmap.Valid(dst, bm, cd.Offset()+lo)
				} else {
					bitmap.FillTrue(dst)
				}
				at += hi - lo
				i = j
			}
			row += n
		}
	}
	if outer {
		return []LayerData{top, list, leaf}, true
	}
	return []LayerData{list, leaf}, true
}

// pageLists is the list array of each of a page's top-level arrays along
// path ([StepList, StepLeaf], or [StepStruct, StepList, StepLeaf]: outer),
// or ok false for other paths, and for arrays whose validity is not their
// bitmap's: the null type (all null, no bitmap) and dictionaries (a key
// may point at a null value) as items, and arrays with nulls but no bitmap
// (the walk takes those).
func pageLists(arrs []arrow.Array, path []Step) (lists []arrow.Array, outer, ok bool) {
	switch {
	case len(arrs) == 0:
		return nil, false, false
	case len(path) == 2 && path[0].Kind == StepList && path[1].Kind == StepLeaf:
	case len(path) == 3 && path[0].Kind == StepStruct && path[1].Kind == StepList && path[2].Kind == StepLeaf:
		outer = true
	default:
		return nil, false, false
	}
	noBitmap := func(a arrow.Array) bool { return a.NullN() > 0 && len(a.NullBitmapBytes()) == 0 }
	lists = make([]arrow.Array, len(arrs))
	for i, a := range arrs {
		l := a
		if outer {
			st, isStruct := a.(*array.Struct)
			if !isStruct || noBitmap(st) || path[0].Child < 0 || path[0].Child >= st.NumField() {
				return nil, false, false
			}
			if l = st.Field(path[0].Child); l.Len() != st.Len() {
				return nil, false, false
			}
		}
		switch l.(type) {
		case *array.List, *array.LargeList:
		default:
			return nil, false, false
		}
		child := l.(array.ListLike).ListValues()
		if _, dict := child.(*array.Dictionary); dict || noBitmap(child) || noBitmap(l) {
			return nil, false, false
		}
		lists[i] = l
	}
	return lists, outer, true
}

// validOf sets dst to a's validity (its bitmap's; every slot valid
// without nulls).
func validOf(dst []bool, a arrow.Array) {
	if bm := a.NullBitmapBytes(); len(bm) > 0 && a.NullN() > 0 {
		bitmap.Valid(dst, bm, a.Data().Offset())
	} else {
		bitmap.FillTrue(dst)
	}
}

// childCounts writes the end offsets of a's lists, counted from items (the
// children of the page's lists before a), into ends, a null list (by
// valid, from slot row) having none; false when a list's range runs
// backward or out of its child, or the page holds over MaxInt32 items.
func childCounts(a arrow.Array, ends []int32, valid []bool, row, items int) (int, bool) {
	child := a.(array.ListLike).ListValues().Len()
	off := a.Data().Offset()
	switch l := a.(type) {
	case *array.List:
		return countRanges(l.Offsets()[off:], ends, valid, row, items, child)
	case *array.LargeList:
		return countRanges(l.Offsets()[off:], ends, valid, row, items, child)
	}
	return items, false
}

func countRanges[T int32 | int64](o []T, ends []int32, valid []bool, row, items, child int) (int, bool) {
	o = o[:len(ends)+1]
	// Branch-free: a bad range makes bad negative, a null list's count is
	// masked off; both are checked once, after the loop.
	bad := 0
	if valid == nil {
		for i := range ends {
			lo, hi := int(o[i]), int(o[i+1])
			bad |= (hi - lo) | lo | (child - hi)
			items += hi - lo
			ends[i] = int32(items)
		}
	} else {
		valid = valid[row : row+len(ends)]
		for i := range ends {
			lo, hi := int(o[i]), int(o[i+1])
			bad |= (hi - lo) | lo | (child - hi)
			keep := 0
			if valid[i] {
				keep = -1
			}
			items += (hi - lo) & keep
			ends[i] = int32(items)
		}
	}
	return items, bad >= 0 && items <= math.MaxInt32
}

// listStart is the start of list i of a in its child (i = a.Len(): the
// end of the last). (Offsets gives the whole buffer, from the array's
// first slot before any slicing.)
func listStart(a arrow.Array, i int) int {
	j := a.Data().Offset() + i
	switch l := a.(type) {
	case *array.List:
		return int(l.Offsets()[j])
	case *array.LargeList:
		return int(l.Offsets()[j])
	}
	return 0
}

// itemNulls reports whether any of the arrays' children holds a null.
func itemNulls(arrs []arrow.Array) bool {
	for _, a := range arrs {
		if a.(array.ListLike).ListValues().NullN() > 0 {
			return true
		}
	}
	return false
}

// ListShell is BuildDenseKeep of a page of a list of leaves (the paths of
// ListLayers) whose levels are over Lance's mini-block budget
// (OverLevelBudget), which a 2.3 page then stores sparse, without the
// levels: the layers, counts and visible leaf segments BuildDenseKeep
// gives, Rep and Def nil and LevelsOmitted set, and the page's sparse
// layers (ListLayers). ok is false for other paths and arrays, and for a
// page within the budget: the caller builds its levels.
func ListShell(arrs []arrow.Array, path []Step, keep []bool) (Dense, []Segment, []LayerData, bool) {
	if keep != nil && len(keep) != len(path) {
		return Dense{}, nil, nil, false
	}
	lists, outer, ok := pageLists(arrs, path)
	if !ok || !noItemLists(arrs, lists, outer) {
		// (Over the budget needs rows of more levels than values: lists
		// of no items. Without any, ListLayers is not worth its pass.)
		return Dense{}, nil, nil, false
	}
	lds, ok := ListLayers(arrs, path)
	if !ok {
		return Dense{}, nil, nil, false
	}
	d := len(path) - 2 // the list's depth
	list, leaf := lds[d], lds[d+1]
	used := make([]uint8, len(path))
	noItems := 0 // lists of no items (null, empty, or under a null struct): a level each
	for i := range list.Len {
		if list.Offsets[i+1] != list.Offsets[i] {
			continue
		}
		noItems++
		switch {
		case d > 0 && lds[0].Valid != nil && !lds[0].Valid[i]:
			used[0] |= usedNull
			used[d] |= usedMasked // (a list below a null struct)
		case list.Valid != nil && !list.Valid[i]:
			used[d] |= usedNull
		default:
			used[d] |= usedEmpty
		}
	}
	if leaf.Valid != nil && slices.Contains(leaf.Valid, false) {
		used[d+1] |= usedNull
	}
	layers, _ := classifyLayers(path, used, keep)
	if leaf.Len == 0 || !overBudgetList(layers, list.Offsets) {
		return Dense{}, nil, nil, false
	}
	dense := Dense{Layers: layers, NumItems: leaf.Len + noItems, NumVisible: leaf.Len, NumRows: list.Len, LevelsOmitted: true}
	// Segments: the items of each valid non-empty list, a list's joined to
	// the one before when they follow (as the walk joins them, within an
	// array).
	var segs []Segment
	row := 0
	for _, l := range lists {
		child := l.(array.ListLike).ListValues()
		n := l.Len()
		at := l.Data().Offset()
		page := list.Offsets[row : row+n+1]
		switch a := l.(type) {
		case *array.List:
			segs = appendItemSegments(segs, child, a.Offsets()[at:at+n+1], page)
		case *array.LargeList:
			segs = appendItemSegments(segs, child, a.Offsets()[at:at+n+1], page)
		}
		row += n
	}
	return dense, segs, lds, true
}

// appendItemSegments appends to segs the items of the lists of one array
// that have items (page: their item counts as offsets from the array's
// first row, none for a null list), offs being the array's offsets from
// that row: a list's items join the segment before when they follow it.
func appendItemSegments[T int32 | int64](segs []Segment, child arrow.Array, offs []T, page []int32) []Segment {
	for i := range len(page) - 1 {
		if page[i+1] == page[i] {
			continue // no items
		}
		cs := int(offs[i])
		ce := cs + int(page[i+1]-page[i])
		if k := len(segs) - 1; k >= 0 && segs[k].Arr == child && segs[k].End == cs {
			segs[k].End = ce
		} else {
			segs = append(segs, Segment{Arr: child, Start: cs, End: ce})
		}
	}
	return segs
}

// noItemLists reports whether some list of the page has no items: a null
// or empty list, or one under a null struct (outer).
func noItemLists(arrs, lists []arrow.Array, outer bool) bool {
	for i, l := range lists {
		if l.NullN() > 0 || outer && arrs[i].NullN() > 0 {
			return true
		}
		off := l.Data().Offset()
		switch a := l.(type) {
		case *array.List:
			if hasEmpty(a.Offsets()[off : off+a.Len()+1]) {
				return true
			}
		case *array.LargeList:
			if hasEmpty(a.Offsets()[off : off+a.Len()+1]) {
				return true
			}
		}
	}
	return false
}

// hasEmpty reports whether two adjacent offsets are equal.
func hasEmpty[T int32 | int64](o []T) bool {
	for i := 1; i < len(o); i++ {
		if o[i] == o[i-1] {
			return true
		}
	}
	return false
}
