package reader

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// copyPiece bounds one copy call of concatFixed. The Go runtime cannot
// preempt a goroutine inside one memmove, so a single copy of hundreds of
// megabytes keeps a garbage collection waiting (and signalling) for its
// whole length; pieces of 1 MiB keep the copy as fast and preemptible.
const copyPiece = 1 << 20

// concatFixed joins arrays of one fixed-width tree type (fixed-width
// values, fixed-size lists and structs of them; see fixedTree) into one
// array whose buffers are written once, in preemptible pieces. It is what
// array.Concatenate does for these types without its per-buffer
// intermediate slices. ok is false for types it does not handle.
func concatFixed(chunks []arrow.Array) (arrow.Array, bool) {
	if len(chunks) == 0 || !fixedTree(chunks[0].DataType()) {
		return nil, false
	}
	datas := make([]arrow.ArrayData, len(chunks))
	for i, c := range chunks {
		datas[i] = c.Data()
	}
	d := concatFixedData(datas)
	defer d.Release()
	return array.MakeFromData(d), true
}

// fixedTree reports whether concatFixed handles dt: byte-aligned or
// boolean fixed-width values, and fixed-size lists and structs of them.
func fixedTree(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		return fixedTree(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !fixedTree(f.Type) {
				return false
			}
		}
		return true
	case *arrow.DictionaryType, arrow.ExtensionType:
		return false
	case arrow.FixedWidthDataType:
		w := t.BitWidth()
		return w == 1 || w > 0 && w%8 == 0
	}
	return false
}

// concatFixedData is concatFixed over array data, each with its own offset.
func concatFixedData(datas []arrow.ArrayData) arrow.ArrayData {
	dt := datas[0].DataType()
	n, nulls := 0, 0
	counts := make([]int, len(datas))
	for i, d := range datas {
		n += d.Len()
		counts[i] = nullCount(d)
		nulls += counts[i]
	}
	var validity *memory.Buffer
	if nulls > 0 {
		validity = memory.NewResizableBuffer(memory.DefaultAllocator)
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		bm := validity.Bytes()
		at := 0
		for i, d := range datas {
			if b := d.Buffers()[0]; b != nil && counts[i] > 0 {
				bitutil.CopyBitmap(b.Bytes(), d.Offset(), d.Len(), bm, at)
			} else {
				bitutil.SetBitsTo(bm, int64(at), int64(d.Len()), true)
			}
			at += d.Len()
		}
		defer validity.Release()
	}
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		size := int(t.Len())
		kids := make([]arrow.ArrayData, len(datas))
		for i, d := range datas {
			kids[i] = array.NewSliceData(d.Children()[0], int64(d.Offset()*size), int64((d.Offset()+d.Len())*size))
		}
		child := concatFixedData(kids)
		for _, k := range kids {
			k.Release()
		}
		defer child.Release()
		return array.NewData(dt, n, []*memory.Buffer{validity}, []arrow.ArrayData{child}, nulls, 0)
	case *arrow.StructType:
		children := make([]arrow.ArrayData, len(t.Fields()))
		kids := make([]arrow.ArrayData, len(datas))
		for f := range children {
			for i, d := range datas {
				kids[i] = array.NewSliceData(d.Children()[f], int64(d.Offset()), int64(d.Offset()+d.Len()))
			}
			children[f] = concatFixedData(kids)
			for _, k := range kids {
				k.Release()
			}
			defer children[f].Release()
		}
		return array.NewData(dt, n, []*memory.Buffer{validity}, children, nulls, 0)
	}
	w := dt.(arrow.FixedWidthDataType).BitWidth()
	vals := memory.NewResizableBuffer(memory.DefaultAllocator)
	if w == 1 {
		vals.Resize(int(bitutil.BytesForBits(int64(n))))
		out, at := vals.Bytes(), 0
		for _, d := range datas {
			if b := d.Buffers()[1]; b != nil {
				bitutil.CopyBitmap(b.Bytes(), d.Offset(), d.Len(), out, at)
			}
			at += d.Len()
		}
	} else {
		bw := w / 8
		vals.Resize(n * bw)
		out := vals.Bytes()
		at := 0
		for _, d := range datas {
			if b := d.Buffers()[1]; b != nil && d.Len() > 0 {
				src := b.Bytes()[d.Offset()*bw : (d.Offset()+d.Len())*bw]
				for len(src) > 0 {
					k := copy(out[at:at+min(len(src), copyPiece)], src)
					src, at = src[k:], at+k
				}
			} else {
				at += d.Len() * bw
			}
		}
	}
	defer vals.Release()
	return array.NewData(dt, n, []*memory.Buffer{validity, vals}, nil, nulls, 0)
}

// nullCount is d's null count, counted when a slice left it unknown.
func nullCount(d arrow.ArrayData) int {
	if n := d.NullN(); n != array.UnknownNullCount {
		return n
	}
	b := d.Buffers()[0]
	if b == nil {
		return 0
	}
	return d.Len() - bitutil.CountSetBits(b.Bytes(), d.Offset(), d.Len())
}
