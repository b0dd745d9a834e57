package writer

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// leafInfo describes one leaf type.
type leafInfo struct {
	kind     values.Kind
	bits     int   // fixed: value bits; FSL: item bits
	offBits  int   // variable: 32 or 64
	dims     []int // FSL dimensions, outer first
	itemType arrow.DataType
	dict     *leafInfo // values.KindDict: how the dictionary items are laid out
	float    bool      // floating-point values
	utf8     bool      // strings (FSST applies)
	fields   []int     // values.KindPacked: bits of each child (bits is their sum)
	// layouts: values.KindVarPacked, each child's record layout (fixed bits, or
	// variable with a 32/64-bit length prefix).
	layouts []values.PackedLayout
}

// packedInfo describes a packed struct column: every child must be a
// fixed-width value of whole bytes.
func packedInfo(t *arrow.StructType) (leafInfo, error) {
	li := leafInfo{kind: values.KindPacked}
	for _, f := range t.Fields() {
		ci, err := classifyLeaf(f.Type)
		if err != nil {
			return leafInfo{}, err
		}
		switch ci.kind {
		case values.KindFixed:
			li.fields = append(li.fields, ci.bits)
			li.layouts = append(li.layouts, values.PackedLayout{Bits: ci.bits})
			li.bits += ci.bits
		case values.KindVariable:
			li.kind = values.KindVarPacked
			li.layouts = append(li.layouts, values.PackedLayout{Variable: true, Bits: ci.offBits})
		default:
			return leafInfo{}, fmt.Errorf("packed struct child %q of type %s (packed structs hold fixed-width and string/binary children)", f.Name, f.Type)
		}
	}
	return li, nil
}

// gatherVarPacked builds the VariablePackedStruct records of the visible rows
// (null rows: zero fixed values, empty variable ones) and their n+1 offsets.
func gatherVarPacked(dst []byte, offs []uint64, segs []structural.Segment, li leafInfo, n int) ([]byte, []uint64, error) {
	fields := make([]values.VarPackedField, len(li.layouts))
	for k, l := range li.layouts {
		fields[k].PackedLayout = l
		if l.Variable {
			fields[k].Offsets = make([]uint64, 1, n+1)
		}
	}
	for _, s := range segs {
		st := s.Arr.(*array.Struct)
		for k, l := range li.layouts {
			f := &fields[k]
			ch := st.Field(k)
			d := ch.Data()
			for i := s.Start; i < s.End; i++ {
				null := st.IsNull(i)
				if !l.Variable {
					bw := l.Bits / 8
					if null {
						f.Data = append(f.Data, zeroes[:bw]...)
					} else {
						f.Data = append(f.Data, d.Buffers()[1].Bytes()[(d.Offset()+i)*bw:(d.Offset()+i+1)*bw]...)
					}
					continue
				}
				if !null {
					switch a := ch.(type) {
					case *array.String:
						f.Data = append(f.Data, a.Value(i)...)
					case *array.LargeString:
						f.Data = append(f.Data, a.Value(i)...)
					case *array.Binary:
						f.Data = append(f.Data, a.Value(i)...)
					case *array.LargeBinary:
						f.Data = append(f.Data, a.Value(i)...)
					}
				}
				f.Offsets = append(f.Offsets, uint64(len(f.Data)))
			}
		}
	}
	return values.AppendVariablePackedStruct(dst, offs, fields, n)
}

// gatherPacked appends the visible rows of packed structs: each child's value
// (zero for null rows) back to back.
func gatherPacked(dst []byte, segs []structural.Segment, li leafInfo) []byte {
	bufs := make([][]byte, len(li.fields)) // each child's values, from the struct's row 0
	for _, s := range segs {
		st := s.Arr.(*array.Struct)
		for k, bits := range li.fields {
			d := st.Field(k).Data()
			bufs[k] = d.Buffers()[1].Bytes()[d.Offset()*bits/8:]
		}
		for i := s.Start; i < s.End; i++ {
			null := st.IsNull(i)
			for k, bits := range li.fields {
				bw := bits / 8
				if null {
					dst = append(dst, zeroes[:bw]...)
				} else {
					dst = append(dst, bufs[k][i*bw:(i+1)*bw]...)
				}
			}
		}
	}
	return dst
}

