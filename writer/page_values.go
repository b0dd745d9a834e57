package writer

import (
	"bytes"
	"math"
	"slices"
	"sort"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// A page's values: gathered from its Arrow segments (every slot, the valid
// ones only, or borrowed from the arrays' own buffers), masked below null
// ancestors, and the scalar of a constant page.

// pageValues is the visible leaf values of one page, gathered.
type pageValues struct {
	info      leafInfo // how this page's values are laid out (the column's, or its dictionary form)
	n         int
	fixed     []byte   // values.KindFixed / values.KindFSL data, values.KindBool bitmap
	offsets   []uint64 // values.KindVariable: n+1
	itemValid [][]byte // values.KindFSL: per list layer (outer first), its children's validity when stored (nil: none stored)
	dict      *pageDict
	fsst      bool   // values.KindVariable: the values are FSST coded (with the plan's table)
	nulls     []bool // visible leaf slots holding no value: null, or under a null ancestor
	allNull   bool
	// nullCount is how many of nulls[:n] are true, when counted is set
	// (gather and maskAncestorNulls keep it).
	nullCount int
	counted   bool
	err       error // gathering failed (records that cannot be encoded)
	// borrowed: fixed is the Arrow array's own value buffer (one segment:
	// null-free fixed-width values or one-level fixed-size lists, or
	// strings whose null slots span no bytes), read-only; it is copied
	// before anything writes to it.
	borrowed bool
	// compact: fixed (and offsets, for strings) hold the valid slots'
	// values only, back to back (nulls still covers every slot, and
	// nullCount is counted): only a sparse x zipped page may be encoded
	// from it (validOnly).
	compact bool
	// parts: values.KindVariable, a page of several segments left where
	// its values lie (fixed is nil, offsets are those of the values
	// gathered) until a codec other than FSST needs them in one buffer
	// (materialize).
	parts *pageParts
}

// pageParts is a string page's values as they lie in its arrays' buffers
// (borrowParts): data[k] holds the values from firsts[k] on. gathered is
// them in one buffer once materialize has run (for every copy of the
// page's pageValues).
type pageParts struct {
	data     [][]byte
	firsts   []int
	gathered []byte
}

// partAt is where value i's bytes lie: a buffer, the offset among the
// page's values of its first byte, and the first value past it.
func (pv *pageValues) partAt(i int) (data []byte, base uint64, next int) {
	pp := pv.parts
	if pp == nil {
		return pv.fixed, 0, math.MaxInt
	}
	k := sort.Search(len(pp.firsts), func(k int) bool { return pp.firsts[k] > i }) - 1
	next = math.MaxInt
	if k+1 < len(pp.firsts) {
		next = pp.firsts[k+1]
	}
	return pp.data[k], pv.offsets[pp.firsts[k]], next
}

// value is the bytes of value i (of the stored values).
func (pv *pageValues) value(i int) []byte {
	data, base, _ := pv.partAt(i)
	return data[pv.offsets[i]-base : pv.offsets[i+1]-base]
}

// materialize gathers the values of a page left in parts, as
// gatherVariable would have, into buf (grown when too small; returned) the
// first time, and points pv at them.
func (pv *pageValues) materialize(buf []byte) []byte {
	pp := pv.parts
	if pp == nil {
		return buf
	}
	if pp.gathered == nil {
		total := int(pv.offsets[len(pv.offsets)-1] - pv.offsets[0])
		if cap(buf) < total {
			buf = bulk.Make(total)
		}
		g := buf[:total]
		for k, p := range pp.data {
			bulk.Copy(g[pv.offsets[pp.firsts[k]]-pv.offsets[0]:], p)
		}
		pp.gathered = g
	}
	pv.fixed, pv.parts = pp.gathered, nil
	return buf
}

// minPartsBytes is the string bytes from which a page of several segments
// is left in its arrays' buffers (below, gathering it costs little; tests
// lower it), and maxParts the most segments it may span.
var minPartsBytes = 1 << 20

const maxParts = 64

// stored is how many values pv holds: one per slot, or per valid slot of
// a compact page.
func (pv *pageValues) stored() int {
	if pv.compact {
		return pv.n - pv.nullCount
	}
	return pv.n
}

// valueAt is the index among pv's values of slot's value (for a compact
// page, of the first valid slot from slot on): slot, or on a compact page
// the valid slots before it, counted from an earlier slot from whose
// index is at (0, 0 counts from the start).
func (pv *pageValues) valueAt(from, at, slot int) int {
	if !pv.compact {
		return slot
	}
	return at + (slot - from) - bitmap.CountTrue(pv.nulls[from:slot])
}

// appendSlots appends the values of slots [lo, hi) of a variable-width
// page (null slots empty) and their end offsets; v is the index of slot
// lo's value (valueAt).
func (pv *pageValues) appendSlots(data []byte, offs []uint64, lo, hi, v int) ([]byte, []uint64) {
	for i := lo; i < hi; i++ {
		if !pv.compact || !pv.nulls[i] {
			data = append(data, pv.value(v)...)
			v++
		}
		offs = append(offs, uint64(len(data)))
	}
	return data, offs
}

// gather collects a page's values. With validOnly, a page the selector
// settles as sparse from its counts alone gathers its valid values only
// (pv.compact): a fixed-size-list page whose sparse values are zipped, and
// a string page (the ladder then says whether they are zipped).
func (c *pageEnc) gather(segs []structural.Segment, n int, validOnly bool) pageValues {
	pv := pageValues{n: n, info: c.info}
	nulls := 0
	if cap(c.nulls) < n {
		c.nulls = make([]bool, 0, n)
	}
	pv.nulls = c.nulls[:0]
	for _, s := range segs {
		cnt := s.End - s.Start
		at := len(pv.nulls)
		pv.nulls = slices.Grow(pv.nulls, cnt)[:at+cnt]
		bm := s.Arr.NullBitmapBytes()
		if len(bm) == 0 || s.Arr.NullN() == 0 {
			clear(pv.nulls[at:])
			continue
		}
		nulls += bitmap.Nulls(pv.nulls[at:], bm, s.Arr.Data().Offset()+s.Start)
	}
	pv.allNull = nulls == n
	pv.nullCount, pv.counted = nulls, true
	if validOnly && !pv.allNull && c.info.kind == values.KindFSL &&
		selector.SettledZipped(n, n-nulls, c.info.rowBits()/8, c.cfg.format.planarMetadata(), c.opts) {
		if data, ok := gatherFSLValid(c.vals[:0], segs, c.info, n-nulls); ok {
			pv.fixed, pv.compact = data, true
			c.vals, c.nulls = data, pv.nulls
			return pv
		}
	}
	if validOnly && compactStrings && !pv.allNull && c.info.kind == values.KindVariable &&
		selector.SettledSparse(n, n-nulls, c.cfg.format.planarMetadata(), c.opts) {
		pv.offsets, pv.fixed = gatherVariableValid(append(c.offsets[:0], 0), c.vals[:0], segs, n-nulls)
		pv.compact = true
		c.vals, c.offsets, c.nulls = pv.fixed, pv.offsets, pv.nulls
		if testHookCompact != nil {
			testHookCompact()
		}
		return pv
	}
	if pv.allNull && n > 0 && c.info.kind == values.KindFSL {
		// No value is stored: an all-null page's payload is never read
		// (null-run pages are made of it, selector.MinNullRun).
		pv.fixed = c.vals[:0]
		c.nulls = pv.nulls
		return pv
	}
	switch c.info.kind {
	case values.KindFixed:
		if b, ok := borrowFixed(segs, c.info.bits/8, nulls); ok {
			pv.fixed, pv.borrowed = b, true
			break
		}
		if need := n * c.info.bits / 8; cap(c.vals) < need {
			c.vals = bulk.Make(need)
		}
		pv.fixed = gatherFixed(c.vals[:0], segs, c.info.bits/8)
	case values.KindBool:
		pv.fixed, _ = gatherBits(c.vals[:0], 0, segs)
	case values.KindVariable:
		pv.offsets = append(c.offsets[:0], 0)
		if offs, b, ok := borrowVariable(pv.offsets, segs); ok {
			pv.offsets, pv.fixed, pv.borrowed = offs, b, true
			break
		}
		if _, total := varSizes(segs); stringParts && len(segs) > 1 && len(segs) <= maxParts && total >= minPartsBytes {
			if offs, parts, firsts, ok := borrowParts(pv.offsets, segs); ok {
				pv.offsets, pv.parts = offs, &pageParts{data: parts, firsts: firsts}
				if testHookParts != nil {
					testHookParts()
				}
				break
			}
			pv.offsets = append(c.offsets[:0], 0)
		}
		pv.offsets, pv.fixed = gatherVariable(pv.offsets, c.vals[:0], segs)
	case values.KindFSL:
		if b, ok := borrowFSL(segs, c.info, nulls); ok {
			pv.fixed, pv.borrowed = b, true
			break
		}
		// Lance stores a layer's validity whenever its children have
		// nulls; the cost policy only when such a null is visible.
		pv.fixed, pv.itemValid = gatherFSL(c.vals[:0], nil, segs, c.info, c.opts.Policy == selector.PolicyCost)
		if !slices.ContainsFunc(pv.itemValid, func(b []byte) bool { return b != nil }) {
			pv.itemValid = nil
		}
	case values.KindDict:
		pv.fixed, pv.dict = c.gatherDict(segs)
	case values.KindPacked:
		if need := n * c.info.bits / 8; cap(c.vals) < need {
			c.vals = make([]byte, 0, need)
		}
		pv.fixed = gatherPacked(c.vals[:0], segs, c.info)
	case values.KindVarPacked:
		var err error
		pv.fixed, pv.offsets, err = gatherVarPacked(c.vals[:0], c.offsets[:0], segs, c.info, n)
		if err != nil {
			pv.err = err
		}
	}
	if !pv.borrowed && pv.parts == nil {
		c.vals = pv.fixed
	}
	c.offsets = pv.offsets
	c.nulls = pv.nulls
	return pv
}

// compactStrings enables the valid-only gather of string pages (tests
// compare the files written with and without it).
var compactStrings = true

// testHookCompact, when set, is called for every page gathered that way.
var testHookCompact func()

// stringParts enables string pages left in their arrays' buffers (tests
// compare the files written with and without it), and testHookParts, when
// set, is called for every such page.
var (
	stringParts   = true
	testHookParts func()
)

// borrowFixed returns the values of a page made of one null-free segment
// of a fixed-width array as they lie in the array's buffer (capped, so an
// append cannot write into it), instead of a copy.
func borrowFixed(segs []structural.Segment, bw, nulls int) ([]byte, bool) {
	if len(segs) != 1 || nulls != 0 || bw == 0 || segs[0].Arr.NullN() != 0 {
		return nil, false
	}
	s := segs[0]
	d := s.Arr.Data()
	if len(d.Buffers()) < 2 || d.Buffers()[1] == nil {
		return nil, false
	}
	buf := d.Buffers()[1].Bytes()
	lo, hi := (d.Offset()+s.Start)*bw, (d.Offset()+s.End)*bw
	if hi > len(buf) {
		return nil, false
	}
	return buf[lo:hi:hi], true
}

// scalar returns the inline constant of a page whose non-null visible values
// are all equal (at least one; fixed-width values of at most 32 bytes), or
// nil, and whether no visible value is null.
func (c *pageEnc) scalar(pv pageValues) ([]byte, bool) {
	nullFree := true
	first := -1
	if pv.counted {
		nullFree = pv.nullCount == 0
		first = slices.Index(pv.nulls[:pv.n], false)
	} else {
		for i, null := range pv.nulls[:pv.n] {
			if null {
				nullFree = false
			} else if first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		return nil, nullFree
	}
	switch pv.info.kind {
	case values.KindFixed:
		w := pv.info.bits / 8
		if w > 32 {
			return nil, nullFree
		}
		v := pv.fixed[first*w : (first+1)*w]
		for i := first + 1; i < pv.n; i++ {
			if !pv.nulls[i] && !bytes.Equal(pv.fixed[i*w:(i+1)*w], v) {
				return nil, nullFree
			}
		}
		return append([]byte(nil), v...), nullFree
	case values.KindBool:
		v := (pv.fixed[first/8] >> (first % 8)) & 1
		for i := first + 1; i < pv.n; i++ {
			if !pv.nulls[i] && (pv.fixed[i/8]>>(i%8))&1 != v {
				return nil, nullFree
			}
		}
		return []byte{v}, nullFree
	}
	return nil, nullFree
}

// maskAncestorNulls marks as null the visible slots that a null ancestor
// hides although the leaf array holds a value there (Arrow leaves the
// children of a null struct slot undefined): such a value is not data, and
// must not make a page constant or count as a value.
func maskAncestorNulls(pv *pageValues, d structural.Dense) {
	outer := false
	for _, l := range d.Layers[min(1, len(d.Layers)):] {
		outer = outer || structural.DefLevels(l) > 0
	}
	if d.Def == nil || !outer || len(d.Def) < pv.n || len(pv.nulls) < pv.n {
		return
	}
	maxVis := uint16(structural.MaxVisibleDef(d.Layers))
	// First, branch-free, whether any visible slot holds a value that an
	// ancestor hides (a level above zero where the leaf is valid): mostly
	// none, and then only the null count changes.
	n, k, nulls, hidden := pv.n, 0, 0, 0
	if n == 0 {
		return
	}
	for _, def := range d.Def {
		vis := b2i(def <= maxVis)
		null := b2i(pv.nulls[min(k, n-1)])
		hidden |= vis & b2i(def > 0) &^ null
		nulls += vis & null
		k += vis
	}
	if k == n && hidden == 0 {
		pv.allNull = nulls == n
		pv.nullCount, pv.counted = nulls, true
		return
	}
	pv.counted = false
	k, nulls = 0, 0
	var masked []int
	for _, def := range d.Def {
		if def > maxVis {
			continue // a null or empty list: no slot
		}
		if k == pv.n {
			return
		}
		if def > 0 && !pv.nulls[k] {
			pv.nulls[k] = true
			masked = append(masked, k)
		}
		if pv.nulls[k] {
			nulls++
		}
		k++
	}
	pv.allNull = nulls == pv.n
	pv.nullCount, pv.counted = nulls, true
	scrubMasked(pv, masked)
}

// b2i is 1 for true, 0 for false (a flag set, no branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scrubMasked clears the values of newly masked slots as null slots are
// cleared when gathered (zeros, no bytes), so that the value codecs, sized
// from statistics that skip nulls, can hold every slot.
func scrubMasked(pv *pageValues, masked []int) {
	if len(masked) == 0 {
		return
	}
	if pv.borrowed {
		pv.fixed, pv.borrowed = bytes.Clone(pv.fixed), false
	}
	pv.materialize(nil)
	switch pv.info.kind {
	case values.KindFixed, values.KindDict:
		if w := pv.info.bits / 8; pv.info.bits%8 == 0 && len(pv.fixed) >= pv.n*w {
			for _, k := range masked {
				clear(pv.fixed[k*w : (k+1)*w])
			}
		}
	case values.KindBool:
		for _, k := range masked {
			if k/8 < len(pv.fixed) {
				pv.fixed[k/8] &^= 1 << (k % 8)
			}
		}
	case values.KindVariable:
		if len(pv.offsets) != pv.n+1 {
			return
		}
		// Drop the masked values' bytes, shifting the rest down.
		out, m := pv.offsets[0], 0
		for i := 0; i < pv.n; i++ {
			lo, hi := pv.offsets[i], pv.offsets[i+1]
			if m < len(masked) && masked[m] == i {
				m++
				hi = lo
			}
			copy(pv.fixed[out:], pv.fixed[lo:hi])
			pv.offsets[i] = out
			out += hi - lo
		}
		pv.offsets[pv.n] = out
		pv.fixed = pv.fixed[:out]
	}
}
