package reader

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Flat string runs: a read of several whole dense chunked pages of a flat
// string or binary column sizes the column's value bytes first (FSST-coded
// pages by their codes, without expanding them), then expands or copies
// each page's values straight into one buffer: the values are written
// once, where page by page they were written per page and copied again to
// join the pages.

// flatVariableRuns counts the runs readFlatVariable read (tests check it).
var flatVariableRuns atomic.Int64

// readFlatVariable reads pages (each covered whole) of a flat string or
// binary column of type dt, or returns ok false when a page is not a dense
// chunked page of variable-width values without a dictionary (the caller
// then decodes page by page).
func (f *File) readFlatVariable(dt arrow.DataType, path []structural.Step, pages []*page) (arrow.Array, bool, error) {
	ow := offsetWidth(dt)
	if ow == 0 || f.paths.noFlatVariable || len(pages) < 2 || len(path) != 1 {
		return nil, false, nil
	}
	type part struct {
		vals  values.Block
		fsst  *values.FsstTable
		valid []bool
		size  int
	}
	parts := make([]part, 0, len(pages))
	rows, total, nulls := 0, 0, 0
	for _, p := range pages {
		mb := p.layout.GetMiniBlockLayout()
		if p.sparse != nil || mb == nil || mb.Dictionary != nil {
			return nil, false, nil
		}
		bufs, err := f.pageBuffers(p)
		if err != nil {
			return nil, false, err
		}
		pd, t, err := decodeChunkedCoded(mb, bufs, int(p.rows), true)
		if err != nil {
			return nil, false, err
		}
		v := pd.vals
		if !v.Variable() || pd.rep != nil || pd.dict != nil || len(pd.layers) != 1 || v.N != int(p.rows) || pd.numVisible != v.N || len(v.Offsets) != v.N+1 {
			return nil, false, nil
		}
		lds, err := structural.UnravelPath(pd.layers, path, nil, pd.def, v.N, v.N)
		if err != nil {
			return nil, false, err
		}
		valid := lds[len(lds)-1].Valid
		for _, ok := range valid {
			if !ok {
				nulls++
			}
		}
		size := int(v.Offsets[v.N] - v.Offsets[0])
		if t != nil {
			size = t.DecodedLen(v)
		}
		parts = append(parts, part{v, t, valid, size})
		rows += v.N
		total += size
	}
	if ow == 4 && total > math.MaxInt32 || total > math.MaxInt-8 {
		return nil, false, nil // Arrow's join reports the overflow
	}
	data := make([]byte, total+8) // 8 bytes of slack for FSST's word writes
	offs := make([]byte, (rows+1)*ow)
	var bm []byte
	if nulls > 0 {
		bm = make([]byte, bitutil.BytesForBits(int64(rows)))
	}
	at, row := 0, 0
	for _, pt := range parts {
		v := pt.vals
		base := -int(v.Offsets[0])
		if pt.fsst != nil {
			dec, err := pt.fsst.DecodeBlockInto(data[at:], v)
			if err != nil {
				return nil, false, err
			}
			v, base = dec, 0
		} else {
			bulk.Copy(data[at:at+pt.size], v.Data[v.Offsets[0]:v.Offsets[v.N]])
		}
		if len(v.Offsets) != v.N+1 || int(v.Offsets[v.N])+base != pt.size {
			return nil, false, fmt.Errorf("page of %d values expanded to %d bytes, sized %d: %w", v.N, int(v.Offsets[v.N])+base, pt.size, ErrCorrupt)
		}
		putOffsets(offs, row, v.Offsets[:v.N], at+base, ow)
		for i, ok := range pt.valid {
			if ok && bm != nil {
				bitutil.SetBit(bm, row+i)
			}
		}
		if pt.valid == nil && bm != nil {
			bitutil.SetBitsTo(bm, int64(row), int64(v.N), true)
		}
		at += pt.size
		row += v.N
	}
	putOffsets(offs, rows, []uint64{0}, at, ow)
	var vb *memory.Buffer
	if bm != nil {
		vb = memory.NewBufferBytes(bm)
	}
	flatVariableRuns.Add(1)
	d := array.NewData(dt, rows, []*memory.Buffer{vb, memory.NewBufferBytes(offs), memory.NewBufferBytes(data[:total])}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), true, nil
}

// putOffsets writes offsets os, each plus delta, from slot row of an
// offsets buffer of ow-byte entries.
func putOffsets(dst []byte, row int, os []uint64, delta, ow int) {
	if ow == 4 {
		out := arrow.Int32Traits.CastFromBytes(dst)[row : row+len(os)]
		for i, o := range os {
			out[i] = int32(int(o) + delta)
		}
		return
	}
	out := arrow.Int64Traits.CastFromBytes(dst)[row : row+len(os)]
	for i, o := range os {
		out[i] = int64(int(o) + delta)
	}
}