// packedNulls reports the first child of a packed struct column that is null
// in a valid struct row (packed rows have no child validity).
func packedNulls(a arrow.Array, path []structural.Step) error {
	if len(path) == 0 {
		return nil
	}
	switch path[0].Kind {
	case structural.StepLeaf:
		st, ok := a.(*array.Struct)
		if !ok {
			return nil
		}
		for k := 0; k < st.NumField(); k++ {
			ch := st.Field(k)
			if len(ch.NullBitmapBytes()) == 0 || ch.NullN() == 0 {
				continue
			}
			for i := 0; i < st.Len(); i++ {
				if st.IsValid(i) && ch.IsNull(i) {
					return fmt.Errorf("packed struct child %d is null in row %d; packed children cannot be null", k, i)
				}
			}
		}
	case structural.StepStruct:
		if st, ok := a.(*array.Struct); ok {
			return packedNulls(st.Field(path[0].Child), path[1:])
		}
	case structural.StepList, structural.StepFSL:
		switch l := a.(type) {
		case array.ListLike:
			return packedNulls(l.ListValues(), path[1:])
		}
	}
	return nil
}

// selectorType is what the selector checks column options against.
func (l leafInfo) selectorType() selector.Type {
	return selector.Type{
		Fixed:    l.kind == values.KindFixed,
		Bits:     l.bits,
		Float:    l.float,
		Variable: l.kind == values.KindVariable,
		UTF8:     l.utf8,
		Bool:     l.kind == values.KindBool,
	}
}

func (l leafInfo) rowBits() int {
	b := l.bits
	for _, d := range l.dims {
		b *= d
	}
	return b
}

// classifyLeaf returns how a leaf type is written, or an error naming why it
// is not supported.
func classifyLeaf(dt arrow.DataType) (leafInfo, error) {
	switch t := dt.(type) {
	case *arrow.NullType:
		return leafInfo{kind: values.KindNull}, nil
	case *arrow.BooleanType:
		return leafInfo{kind: values.KindBool, bits: 1}, nil
	case *arrow.StringType:
		return leafInfo{kind: values.KindVariable, offBits: 32, utf8: true}, nil
	case *arrow.BinaryType:
		return leafInfo{kind: values.KindVariable, offBits: 32}, nil
	case *arrow.LargeStringType:
		return leafInfo{kind: values.KindVariable, offBits: 64, utf8: true}, nil
	case *arrow.LargeBinaryType:
		return leafInfo{kind: values.KindVariable, offBits: 64}, nil
	case *arrow.FixedSizeListType:
		var dims []int
		var cur arrow.DataType = t
		for {
			f, ok := cur.(*arrow.FixedSizeListType)
			if !ok {
				break
			}
			if f.Len() <= 0 {
				return leafInfo{}, fmt.Errorf("fixed-size list of size %d", f.Len())
			}
			dims = append(dims, int(f.Len()))
			cur = f.Elem()
		}
		in, err := classifyLeaf(cur)
		if err != nil {
			return leafInfo{}, err
		}
		if in.kind != values.KindFixed && in.kind != values.KindBool {
			return leafInfo{}, fmt.Errorf("fixed-size list of %s", cur)
		}
		return leafInfo{kind: values.KindFSL, bits: in.bits, dims: dims, itemType: cur}, nil
	case *arrow.DictionaryType:
		switch t.IndexType.ID() {
		case arrow.INT8, arrow.UINT8, arrow.INT16, arrow.UINT16, arrow.INT32, arrow.UINT32, arrow.INT64, arrow.UINT64:
		default:
			return leafInfo{}, fmt.Errorf("dictionary indices of type %s", t.IndexType)
		}
		v, err := classifyLeaf(t.ValueType)
		if err != nil {
			return leafInfo{}, err
		}
		if v.kind != values.KindFixed && v.kind != values.KindVariable {
			return leafInfo{}, fmt.Errorf("dictionary of %s", t.ValueType)
		}
		return leafInfo{kind: values.KindDict, bits: t.IndexType.(arrow.FixedWidthDataType).BitWidth(), dict: &v}, nil
	case arrow.FixedWidthDataType:
		bits := t.BitWidth()
		switch dt.ID() {
		case arrow.INTERVAL_MONTHS, arrow.INTERVAL_DAY_TIME, arrow.INTERVAL_MONTH_DAY_NANO, arrow.DECIMAL32, arrow.DECIMAL64:
			return leafInfo{}, fmt.Errorf("Lance has no logical type for %s", dt)
		}
		if bits%8 != 0 || bits == 0 {
			return leafInfo{}, fmt.Errorf("%d-bit values", bits)
		}
		id := dt.ID()
		return leafInfo{kind: values.KindFixed, bits: bits, float: id == arrow.FLOAT16 || id == arrow.FLOAT32 || id == arrow.FLOAT64}, nil
	}
	return leafInfo{}, fmt.Errorf("type %s", dt)
}

