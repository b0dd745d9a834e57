package values

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Packed structs store all the children of a struct together, row by row.
//
// PackedStruct (fixed-width children only; mini-block chunks and fixed-width
// full-zip values). Child j has w_j = bits_j/8 bytes per value (bits_j a
// positive multiple of 8); a row is the concatenation of the children's
// values in field order, so the packed buffer for n rows is
//
//	row 0: [child 0 value 0 (w_0 bytes)][child 1 value 0 (w_1 bytes)]...
//	row 1: [child 0 value 1][child 1 value 1]...
//
// with R = Σ w_j bytes per row and no padding, n·R bytes in all. The
// descriptor is PackedStruct{bits_per_value: [bits_0, bits_1, ...],
// values: Flat{bits_per_value: 8·R}} (no buffer compression); mini-block
// pages chunk that buffer exactly like Flat values of 8·R bits.
//
// VariablePackedStruct (at least one variable-width child; variable-width
// full-zip values only). Every row becomes one record holding the fields in
// order, with nothing before, between or after them:
//
//	fixed field (bits_per_value b):     b/8 bytes, the field's value
//	variable field (bits_per_length L): [len as an L-bit (32 or 64) LE uint][len bytes]
//
// The records are handed to the full-zip layer as variable-width values
// (n+1 record offsets). An empty record (a null row in a full-zip page)
// decodes as a zero fixed value and an empty variable value for every field.
// The descriptor is VariablePackedStruct{fields: [{value: <the field's own
// per-value encoding>, bits_per_value: b | bits_per_length: L}, ...]}. A
// reader hands each variable column (offsets of bits_per_length bits) to the
// field's variable per-value decoder and each fixed column to its fixed one.
//
// Lance 14 writers: PackedStruct mini-block chunks from file version 2.1,
// VariablePackedStruct from 2.2, PackedStruct full-zip values from 2.3.
// Neither is valid as a block (dictionary, levels) encoding.

// packedMaxBits bounds the width of one fixed field and of a packed row
// (2^30 bits, 128 MiB), keeping byte counts well inside an int.
const packedMaxBits = 1 << 30

// packedMaxRows bounds a decoded row count.
const packedMaxRows = 1 << 31

// packedMaxZeroFill bounds the bytes a variable packed decode may spend on
// placeholder values for empty records.
const packedMaxZeroFill = 1 << 30

// PackedField is one fixed-width child of a packed struct: n values of Bits
// bits (a positive multiple of 8) back to back in Data, little endian.
type PackedField struct {
	Bits int
	Data []byte
}

// packedRowBytes validates fixed field widths and returns the packed row
// width in bytes. Failures wrap kind.
func packedRowBytes(bits []int, kind error) (int, error) {
	if len(bits) == 0 {
		return 0, fmt.Errorf("values: packed struct without fields: %w", kind)
	}
	total := 0
	for j, b := range bits {
		if b <= 0 || b%8 != 0 || b > packedMaxBits {
			return 0, fmt.Errorf("values: packed struct field %d of %d bits (want a positive multiple of 8): %w", j, b, kind)
		}
		total += b
		if total > packedMaxBits {
			return 0, fmt.Errorf("values: packed struct row wider than %d bits: %w", packedMaxBits, kind)
		}
	}
	return total / 8, nil
}

// packedScatter copies n values of w bytes from src (contiguous) to dst at
// position off of each stride-byte row.
func packedScatter(dst, src []byte, w, stride, off, n int) {
	switch w {
	case 1:
		for i := range n {
			dst[i*stride+off] = src[i]
		}
	case 2:
		for i := range n {
			p := i*stride + off
			*(*[2]byte)(dst[p : p+2]) = [2]byte(src[2*i : 2*i+2])
		}
	case 4:
		for i := range n {
			p := i*stride + off
			*(*[4]byte)(dst[p : p+4]) = [4]byte(src[4*i : 4*i+4])
		}
	case 8:
		for i := range n {
			p := i*stride + off
			*(*[8]byte)(dst[p : p+8]) = [8]byte(src[8*i : 8*i+8])
		}
	default:
		for i := range n {
			copy(dst[i*stride+off:i*stride+off+w], src[i*w:(i+1)*w])
		}
	}
}

