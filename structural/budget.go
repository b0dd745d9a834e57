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
	p := budgetPacker{limit: MaxLevelsPerChunk(BitsPerLevel(d.Layers)), pages: 1}
	maxVis := uint16(MaxVisibleDef(d.Layers))
	rowStart, rowVals := 0, 0
	for i, r := range d.Rep {
		if r == maxRep && i > 0 {
			if p.row(i-rowStart, rowVals) {
				return true
			}
			rowStart, rowVals = i, 0
		}
		if d.Def[i] <= maxVis {
			rowVals++
		}
	}
	if p.row(len(d.Rep)-rowStart, rowVals) {
		return true
	}
	return p.over()
}

// overBudgetList is OverLevelBudget of a page of one list layer over its
// leaf from the list layer alone (ListLayers): a list of k items has k
// levels and k visible values, a null or empty one a level and none.
func overBudgetList(layers []Layer, offsets []int32) bool {
	p := budgetPacker{limit: MaxLevelsPerChunk(BitsPerLevel(layers)), pages: 1}
	for i := range len(offsets) - 1 {
		k := int(offsets[i+1] - offsets[i])
		if p.row(max(k, 1), k) {
			return true
		}
	}
	return p.over()
}

// budgetPacker packs a page's rows, in order, as Lance's mini-block level
// budget does (OverLevelBudget): a row "has overhead" when it has more
// levels than visible values, and rows with overhead may not push a page
// past limit levels.
type budgetPacker struct {
	limit                       int
	pageLevels, pageRows, pages int
	pageOverhead, overhead      bool
}

// row adds a row of n levels and vals visible values; true when the page
// is over the budget whatever rows follow: this row alone exceeds it, or
// rows with overhead have been seen and the rows so far need more than one
// page (neither can be undone, so a page found over stops the walk early).
func (p *budgetPacker) row(n, vals int) bool {
	over := n > vals
	if over {
		p.overhead = true
		if n > p.limit {
			return true
		}
	}
	if p.pageRows > 0 && (p.pageOverhead || over) && p.pageLevels+n > p.limit {
		p.pages++
		p.pageLevels, p.pageRows, p.pageOverhead = 0, 0, false
	}
	p.pageRows++
	p.pageLevels += n
	p.pageOverhead = p.pageOverhead || over
	return p.over()
}

// over is the verdict once every row is packed: rows with overhead and
// more than one page.
func (p *budgetPacker) over() bool { return p.overhead && p.pages > 1 }
