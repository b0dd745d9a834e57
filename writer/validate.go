package writer

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// What a slot's nullness is, everywhere in the writer: a slot is null exactly
// when its array has a validity bitmap (a non-empty buffer 0) whose bit is
// clear, or the array is of the null type. An array without a bitmap has no
// nulls whatever its null count says (Arrow's rule), and an array with one
// must not claim a null count of 0 while its bitmap marks nulls
// (validateColumn rejects that; normalizeNulls rewrites the former).

// validateColumn checks one top-level column of a batch against its field
// before anything of the batch is buffered: buffers, offsets and children
// consistent with lengths and offsets (so encoding cannot read out of
// bounds), dictionary keys of valid slots inside their dictionary, UTF-8 in
// the valid slots of string arrays (dictionary values included), and no
// visible null in a field declared non-nullable. It looks only at the slots
// the column covers (a slice's children are checked over the slice's range,
// not their whole length). Errors wrap ErrInvalidBatch and name the column
// path.
//
// It returns the array to buffer: a itself, or, when some array in it has a
// null count but no validity bitmap, a copy whose null counts say what Arrow
// means by that (no nulls). The caller releases a returned array that is not
// a.
//
// dicts (may be nil) holds dictionaries already found valid: slices of one
// dictionary array share its data, which is then checked once, not once per
// batch.
func validateColumn(a arrow.Array, f arrow.Field, dicts *dictCache) (arrow.Array, error) {
	if isNil(a) {
		return nil, fmt.Errorf("column %q: nil array: %w", f.Name, ErrInvalidBatch)
	}
	d := a.Data()
	v := validator{dicts: dicts}
	if err := v.check(d, f, f.Name, 0, lenOf(d), 0); err != nil {
		return nil, err
	}
	if v.need != nil {
		if err := v.visibleNulls(d, f, f.Name, []span{{0, d.Len()}}); err != nil {
			return nil, err
		}
	}
	if !v.fixNulls {
		return a, nil
	}
	nd := normalizeNulls(d)
	defer nd.Release()
	return array.MakeFromData(nd), nil
}

// isNil reports a nil interface or a typed nil pointer inside one.
func isNil(x any) bool {
	if x == nil {
		return true
	}
	v := reflect.ValueOf(x)
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func:
		return v.IsNil()
	}
	return false
}

func lenOf(d arrow.ArrayData) int {
	if isNil(d) {
		return 0
	}
	return d.Len()
}

// validity returns an array's validity bitmap, nil when it has none.
func validity(d arrow.ArrayData) []byte {
	if bufs := d.Buffers(); len(bufs) > 0 && bufs[0] != nil && bufs[0].Len() > 0 {
		return bufs[0].Bytes()
	}
	return nil
}

// storageType is dt, or an extension type's storage.
func storageType(dt arrow.DataType) arrow.DataType {
	if ext, ok := dt.(arrow.ExtensionType); ok {
		return ext.StorageType()
	}
	return dt
}

// dictCache remembers the last dictionaries validated (their data). Holding
// them keeps them from being collected, so an entry cannot come to mean
// another array; it is bounded so that it holds little memory.
type dictCache struct {
	seen map[arrow.ArrayData]struct{}
}

const dictCacheSize = 16

func (c *dictCache) has(d arrow.ArrayData) bool {
	if c == nil {
		return false
	}
	_, ok := c.seen[d]
	return ok
}

func (c *dictCache) add(d arrow.ArrayData) {
	if c == nil {
		return
	}
	if c.seen == nil || len(c.seen) >= dictCacheSize {
		c.seen = make(map[arrow.ArrayData]struct{}, dictCacheSize)
	}
	c.seen[d] = struct{}{}
}

type validator struct {
	dicts *dictCache
	chain []arrow.ArrayData
	// need marks the arrays on the way to a non-nullable field with nulls
	// in the covered slots, for visibleNulls to decide whether a reader
	// would see them.
	need map[arrow.ArrayData]bool
	// fixNulls is set when an array has a null count but no bitmap.
	fixNulls bool
}

func (v *validator) markChain() {
	if v.need == nil {
		v.need = make(map[arrow.ArrayData]bool)
	}
	for _, d := range v.chain {
		v.need[d] = true
	}
}

