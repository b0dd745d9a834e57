package reader

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/values"
)

// bitmapFrom packs a validity slice; nil means all valid.
func bitmapFrom(valid []bool) (*memory.Buffer, int) {
	if valid == nil {
		return nil, 0
	}
	bm := make([]byte, bitutil.BytesForBits(int64(len(valid))))
	nulls := len(valid) - bitmap.Pack(bm, valid)
	if nulls == 0 {
		return nil, 0
	}
	return memory.NewBufferBytes(bm), nulls
}

// expandDict replaces indices by the dictionary items they name.
func expandDict(idx values.Block, dict *values.Block, valid []bool) (values.Block, error) {
	ib := idx.Bits / 8
	if idx.Bits%8 != 0 || ib < 1 || ib > 8 || idx.Variable() {
		return values.Block{}, fmt.Errorf("dictionary indices of %d bits: %w", idx.Bits, ErrCorrupt)
	}
	key := func(i int) uint64 {
		var k uint64
		for j := ib - 1; j >= 0; j-- {
			k = k<<8 | uint64(idx.Data[i*ib+j])
		}
		return k
	}
	out := values.Block{N: idx.N, Bits: dict.Bits, Dims: dict.Dims, NullItems: dict.NullItems}
	if dict.Variable() {
		out.Offsets = make([]uint64, 1, idx.N+1)
	} else if dict.Bits%8 != 0 {
		return values.Block{}, fmt.Errorf("dictionary items of %d bits: %w", dict.Bits, ErrUnsupported)
	}
	// Fixed-size-list items carry their item validity along (per[k] bits
	// per value at layer k); null slots naming no item get null items.
	per := make([]int, len(dict.ItemValid))
	if len(dict.ItemValid) > 0 {
		if len(dict.Dims) != len(dict.ItemValid) {
			return values.Block{}, fmt.Errorf("item validity of %d layers for %d dimensions: %w", len(dict.ItemValid), len(dict.Dims), ErrCorrupt)
		}
		out.ItemValid = make([][]byte, len(dict.ItemValid))
		d := 1
		for k, iv := range dict.ItemValid {
			d *= dict.Dims[k]
			per[k] = d
			if iv != nil {
				out.ItemValid[k] = make([]byte, bitutil.BytesForBits(int64(idx.N)*int64(d)))
			}
		}
	}
	w := dict.Bits / 8
	if len(idx.Data) < idx.N*ib {
		return values.Block{}, fmt.Errorf("%d dictionary indices in %d bytes: %w", idx.N, len(idx.Data), ErrCorrupt)
	}
	if !dict.Variable() && len(dict.ItemValid) == 0 && ib == 4 && w > 0 && dict.N > 0 {
		return expandFixed(idx, dict, valid, out, w)
	}
	if dict.Variable() {
		// Null slots stay empty (whatever item they name): size the
		// output from the valid slots.
		total := uint64(0)
		for i := 0; i < idx.N; i++ {
			if k := key(i); (valid == nil || valid[i]) && k < uint64(dict.N) {
				total += dict.Offsets[k+1] - dict.Offsets[k]
			}
		}
		if total > maxConstantBytes {
			// Beyond what one read materializes (as for constants).
			return values.Block{}, fmt.Errorf("dictionary expands to %d bytes: %w", total, ErrUnsupported)
		}
		out.Data = make([]byte, 0, total)
	} else {
		out.Data = make([]byte, 0, idx.N*w)
	}
	for i := 0; i < idx.N; i++ {
		k := key(i)
		if dict.Variable() && valid != nil && !valid[i] {
			out.Offsets = append(out.Offsets, uint64(len(out.Data)))
			continue
		}
		if k >= uint64(dict.N) {
			if valid == nil || valid[i] {
				return values.Block{}, fmt.Errorf("dictionary index %d of %d items: %w", k, dict.N, ErrCorrupt)
			}
			k = 0 // slots under nulls may hold anything
			if dict.N == 0 {
				if dict.Variable() {
					out.Offsets = append(out.Offsets, uint64(len(out.Data)))
				} else {
					out.Data = append(out.Data, make([]byte, w)...)
				}
				continue
			}
		}
		for l, iv := range dict.ItemValid {
			if iv == nil {
				continue
			}
			for b := 0; b < per[l]; b++ {
				if bitutil.BitIsSet(iv, int(k)*per[l]+b) {
					bitutil.SetBit(out.ItemValid[l], i*per[l]+b)
				}
			}
		}
		if dict.Variable() {
			out.Data = append(out.Data, dict.Data[dict.Offsets[k]:dict.Offsets[k+1]]...)
			out.Offsets = append(out.Offsets, uint64(len(out.Data)))
		} else {
			out.Data = append(out.Data, dict.Data[int(k)*w:int(k+1)*w]...)
		}
	}
	return out, nil
}

