package structural

// A page's layer kinds, from the conditions its walk met at each step
// (BuildDenseKeep, ListShell).

// classifyLayers gives the layers of a page (inner-most first) from the
// conditions its walk used at each step of path (and keep, see
// BuildDenseKeep), and each used condition's def band value (level[code]).
func classifyLayers(path []Step, used []uint8, keep []bool) ([]Layer, []uint16) {
	L := len(path)
	itemNull := make([]bool, L)
	for d, st := range path {
		itemNull[d] = st.Kind != StepList && (used[d]&usedNull != 0 || keep != nil && keep[d]) ||
			(st.Kind == StepStruct || st.Kind == StepFSL) && used[d]&usedMasked != 0
	}
	forceNull := readableLists(path, used, itemNull)
	layers := make([]Layer, L)
	level := make([]uint16, 2*L+1)
	base := uint16(1)
	for j := range L {
		d := L - 1 - j
		u := used[d]
		if path[d].Kind == StepList {
			// A null band when a null list occurs, when a slot lies below
			// a null item ancestor (see BuildDense) or for readableLists;
			// the last two leave it unused.
			null := u&(usedNull|usedMasked) != 0 || forceNull[d] && u&usedEmpty == 0
			switch {
			case null && u&usedEmpty != 0:
				layers[j] = NullAndEmptyList
				level[nullCode(d)], level[emptyCode(d)] = base, base+1
				base += 2
			case null:
				layers[j] = NullableList
				level[nullCode(d)] = base
				base++
			case u&usedEmpty != 0:
				layers[j] = EmptyableList
				level[emptyCode(d)] = base
				base++
			default:
				layers[j] = AllValidList
			}
			continue
		}
		if itemNull[d] {
			layers[j] = NullableItem
			level[nullCode(d)] = base
			base++
		} else {
			layers[j] = AllValidItem
		}
	}
	return layers, level
}

// readableLists returns, per depth, the list layers with no null or empty
// list of their own that must nevertheless be NULLABLE_LIST rather than
// ALL_VALID_LIST for Lance 14's reader.
//
// Lance's unraveler (repdef.rs RepDefUnraveler::new) maps each def level to
// the repetition depth at which it is visible by counting the list layers
// below it, but skips ALL_VALID_LIST layers in that count. When it then
// unravels a nullable item layer Y (unravel_validity keeps the entries whose
// level maps to a depth <= the lists already unraveled), an entry carrying
// the level of a layer X outside Y, with a list layer between them, is not a
// slot of Y; but if all-valid lists below X were left out of the count it is
// taken as one, and Y gets more validity entries than slots (pylance:
// "Structural validity has 4 entries for an array with 3 values" for
// struct<a: list<int32>> = [{a: [null]}, null, {a: [1, 2]}]).
//
// So for every layer X whose band is used and that has a nullable item layer
// Y inside it with a list layer in between (X itself included), every list
// layer inside X is given a band: then the count is exact for every level
// that occurs. A band that no entry uses changes no other level.
// itemNull[d] says whether item layer d is NULLABLE_ITEM in this page.
func readableLists(path []Step, used []uint8, itemNull []bool) []bool {
	L := len(path)
	var force []bool
	for x := 0; x < L; x++ {
		if used[x]&^usedMasked == 0 {
			continue
		}
		need, list := false, false
		for y := x; y < L && !need; y++ {
			if path[y].Kind == StepList {
				list = true
				continue
			}
			need = y > x && list && itemNull[y]
		}
		if !need {
			continue
		}
		if force == nil {
			force = make([]bool, L)
		}
		for l := x + 1; l < L; l++ {
			if path[l].Kind == StepList {
				force[l] = true
			}
		}
	}
	if force == nil {
		force = make([]bool, L)
	}
	return force
}