// packedGather is the inverse of packedScatter: it collects the w bytes at
// position off of n stride-byte rows of src into dst, contiguously.
func packedGather(dst, src []byte, w, stride, off, n int) {
	switch w {
	case 1:
		for i := range n {
			dst[i] = src[i*stride+off]
		}
	case 2:
		for i := range n {
			p := i*stride + off
			*(*[2]byte)(dst[2*i : 2*i+2]) = [2]byte(src[p : p+2])
		}
	case 4:
		for i := range n {
			p := i*stride + off
			*(*[4]byte)(dst[4*i : 4*i+4]) = [4]byte(src[p : p+4])
		}
	case 8:
		for i := range n {
			p := i*stride + off
			*(*[8]byte)(dst[8*i : 8*i+8]) = [8]byte(src[p : p+8])
		}
	default:
		for i := range n {
			copy(dst[i*w:(i+1)*w], src[i*stride+off:i*stride+off+w])
		}
	}
}

// appendPackedStruct appends the row-interleaved PackedStruct buffer of n
// rows to dst. Every field needs a positive multiple of 8 bits and exactly
// n·Bits/8 bytes of Data; otherwise (or with no fields, or n < 0) it returns
// dst unchanged and an error wrapping ErrNotApplicable.
func appendPackedStruct(dst []byte, fields []PackedField, n int) ([]byte, error) {
	if n < 0 {
		return dst, fmt.Errorf("values: packed struct of %d rows: %w", n, ErrNotApplicable)
	}
	if len(fields) == 0 {
		return dst, fmt.Errorf("values: packed struct without fields: %w", ErrNotApplicable)
	}
	row := 0
	for j, f := range fields {
		if f.Bits <= 0 || f.Bits%8 != 0 || f.Bits > packedMaxBits {
			return dst, fmt.Errorf("values: packed struct field %d of %d bits (want a positive multiple of 8): %w", j, f.Bits, ErrNotApplicable)
		}
		w := f.Bits / 8
		if len(f.Data)%w != 0 || len(f.Data)/w != n {
			return dst, fmt.Errorf("values: packed struct field %d has %d bytes, %d values of %d bits need %d: %w", j, len(f.Data), n, f.Bits, int64(n)*int64(w), ErrNotApplicable)
		}
		row += w
		if row > packedMaxBits/8 {
			return dst, fmt.Errorf("values: packed struct row wider than %d bits: %w", packedMaxBits, ErrNotApplicable)
		}
		if len(f.Data) > math.MaxInt-len(dst) {
			return dst, fmt.Errorf("values: packed struct too large: %w", ErrNotApplicable)
		}
	}
	if n > 0 && row > (math.MaxInt-len(dst))/n {
		return dst, fmt.Errorf("values: packed struct too large: %w", ErrNotApplicable)
	}
	start := len(dst)
	dst = slices.Grow(dst, n*row)
	out := dst[start : start+n*row]
	off := 0
	for _, f := range fields {
		w := f.Bits / 8
		packedScatter(out, f.Data, w, row, off, n)
		off += w
	}
	return dst[:start+n*row], nil
}

// DecodePackedStruct splits a PackedStruct buffer of n rows with the given
// field widths (bits, each a positive multiple of 8) into one contiguous
// little-endian buffer per field. src must be exactly n rows long. The
// returned buffers share one fresh allocation.
func DecodePackedStruct(src []byte, bits []int, n int) ([][]byte, error) {
	row, err := packedRowBytes(bits, ErrCorrupt)
	if err != nil {
		return nil, err
	}
	if n < 0 || n > packedMaxRows {
		return nil, fmt.Errorf("values: packed struct row count %d: %w", n, ErrCorrupt)
	}
	if len(src)%row != 0 || len(src)/row != n {
		return nil, fmt.Errorf("values: packed struct buffer of %d bytes for %d rows of %d bytes: %w", len(src), n, row, ErrCorrupt)
	}
	buf := make([]byte, len(src))
	cols := make([][]byte, len(bits))
	off := 0
	for j, b := range bits {
		w := b / 8
		col := buf[off*n : (off+w)*n : (off+w)*n]
		packedGather(col, src, w, row, off, n)
		cols[j] = col
		off += w
	}
	return cols, nil
}