// expandFixed is expandDict for fixed-width items without item validity
// under u32 indices: each value is copied from its item, in pieces side by
// side on large pages (a null slot's index may name anything: it gets item
// 0).
func expandFixed(idx values.Block, dict *values.Block, valid []bool, out values.Block, w int) (values.Block, error) {
	n, items := idx.N, uint32(dict.N)
	if len(dict.Data) < dict.N*w {
		return values.Block{}, fmt.Errorf("%d dictionary items in %d bytes: %w", dict.N, len(dict.Data), ErrCorrupt)
	}
	if items == 0 {
		// No item for a null slot to take: only nulls may index it.
		if slices.Contains(valid, true) || valid == nil && n > 0 {
			return values.Block{}, fmt.Errorf("%d dictionary indices into no items: %w", n, ErrCorrupt)
		}
		out.Data = bulk.Zeroed(n * w)
		return out, nil
	}
	out.Data = bulk.Make(n * w)[:n*w] // (every slot is written below)
	cuts := []int{0, n}
	if n >= 2*par.MinValues {
		cuts = par.Pieces(n, par.MinValues)
	}
	err := par.EachPiece(cuts, func(_, lo, hi int) error {
		in, dst, d := idx.Data[4*lo:4*hi], out.Data[lo*w:hi*w], dict.Data
		for i := range hi - lo {
			k := binary.LittleEndian.Uint32(in[4*i:])
			if k >= items {
				if valid == nil || valid[lo+i] {
					return fmt.Errorf("dictionary index %d of %d items: %w", k, dict.N, ErrCorrupt)
				}
				k = 0
			}
			switch w {
			case 8:
				binary.LittleEndian.PutUint64(dst[8*i:], binary.LittleEndian.Uint64(d[8*k:]))
			case 4:
				binary.LittleEndian.PutUint32(dst[4*i:], binary.LittleEndian.Uint32(d[4*k:]))
			default:
				copy(dst[i*w:(i+1)*w], d[int(k)*w:])
			}
		}
		return nil
	})
	if err != nil {
		return values.Block{}, err
	}
	return out, nil
}

// isSmallVariable reports whether dt is a string or binary type with
// 32-bit offsets.
func isSmallVariable(dt arrow.DataType) bool {
	switch dt.(type) {
	case *arrow.StringType, *arrow.BinaryType:
		return true
	}
	return false
}

// dictStrings builds a string or binary array (32-bit offsets) straight
// from u32 indices into a variable-width dictionary: one pass sizes each
// piece of the slots, one writes their Arrow offsets and copies their
// items, the pieces side by side. Null slots stay empty, whatever item they
// name.
func dictStrings(dt arrow.DataType, idx values.Block, dict *values.Block, valid []bool, vb *memory.Buffer, nulls int) (arrow.ArrayData, error) {
	n := idx.N
	cuts, sizes, err := dictSizes(idx, dict, valid)
	if err != nil {
		return nil, err
	}
	if total := sizes[len(sizes)-1]; total > 1<<31-1 {
		return nil, fmt.Errorf("dictionary expands to %d bytes: %w", total, ErrUnsupported)
	}
	offs := make([]byte, 4*(n+1))
	data := make([]byte, sizes[len(sizes)-1])
	dictFill(data, offs, 0, 0, 4, idx, dict, valid, cuts, sizes)
	putOffsets(offs, n, []uint64{0}, int(sizes[len(sizes)-1]), 4)
	return array.NewData(dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(offs), memory.NewBufferBytes(data)}, nil, nulls, 0), nil
}