// check validates logical slots [s, e) of d (0 <= s <= e <= d.Len()), the
// slots the batch covers, and recursively the child slots they cover.
func (v *validator) check(d arrow.ArrayData, f arrow.Field, path string, s, e, depth int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("column %q: %s: %w", path, fmt.Sprintf(format, args...), ErrInvalidBatch)
	}
	if depth > 64 {
		return bad("nested too deep")
	}
	if isNil(d) {
		return bad("nil array data")
	}
	dt := d.DataType()
	if isNil(dt) {
		return bad("array without a type")
	}
	dt = storageType(dt)
	off, n := d.Offset(), d.Len()
	if off < 0 || n < 0 || off > math.MaxInt-n {
		return bad("offset %d and length %d", off, n)
	}
	end := off + n
	v.chain = append(v.chain, d)
	defer func() { v.chain = v.chain[:len(v.chain)-1] }()

	bufs := d.Buffers()
	bm := validity(d)
	declared := d.NullN()
	if declared < array.UnknownNullCount {
		return bad("null count %d", declared)
	}
	nullsHere := false // some covered slot is null
	if dt.ID() == arrow.NULL {
		nullsHere = e > s
	} else if bm != nil {
		if len(bm) < int(bitutil.BytesForBits(int64(end))) {
			return bad("validity bitmap of %d bytes for %d slots", len(bm), end)
		}
		if declared != 0 && e > s {
			nullsHere = bitutil.CountSetBits(bm, off+s, e-s) != e-s
		} else if e > s {
			if cnt := bitutil.CountSetBits(bm, off+s, e-s); cnt != e-s {
				return bad("null count 0, but the validity bitmap marks %d slots null", e-s-cnt)
			}
		}
	} else if declared != 0 {
		// Arrow: no bitmap, no nulls. The count is rewritten before
		// buffering.
		v.fixNulls = true
	}
	if nullsHere && !f.Nullable {
		v.markChain()
	}

	need := func(i, bytes int) error {
		if bytes == 0 {
			return nil
		}
		if len(bufs) <= i || bufs[i] == nil || bufs[i].Len() < bytes {
			return bad("buffer %d shorter than %d bytes", i, bytes)
		}
		return nil
	}
	// offsets checks the offsets of slots [s, e] (n+1 offsets present, the
	// covered ones non-negative and non-decreasing) and returns offsets s
	// and e.
	offsets := func(w int) (lo, hi int64, err error) {
		if n == 0 {
			return 0, 0, nil
		}
		if err := need(1, (end+1)*w); err != nil {
			return 0, 0, err
		}
		b := bufs[1].Bytes()
		var i int
		if w == 4 {
			o := arrow.Int32Traits.CastFromBytes(b)[off+s : off+e+1]
			i = firstDecrease(o)
			lo, hi = int64(o[0]), int64(o[len(o)-1])
		} else {
			o := arrow.Int64Traits.CastFromBytes(b)[off+s : off+e+1]
			i = firstDecrease(o)
			lo, hi = o[0], o[len(o)-1]
		}
		if i >= 0 {
			return 0, 0, bad("offset of slot %d is negative or decreasing", s+i)
		}
		return lo, hi, nil
	}

	switch t := dt.(type) {
	case *arrow.NullType:
		return nil
	case *arrow.BooleanType:
		return need(1, int(bitutil.BytesForBits(int64(end))))
	case *arrow.StringType, *arrow.BinaryType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		w := 4
		if t.ID() == arrow.LARGE_STRING || t.ID() == arrow.LARGE_BINARY {
			w = 8
		}
		_, hi, err := offsets(w)
		if err != nil || e == s {
			return err
		}
		if err := need(2, int(hi)); err != nil {
			return err
		}
		if t.ID() != arrow.STRING && t.ID() != arrow.LARGE_STRING {
			return nil
		}
		var data []byte
		if len(bufs) > 2 && bufs[2] != nil {
			data = bufs[2].Bytes()
		}
		var i int
		if w == 4 {
			i = invalidUTF8(arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())[off+s:off+e+1], data, bm, off+s)
		} else {
			i = invalidUTF8(arrow.Int64Traits.CastFromBytes(bufs[1].Bytes())[off+s:off+e+1], data, bm, off+s)
		}
		if i >= 0 {
			return bad("slot %d is not valid UTF-8", s+i)
		}
		return nil
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		w := 4
		if t.ID() == arrow.LARGE_LIST {
			w = 8
		}
		kids := d.Children()
		if len(kids) != 1 || isNil(kids[0]) {
			return bad("list without one child")
		}
		lo, hi, err := offsets(w)
		if err != nil {
			return err
		}
		if hi > int64(kids[0].Len()) {
			return bad("list offsets reach %d past a child of %d", hi, kids[0].Len())
		}
		ef := t.(arrow.ListLikeType).ElemField()
		return v.check(kids[0], ef, path+"."+ef.Name, int(lo), int(hi), depth+1)
	case *arrow.FixedSizeListType:
		kids := d.Children()
		if len(kids) != 1 || isNil(kids[0]) {
			return bad("fixed-size list without one child")
		}
		dim := int64(t.Len())
		if dim < 0 {
			return bad("fixed-size list of size %d", dim)
		}
		if c := kids[0]; int64(c.Len()) < int64(end)*dim {
			return bad("fixed-size list child of %d slots for %d rows of %d", c.Len(), end, dim)
		}
		ef := t.ElemField()
		return v.check(kids[0], ef, path+"."+ef.Name, int(int64(off+s)*dim), int(int64(off+e)*dim), depth+1)
	case *arrow.StructType:
		kids := d.Children()
		if len(kids) != t.NumFields() {
			return bad("struct with %d children for %d fields", len(kids), t.NumFields())
		}
		for i, c := range kids {
			cf := t.Field(i)
			if isNil(c) {
				return bad("struct child %q is nil", cf.Name)
			}
			if c.Len() < end {
				return bad("struct child %q of %d slots for %d", cf.Name, c.Len(), end)
			}
			if err := v.check(c, cf, path+"."+cf.Name, off+s, off+e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case *arrow.DictionaryType:
		iw, ok := t.IndexType.(arrow.FixedWidthDataType)
		if !ok {
			return bad("dictionary indices of type %s", t.IndexType)
		}
		if err := need(1, end*iw.BitWidth()/8); err != nil {
			return err
		}
		dict := d.Dictionary()
		if isNil(dict) {
			return bad("dictionary array without a dictionary")
		}
		// The whole dictionary is written (each page holds the
		// dictionaries of its arrays), so all of it is checked.
		if !v.dicts.has(dict) {
			fix := v.fixNulls
			v.fixNulls = false
			vf := arrow.Field{Name: "dictionary", Type: t.ValueType, Nullable: true}
			if err := v.check(dict, vf, path+".dictionary", 0, dict.Len(), depth+1); err != nil {
				return err
			}
			if !v.fixNulls {
				// (One that needs its null counts rewritten is checked
				// each time, so that each batch's copy is rewritten.)
				v.dicts.add(dict)
			}
			v.fixNulls = v.fixNulls || fix
		}
		if e == s {
			return nil
		}
		if i := badKey(t.IndexType.ID(), bufs[1].Bytes(), bm, off+s, off+e, dict.Len()); i >= 0 {
			return bad("dictionary key at slot %d is outside the dictionary of %d values", s+i, dict.Len())
		}
		if !f.Nullable && !nullsHere && validity(dict) != nil && dict.NullN() != 0 {
			// Keys may point at null values: visibleNulls decides.
			v.markChain()
		}
		return nil
	case arrow.FixedWidthDataType:
		return need(1, int(int64(end)*int64(t.BitWidth())/8))
	}
	return bad("type %s", d.DataType())
}