// PackedStructEncoding returns the descriptor Lance writes for a PackedStruct
// with the given field widths: the widths in bits_per_value and, as values,
// Flat with their sum (no buffer compression). The widths are not validated.
func PackedStructEncoding(bits []int) *enc21pb.CompressiveEncoding {
	widths := make([]uint64, len(bits))
	sum := uint64(0)
	for j, b := range bits {
		widths[j] = uint64(b)
		sum += uint64(b)
	}
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_PackedStruct{PackedStruct: &enc21pb.PackedStruct{
		BitsPerValue: widths,
		Values:       &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: sum}}},
	}}}
}

// ParsePackedStruct validates a PackedStruct descriptor and returns its field
// widths in bits. It requires at least one field, every width a positive
// multiple of 8, and values Flat (without buffer compression) whose width is
// the sum of the field widths.
func ParsePackedStruct(enc *enc21pb.CompressiveEncoding) ([]int, error) {
	p := enc.GetPackedStruct()
	if p == nil {
		return nil, fmt.Errorf("values: %T is not a packed struct: %w", enc.GetCompression(), ErrUnsupported)
	}
	widths := p.GetBitsPerValue()
	if len(widths) == 0 {
		return nil, fmt.Errorf("values: packed struct without fields: %w", ErrCorrupt)
	}
	bits := make([]int, len(widths))
	for j, b := range widths {
		if b == 0 || b%8 != 0 || b > packedMaxBits {
			return nil, fmt.Errorf("values: packed struct field %d of %d bits (want a positive multiple of 8): %w", j, b, ErrCorrupt)
		}
		bits[j] = int(b)
	}
	row, err := packedRowBytes(bits, ErrCorrupt)
	if err != nil {
		return nil, err
	}
	switch v := p.GetValues().GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		if v.Flat.Data != nil {
			return nil, fmt.Errorf("values: packed struct values with buffer compression: %w", ErrUnsupported)
		}
		if v.Flat.BitsPerValue != uint64(8*row) {
			return nil, fmt.Errorf("values: packed struct values of %d bits, fields sum to %d: %w", v.Flat.BitsPerValue, 8*row, ErrCorrupt)
		}
	case nil:
		return nil, fmt.Errorf("values: packed struct values encoding missing: %w", ErrCorrupt)
	default:
		return nil, fmt.Errorf("values: packed struct values %T (want flat): %w", v, ErrUnsupported)
	}
	return bits, nil
}

// PackedLayout is the layout of one field inside a VariablePackedStruct
// record.
type PackedLayout struct {
	// Variable selects the length-prefixed layout (bits_per_length);
	// otherwise the field is fixed width (bits_per_value).
	Variable bool
	// Bits is the fixed value width (a positive multiple of 8) or, for a
	// variable field, the length prefix width (32 or 64).
	Bits int
}

func (l PackedLayout) check(j int, kind error) error {
	if l.Variable {
		if l.Bits != 32 && l.Bits != 64 {
			k := kind
			if kind == ErrCorrupt {
				k = ErrUnsupported
			}
			return fmt.Errorf("values: variable packed struct field %d with %d-bit lengths (want 32 or 64): %w", j, l.Bits, k)
		}
		return nil
	}
	if l.Bits <= 0 || l.Bits%8 != 0 || l.Bits > packedMaxBits {
		return fmt.Errorf("values: variable packed struct field %d of %d bits (want a positive multiple of 8): %w", j, l.Bits, kind)
	}
	return nil
}

// checkPackedLayouts validates layouts and returns the total width of the
// fixed fields in bytes.
func checkPackedLayouts(layouts []PackedLayout, kind error) (int, error) {
	if len(layouts) == 0 {
		return 0, fmt.Errorf("values: variable packed struct without fields: %w", kind)
	}
	fixed := 0
	for j, l := range layouts {
		if err := l.check(j, kind); err != nil {
			return 0, err
		}
		if !l.Variable {
			fixed += l.Bits / 8
			if fixed > packedMaxBits/8 {
				return 0, fmt.Errorf("values: variable packed struct fixed fields wider than %d bits: %w", packedMaxBits, kind)
			}
		}
	}
	return fixed, nil
}