// dictSizes checks the 32-bit indices idx against the variable-width
// dictionary items dict and sizes their expansion: the values cut into
// pieces (cuts), sizes[j] the bytes of the valid values before piece j
// (sizes[len(cuts)-1] all of them). Null slots (valid false) expand to
// nothing, whatever their index.
func dictSizes(idx values.Block, dict *values.Block, valid []bool) (cuts []int, sizes []uint64, err error) {
	n := idx.N
	if len(idx.Data) < 4*n || len(dict.Offsets) != dict.N+1 {
		return nil, nil, fmt.Errorf("%d dictionary indices in %d bytes, %d items: %w", n, len(idx.Data), dict.N, ErrCorrupt)
	}
	for k := 0; k < dict.N; k++ {
		if dict.Offsets[k] > dict.Offsets[k+1] {
			return nil, nil, fmt.Errorf("dictionary item %d ends before it starts: %w", k, ErrCorrupt)
		}
	}
	if dict.Offsets[dict.N] > uint64(len(dict.Data)) {
		return nil, nil, fmt.Errorf("dictionary items end at %d of %d bytes: %w", dict.Offsets[dict.N], len(dict.Data), ErrCorrupt)
	}
	keys := idx.Data[:4*n]
	items := uint32(dict.N)
	cuts = par.Pieces(n, par.MinValues)
	sizes = make([]uint64, len(cuts))
	err = par.EachPiece(cuts, func(j, lo, hi int) error {
		total := uint64(0)
		for i := lo; i < hi; i++ {
			if valid != nil && !valid[i] {
				continue
			}
			k := binary.LittleEndian.Uint32(keys[4*i:])
			if k >= items {
				return fmt.Errorf("dictionary index %d of %d items: %w", k, items, ErrCorrupt)
			}
			total += dict.Offsets[k+1] - dict.Offsets[k]
		}
		sizes[j+1] = total
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for j := 1; j < len(sizes); j++ {
		sizes[j] += sizes[j-1] // sizes[j]: bytes before piece j
	}
	return cuts, sizes, nil
}

// dictFill expands the values dictSizes sized into data (their bytes from
// data[at]) and writes each value's start offset (plus at) to offs, an
// offsets buffer of ow-byte entries, from slot row; the end offset of the
// last value is the caller's to write.
func dictFill(data, offs []byte, row, at, ow int, idx values.Block, dict *values.Block, valid []bool, cuts []int, sizes []uint64) {
	keys := idx.Data
	_ = par.EachPiece(cuts, func(j, lo, hi int) error {
		p := at + int(sizes[j])
		for i := lo; i < hi; i++ {
			if ow == 4 {
				binary.LittleEndian.PutUint32(offs[4*(row+i):], uint32(p))
			} else {
				binary.LittleEndian.PutUint64(offs[8*(row+i):], uint64(p))
			}
			if valid == nil || valid[i] {
				k := binary.LittleEndian.Uint32(keys[4*i:])
				p += copy(data[p:], dict.Data[dict.Offsets[k]:dict.Offsets[k+1]])
			}
		}
		return nil
	})
}

// leafArray builds the Arrow leaf array of n visible values of type dt.
func leafArray(dt arrow.DataType, pd *pageData, valid []bool) (arrow.ArrayData, error) {
	n := pd.numVisible
	if pd.allNull {
		valid = make([]bool, n)
	}
	vb, nulls := bitmapFrom(valid)
	if dt.ID() == arrow.NULL {
		return array.NewData(dt, n, []*memory.Buffer{nil}, nil, n, 0), nil
	}
	if pd.scalarBuf != nil {
		vt := dt
		if t, ok := dt.(*arrow.DictionaryType); ok {
			vt = t.ValueType
		}
		sc, err := scalarFromValueBuffer(vt, pd.scalarBuf)
		if err != nil {
			return nil, err
		}
		cp := *pd
		cp.scalarBuf, cp.constant, cp.constVar = nil, sc, isVariableType(vt)
		pd = &cp
	}
	if t, ok := dt.(*arrow.DictionaryType); ok {
		return dictLeaf(t, pd, valid, vb, nulls)
	}
	vals := pd.vals
	switch {
	case pd.allNull || pd.constant != nil:
		var err error
		if vals, err = repeatScalar(dt, pd.constant, pd.constVar, n); err != nil {
			return nil, err
		}
	case pd.dict != nil:
		if small := isSmallVariable(dt); small && pd.dict.Variable() && pd.vals.Bits == 32 && pd.vals.N == n {
			return dictStrings(dt, pd.vals, pd.dict, valid, vb, nulls)
		}
		var err error
		if vals, err = expandDict(pd.vals, pd.dict, valid); err != nil {
			return nil, err
		}
	}
	if vals.N != n {
		return nil, fmt.Errorf("%d values decoded for %d visible items: %w", vals.N, n, ErrCorrupt)
	}
	switch t := dt.(type) {
	case *arrow.BooleanType:
		data := vals.Data
		if vals.Bits == 8 { // zipped pages widen booleans to bytes
			bm := make([]byte, bitutil.BytesForBits(int64(n)))
			for i := 0; i < n; i++ {
				if data[i] != 0 {
					bitutil.SetBit(bm, i)
				}
			}
			data = bm
		} else if vals.Bits != 1 {
			return nil, fmt.Errorf("booleans decoded as %d-bit values: %w", vals.Bits, ErrCorrupt)
		}
		return array.NewData(dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(data)}, nil, nulls, 0), nil
	case *arrow.StringType, *arrow.BinaryType:
		if !vals.Variable() {
			return nil, fmt.Errorf("%s decoded as fixed-width values: %w", dt, ErrCorrupt)
		}
		offs := make([]byte, 4*(n+1))
		for i, o := range vals.Offsets {
			if o > 1<<31-1 {
				return nil, fmt.Errorf("offset %d overflows int32: %w", o, ErrCorrupt)
			}
			binary.LittleEndian.PutUint32(offs[4*i:], uint32(o))
		}
		return array.NewData(dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(offs), memory.NewBufferBytes(vals.Data)}, nil, nulls, 0), nil
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		if !vals.Variable() {
			return nil, fmt.Errorf("%s decoded as fixed-width values: %w", dt, ErrCorrupt)
		}
		offs := make([]byte, 8*(n+1))
		for i, o := range vals.Offsets {
			binary.LittleEndian.PutUint64(offs[8*i:], o)
		}
		return array.NewData(dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(offs), memory.NewBufferBytes(vals.Data)}, nil, nulls, 0), nil
	case *arrow.FixedSizeListType:
		return fslLeaf(t, vals, n, vb, nulls)
	case *arrow.StructType:
		return packedLeaf(t, vals, n, vb, nulls)
	}
	bits := bitWidth(dt)
	if bits == 0 || bits%8 != 0 {
		return nil, fmt.Errorf("type %s: %w", dt, ErrUnsupported)
	}
	if vals.Variable() || vals.Bits != bits || len(vals.Data) < n*bits/8 {
		return nil, fmt.Errorf("%s decoded as %d-bit values: %w", dt, vals.Bits, ErrCorrupt)
	}
	return array.NewData(dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(vals.Data[:n*bits/8])}, nil, nulls, 0), nil
}