// gatherFixed appends the visible fixed-width values of the segments, with
// null slots zeroed.
func gatherFixed(dst []byte, segs []structural.Segment, bw int) []byte {
	total := 0
	// The validity bitmaps of the segments with nulls, found before the
	// pieces start (an Arrow array counts its nulls on first asking).
	bms := make([][]byte, len(segs))
	for i, s := range segs {
		total += s.End - s.Start
		if b := s.Arr.NullBitmapBytes(); len(b) > 0 && s.Arr.NullN() > 0 {
			bms[i] = b
		}
	}
	start := len(dst)
	dst = bulk.Grow(dst, total*bw)[:start+total*bw] // (written whole below)
	// A large page is copied, and its nulls cleared, in pieces side by
	// side, each piece from the segments it overlaps.
	cuts := []int{0, total}
	if total >= 2*par.MinValues {
		cuts = par.Pieces(total, par.MinValues)
	}
	par.EachPiece(cuts, func(_, lo, hi int) error {
		at := 0 // the page index of the segment's first value
		for i, s := range segs {
			n := s.End - s.Start
			if a, b := max(lo, at), min(hi, at+n); a < b {
				d := s.Arr.Data()
				buf := d.Buffers()[1].Bytes()
				from := d.Offset() + s.Start + a - at
				out := dst[start+a*bw : start+b*bw]
				bulk.Copy(out, buf[from*bw:(from+b-a)*bw])
				if bms[i] != nil {
					bitmap.ClearNulls(out, bw, bms[i], from, b-a)
				}
			}
			if at += n; at >= hi {
				break
			}
		}
		return nil
	})
	return dst
}

// gatherBits appends visible booleans as an LSB-first bitmap starting at bit
// nbits of dst; null slots are false.
func gatherBits(dst []byte, nbits int, segs []structural.Segment) ([]byte, int) {
	for _, s := range segs {
		d := s.Arr.Data()
		buf := d.Buffers()[1].Bytes()
		off, n := d.Offset(), s.End-s.Start
		if need := (nbits + n + 7) / 8; len(dst) < need {
			dst = append(dst, make([]byte, need-len(dst))...)
		}
		bitutil.CopyBitmap(buf, off+s.Start, n, dst, nbits)
		if valid := s.Arr.NullBitmapBytes(); len(valid) > 0 && s.Arr.NullN() > 0 {
			bitutil.BitmapAnd(dst, valid, int64(nbits), int64(off+s.Start), dst, int64(nbits), int64(n))
		}
		nbits += n
	}
	return dst, nbits
}

// gatherVariable appends visible variable-width values; null slots are
// empty. offsets (absolute into data, starting at len(data)) grow by one per
// value; the first offset must already be present.
func gatherVariable(offsets []uint64, data []byte, segs []structural.Segment) ([]uint64, []byte) {
	count, total := varSizes(segs)
	offsets = bulk.Grow(offsets, count)
	data = bulk.Grow(data, total)
	eachVarSegment(segs, func(s structural.Segment, d arrow.ArrayData, vals []byte, o32 []int32, o64 []int64) {
		switch {
		case o64 != nil:
			offsets, data = gatherOffsets(offsets, data, vals, o64, validity(d), d.Offset(), d.NullN(), s.Start, s.End)
		case o32 != nil:
			offsets, data = gatherOffsets(offsets, data, vals, o32, validity(d), d.Offset(), d.NullN(), s.Start, s.End)
		default:
			for i := s.Start; i < s.End; i++ {
				offsets = append(offsets, uint64(len(data)))
			}
		}
	})
	return offsets, data
}

