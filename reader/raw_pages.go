package reader

import (
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
)

// Raw pages: a dense x zipped page of fixed-width records without
// control words and without a per-value transform (flat values, or
// fixed-size lists of them without item validity) stores its rows exactly
// as Arrow lays them out. A read of several such pages, each covered
// whole, reads every page's bytes straight into its place in one output
// buffer: no page buffer, no second copy to join the pages. Embedding
// columns written with a page budget are such runs of pages.

// rawPageRuns counts the runs readRawPages read (tests check it).
var rawPageRuns atomic.Int64

// rawRowBytes returns the bytes of one row of dt when its Arrow layout
// is one contiguous buffer of fixed-width rows (byte-aligned fixed-width
// values, or fixed-size lists of them, at any depth), else 0.
func rawRowBytes(dt arrow.DataType) int {
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		return int(t.Len()) * rawRowBytes(t.Elem())
	case *arrow.DictionaryType, arrow.ExtensionType:
		return 0
	case arrow.FixedWidthDataType:
		if w := t.BitWidth(); w >= 8 && w%8 == 0 {
			return w / 8
		}
	}
	return 0
}

// rawPage reports whether p's description promises rows of exactly
// rowBytes bytes each, back to back in its one buffer. readRawPages checks
// the promise again after the decode.
func rawPage(p *page, rowBytes int) bool {
	if p.sparse != nil {
		return false
	}
	z := p.layout.GetFullZipLayout()
	if z == nil || z.BitsRep != 0 || z.BitsDef != 0 || len(z.Layers) != 1 || z.Layers[0] != enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM {
		return false
	}
	if int(z.GetBitsPerValue()) != 8*rowBytes || uint64(z.NumItems) != p.rows || uint64(z.NumVisibleItems) != p.rows {
		return false
	}
	return len(p.buffers) == 1 && p.buffers[0].Size == p.rows*uint64(rowBytes)
}

// readRawPages reads pages (each covered whole) of a flat column of type
// dt into one array, or returns ok false when a page is not raw (the
// caller then decodes page by page).
func (f *File) readRawPages(dt arrow.DataType, pages []*page) (out arrow.Array, ok bool, err error) {
	rowBytes := rawRowBytes(dt)
	if f.paths.noRawPages || rowBytes == 0 || len(pages) < 2 {
		return nil, false, nil
	}
	var rows uint64
	for _, p := range pages {
		if !rawPage(p, rowBytes) {
			return nil, false, nil
		}
		rows += p.rows
	}
	if rows > uint64(f.size)/uint64(rowBytes) {
		return nil, false, nil // cannot be backed by the file; the page path reports it
	}
	buf := memory.NewResizableBuffer(memory.DefaultAllocator)
	defer buf.Release()
	buf.Resize(int(rows) * rowBytes)
	dst := buf.Bytes()
	// The pages are read into their parts side by side (and each checked
	// to decode as its part itself).
	at := make([]int, len(pages)+1)
	for i, p := range pages {
		at[i+1] = at[i] + int(p.buffers[0].Size)
	}
	if at[len(pages)] != len(dst) {
		return nil, false, nil // sizes that do not add up: the page path reports it
	}
	raw := make([]bool, len(pages))
	err = par.Each(len(pages), func(i int) error {
		p := pages[i]
		slot := dst[at[i]:at[i+1]]
		if err := f.readInto(slot, p.buffers[0].Position); err != nil {
			return err
		}
		// The ordinary decode must see the slot itself as the values; any
		// transform it would apply means the page is not raw after all.
		pd, err := decodeDense(p, [][]byte{slot})
		if err != nil {
			return err
		}
		v := pd.vals
		if pd.rep != nil || pd.def != nil || pd.dict != nil || pd.constant != nil || pd.scalarBuf != nil || pd.allNull ||
			v.N != int(p.rows) || v.NullItems || v.Bits != 8*rowBytes || v.Dims != nil && !sameDims(v.Dims, dt) || len(v.Data) != len(slot) || len(slot) > 0 && unsafe.SliceData(v.Data) != unsafe.SliceData(slot) {
			return nil
		}
		for _, iv := range v.ItemValid {
			if iv != nil {
				return nil
			}
		}
		raw[i] = true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if slices.Contains(raw, false) {
		return nil, false, nil
	}
	rawPageRuns.Add(1)
	d := rawData(dt, int(rows), buf)
	defer d.Release()
	return array.MakeFromData(d), true, nil
}

// sameDims reports whether dims are exactly the fixed-size-list
// dimensions of dt, outer first.
func sameDims(dims []int, dt arrow.DataType) bool {
	k := 0
	for t, ok := dt.(*arrow.FixedSizeListType); ok; t, ok = t.Elem().(*arrow.FixedSizeListType) {
		if k >= len(dims) || dims[k] != int(t.Len()) {
			return false
		}
		k++
	}
	return k == len(dims)
}

// rawData lays n rows of dt over buf without copying.
func rawData(dt arrow.DataType, n int, buf *memory.Buffer) arrow.ArrayData {
	if t, ok := dt.(*arrow.FixedSizeListType); ok {
		child := rawData(t.Elem(), n*int(t.Len()), buf)
		defer child.Release()
		return array.NewData(dt, n, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	}
	return array.NewData(dt, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
}