// fslLeaf builds a (possibly nested) fixed-size list of primitives from
// flattened item data and the per-layer item validity.
func fslLeaf(t *arrow.FixedSizeListType, vals values.Block, n int, vb *memory.Buffer, nulls int) (arrow.ArrayData, error) {
	if vals.Variable() {
		return nil, fmt.Errorf("fixed-size list decoded as variable-width values: %w", ErrCorrupt)
	}
	if vals.Dims != nil {
		// The stored layers must be the type's (all of them, or an outer
		// part when the items below are not stored).
		var tdims []int
		for dt := arrow.DataType(t); ; {
			ft, ok := dt.(*arrow.FixedSizeListType)
			if !ok {
				break
			}
			tdims = append(tdims, int(ft.Len()))
			dt = ft.Elem()
		}
		ok := len(vals.Dims) == len(tdims) || vals.NullItems && len(vals.Dims) < len(tdims)
		for k := 0; ok && k < len(vals.Dims); k++ {
			ok = vals.Dims[k] == tdims[k]
		}
		if !ok {
			return nil, fmt.Errorf("fixed-size list of dimensions %v decoded as %v: %w", tdims, vals.Dims, ErrCorrupt)
		}
	}
	return fslLayer(t, vals, 0, n, vb, nulls)
}