// borrowVariable returns the values of a page made of one segment of a
// string or binary array as they lie in the array's value buffer (capped,
// so an append cannot write into it) instead of a copy, with their offsets
// from its first byte appended to offsets: when every null slot spans no
// bytes (gathered, a null slot is empty).
func borrowVariable(offsets []uint64, segs []structural.Segment) ([]uint64, []byte, bool) {
	if len(segs) != 1 {
		return offsets, nil, false
	}
	offsets, parts, _, ok := borrowParts(offsets, segs)
	if !ok {
		return offsets, nil, false
	}
	return offsets, parts[0], true
}

// borrowParts is borrowVariable of a page of any number of segments: the
// values of segment k as they lie in its array's buffer, parts[k], holding
// the page's values from firsts[k] on, and appended to offsets (which end
// at the page's first value) the offsets the values would have gathered
// back to back. ok is false (and offsets to be discarded) when a segment's
// null slots span bytes.
func borrowParts(offsets []uint64, segs []structural.Segment) (_ []uint64, parts [][]byte, firsts []int, ok bool) {
	parts, firsts = make([][]byte, 0, len(segs)), make([]int, 0, len(segs))
	if len(segs) > 1 {
		count, _ := varSizes(segs)
		offsets = bulk.Grow(offsets, count)
	}
	for k := range segs {
		first, base := len(offsets)-1, offsets[len(offsets)-1]
		var data []byte
		ok = false
		eachVarSegment(segs[k:k+1], func(s structural.Segment, d arrow.ArrayData, vals []byte, o32 []int32, o64 []int64) {
			switch {
			case o64 != nil:
				offsets, data, ok = borrowOffsets(offsets, vals, o64, d, s.Start, s.End, base)
			case o32 != nil:
				offsets, data, ok = borrowOffsets(offsets, vals, o32, d, s.Start, s.End, base)
			}
		})
		if !ok {
			return offsets, nil, nil, false
		}
		parts, firsts = append(parts, data), append(firsts, first)
	}
	return offsets, parts, firsts, true
}

// borrowOffsets is borrowParts of slots [s, e) of d (o: its offsets from
// its first slot), their first byte at base among the page's.
func borrowOffsets[T int32 | int64](offsets []uint64, vals []byte, o []T, d arrow.ArrayData, s, e int, base uint64) ([]uint64, []byte, bool) {
	lo, hi := int(o[s]), int(o[e])
	if lo < 0 || hi < lo || hi > len(vals) {
		return offsets, nil, false
	}
	if vb := validity(d); vb != nil && d.NullN() != 0 {
		for i := s; i < e; {
			j, valid := runEnd(vb, d.Offset(), i, e)
			if !valid && o[i] != o[j] {
				return offsets, nil, false // null slots holding bytes
			}
			i = j
		}
	}
	offsets = slices.Grow(offsets, e-s)
	for _, end := range o[s+1 : e+1] {
		offsets = append(offsets, base+uint64(int(end)-lo))
	}
	return offsets, vals[lo:hi:hi], true
}

// gatherVariableValid appends the values of the valid slots of segs back to
// back (valid of them) and their end offsets, as gatherVariable does with
// the null slots left out: a valid run of slots is one copy.
func gatherVariableValid(offsets []uint64, data []byte, segs []structural.Segment, valid int) ([]uint64, []byte) {
	_, total := varSizes(segs) // (an upper bound: null slots may span bytes)
	offsets = bulk.Grow(offsets, valid)
	data = bulk.Grow(data, total)
	eachVarSegment(segs, func(s structural.Segment, d arrow.ArrayData, vals []byte, o32 []int32, o64 []int64) {
		if o64 != nil {
			offsets, data = validRuns(offsets, data, vals, o64, d, s.Start, s.End)
		} else {
			offsets, data = validRuns(offsets, data, vals, o32, d, s.Start, s.End)
		}
	})
	return offsets, data
}

// varSizes is the slots and the value bytes segments of string or binary
// arrays span.
func varSizes(segs []structural.Segment) (count, total int) {
	for _, s := range segs {
		lo, hi := varOffsets(s.Arr.Data(), s.Start, s.End)
		count += s.End - s.Start
		total += hi - lo
	}
	return count, total
}