// firstDecrease returns the index of the first offset that is negative or
// smaller than the one before it, or -1.
func firstDecrease[O int32 | int64](o []O) int {
	if len(o) > 0 && o[0] < 0 {
		return 0
	}
	for i := 1; i < len(o); i++ {
		if o[i] < o[i-1] {
			return i
		}
	}
	return -1
}

// invalidUTF8 returns the index of the first slot whose bytes are not UTF-8
// among the valid slots of a string array (offs: its n+1 offsets of the
// slots checked, whose first is at physical slot phys; bm: its validity
// bitmap or nil), or -1. The common case reads the covered bytes once:
// 32 bytes at a time while they are ASCII, then utf8.Valid on the rest, and a
// look at each slot's first byte (a slot starting inside a character would
// make two invalid halves of one valid character). Only when that fails are
// the valid slots checked one by one, so that a null slot's bytes cannot make
// a batch invalid.
func invalidUTF8[O int32 | int64](offs []O, data []byte, bm []byte, phys int) int {
	lo, hi := int(offs[0]), int(offs[len(offs)-1])
	b := data[lo:hi]
	i := asciiPrefix(b)
	if i == len(b) {
		return -1
	}
	if utf8.Valid(b[i:]) {
		ok := true
		// Slots that start at or after the first non-ASCII byte.
		for k := len(offs) - 2; k >= 0 && int(offs[k]) >= lo+i; k-- {
			if o := int(offs[k]); o < hi && !utf8.RuneStart(data[o]) {
				ok = false
				break
			}
		}
		if ok {
			return -1
		}
	}
	for k := 0; k+1 < len(offs); k++ {
		if bm != nil && !bitutil.BitIsSet(bm, phys+k) {
			continue
		}
		if !utf8.Valid(data[offs[k]:offs[k+1]]) {
			return k
		}
	}
	return -1
}