func fslLayer(t *arrow.FixedSizeListType, vals values.Block, layer, n int, vb *memory.Buffer, nulls int) (arrow.ArrayData, error) {
	dim := int(t.Len())
	if dim < 0 || dim > 0 && n > (1<<50)/dim {
		return nil, fmt.Errorf("%d fixed-size lists of %d items: %w", n, dim, ErrUnsupported)
	}
	items := n * dim
	var cvb *memory.Buffer
	cnulls := 0
	if layer < len(vals.ItemValid) && vals.ItemValid[layer] != nil {
		bm := vals.ItemValid[layer]
		if len(bm) < int(bitutil.BytesForBits(int64(items))) {
			return nil, fmt.Errorf("item validity too short: %w", ErrCorrupt)
		}
		cnulls = items - bitutil.CountSetBits(bm, 0, items)
		if cnulls > 0 {
			cvb = memory.NewBufferBytes(bm)
		}
	}
	child := t.Elem()
	if vals.NullItems && int64(items)*int64(max(bitWidth(child), 1)) > 8*maxConstantBytes {
		// Items not stored are materialized as zeros: bounded like
		// constants.
		return nil, fmt.Errorf("%d null items of type %s: %w", items, child, ErrUnsupported)
	}
	if _, nested := child.(*arrow.FixedSizeListType); vals.NullItems && (layer >= len(vals.Dims) || !nested) {
		// Below the stored layers, and the items themselves, of lists
		// whose items are not stored: all null.
		cvb, cnulls = memory.NewBufferBytes(make([]byte, bitutil.BytesForBits(int64(items)))), items
	}
	var cd arrow.ArrayData
	switch ct := child.(type) {
	case *arrow.FixedSizeListType:
		var err error
		if cd, err = fslLayer(ct, vals, layer+1, items, cvb, cnulls); err != nil {
			return nil, err
		}
	case *arrow.BooleanType:
		data := vals.Data
		if vals.NullItems {
			data = make([]byte, bitutil.BytesForBits(int64(items)))
		}
		if len(data) < int(bitutil.BytesForBits(int64(items))) {
			return nil, fmt.Errorf("boolean fixed-size list data too short: %w", ErrCorrupt)
		}
		cd = array.NewData(child, items, []*memory.Buffer{cvb, memory.NewBufferBytes(data)}, nil, cnulls, 0)
	default:
		ib := bitWidth(child)
		data := vals.Data
		if vals.NullItems && ib > 0 && ib%8 == 0 {
			// Items not stored: every one is null, any bytes do.
			data = make([]byte, items*ib/8)
		}
		if ib == 0 || ib%8 != 0 || len(data) < items*ib/8 {
			return nil, fmt.Errorf("fixed-size list of %s decoded as %d-bit rows: %w", child, vals.Bits, ErrCorrupt)
		}
		cd = array.NewData(child, items, []*memory.Buffer{cvb, memory.NewBufferBytes(data[:items*ib/8])}, nil, cnulls, 0)
	}
	defer cd.Release()
	return array.NewData(t, n, []*memory.Buffer{vb}, []arrow.ArrayData{cd}, nulls, 0), nil
}

// maxConstantBytes bounds the bytes a read materializes from one repeated
// variable-width constant (the limit of 32-bit Arrow offsets).
const maxConstantBytes = 1<<31 - 1

func isVariableType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return true
	}
	return false
}

