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
		vals       values.Block // dictionary pages: the indices
		n          int          // the page's values
		fsst       *values.FsstTable
		valid      []bool
		size       int
		at, row    int // where the page's values and rows start
		flat, null bool
		// dictionary pages: the items, and the pieces they are filled in
		// side by side (dictSizes), values [cuts[j], cuts[j+1]) into
		// bytes [sizes[j], sizes[j+1]) of the page's part
		dict  *values.Block
		cuts  []int
		sizes []uint64
		// string pages (FSST-coded or not): the blocks their chunks
		// decoded to, chunk c's values from row rows[c] and into bytes
		// from sizes[c] of the page's part (expanded, for FSST), and the
		// pieces they are filled in side by side, chunks [cuts[j],
		// cuts[j+1]) (chunkPieces)
		chunks []values.Block
		rows   []int
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
		pd, t, err := decodeChunkedChunks(mb, bufs, int(p.rows))
		if err != nil {
			return err
		}
		v, n := pd.vals, pd.vals.N
		for _, c := range pd.chunks {
			n += c.N
		}
		if pd.rep != nil || len(pd.layers) != 1 || n != int(p.rows) || pd.numVisible != n {
			return nil
		}
		switch {
		case pd.dict != nil: // u32 indices into variable-width items
			if t != nil || !pd.dict.Variable() || v.Variable() || v.Bits != 32 || pd.chunks != nil {
				return nil
			}
		case pd.chunks == nil: // (values of another kind)
			return nil
		}
		lds, err := structural.UnravelPath(pd.layers, path, nil, pd.def, n, n)
		if err != nil {
			return err
		}
		pt := part{vals: v, n: n, fsst: t, valid: lds[len(lds)-1].Valid, flat: true}
		if pd.dict != nil {
			if pt.cuts, pt.sizes, err = dictSizes(v, pd.dict, pt.valid); err != nil {
				return err
			}
			pt.dict = pd.dict
		} else {
			pt.chunks = pd.chunks
			pt.cuts, pt.rows, pt.sizes = chunkPieces(t, pd.chunks)
		}
		pt.size = int(pt.sizes[len(pt.sizes)-1])
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
		rows += pt.n
		total += pt.size
	}
	if ow == 4 && total > math.MaxInt32 || total > math.MaxInt-8 {
		return nil, false, nil // Arrow's join reports the overflow
	}
	// (Both are written whole below: each page's part, and the end.)
	data := bulk.Make(total)[:total]
	offs := bulk.Make((rows + 1) * ow)[:(rows+1)*ow]
	// One job per dictionary page (filled in pieces itself), or per piece
	// of a string page's chunks.
	type job struct{ part, piece int }
	var jobs []job
	for i, pt := range parts {
		if pt.dict != nil {
			jobs = append(jobs, job{i, -1})
			continue
		}
		for j := range len(pt.cuts) - 1 {
			jobs = append(jobs, job{i, j})
		}
	}
	err = par.Each(len(jobs), func(k int) error {
		pt := parts[jobs[k].part]
		j := jobs[k].piece
		if j < 0 {
			dictFill(data, offs, pt.row, pt.at, ow, pt.vals, pt.dict, pt.valid, pt.cuts, pt.sizes)
			return nil
		}
		for c := pt.cuts[j]; c < pt.cuts[j+1]; c++ {
			v := pt.chunks[c]
			a, b, row := pt.at+int(pt.sizes[c]), pt.at+int(pt.sizes[c+1]), pt.row+pt.rows[c]
			var err error
			switch {
			case pt.fsst == nil:
				bulk.Copy(data[a:b], v.Data[v.Offsets[0]:v.Offsets[v.N]])
				putOffsets(offs, row, v.Offsets[:v.N], a-int(v.Offsets[0]), ow)
			case ow == 4:
				err = values.FsstExpandInto(pt.fsst, data[a:b], v, arrow.Int32Traits.CastFromBytes(offs)[row:row+v.N], a)
			default:
				err = values.FsstExpandInto(pt.fsst, data[a:b], v, arrow.Int64Traits.CastFromBytes(offs)[row:row+v.N], a)
			}
			if err != nil {
				return err
			}
		}
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
				bitutil.SetBitsTo(bm, int64(pt.row), int64(pt.n), true)
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

// chunkPieces sizes a string page's chunks and cuts them into pieces that
// are filled side by side: chunk c's values start at row rows[c] of the
// page, and its bytes (expanded, with t; as they are, without) at
// sizes[c] (the page's total last); piece j is chunks [cuts[j], cuts[j+1]),
// about pieceValues values. The cuts follow the chunks alone, not the
// cores.
func chunkPieces(t *values.FsstTable, chunks []values.Block) (cuts, rows []int, sizes []uint64) {
	rows, sizes = make([]int, len(chunks)+1), make([]uint64, len(chunks)+1)
	cuts = []int{0}
	for c, v := range chunks {
		rows[c+1] = rows[c] + v.N
		if t != nil {
			sizes[c+1] = sizes[c] + uint64(t.DecodedLen(v))
		} else {
			sizes[c+1] = sizes[c] + v.Offsets[v.N] - v.Offsets[0]
		}
		if rows[c+1]-rows[cuts[len(cuts)-1]] >= pieceValues {
			cuts = append(cuts, c+1)
		}
	}
	if cuts[len(cuts)-1] != len(chunks) {
		cuts = append(cuts, len(chunks))
	}
	return cuts, rows, sizes
}

// pieceValues is about how many values a piece of chunkPieces holds.
const pieceValues = 1 << 16

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
