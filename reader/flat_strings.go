package reader

import (
	"math"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Flat string runs: a read of several whole dense chunked pages of a flat
// string or binary column sizes the column's value bytes first (FSST-coded
// pages by their codes, without expanding them; dictionary pages by their
// indices), then expands or copies each page's values straight into its
// part of one buffer: the values are written once, where page by page they
// were written per page and copied again to join the pages. Both steps run
// pages side by side.

// flatVariableRuns counts the runs readFlatVariable read (tests check it).
var flatVariableRuns atomic.Int64

// readFlatVariable reads pages (each covered whole) of a flat string or
// binary column of type dt, or returns ok false when a page is not a dense
// chunked page of variable-width values, or of u32 indices into a
// variable-width dictionary (the caller then decodes page by page).
func (f *File) readFlatVariable(dt arrow.DataType, path []structural.Step, pages []*page) (arrow.Array, bool, error) {
	ow := offsetWidth(dt)
	if ow == 0 || f.paths.noFlatVariable || len(pages) < 2 || len(path) != 1 {
		return nil, false, nil
	}
	type part struct {
		vals       values.Block
		fsst       *values.FsstTable
		valid      []bool
		size       int
		at, row    int // where the page's values and rows start
		flat, null bool
		// dictionary pages: the items, and the pieces dictSizes cut
		dict  *values.Block
		cuts  []int
		sizes []uint64
	}
	// Pages are decoded and sized side by side, then expanded side by
	// side into their own parts of one buffer.
	parts := make([]part, len(pages))
	err := par.Each(len(pages), func(i int) error {
		p := pages[i]
		mb := p.layout.GetMiniBlockLayout()
		if p.sparse != nil || mb == nil {
			return nil
		}
		bufs, err := f.pageBuffers(p)
		if err != nil {
			return err
		}
		pd, t, err := decodeChunkedCoded(mb, bufs, int(p.rows), true)
		if err != nil {
			return err
		}
		v := pd.vals
		if pd.rep != nil || len(pd.layers) != 1 || v.N != int(p.rows) || pd.numVisible != v.N {
			return nil
		}
		switch {
		case pd.dict != nil: // u32 indices into variable-width items
			if t != nil || !pd.dict.Variable() || v.Variable() || v.Bits != 32 {
				return nil
			}
		case !v.Variable() || len(v.Offsets) != v.N+1:
			return nil
		}
		lds, err := structural.UnravelPath(pd.layers, path, nil, pd.def, v.N, v.N)
		if err != nil {
			return err
		}
		pt := part{vals: v, fsst: t, valid: lds[len(lds)-1].Valid, flat: true}
		switch {
		case pd.dict != nil:
			if pt.cuts, pt.sizes, err = dictSizes(v, pd.dict, pt.valid); err != nil {
				return err
			}
			pt.dict, pt.size = pd.dict, int(pt.sizes[len(pt.sizes)-1])
		case t != nil:
			pt.size = t.DecodedLen(v)
		default:
			pt.size = int(v.Offsets[v.N] - v.Offsets[0])
		}
		parts[i] = pt
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	rows, total, nulls := 0, 0, 0
	for i := range parts {
		pt := &parts[i]
		if !pt.flat {
			return nil, false, nil
		}
		for _, ok := range pt.valid {
			if !ok {
				nulls++
			}
		}
		pt.at, pt.row = total, rows
		rows += pt.vals.N
		total += pt.size
	}
	if ow == 4 && total > math.MaxInt32 || total > math.MaxInt-8 {
		return nil, false, nil // Arrow's join reports the overflow
	}
	// (Both are written whole below: each page's part, and the end.)
	data := bulk.Make(total)[:total]
	offs := bulk.Make((rows + 1) * ow)[:(rows+1)*ow]
	err = par.Each(len(parts), func(i int) error {
		pt := parts[i]
		v := pt.vals
		if pt.dict != nil {
			dictFill(data, offs, pt.row, pt.at, ow, v, pt.dict, pt.valid, pt.cuts, pt.sizes)
			return nil
		}
		base := -int(v.Offsets[0])
		if pt.fsst != nil {
			dec, err := pt.fsst.DecodeBlockExact(data[pt.at:pt.at+pt.size], v)
			if err != nil {
				return err
			}
			v, base = dec, 0
		} else {
			bulk.Copy(data[pt.at:pt.at+pt.size], v.Data[v.Offsets[0]:v.Offsets[v.N]])
		}
		putOffsets(offs, pt.row, v.Offsets[:v.N], pt.at+base, ow)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	var bm []byte
	if nulls > 0 {
		bm = make([]byte, bitutil.BytesForBits(int64(rows)))
		for _, pt := range parts {
			if pt.valid == nil {
				bitutil.SetBitsTo(bm, int64(pt.row), int64(pt.vals.N), true)
				continue
			}
			for i, ok := range pt.valid {
				if ok {
					bitutil.SetBit(bm, pt.row+i)
				}
			}
		}
	}
	at := total
	putOffsets(offs, rows, []uint64{0}, at, ow)
	var vb *memory.Buffer
	if bm != nil {
		vb = memory.NewBufferBytes(bm)
	}
	flatVariableRuns.Add(1)
	d := array.NewData(dt, rows, []*memory.Buffer{vb, memory.NewBufferBytes(offs), memory.NewBufferBytes(data)}, nil, nulls, 0)
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
