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
		// dictionary pages: the items; dictionary and FSST-coded pages:
		// the pieces they are filled in side by side (dictSizes,
		// fsstPieces), values [cuts[j], cuts[j+1]) into bytes [sizes[j],
		// sizes[j+1]) of the page's part
		dict  *values.Block
		cuts  []int
		sizes []uint64
	}
	// Pages are decoded and sized side by side, then expanded side by
	// side into their own parts of one buffer (FSST-coded pages in
	// pieces, so one large page does not keep one core alone at work).
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
			pt.cuts, pt.sizes = fsstPieces(t, v)
			pt.size = int(pt.sizes[len(pt.sizes)-1])
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
	// One job per page, or per piece of an FSST-coded page.
	type job struct{ part, piece int }
	var jobs []job
	for i, pt := range parts {
		if pt.fsst == nil {
			jobs = append(jobs, job{i, -1})
			continue
		}
		for j := range len(pt.cuts) - 1 {
			jobs = append(jobs, job{i, j})
		}
	}
	err = par.Each(len(jobs), func(k int) error {
		pt := parts[jobs[k].part]
		v := pt.vals
		if j := jobs[k].piece; j >= 0 {
			lo, hi := pt.cuts[j], pt.cuts[j+1]
			a, b := pt.at+int(pt.sizes[j]), pt.at+int(pt.sizes[j+1])
			sub := values.Block{N: hi - lo, Data: v.Data, Offsets: v.Offsets[lo : hi+1]}
			if ow == 4 {
				return values.FsstExpandInto(pt.fsst, data[a:b], sub, arrow.Int32Traits.CastFromBytes(offs)[pt.row+lo:pt.row+hi], a)
			}
			return values.FsstExpandInto(pt.fsst, data[a:b], sub, arrow.Int64Traits.CastFromBytes(offs)[pt.row+lo:pt.row+hi], a)
		}
		if pt.dict != nil {
			dictFill(data, offs, pt.row, pt.at, ow, v, pt.dict, pt.valid, pt.cuts, pt.sizes)
			return nil
		}
		bulk.Copy(data[pt.at:pt.at+pt.size], v.Data[v.Offsets[0]:v.Offsets[v.N]])
		putOffsets(offs, pt.row, v.Offsets[:v.N], pt.at-int(v.Offsets[0]), ow)
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

// fsstPieces cuts FSST-coded values v into pieces that expand side by side
// (of fsstPieceValues values): the values [cuts[j], cuts[j+1]) of piece j
// and the decoded bytes before it, sizes[j] (sizes[len(cuts)-1] is v's
// decoded size). The cuts follow v alone, not the cores.
func fsstPieces(t *values.FsstTable, v values.Block) ([]int, []uint64) {
	k := max(1, (v.N+fsstPieceValues-1)/fsstPieceValues)
	cuts, sizes := make([]int, k+1), make([]uint64, k+1)
	for j := 1; j <= k; j++ {
		cuts[j] = j * v.N / k
		sub := values.Block{N: cuts[j] - cuts[j-1], Data: v.Data, Offsets: v.Offsets[cuts[j-1] : cuts[j]+1]}
		sizes[j] = sizes[j-1] + uint64(t.DecodedLen(sub))
	}
	return cuts, sizes
}

// fsstPieceValues is about how many values a piece of fsstPieces holds.
const fsstPieceValues = 1 << 16

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
