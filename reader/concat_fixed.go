package reader

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
)

// joinArrays concatenates arrays of one type: fixed-width trees and flat
// strings here, everything else through Arrow (concatenate).
func joinArrays(chunks []arrow.Array) (arrow.Array, error) {
	if out, ok := concatFixed(chunks); ok {
		return out, nil
	}
	if out, ok := concatVariable(chunks); ok {
		return out, nil
	}
	if out, ok := concatList(chunks); ok {
		return out, nil
	}
	return concatenate(chunks)
}

// concatFixed joins arrays of one fixed-width tree type (fixed-width
// values, fixed-size lists and structs of them; see fixedTree) into one
// array whose buffers are written once, in preemptible pieces. It is what
// array.Concatenate does for these types, copying through internal/bulk so
// that the runtime can preempt the copy. ok is false for types it does not handle.
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
	validity, n, nulls := joinValidity(datas)
	if validity != nil {
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
	var vals *memory.Buffer
	if w == 1 {
		vals = memory.NewResizableBuffer(memory.DefaultAllocator)
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
		out := bulk.Make(n * bw)[:n*bw] // (every byte is copied in below)
		vals = memory.NewBufferBytes(out)
		at := make([]int, len(datas)+1)
		for i, d := range datas {
			at[i+1] = at[i] + d.Len()*bw
		}
		copyOne := func(i int) error {
			d := datas[i]
			if b := d.Buffers()[1]; b != nil {
				bulk.Copy(out[at[i]:at[i+1]], b.Bytes()[d.Offset()*bw:(d.Offset()+d.Len())*bw])
			} else {
				bulk.Clear(out[at[i]:at[i+1]]) // (an array without values: zeros)
			}
			return nil
		}
		// Large joins copy side by side, an array each. (Copying pieces
		// of one large array side by side was slower: fresh pages faulted
		// in by two threads at once, timestamps 4.4 against 4-11 ms.)
		run := par.InTurn
		if n*bw >= 4*par.MinValues {
			run = par.Each
		}
		_ = run(len(datas), copyOne)
	}
	defer vals.Release()
	return array.NewData(dt, n, []*memory.Buffer{validity, vals}, nil, nulls, 0)
}