// VarPackedField holds the n values of one VariablePackedStruct field: for a
// fixed field, n values of Bits/8 bytes back to back in Data (Offsets nil);
// for a variable field, n+1 non-decreasing Offsets into Data.
type VarPackedField struct {
	PackedLayout
	Data    []byte
	Offsets []uint64
}

// AppendVariablePackedStruct appends the n records of a VariablePackedStruct
// to dst and appends n+1 record offsets to offs; the offsets are positions in
// the returned byte slice (the first is len(dst)), so record i is
// out[offs[i]:offs[i+1]]. Fixed fields need exactly n·Bits/8 bytes; variable
// fields need n+1 non-decreasing offsets within Data (values are
// Data[Offsets[i]:Offsets[i+1]]), and with 32-bit lengths each value must be
// shorter than 2^32 bytes. Inputs it cannot encode leave dst and offs
// unchanged and return an error wrapping ErrNotApplicable.
func AppendVariablePackedStruct(dst []byte, offs []uint64, fields []VarPackedField, n int) ([]byte, []uint64, error) {
	if n < 0 {
		return dst, offs, fmt.Errorf("values: variable packed struct of %d rows: %w", n, ErrNotApplicable)
	}
	if len(fields) == 0 {
		return dst, offs, fmt.Errorf("values: variable packed struct without fields: %w", ErrNotApplicable)
	}
	total := uint64(0)
	for j, f := range fields {
		if err := f.check(j, ErrNotApplicable); err != nil {
			return dst, offs, err
		}
		if !f.Variable {
			w := f.Bits / 8
			if len(f.Offsets) != 0 {
				return dst, offs, fmt.Errorf("values: variable packed struct fixed field %d has offsets: %w", j, ErrNotApplicable)
			}
			if len(f.Data)%w != 0 || len(f.Data)/w != n {
				return dst, offs, fmt.Errorf("values: variable packed struct field %d has %d bytes, %d values of %d bits need %d: %w", j, len(f.Data), n, f.Bits, int64(n)*int64(w), ErrNotApplicable)
			}
			total += uint64(len(f.Data))
			continue
		}
		if len(f.Offsets) != n+1 {
			return dst, offs, fmt.Errorf("values: variable packed struct field %d has %d offsets for %d values: %w", j, len(f.Offsets), n, ErrNotApplicable)
		}
		for i := range n {
			a, b := f.Offsets[i], f.Offsets[i+1]
			if b < a {
				return dst, offs, fmt.Errorf("values: variable packed struct field %d offsets decrease at %d (%d < %d): %w", j, i+1, b, a, ErrNotApplicable)
			}
			if f.Bits == 32 && b-a > math.MaxUint32 {
				return dst, offs, fmt.Errorf("values: variable packed struct field %d value %d of %d bytes exceeds a 32-bit length: %w", j, i, b-a, ErrNotApplicable)
			}
		}
		if last := f.Offsets[n]; last > uint64(len(f.Data)) {
			return dst, offs, fmt.Errorf("values: variable packed struct field %d offset %d beyond %d data bytes: %w", j, last, len(f.Data), ErrNotApplicable)
		}
		total += uint64(n)*uint64(f.Bits/8) + (f.Offsets[n] - f.Offsets[0])
		if total > math.MaxInt {
			return dst, offs, fmt.Errorf("values: variable packed struct too large: %w", ErrNotApplicable)
		}
	}
	if total > uint64(math.MaxInt-len(dst)) {
		return dst, offs, fmt.Errorf("values: variable packed struct too large: %w", ErrNotApplicable)
	}
	start := len(dst)
	dst = slices.Grow(dst, int(total))
	out := dst[:start+int(total)]
	offs = slices.Grow(offs, n+1)
	p := start
	offs = append(offs, uint64(p))
	for i := range n {
		for _, f := range fields {
			if !f.Variable {
				w := f.Bits / 8
				p += copy(out[p:p+w], f.Data[i*w:(i+1)*w])
				continue
			}
			a, b := f.Offsets[i], f.Offsets[i+1]
			if f.Bits == 32 {
				binary.LittleEndian.PutUint32(out[p:], uint32(b-a))
				p += 4
			} else {
				binary.LittleEndian.PutUint64(out[p:], b-a)
				p += 8
			}
			p += copy(out[p:], f.Data[a:b])
		}
		offs = append(offs, uint64(p))
	}
	return out, offs, nil
}

