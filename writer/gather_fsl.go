package writer

// Gathering fixed-size-list values: their items flattened row after row,
// zeroed under nulls, with the validity Lance stores per list layer.

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/structural"
)

// gatherFSL flattens visible fixed-size-list values (a primitive FSL, nested
// or not): item data, zeroed under any null (the row, a list slot of any
// layer, the item), and per list layer k (outer first) the validity bitmap of
// that layer's children (one bit per child: rows times dims[0..k]), the
// children's own bits as Lance stores them (children under a null slot keep
// theirs). valid[k] is nil when layer k's validity need not be stored: its
// children have no null, or, with visibleOnly, none outside a null ancestor
// (those are never read).
func gatherFSL(data []byte, valid [][]byte, segs []structural.Segment, li leafInfo, visibleOnly bool) ([]byte, [][]byte) {
	var spare []byte
	if len(valid) > 0 {
		spare = valid[0]
	}
	if out, bits, ok := gatherFSLBulk(data, spare, segs, li, visibleOnly); ok {
		if bits == nil {
			return out, nil
		}
		return out, append(valid[:0], bits)
	}
	return walkFSL(data, valid, segs, li, visibleOnly)
}

// walkFSL is gatherFSL item by item, for any shape.
func walkFSL(data []byte, valid [][]byte, segs []structural.Segment, li leafInfo, visibleOnly bool) ([]byte, [][]byte) {
	L := len(li.dims)
	valid = slices.Grow(valid[:0], L)[:L]
	for k := range valid {
		valid[k] = valid[k][:0]
	}
	g := &fslGather{li: li, visibleOnly: visibleOnly, data: data[:0], valid: valid, need: make([]bool, L), count: make([]int, L),
		isBool: li.itemType.ID() == arrow.BOOL, bw: li.bits / 8}
	var chain [8]fslLevel
	for _, s := range segs {
		for i := s.Start; i < s.End; i++ {
			g.lv = fslChain(chain[:0], s.Arr, i, li.dims)
			g.walk(0, 0, s.Arr.IsNull(i))
		}
	}
	for k := range g.valid {
		if !g.need[k] {
			g.valid[k] = nil
		}
	}
	return g.data, g.valid
}

// borrowFSL returns the items of a page made of one segment of one-level
// fixed-size lists with no null row and no null item as they lie in the
// child array's buffer (capped, so an append cannot write into it), instead
// of a copy.
func borrowFSL(segs []structural.Segment, li leafInfo, nulls int) ([]byte, bool) {
	if len(segs) != 1 || nulls != 0 || len(li.dims) != 1 || li.itemType.ID() == arrow.BOOL || li.bits%8 != 0 || li.bits == 0 {
		return nil, false
	}
	s := segs[0]
	a, ok := s.Arr.(*array.FixedSizeList)
	if !ok || a.NullN() != 0 || a.ListValues().NullN() != 0 {
		return nil, false
	}
	cd := a.ListValues().Data()
	if len(cd.Buffers()) < 2 || cd.Buffers()[1] == nil {
		return nil, false
	}
	rb := li.dims[0] * li.bits / 8
	base := (cd.Offset() + a.Data().Offset()*li.dims[0]) * li.bits / 8
	buf := cd.Buffers()[1].Bytes()
	lo, hi := base+s.Start*rb, base+s.End*rb
	if hi > len(buf) {
		return nil, false
	}
	return buf[lo:hi:hi], true
}

// gatherFSLBulk gathers one-level fixed-size lists of byte-aligned items
// with bulk copies: runs of valid rows are copied whole, null rows zeroed,
// and null items of valid rows zeroed after. The item validity is copied as
// a bitmap into bits when it must be stored (a null item in a row that
// counts: any row, or only valid rows when visibleOnly), else nil is
// returned for it. It reports false, having written nothing, for other
// shapes (booleans, nested lists), which take the item-by-item walk.
func gatherFSLBulk(data, bits []byte, segs []structural.Segment, li leafInfo, visibleOnly bool) ([]byte, []byte, bool) {
	if len(li.dims) != 1 || li.itemType.ID() == arrow.BOOL || li.bits%8 != 0 {
		return data, nil, false
	}
	dim, bw := li.dims[0], li.bits/8
	rb := dim * bw
	need, rows := false, 0
	for _, s := range segs {
		rows += s.End - s.Start
		child := s.Arr.(*array.FixedSizeList).ListValues()
		cd := child.Data()
		cv := validity(cd)
		if need || cv == nil || child.NullN() == 0 {
			continue
		}
		off := s.Arr.Data().Offset()
		if !visibleOnly {
			n := (s.End - s.Start) * dim
			need = bitutil.CountSetBits(cv, cd.Offset()+(off+s.Start)*dim, n) != n
			continue
		}
		for i := s.Start; i < s.End && !need; i++ {
			if s.Arr.IsValid(i) {
				need = bitutil.CountSetBits(cv, cd.Offset()+(off+i)*dim, dim) != dim
			}
		}
	}
	data = bulk.Grow(data[:0], rows*rb)[:rows*rb] // (every byte is written below)
	if need {
		nb := (rows*dim + 7) / 8
		bits = slices.Grow(bits[:0], nb)[:nb]
		clear(bits)
	}
	at, bitAt := 0, 0
	for _, s := range segs {
		a := s.Arr.(*array.FixedSizeList)
		cd := a.ListValues().Data()
		vals := cd.Buffers()[1].Bytes()
		off := a.Data().Offset()
		base := (cd.Offset() + off*dim) * bw
		segAt := at
		for i := s.Start; i < s.End; {
			j := i + 1
			if a.IsNull(i) {
				for j < s.End && a.IsNull(j) {
					j++
				}
				bulk.Clear(data[at : at+(j-i)*rb])
			} else {
				for j < s.End && a.IsValid(j) {
					j++
				}
				bulk.Copy(data[at:], vals[base+i*rb:base+j*rb])
			}
			at += (j - i) * rb
			i = j
		}
		n := (s.End - s.Start) * dim
		cv := validity(cd)
		if cv == nil || a.ListValues().NullN() == 0 {
			if need {
				bitutil.SetBitsTo(bits, int64(bitAt), int64(n), true)
			}
			bitAt += n
			continue
		}
		if need {
			bitutil.CopyBitmap(cv, cd.Offset()+(off+s.Start)*dim, n, bits, bitAt)
		}
		bitAt += n
		// Null items of valid rows hold zeros.
		for i := s.Start; i < s.End; i++ {
			first := cd.Offset() + (off+i)*dim
			if a.IsNull(i) || bitutil.CountSetBits(cv, first, dim) == dim {
				continue
			}
			for x := 0; x < dim; x++ {
				if !bitutil.BitIsSet(cv, first+x) {
					o := segAt + ((i-s.Start)*dim+x)*bw
					clear(data[o : o+bw])
				}
			}
		}
	}
	if !need {
		return data, nil, true
	}
	return data, bits, true
}