// joinValidity returns the validity bitmap of datas joined (nil when none
// has a null; the caller releases it), their total length and null count.
func joinValidity(datas []arrow.ArrayData) (*memory.Buffer, int, int) {
	n, nulls := 0, 0
	counts := make([]int, len(datas))
	for i, d := range datas {
		n += d.Len()
		counts[i] = nullCount(d)
		nulls += counts[i]
	}
	if nulls == 0 {
		return nil, n, 0
	}
	validity := memory.NewResizableBuffer(memory.DefaultAllocator)
	validity.Resize(int(bitutil.BytesForBits(int64(n))))
	bm, at := validity.Bytes(), 0
	for i, d := range datas {
		if b := d.Buffers()[0]; b != nil && counts[i] > 0 {
			bitutil.CopyBitmap(b.Bytes(), d.Offset(), d.Len(), bm, at)
		} else {
			bitutil.SetBitsTo(bm, int64(at), int64(d.Len()), true)
		}
		at += d.Len()
	}
	return validity, n, nulls
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

// concatVariable joins flat string or binary arrays (32- or 64-bit
// offsets) into one, copying the value bytes once in preemptible pieces
// and rebasing the offsets. ok is false for other types.
func concatVariable(chunks []arrow.Array) (arrow.Array, bool) {
	if len(chunks) == 0 {
		return nil, false
	}
	dt := chunks[0].DataType()
	ow := offsetWidth(dt)
	if ow == 0 {
		return nil, false
	}
	datas := make([]arrow.ArrayData, len(chunks))
	bytes := 0
	for i, c := range chunks {
		d := c.Data()
		datas[i] = d
		lo, hi := offsetAt(d, 0, ow), offsetAt(d, d.Len(), ow)
		bytes += hi - lo
	}
	if ow == 4 && bytes > 1<<31-1 {
		return nil, false // arrow reports the overflow
	}
	validity, n, nulls := joinValidity(datas)
	if validity != nil {
		defer validity.Release()
	}
	offs := memory.NewResizableBuffer(memory.DefaultAllocator)
	defer offs.Release()
	offs.Resize((n + 1) * ow)
	data := memory.NewResizableBuffer(memory.DefaultAllocator)
	defer data.Release()
	data.Resize(bytes)
	ob, db := offs.Bytes(), data.Bytes()
	row, base := 0, 0
	for _, d := range datas {
		lo, hi := offsetAt(d, 0, ow), offsetAt(d, d.Len(), ow)
		rebase(ob, d, row, base-lo, ow)
		if hi > lo {
			bulk.Copy(db[base:], d.Buffers()[2].Bytes()[lo:hi])
		}
		row, base = row+d.Len(), base+hi-lo
	}
	putOffset(ob, n, base, ow)
	out := array.NewData(dt, n, []*memory.Buffer{validity, offs, data}, nil, nulls, 0)
	defer out.Release()
	return array.MakeFromData(out), true
}

// concatList joins list or large list arrays into one: the offsets
// rebased, the children's ranges joined by joinArrays (a list of
// fixed-width values copies them side by side through internal/bulk), the
// validity joined. ok is false for other types, and for what it leaves to
// arrow's Concatenate (offsets it cannot hold, fewer than two non-empty
// arrays).
func concatList(chunks []arrow.Array) (arrow.Array, bool) {
	if len(chunks) < 2 {
		return nil, false
	}
	dt := chunks[0].DataType()
	var ow int
	switch dt.ID() {
	case arrow.LIST:
		ow = 4
	case arrow.LARGE_LIST:
		ow = 8
	default:
		return nil, false
	}
	datas := make([]arrow.ArrayData, 0, len(chunks))
	kids := make([]arrow.Array, 0, len(chunks))
	defer func() {
		for _, k := range kids {
			k.Release()
		}
	}()
	total := 0
	for _, c := range chunks {
		d := c.Data()
		if d.Len() == 0 {
			continue
		}
		if b := d.Buffers()[1]; b == nil || b.Len() < (d.Offset()+d.Len()+1)*ow {
			return nil, false
		}
		lo, hi := offsetAt(d, 0, ow), offsetAt(d, d.Len(), ow)
		if lo < 0 || hi < lo || hi > d.Children()[0].Len() {
			return nil, false
		}
		sd := array.NewSliceData(d.Children()[0], int64(lo), int64(hi))
		kids = append(kids, array.MakeFromData(sd))
		sd.Release()
		datas = append(datas, d)
		total += hi - lo
	}
	if len(datas) < 2 || ow == 4 && total > math.MaxInt32 {
		return nil, false
	}
	child, err := joinArrays(kids)
	if err != nil {
		return nil, false // (Concatenate says why)
	}
	defer child.Release()
	validity, n, nulls := joinValidity(datas)
	if validity != nil {
		defer validity.Release()
	}
	ob := bulk.Make((n + 1) * ow)[:(n+1)*ow] // (written whole below)
	row, base := 0, 0
	for _, d := range datas {
		lo, hi := offsetAt(d, 0, ow), offsetAt(d, d.Len(), ow)
		rebase(ob, d, row, base-lo, ow)
		row, base = row+d.Len(), base+hi-lo
	}
	putOffset(ob, n, base, ow)
	out := array.NewData(dt, n, []*memory.Buffer{validity, memory.NewBufferBytes(ob)}, []arrow.ArrayData{child.Data()}, nulls, 0)
	defer out.Release()
	return array.MakeFromData(out), true
}

// offsetAt is offset i (counted from d's own offset) of a string or
// binary array with offsets of ow bytes.
func offsetAt(d arrow.ArrayData, i, ow int) int {
	b := d.Buffers()[1].Bytes()
	j := (d.Offset() + i) * ow
	if ow == 4 {
		return int(int32(binary.LittleEndian.Uint32(b[j:])))
	}
	return int(binary.LittleEndian.Uint64(b[j:]))
}

// rebase writes d's offsets (but its last), plus delta, at row of dst.
func rebase(dst []byte, d arrow.ArrayData, row, delta, ow int) {
	src := d.Buffers()[1].Bytes()
	if ow == 4 {
		in := arrow.Int32Traits.CastFromBytes(src)[d.Offset() : d.Offset()+d.Len()]
		out := arrow.Int32Traits.CastFromBytes(dst)[row : row+d.Len()]
		dl := int32(delta)
		for i, o := range in {
			out[i] = o + dl
		}
		return
	}
	in := arrow.Int64Traits.CastFromBytes(src)[d.Offset() : d.Offset()+d.Len()]
	out := arrow.Int64Traits.CastFromBytes(dst)[row : row+d.Len()]
	dl := int64(delta)
	for i, o := range in {
		out[i] = o + dl
	}
}

func putOffset(b []byte, i, v, ow int) {
	if ow == 4 {
		binary.LittleEndian.PutUint32(b[i*ow:], uint32(v))
		return
	}
	binary.LittleEndian.PutUint64(b[i*ow:], uint64(v))
}

// offsetWidth is the bytes of one offset of a string or binary type (0
// for other types).
func offsetWidth(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		return 4
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return 8
	}
	return 0
}