// VariablePackedOffsetBits returns the width Lance gives the record offsets
// of a VariablePackedStruct (and so the full-zip length prefix of each
// record): 32 when the records span at most 2^32-1 bytes, otherwise 64.
// offs are record offsets as returned by AppendVariablePackedStruct.
func VariablePackedOffsetBits(offs []uint64) int {
	if len(offs) == 0 || offs[len(offs)-1]-offs[0] <= math.MaxUint32 {
		return 32
	}
	return 64
}

// packedNext parses field l of a record at rec[p:] and returns the field
// value rec[vs:ve] and the position after it.
func packedNext(rec []byte, p int, l PackedLayout, j int) (vs, ve int, err error) {
	rest := len(rec) - p
	if !l.Variable {
		w := l.Bits / 8
		if w > rest {
			return 0, 0, fmt.Errorf("field %d needs %d bytes, record has %d left: %w", j, w, rest, ErrCorrupt)
		}
		return p, p + w, nil
	}
	var n uint64
	if l.Bits == 32 {
		if rest < 4 {
			return 0, 0, fmt.Errorf("field %d length prefix needs 4 bytes, record has %d left: %w", j, rest, ErrCorrupt)
		}
		n = uint64(binary.LittleEndian.Uint32(rec[p:]))
		p += 4
	} else {
		if rest < 8 {
			return 0, 0, fmt.Errorf("field %d length prefix needs 8 bytes, record has %d left: %w", j, rest, ErrCorrupt)
		}
		n = binary.LittleEndian.Uint64(rec[p:])
		p += 8
	}
	if n > uint64(len(rec)-p) {
		return 0, 0, fmt.Errorf("field %d value of %d bytes, record has %d left: %w", j, n, len(rec)-p, ErrCorrupt)
	}
	return p, p + int(n), nil
}

// splitVariablePackedRecord splits one VariablePackedStruct record into its
// field values and appends them to dst (one per layout, aliasing rec). The
// record must be consumed exactly. An empty record (a null row) appends nil
// for every field; Lance decodes it as a zero fixed value and an empty
// variable value.
func splitVariablePackedRecord(dst [][]byte, rec []byte, layouts []PackedLayout) ([][]byte, error) {
	if _, err := checkPackedLayouts(layouts, ErrCorrupt); err != nil {
		return dst, err
	}
	start := len(dst)
	if len(rec) == 0 {
		for range layouts {
			dst = append(dst, nil)
		}
		return dst, nil
	}
	p := 0
	for j, l := range layouts {
		vs, ve, err := packedNext(rec, p, l, j)
		if err != nil {
			return dst[:start], fmt.Errorf("values: variable packed struct record: %w", err)
		}
		dst = append(dst, rec[vs:ve:ve])
		p = ve
	}
	if p != len(rec) {
		return dst[:start], fmt.Errorf("values: variable packed struct record of %d bytes has %d trailing bytes: %w", len(rec), len(rec)-p, ErrCorrupt)
	}
	return dst, nil
}