// scalarFromValueBuffer returns the one value held by a Lance scalar value
// buffer: [u32 buffer count][u32 length of each buffer][the buffers], the
// Arrow buffers of a one-element array of type dt (offsets then bytes for
// strings and binaries, the value for fixed-width types).
func scalarFromValueBuffer(dt arrow.DataType, b []byte) ([]byte, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("constant scalar buffer of %d bytes for %s: %s: %w", len(b), dt, fmt.Sprintf(format, args...), ErrCorrupt)
	}
	if len(b) < 4 {
		return nil, corrupt("no buffer count")
	}
	nb := binary.LittleEndian.Uint32(b)
	if nb > 3 || uint64(len(b)) < 4+4*uint64(nb) {
		return nil, corrupt("%d buffers", nb)
	}
	bufs := make([][]byte, nb)
	pos := 4 + 4*int(nb)
	for i := range bufs {
		l := uint64(binary.LittleEndian.Uint32(b[4+4*i:]))
		if l > uint64(len(b)-pos) {
			return nil, corrupt("buffer %d of %d bytes overruns", i, l)
		}
		bufs[i] = b[pos : pos+int(l)]
		pos += int(l)
	}
	if pos != len(b) {
		return nil, corrupt("%d trailing bytes", len(b)-pos)
	}
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		if nb != 2 {
			return nil, corrupt("%d buffers, want offsets and bytes", nb)
		}
		ow := 4
		if dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.LARGE_BINARY {
			ow = 8
		}
		offs, data := bufs[0], bufs[1]
		if len(offs) < 2*ow {
			return nil, corrupt("offsets of %d bytes", len(offs))
		}
		var a, e uint64
		if ow == 4 {
			a, e = uint64(binary.LittleEndian.Uint32(offs)), uint64(binary.LittleEndian.Uint32(offs[4:]))
		} else {
			a, e = binary.LittleEndian.Uint64(offs), binary.LittleEndian.Uint64(offs[8:])
		}
		if a > e || e > uint64(len(data)) || ow == 4 && e > 1<<31-1 {
			return nil, corrupt("value range [%d, %d) of %d bytes", a, e, len(data))
		}
		return data[a:e], nil
	case arrow.BOOL:
		if nb != 1 || len(bufs[0]) < 1 {
			return nil, corrupt("boolean scalar")
		}
		return []byte{bufs[0][0] & 1}, nil
	case arrow.FIXED_SIZE_LIST, arrow.STRUCT, arrow.LIST, arrow.LARGE_LIST, arrow.MAP:
		return nil, fmt.Errorf("constant scalar buffer for nested type %s: %w", dt, ErrUnsupported)
	}
	w := bitWidth(dt) / 8
	if w == 0 || bitWidth(dt)%8 != 0 {
		return nil, fmt.Errorf("constant scalar buffer for %s: %w", dt, ErrUnsupported)
	}
	if nb != 1 || len(bufs[0]) < w {
		return nil, corrupt("want one buffer of at least %d bytes", w)
	}
	return bufs[0][:w], nil
}

// repeatScalar materializes a constant (or, with a nil scalar, zero) value n
// times. variable says the scalar is a variable-width value (strings and
// binaries); a fixed-width (inline) scalar cannot stand for one.
func repeatScalar(dt arrow.DataType, scalar []byte, variable bool, n int) (values.Block, error) {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		if scalar != nil && !variable {
			return values.Block{}, fmt.Errorf("inline constant for %s: %w", dt, ErrCorrupt)
		}
		out := values.Block{N: n, Offsets: make([]uint64, n+1)}
		if len(scalar) == 0 {
			return out, nil
		}
		if uint64(n)*uint64(len(scalar)) > maxConstantBytes {
			return values.Block{}, fmt.Errorf("%d copies of a %d-byte constant: %w", n, len(scalar), ErrUnsupported)
		}
		out.Data = make([]byte, 0, n*len(scalar))
		for i := 0; i < n; i++ {
			out.Data = append(out.Data, scalar...)
			out.Offsets[i+1] = uint64(len(out.Data))
		}
		return out, nil
	case arrow.BOOL:
		bm := make([]byte, bitutil.BytesForBits(int64(n)))
		if len(scalar) > 0 && scalar[0]&1 != 0 {
			bitutil.SetBitsTo(bm, 0, int64(n), true)
		}
		return values.Block{Bits: 1, N: n, Data: bm}, nil
	}
	bits := bitWidth(dt)
	if t, ok := dt.(*arrow.FixedSizeListType); ok {
		bits = fslBits(t)
	}
	if bits > 0 && scalar == nil {
		// No value (all null): zeros, bit-packed when the values are
		// (fixed-size lists of booleans).
		size := bitutil.BytesForBits(int64(n) * int64(bits))
		if size > maxConstantBytes {
			return values.Block{}, fmt.Errorf("%d null values of %d bits: %w", n, bits, ErrUnsupported)
		}
		return values.Block{Bits: bits, N: n, Data: bulk.Zeroed(int(size))}, nil
	}
	if bits == 0 || bits%8 != 0 {
		return values.Block{}, fmt.Errorf("constant of type %s: %w", dt, ErrUnsupported)
	}
	w := bits / 8
	if scalar != nil && len(scalar) != w {
		return values.Block{}, fmt.Errorf("constant of %d bytes for %d-byte values: %w", len(scalar), w, ErrCorrupt)
	}
	out := values.Block{Bits: bits, N: n, Data: make([]byte, 0, n*w)}
	for i := 0; i < n; i++ {
		out.Data = append(out.Data, scalar...)
	}
	return out, nil
}