// gatherFSLValid gathers only the valid rows of one-level fixed-size lists
// of byte-aligned items, back to back: the values a sparse x zipped page
// stores, without touching a null row's payload (so a mostly-null page
// costs its valid rows, not its rows). ok is false, with nothing kept, for
// other shapes and when a valid row has a null item.
func gatherFSLValid(data []byte, segs []structural.Segment, li leafInfo, valid int) ([]byte, bool) {
	if len(li.dims) != 1 || li.itemType.ID() == arrow.BOOL || li.bits%8 != 0 {
		return data, false
	}
	dim, bw := li.dims[0], li.bits/8
	rb := dim * bw
	data = bulk.Grow(data[:0], valid*rb)
	for _, s := range segs {
		a := s.Arr.(*array.FixedSizeList)
		cd := a.ListValues().Data()
		cv := validity(cd)
		vals := cd.Buffers()[1].Bytes()
		off := a.Data().Offset()
		base := (cd.Offset() + off*dim) * bw
		bm := a.NullBitmapBytes()
		for i := s.Start; i < s.End; {
			j, v := s.End, true
			if a.NullN() > 0 && bm != nil {
				j, v = runEnd(bm, off, i, s.End)
			}
			if v {
				if cv != nil && a.ListValues().NullN() > 0 {
					n := (j - i) * dim
					if bitutil.CountSetBits(cv, cd.Offset()+(off+i)*dim, n) != n {
						return data[:0], false
					}
				}
				data = append(data, vals[base+i*rb:base+j*rb]...)
			}
			i = j
		}
	}
	return data, true
}

// fslGather is the state of gatherFSL.
type fslGather struct {
	li          leafInfo
	visibleOnly bool
	isBool      bool
	bw          int
	lv          []fslLevel
	data        []byte
	bits        int // boolean items written
	valid       [][]byte
	count       []int  // bits written per layer
	need        []bool // layer k has a null child worth storing
}

// walk gathers the children of slot j (relative to the row) of list layer
// k; hidden says whether a slot above them is null.
func (g *fslGather) walk(k, j int, hidden bool) {
	c := g.lv[k]
	dim := g.li.dims[k]
	for x := 0; x < dim; x++ {
		idx := j*dim + x
		null := c.arr.IsNull(c.base + idx)
		if g.count[k]%8 == 0 {
			g.valid[k] = append(g.valid[k], 0)
		}
		if !null {
			g.valid[k][g.count[k]/8] |= 1 << (g.count[k] % 8)
		} else if !(g.visibleOnly && hidden) {
			g.need[k] = true
		}
		g.count[k]++
		if k+1 < len(g.lv) {
			g.walk(k+1, idx, hidden || null)
			continue
		}
		zero := hidden || null
		d := c.arr.Data()
		if g.isBool {
			if g.bits%8 == 0 {
				g.data = append(g.data, 0)
			}
			if !zero && bitutil.BitIsSet(d.Buffers()[1].Bytes(), d.Offset()+c.base+idx) {
				g.data[g.bits/8] |= 1 << (g.bits % 8)
			}
			g.bits++
			continue
		}
		if zero {
			g.data = append(g.data, zeroes[:g.bw]...)
			continue
		}
		o := (d.Offset() + c.base + idx) * g.bw
		g.data = append(g.data, d.Buffers()[1].Bytes()[o:o+g.bw]...)
	}
}

// fslLevel is the child array of one list layer of a primitive FSL row and
// the logical index of the row's first child in it.
type fslLevel struct {
	arr  arrow.Array
	base int
}

// fslChain locates, for row i of a (nested) FSL array, the child array of
// every list layer and the row's first child slot in it (children of the
// row's j-th slot of layer k start at (base_k + j)·dims[k] in layer k+1).
func fslChain(out []fslLevel, a arrow.Array, i int, dims []int) []fslLevel {
	start := i
	cur := a
	for _, d := range dims {
		f := cur.(*array.FixedSizeList)
		start = (f.Data().Offset() + start) * d
		cur = f.ListValues()
		out = append(out, fslLevel{arr: cur, base: start})
	}
	return out
}