// DecodeVariablePackedStruct decodes n = len(offsets)-1 VariablePackedStruct
// records (record i is data[offsets[i]:offsets[i+1]]) into one column per
// layout: fixed fields get n values back to back in Data; variable fields get
// n+1 offsets starting at 0 and the concatenated value bytes. Every record
// must be consumed exactly; empty records decode as a zero fixed value and an
// empty variable value. The outputs are fresh allocations (one for all bytes,
// one for all offsets).
func DecodeVariablePackedStruct(data []byte, offsets []uint64, layouts []PackedLayout) ([]VarPackedField, error) {
	fixedRow, err := checkPackedLayouts(layouts, ErrCorrupt)
	if err != nil {
		return nil, err
	}
	if len(offsets) == 0 {
		return nil, fmt.Errorf("values: variable packed struct without record offsets: %w", ErrCorrupt)
	}
	n := len(offsets) - 1
	if n > packedMaxRows {
		return nil, fmt.Errorf("values: variable packed struct of %d records: %w", n, ErrCorrupt)
	}
	// Pass 1: validate every record and size the variable columns.
	varBytes := make([]int, len(layouts))
	numVar := 0
	for _, l := range layouts {
		if l.Variable {
			numVar++
		}
	}
	empty := 0
	for i := range n {
		s, e := offsets[i], offsets[i+1]
		if s > e || e > uint64(len(data)) {
			return nil, fmt.Errorf("values: variable packed struct record %d spans [%d, %d) of %d bytes: %w", i, s, e, len(data), ErrCorrupt)
		}
		if s == e {
			empty++
			continue
		}
		rec := data[s:e]
		p := 0
		for j, l := range layouts {
			vs, ve, err := packedNext(rec, p, l, j)
			if err != nil {
				return nil, fmt.Errorf("values: variable packed struct record %d: %w", i, err)
			}
			if l.Variable {
				varBytes[j] += ve - vs
			}
			p = ve
		}
		if p != len(rec) {
			return nil, fmt.Errorf("values: variable packed struct record %d of %d bytes has %d trailing bytes: %w", i, len(rec), len(rec)-p, ErrCorrupt)
		}
	}
	// Every non-empty record holds its fixed bytes and a length prefix per
	// variable field, so the output is bounded by a small multiple of
	// len(data) plus the placeholders of empty records, bounded here.
	if perEmpty := fixedRow + 8*numVar; empty > 0 && perEmpty > packedMaxZeroFill/empty {
		return nil, fmt.Errorf("values: variable packed struct with %d empty records of %d placeholder bytes: %w", empty, perEmpty, ErrCorrupt)
	}
	totalBytes := n * fixedRow
	for _, b := range varBytes {
		totalBytes += b
	}
	buf := make([]byte, totalBytes)
	offBuf := make([]uint64, numVar*(n+1))
	out := make([]VarPackedField, len(layouts))
	pos := 0
	for j, l := range layouts {
		out[j].PackedLayout = l
		if l.Variable {
			out[j].Data = buf[pos : pos : pos+varBytes[j]]
			pos += varBytes[j]
			out[j].Offsets = offBuf[: 1 : n+1]
			offBuf = offBuf[n+1:]
		} else {
			w := l.Bits / 8
			out[j].Data = buf[pos : pos+n*w : pos+n*w]
			pos += n * w
		}
	}
	// Pass 2: copy the values (records are known to be well formed).
	for i := range n {
		s, e := offsets[i], offsets[i+1]
		rec := data[s:e]
		p := 0
		for j, l := range layouts {
			f := &out[j]
			if !l.Variable {
				w := l.Bits / 8
				if len(rec) > 0 {
					copy(f.Data[i*w:(i+1)*w], rec[p:p+w])
					p += w
				}
				continue
			}
			if len(rec) > 0 {
				vs, ve, _ := packedNext(rec, p, l, j)
				f.Data = append(f.Data, rec[vs:ve]...)
				p = ve
			}
			f.Offsets = append(f.Offsets, uint64(len(f.Data)))
		}
	}
	return out, nil
}

// VarPackedFieldEncoding describes one field of a VariablePackedStruct
// descriptor: its record layout and its own per-value encoding.
type VarPackedFieldEncoding struct {
	PackedLayout
	// Value is the field's per-value encoding. For a fixed field Lance
	// writes a fixed per-value encoding (Flat, FixedSizeList, PackedStruct);
	// for a variable field a variable one (Variable{offsets: Flat}, Fsst,
	// General, VariablePackedStruct). When nil, the builder uses what Lance
	// writes for raw values: Flat{Bits} or Variable{offsets: Flat{Bits}}.
	Value *enc21pb.CompressiveEncoding
}