// eachVarSegment calls f with each segment of string or binary arrays, its
// value bytes and its offsets from the array's first slot (o64 for 64-bit
// offsets, else o32; both nil when the array has no offsets buffer).
func eachVarSegment(segs []structural.Segment, f func(s structural.Segment, d arrow.ArrayData, vals []byte, o32 []int32, o64 []int64)) {
	for _, s := range segs {
		d := s.Arr.Data()
		bufs := d.Buffers()
		var vals []byte
		if len(bufs) > 2 && bufs[2] != nil {
			vals = bufs[2].Bytes()
		}
		switch {
		case bufs[1] == nil:
			f(s, d, vals, nil, nil)
		case d.DataType().ID() == arrow.LARGE_STRING || d.DataType().ID() == arrow.LARGE_BINARY:
			f(s, d, vals, nil, arrow.Int64Traits.CastFromBytes(bufs[1].Bytes())[d.Offset():])
		default:
			f(s, d, vals, arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())[d.Offset():], nil)
		}
	}
}

// validRuns appends the values of the valid slots among [s, e) of d (o:
// its offsets from its first slot; nil when it has no offsets buffer, every
// value empty), a run of valid slots at a time.
func validRuns[T int32 | int64](offsets []uint64, data, vals []byte, o []T, d arrow.ArrayData, s, e int) ([]uint64, []byte) {
	vb := validity(d)
	for i := s; i < e; {
		j, valid := e, true
		if vb != nil && d.NullN() != 0 { // (-1: not counted)
			j, valid = runEnd(vb, d.Offset(), i, e)
		}
		if !valid {
			i = j
			continue
		}
		if o == nil {
			for ; i < j; i++ {
				offsets = append(offsets, uint64(len(data)))
			}
			continue
		}
		base := uint64(len(data)) - uint64(o[i])
		data = append(data, vals[o[i]:o[j]]...)
		for _, end := range o[i+1 : j+1] {
			offsets = append(offsets, uint64(end)+base)
		}
		i = j
	}
	return offsets, data
}

// varOffsets returns the value bytes [lo, hi) slots [s, e) of a string or
// binary array span.
func varOffsets(d arrow.ArrayData, s, e int) (int, int) {
	b := d.Buffers()[1]
	if b == nil || s == e {
		return 0, 0
	}
	switch d.DataType().ID() {
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		o := arrow.Int64Traits.CastFromBytes(b.Bytes())[d.Offset():]
		return int(o[s]), int(o[e])
	}
	o := arrow.Int32Traits.CastFromBytes(b.Bytes())[d.Offset():]
	return int(o[s]), int(o[e])
}

// gatherOffsets appends the values of slots [s, e) (o: the array's offsets
// from its first slot) and their end offsets: in one copy when the span has
// no null, else valid slot by valid slot (a null slot may span bytes in
// Arrow; it stores none).
func gatherOffsets[T int32 | int64](offsets []uint64, data, vals []byte, o []T, vb []byte, bitOff, nulls, s, e int) ([]uint64, []byte) {
	if vb == nil || nulls == 0 {
		lo := int(o[s])
		base := uint64(len(data)) - uint64(lo)
		data = bulk.Append(data, vals[lo:o[e]])
		for _, end := range o[s+1 : e+1] {
			offsets = append(offsets, uint64(end)+base)
		}
		return offsets, data
	}
	for i := s; i < e; i++ {
		if bitutil.BitIsSet(vb, bitOff+i) {
			data = append(data, vals[o[i]:o[i+1]]...)
		}
		offsets = append(offsets, uint64(len(data)))
	}
	return offsets, data
}

// zeroes backs the zeroed value slots of nulls.
var zeroes [64]byte

// maxLen returns the longest visible value in bytes (variable width).
func maxLen(offsets []uint64) int {
	if len(offsets) < 2 {
		return 0
	}
	// Two maxima over alternate values, each offset loaded once.
	m0, m1 := uint64(0), uint64(0)
	prev, i := offsets[0], 1
	for ; i+1 < len(offsets); i += 2 {
		a, b := offsets[i], offsets[i+1]
		m0, m1 = max(m0, a-prev), max(m1, b-a)
		prev = b
	}
	if i < len(offsets) {
		m0 = max(m0, offsets[i]-prev)
	}
	return int(max(m0, m1))
}

var _ = binary.LittleEndian