// asciiPrefix returns the length of b's leading run of ASCII bytes.
func asciiPrefix(b []byte) int {
	i := 0
	for ; i+32 <= len(b); i += 32 {
		x := binary.LittleEndian.Uint64(b[i:]) | binary.LittleEndian.Uint64(b[i+8:]) |
			binary.LittleEndian.Uint64(b[i+16:]) | binary.LittleEndian.Uint64(b[i+24:])
		if x&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(b) && b[i] < utf8.RuneSelf; i++ {
	}
	return i
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// badKey returns the index (from s) of the first valid slot in physical
// slots [s, e) whose dictionary key is outside [0, n), or -1. The key buffer
// b is read in place.
func badKey(id arrow.Type, b, bm []byte, s, e, n int) int {
	switch id {
	case arrow.INT8:
		return keysOutside(arrow.Int8Traits.CastFromBytes(b)[s:e], bm, s, n)
	case arrow.UINT8:
		return keysOutside(arrow.Uint8Traits.CastFromBytes(b)[s:e], bm, s, n)
	case arrow.INT16:
		return keysOutside(arrow.Int16Traits.CastFromBytes(b)[s:e], bm, s, n)
	case arrow.UINT16:
		return keysOutside(arrow.Uint16Traits.CastFromBytes(b)[s:e], bm, s, n)
	case arrow.INT32:
		return keysOutside(arrow.Int32Traits.CastFromBytes(b)[s:e], bm, s, n)
	case arrow.UINT32:
		return keysOutside(arrow.Uint32Traits.CastFromBytes(b)[s:e], bm, s, n)
	case arrow.INT64:
		return keysOutside(arrow.Int64Traits.CastFromBytes(b)[s:e], bm, s, n)
	case arrow.UINT64:
		return keysOutside(arrow.Uint64Traits.CastFromBytes(b)[s:e], bm, s, n)
	}
	return 0
}

// keysOutside is badKey's loop: one unsigned compare per key (a negative
// key converts to a huge one); validity is read only for keys out of range.
func keysOutside[T integer](keys []T, bm []byte, phys, n int) int {
	limit := uint64(n)
	for i, k := range keys {
		if uint64(k) >= limit && (bm == nil || bitutil.BitIsSet(bm, phys+i)) {
			return i
		}
	}
	return -1
}

// span is a run [s, e) of logical slots of one array.
type span struct{ s, e int }

func addSpan(ss []span, s, e int) []span {
	if s >= e {
		return ss
	}
	if l := len(ss) - 1; l >= 0 && ss[l].e == s {
		ss[l].e = e
		return ss
	}
	return append(ss, span{s, e})
}

// visibleNulls reports a null a reader would see in a field declared
// non-nullable: a null slot among ss (the slots of d that valid ancestor
// slots reach). A null under a null struct or fixed-size-list slot, or in
// child values no valid list slot covers, is masked by its ancestor (Arrow's
// rule: StructArray validation refuses only unmasked nulls) and is not an
// error. It visits only the arrays check marked.
func (v *validator) visibleNulls(d arrow.ArrayData, f arrow.Field, path string, ss []span) error {
	if !v.need[d] || len(ss) == 0 {
		return nil
	}
	dt := storageType(d.DataType())
	off := d.Offset()
	bm := validity(d)
	null := func(i int) bool {
		return dt.ID() == arrow.NULL || bm != nil && !bitutil.BitIsSet(bm, off+i)
	}
	if !f.Nullable {
		// A valid key pointing at a null dictionary value is a null too.
		var keys, dbm []byte
		var kt arrow.Type
		doff := 0
		if t, ok := dt.(*arrow.DictionaryType); ok {
			keys, kt = d.Buffers()[1].Bytes(), t.IndexType.ID()
			dbm, doff = validity(d.Dictionary()), d.Dictionary().Offset()
		}
		for _, sp := range ss {
			for i := sp.s; i < sp.e; i++ {
				isNull := null(i)
				if !isNull && dbm != nil {
					isNull = !bitutil.BitIsSet(dbm, doff+dictKey(kt, keys, off+i))
				}
				if isNull {
					return fmt.Errorf("column %q: slot %d is null, but the field is not nullable: %w", path, i, ErrInvalidBatch)
				}
			}
		}
	}
	// The child slots valid slots of ss reach.
	var kids []span
	switch t := dt.(type) {
	case *arrow.StructType:
		for _, sp := range ss {
			for i := sp.s; i < sp.e; i++ {
				if !null(i) {
					kids = addSpan(kids, off+i, off+i+1)
				}
			}
		}
		for k, c := range d.Children() {
			cf := t.Field(k)
			if err := v.visibleNulls(c, cf, path+"."+cf.Name, kids); err != nil {
				return err
			}
		}
		return nil
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		b := d.Buffers()[1].Bytes()
		for _, sp := range ss {
			for i := sp.s; i < sp.e; i++ {
				if null(i) {
					continue
				}
				if t.ID() == arrow.LARGE_LIST {
					o := arrow.Int64Traits.CastFromBytes(b)
					kids = addSpan(kids, int(o[off+i]), int(o[off+i+1]))
				} else {
					o := arrow.Int32Traits.CastFromBytes(b)
					kids = addSpan(kids, int(o[off+i]), int(o[off+i+1]))
				}
			}
		}
		ef := t.(arrow.ListLikeType).ElemField()
		return v.visibleNulls(d.Children()[0], ef, path+"."+ef.Name, kids)
	case *arrow.FixedSizeListType:
		dim := int(t.Len())
		for _, sp := range ss {
			for i := sp.s; i < sp.e; i++ {
				if !null(i) {
					kids = addSpan(kids, (off+i)*dim, (off+i+1)*dim)
				}
			}
		}
		ef := t.ElemField()
		return v.visibleNulls(d.Children()[0], ef, path+"."+ef.Name, kids)
	}
	return nil
}

// dictKey reads the dictionary key at physical slot i.
func dictKey(id arrow.Type, b []byte, i int) int {
	switch id {
	case arrow.INT8:
		return int(int8(b[i]))
	case arrow.UINT8:
		return int(b[i])
	case arrow.INT16:
		return int(int16(binary.LittleEndian.Uint16(b[2*i:])))
	case arrow.UINT16:
		return int(binary.LittleEndian.Uint16(b[2*i:]))
	case arrow.INT32:
		return int(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case arrow.UINT32:
		return int(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return int(binary.LittleEndian.Uint64(b[8*i:]))
}

// normalizeNulls returns d with the null count of every array without a
// validity bitmap set to 0 (Arrow: no bitmap, no nulls), sharing d's
// buffers. The caller releases the result.
func normalizeNulls(d arrow.ArrayData) arrow.ArrayData {
	kids := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		kids[i] = normalizeNulls(c)
	}
	defer func() {
		for _, c := range kids {
			c.Release()
		}
	}()
	nulls := d.NullN()
	if validity(d) == nil && storageType(d.DataType()).ID() != arrow.NULL {
		nulls = 0
	}
	out := array.NewData(d.DataType(), d.Len(), d.Buffers(), kids, nulls, d.Offset())
	if dict := d.Dictionary(); !isNil(dict) {
		nd := normalizeNulls(dict)
		out.SetDictionary(nd)
		nd.Release()
	}
	return out
}
