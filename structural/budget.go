package structural

import "math/bits"

// levelBudgetBits is the size Lance 14 allows the levels of one mini-block
// chunk (16 KiB of packed levels).
const levelBudgetBits = 16 << 10 * 8

// MaxLevelsPerChunk is the number of levels of bitsPerLevel bits that fit
// one mini-block chunk's level budget (at most 65535, a chunk's u16 count).
func MaxLevelsPerChunk(bitsPerLevel int) int {
	if bitsPerLevel <= 0 {
		return 65535
	}
	return min(levelBudgetBits/bitsPerLevel, 65535)
}

// BitsPerLevel is the packed width of one level entry of a page: the bits
// of its largest repetition level plus those of its largest definition
// level (0 when the page has no level streams).
func BitsPerLevel(layers []Layer) int {
	maxDef := 0
	for _, l := range layers {
		maxDef += DefLevels(l)
	}
	return bits.Len(uint(NumLists(layers))) + bits.Len(uint(maxDef))
}

// OverLevelBudget reports whether a page's dense levels would not fit
// Lance 14's mini-block level budget without cutting the page: walking
// top-level rows, a row "has overhead" when it has more levels than visible
// values (null or empty lists); rows with overhead may not push a page past
// MaxLevelsPerChunk levels. It is true when one such row alone exceeds the
// budget, or when packing rows greedily under that rule needs more than one
// page (Lance's RequiresPageSplit and SingleRowOverBudget). Pages without
// lists, with a structural fixed-size list (hasFSL) or without visible values
// are always within budget, as in Lance.
func OverLevelBudget(d Dense, hasFSL bool) bool {
	maxRep := uint16(NumLists(d.Layers))
	if hasFSL || maxRep == 0 || d.Rep == nil || d.Def == nil || d.NumVisible == 0 || len(d.Rep) != len(d.Def) {
		return false
	}
	limit := MaxLevelsPerChunk(BitsPerLevel(d.Layers))
	maxVis := uint16(MaxVisibleDef(d.Layers))
	overhead := false
	pageLevels, pageRows, pageOverhead, pages := 0, 0, false, 1
	rowStart, rowVals := 0, 0
	finish := func(end int) bool {
		n := end - rowStart
		over := n > rowVals
		if over {
			overhead = true
			if n > limit {
				return true
			}
		}
		if pageRows > 0 && (pageOverhead || over) && pageLevels+n > limit {
			pages++
			pageLevels, pageRows, pageOverhead = 0, 0, false
		}
		pageRows++
		pageLevels += n
		pageOverhead = pageOverhead || over
		return false
	}
	for i, r := range d.Rep {
		if r == maxRep && i > 0 {
			if finish(i) {
				return true
			}
			rowStart, rowVals = i, 0
		}
		if d.Def[i] <= maxVis {
			rowVals++
		}
	}
	if finish(len(d.Rep)) {
		return true
	}
	return overhead && pages > 1
}