func packedFlat(bits int) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: uint64(bits)}}}
}

// VariablePackedStructEncoding returns the VariablePackedStruct descriptor
// for the given fields, in order. The layouts are not validated.
func VariablePackedStructEncoding(fields []VarPackedFieldEncoding) *enc21pb.CompressiveEncoding {
	fe := make([]*enc21pb.VariablePackedStruct_FieldEncoding, len(fields))
	for j, f := range fields {
		v := f.Value
		e := &enc21pb.VariablePackedStruct_FieldEncoding{}
		if f.Variable {
			if v == nil {
				v = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: packedFlat(f.Bits)}}}
			}
			e.Layout = &enc21pb.VariablePackedStruct_FieldEncoding_BitsPerLength{BitsPerLength: uint64(f.Bits)}
		} else {
			if v == nil {
				v = packedFlat(f.Bits)
			}
			e.Layout = &enc21pb.VariablePackedStruct_FieldEncoding_BitsPerValue{BitsPerValue: uint64(f.Bits)}
		}
		e.Value = v
		fe[j] = e
	}
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_VariablePackedStruct{VariablePackedStruct: &enc21pb.VariablePackedStruct{Fields: fe}}}
}

// ParseVariablePackedStruct validates a VariablePackedStruct descriptor and
// returns its fields. Each field needs a value encoding and a layout: fixed
// widths must be positive multiples of 8 and length prefixes 32 or 64 bits;
// the value encoding must be one Lance can decode in that position (fixed:
// Flat, FixedSizeList, Constant, PackedStruct; variable: Variable with Flat
// offsets, Fsst, General, VariablePackedStruct). Value aliases enc.
func ParseVariablePackedStruct(enc *enc21pb.CompressiveEncoding) ([]VarPackedFieldEncoding, error) {
	vp := enc.GetVariablePackedStruct()
	if vp == nil {
		return nil, fmt.Errorf("values: %T is not a variable packed struct: %w", enc.GetCompression(), ErrUnsupported)
	}
	fs := vp.GetFields()
	if len(fs) == 0 {
		return nil, fmt.Errorf("values: variable packed struct without fields: %w", ErrCorrupt)
	}
	out := make([]VarPackedFieldEncoding, len(fs))
	layouts := make([]PackedLayout, len(fs))
	for j, f := range fs {
		v := f.GetValue()
		if v == nil || v.GetCompression() == nil {
			return nil, fmt.Errorf("values: variable packed struct field %d without a value encoding: %w", j, ErrCorrupt)
		}
		var l PackedLayout
		switch lay := f.GetLayout().(type) {
		case *enc21pb.VariablePackedStruct_FieldEncoding_BitsPerValue:
			if lay.BitsPerValue > packedMaxBits {
				return nil, fmt.Errorf("values: variable packed struct field %d of %d bits: %w", j, lay.BitsPerValue, ErrCorrupt)
			}
			l = PackedLayout{Bits: int(lay.BitsPerValue)}
			switch v.GetCompression().(type) {
			case *enc21pb.CompressiveEncoding_Flat, *enc21pb.CompressiveEncoding_FixedSizeList,
				*enc21pb.CompressiveEncoding_Constant, *enc21pb.CompressiveEncoding_PackedStruct:
			default:
				return nil, fmt.Errorf("values: variable packed struct fixed field %d encoded as %T: %w", j, v.GetCompression(), ErrUnsupported)
			}
		case *enc21pb.VariablePackedStruct_FieldEncoding_BitsPerLength:
			if lay.BitsPerLength > 64 {
				return nil, fmt.Errorf("values: variable packed struct field %d with %d-bit lengths: %w", j, lay.BitsPerLength, ErrUnsupported)
			}
			l = PackedLayout{Variable: true, Bits: int(lay.BitsPerLength)}
			switch c := v.GetCompression().(type) {
			case *enc21pb.CompressiveEncoding_Variable:
				of := c.Variable.GetOffsets().GetFlat()
				if of == nil {
					return nil, fmt.Errorf("values: variable packed struct field %d: variable offsets must be flat: %w", j, ErrUnsupported)
				}
				if of.BitsPerValue >= 255 {
					return nil, fmt.Errorf("values: variable packed struct field %d: %d-bit offsets: %w", j, of.BitsPerValue, ErrCorrupt)
				}
			case *enc21pb.CompressiveEncoding_General:
				if c.General.GetCompression() == nil {
					return nil, fmt.Errorf("values: variable packed struct field %d: general without a compression scheme: %w", j, ErrCorrupt)
				}
			case *enc21pb.CompressiveEncoding_Fsst, *enc21pb.CompressiveEncoding_VariablePackedStruct:
			default:
				return nil, fmt.Errorf("values: variable packed struct variable field %d encoded as %T: %w", j, c, ErrUnsupported)
			}
		case nil:
			return nil, fmt.Errorf("values: variable packed struct field %d without a layout: %w", j, ErrCorrupt)
		default:
			return nil, fmt.Errorf("values: variable packed struct field %d layout %T: %w", j, lay, ErrUnsupported)
		}
		layouts[j] = l
		out[j] = VarPackedFieldEncoding{PackedLayout: l, Value: v}
	}
	if _, err := checkPackedLayouts(layouts, ErrCorrupt); err != nil {
		return nil, err
	}
	return out, nil
}