func fslBits(t *arrow.FixedSizeListType) int {
	if c, ok := t.Elem().(*arrow.FixedSizeListType); ok {
		return int(t.Len()) * fslBits(c)
	}
	if t.Elem().ID() == arrow.BOOL {
		return int(t.Len())
	}
	return int(t.Len()) * bitWidth(t.Elem())
}

// dictLeaf builds a dictionary array: the page dictionary as the Arrow
// dictionary and the indices as keys. Pages stored without a dictionary get
// one entry per value.
func dictLeaf(t *arrow.DictionaryType, pd *pageData, valid []bool, vb *memory.Buffer, nulls int) (arrow.ArrayData, error) {
	n := pd.numVisible
	kw := t.IndexType.(arrow.FixedWidthDataType).BitWidth() / 8
	keys := make([]byte, n*kw)
	var dict arrow.ArrayData
	var err error
	maxKey := dictKeyMax(t.IndexType)
	if pd.dict != nil {
		ib := pd.vals.Bits / 8
		if pd.vals.Variable() || pd.vals.Bits%8 != 0 || ib < 1 || ib > 8 || pd.vals.N != n {
			return nil, fmt.Errorf("dictionary indices of %d bits: %w", pd.vals.Bits, ErrCorrupt)
		}
		for i := 0; i < n; i++ {
			var k uint64
			for j := ib - 1; j >= 0; j-- {
				k = k<<8 | uint64(pd.vals.Data[i*ib+j])
			}
			if valid != nil && !valid[i] || pd.allNull {
				k = 0
			} else if k >= uint64(pd.dict.N) {
				return nil, fmt.Errorf("dictionary index %d of %d items: %w", k, pd.dict.N, ErrCorrupt)
			}
			if k > maxKey {
				return nil, fmt.Errorf("dictionary index %d does not fit %s: %w", k, t.IndexType, ErrUnsupported)
			}
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], k)
			copy(keys[i*kw:], b[:kw])
		}
		dict, err = leafArray(t.ValueType, &pageData{numVisible: pd.dict.N, vals: *pd.dict}, nil)
	} else if n == 0 || pd.allNull {
		clear(keys)
		dict, err = leafArray(t.ValueType, &pageData{allNull: true}, nil)
	} else {
		vals := pd.vals
		if pd.constant != nil {
			if vals, err = repeatScalar(t.ValueType, pd.constant, pd.constVar, n); err != nil {
				return nil, err
			}
		}
		var ids []uint64
		if uint64(n-1) > maxKey {
			// More values than keys: the dictionary holds each distinct
			// value once.
			if vals, ids, err = distinctValues(vals); err != nil {
				return nil, err
			}
			if uint64(vals.N-1) > maxKey {
				return nil, fmt.Errorf("%d distinct values do not fit %s keys: %w", vals.N, t.IndexType, ErrUnsupported)
			}
		}
		for i := 0; i < n; i++ {
			k := uint64(i)
			if ids != nil {
				k = ids[i]
			}
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], k)
			copy(keys[i*kw:], b[:kw])
		}
		dict, err = leafArray(t.ValueType, &pageData{numVisible: vals.N, vals: vals}, nil)
	}
	if err != nil {
		return nil, err
	}
	defer dict.Release()
	d := array.NewData(t, n, []*memory.Buffer{vb, memory.NewBufferBytes(keys)}, nil, nulls, 0)
	d.SetDictionary(dict)
	return d, nil
}