// VarPackedLayouts returns the record layouts of parsed field encodings.
func VarPackedLayouts(fields []VarPackedFieldEncoding) []PackedLayout {
	out := make([]PackedLayout, len(fields))
	for j, f := range fields {
		out[j] = f.PackedLayout
	}
	return out
}

// PackedStructCodec stores packed struct rows (each child's fixed-width value
// back to back, Bits per child) as they are: one chunk buffer of rows.
type PackedStructCodec struct{ Bits []int }

func (c PackedStructCodec) sum() int {
	n := 0
	for _, b := range c.Bits {
		n += b
	}
	return n
}

func (c PackedStructCodec) Name() string    { return fmt.Sprintf("packed-struct%v", c.Bits) }
func (PackedStructCodec) Contexts() Context { return InChunk }
func (PackedStructCodec) NumBuffers() int   { return 1 }
func (c PackedStructCodec) Check(b Block) error {
	if len(c.Bits) == 0 {
		return notApplicable("packed struct", "no children")
	}
	for _, w := range c.Bits {
		if w <= 0 || w%8 != 0 {
			return notApplicable("packed struct", "%d-bit child", w)
		}
	}
	return checkFixed("packed struct", b, c.sum())
}
func (c PackedStructCodec) Estimate(p *Profile) (int, bool) {
	if p.Bits != c.sum() {
		return 0, false
	}
	return fixedLen(p.Bits, p.N), true
}
func (c PackedStructCodec) AppendChunk(bufs [][]byte, b Block) ([][]byte, error) {
	if err := c.Check(b); err != nil {
		return bufs, err
	}
	bufs = growBufs(bufs, 1)
	bufs[0] = append(bufs[0], b.Data[:fixedLen(b.Bits, b.N)]...)
	return bufs, nil
}
func (c PackedStructCodec) AppendBlock(dst []byte, _ Block) ([]byte, error) {
	return dst, notApplicable("packed struct", "Lance reads it only in chunks and zipped records")
}
func (c PackedStructCodec) Encoding() *enc21pb.CompressiveEncoding {
	return PackedStructEncoding(c.Bits)
}

// decodePackedStructChunk decodes a chunk of packed-struct rows: the
// children's values back to back, to the page flat values of the row width.
func decodePackedStructChunk(enc *enc21pb.CompressiveEncoding, buf []byte, n int) (Block, error) {
	bits, err := ParsePackedStruct(enc)
	if err != nil {
		return Block{}, err
	}
	sum := 0
	for _, b := range bits {
		sum += b
	}
	if want := fixedLen(sum, n); len(buf) < want {
		return Block{}, fmt.Errorf("packed struct chunk has %d bytes, %d rows of %d bits need %d: %w", len(buf), n, sum, want, ErrCorrupt)
	}
	return Block{Bits: sum, N: n, Data: buf[:fixedLen(sum, n)]}, nil
}