// distinctValues returns the distinct values of a byte-aligned block (in
// order of first appearance) and the index of each input value among them.
func distinctValues(in values.Block) (values.Block, []uint64, error) {
	if !in.Variable() && (in.Bits%8 != 0 || len(in.Data) < in.N*in.Bits/8) || in.ItemValid != nil && len(in.ItemValid) > 0 || in.Children != nil {
		return values.Block{}, nil, fmt.Errorf("dictionary values of %d bits: %w", in.Bits, ErrUnsupported)
	}
	out := values.Block{Bits: in.Bits, Dims: in.Dims}
	if in.Variable() {
		out.Offsets = []uint64{0}
	}
	seen := make(map[string]uint64)
	ids := make([]uint64, in.N)
	w := in.Bits / 8
	for i := range ids {
		var v []byte
		if in.Variable() {
			v = in.Data[in.Offsets[i]:in.Offsets[i+1]]
		} else {
			v = in.Data[i*w : (i+1)*w]
		}
		id, ok := seen[string(v)]
		if !ok {
			id = uint64(out.N)
			seen[string(v)] = id
			out.Data = append(out.Data, v...)
			if in.Variable() {
				out.Offsets = append(out.Offsets, uint64(len(out.Data)))
			}
			out.N++
		}
		ids[i] = id
	}
	return out, ids, nil
}

// dictKeyMax is the largest key an index type holds: unsigned keys use every
// bit, signed keys (non-negative) all but the sign bit.
func dictKeyMax(dt arrow.DataType) uint64 {
	bits := uint(bitWidth(dt))
	switch dt.ID() {
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
	default:
		bits--
	}
	if bits >= 64 {
		return ^uint64(0)
	}
	return 1<<bits - 1
}

// packedLeaf builds a packed struct (one column holding every child) from
// its rows: each child's fixed-width value back to back.
func packedLeaf(t *arrow.StructType, vals values.Block, n int, vb *memory.Buffer, nulls int) (arrow.ArrayData, error) {
	if vals.Children != nil {
		// VariablePackedStruct records, already split into fields.
		if len(vals.Children) != t.NumFields() {
			return nil, fmt.Errorf("packed struct of %d fields decoded into %d: %w", t.NumFields(), len(vals.Children), ErrCorrupt)
		}
		children := make([]arrow.ArrayData, len(vals.Children))
		for i, cb := range vals.Children {
			cd, err := leafArray(t.Field(i).Type, &pageData{numVisible: n, vals: cb}, nil)
			if err != nil {
				return nil, fmt.Errorf("packed struct field %q: %w", t.Field(i).Name, err)
			}
			children[i] = cd
		}
		return array.NewData(t, n, []*memory.Buffer{vb}, children, nulls, 0), nil
	}
	bits := make([]int, t.NumFields())
	sum := 0
	for i, f := range t.Fields() {
		bits[i] = bitWidth(f.Type)
		if bits[i] == 0 || bits[i]%8 != 0 {
			return nil, fmt.Errorf("packed struct child %q of type %s: %w", f.Name, f.Type, ErrUnsupported)
		}
		sum += bits[i]
	}
	if vals.Variable() || vals.Bits != sum || len(vals.Data) < n*sum/8 {
		return nil, fmt.Errorf("packed struct of %d-bit rows decoded as %d-bit values: %w", sum, vals.Bits, ErrCorrupt)
	}
	cols, err := values.DecodePackedStruct(vals.Data[:n*sum/8], bits, n)
	if err != nil {
		return nil, err
	}
	children := make([]arrow.ArrayData, len(cols))
	for i, c := range cols {
		children[i] = array.NewData(t.Field(i).Type, n, []*memory.Buffer{nil, memory.NewBufferBytes(c)}, nil, 0, 0)
	}
	return array.NewData(t, n, []*memory.Buffer{vb}, children, nulls, 0), nil
}
