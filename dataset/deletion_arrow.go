package dataset

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// Lance's Arrow deletion file is an Arrow IPC file of one batch of one
// non-nullable uint32 column (row_id), its buffers ZSTD-compressed (each
// prefixed by its uncompressed length, -1 when stored as is). arrow-go's IPC
// reader trusts the file's metadata (a 1.2 KB hostile file made it allocate
// 10 GB, another panicked), so the deletion file is read here: the footer's
// schema and one record batch block, every offset and length checked
// against the file, nothing allocated beyond what a fragment's rows need.

// fbTable is a flatbuffers table inside b, every access bounds-checked.
type fbTable struct {
	b           []byte
	pos, vt, vn int // the table, its vtable and the vtable's length
}

func fbAt(b []byte, pos int) (fbTable, bool) {
	if pos < 0 || pos+4 > len(b) {
		return fbTable{}, false
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(b[pos:])))
	if vt < 0 || vt+4 > len(b) {
		return fbTable{}, false
	}
	vn := int(binary.LittleEndian.Uint16(b[vt:]))
	if vn < 4 || vt+vn > len(b) {
		return fbTable{}, false
	}
	return fbTable{b: b, pos: pos, vt: vt, vn: vn}, true
}

// fbRoot is the root table of a flatbuffer.
func fbRoot(b []byte) (fbTable, bool) {
	if len(b) < 4 {
		return fbTable{}, false
	}
	return fbAt(b, int(binary.LittleEndian.Uint32(b)))
}

// field returns where field i's value lies (0: absent) with size bytes.
func (t fbTable) field(i, size int) (int, bool) {
	o := 4 + 2*i
	if o+2 > t.vn {
		return 0, true
	}
	off := int(binary.LittleEndian.Uint16(t.b[t.vt+o:]))
	if off == 0 {
		return 0, true
	}
	p := t.pos + off
	return p, p+size <= len(t.b)
}

func (t fbTable) uint(i, size int, def uint64) (uint64, bool) {
	p, ok := t.field(i, size)
	if !ok || p == 0 {
		return def, ok
	}
	switch size {
	case 1:
		return uint64(t.b[p]), true
	case 2:
		return uint64(binary.LittleEndian.Uint16(t.b[p:])), true
	case 4:
		return uint64(binary.LittleEndian.Uint32(t.b[p:])), true
	}
	return binary.LittleEndian.Uint64(t.b[p:]), true
}

// ref follows field i's offset: a table or a vector's position.
func (t fbTable) ref(i int) (int, bool) {
	p, ok := t.field(i, 4)
	if !ok || p == 0 {
		return 0, false
	}
	return p + int(binary.LittleEndian.Uint32(t.b[p:])), true
}

func (t fbTable) table(i int) (fbTable, bool) {
	p, ok := t.ref(i)
	if !ok {
		return fbTable{}, false
	}
	return fbAt(t.b, p)
}

// vector returns field i's vector: its first element and its length, the
// elements being elem bytes each.
func (t fbTable) vector(i, elem int) (int, int, bool) {
	p, ok := t.ref(i)
	if !ok || p < 0 || p+4 > len(t.b) {
		return 0, 0, false
	}
	n := int(binary.LittleEndian.Uint32(t.b[p:]))
	if n < 0 || n > (len(t.b)-p-4)/elem {
		return 0, 0, false
	}
	return p + 4, n, true
}

// decodeDeletionArrow reads an Arrow deletion file of offsets below rows.
func decodeDeletionArrow(b []byte, rows uint64) (deletions, error) {
	bad := func(what string, args ...any) (deletions, error) {
		return nil, fmt.Errorf("arrow file: %s: %w", fmt.Sprintf(what, args...), ErrCorrupt)
	}
	const magic = "ARROW1"
	if len(b) < 8+10 || string(b[:6]) != magic || string(b[len(b)-6:]) != magic {
		return bad("not an Arrow IPC file")
	}
	fl := int(int32(binary.LittleEndian.Uint32(b[len(b)-10:])))
	if fl <= 0 || fl > len(b)-18 {
		return bad("footer of %d bytes", fl)
	}
	footer, ok := fbRoot(b[len(b)-10-fl : len(b)-10])
	if !ok {
		return bad("footer")
	}
	// The schema: one uint32 column.
	schema, ok := footer.table(1)
	if !ok {
		return bad("no schema")
	}
	fp, nf, ok := schema.vector(1, 4)
	if !ok || nf != 1 {
		return bad("%d schema fields, want 1", nf)
	}
	field, ok := fbAt(schema.b, fp+int(binary.LittleEndian.Uint32(schema.b[fp:])))
	if !ok {
		return bad("schema field")
	}
	const typeInt = 2
	tt, _ := field.uint(2, 1, 0)
	it, ok := field.table(3)
	width, _ := it.uint(0, 4, 0)
	signed, _ := it.uint(1, 1, 0)
	if tt != typeInt || !ok || width != 32 || signed != 0 {
		return bad("the column is not uint32")
	}
	// One record batch block: offset, metadata length, body length.
	bp, nb, ok := footer.vector(3, 24)
	if !ok || nb != 1 {
		return bad("%d record batches, want 1", nb)
	}
	fb := footer.b
	off := int64(binary.LittleEndian.Uint64(fb[bp:]))
	metaLen := int64(int32(binary.LittleEndian.Uint32(fb[bp+8:])))
	bodyLen := int64(binary.LittleEndian.Uint64(fb[bp+16:]))
	if off < 8 || metaLen < 8 || bodyLen < 0 || off > int64(len(b)) || metaLen > int64(len(b))-off || bodyLen > int64(len(b))-off-metaLen {
		return bad("record batch block out of the file")
	}
	meta := b[off : off+metaLen]
	body := b[off+metaLen : off+metaLen+bodyLen]
	if binary.LittleEndian.Uint32(meta) == 0xffffffff {
		meta = meta[4:]
	}
	ml := int(int32(binary.LittleEndian.Uint32(meta)))
	if ml <= 0 || ml > len(meta)-4 {
		return bad("message of %d bytes", ml)
	}
	msg, ok := fbRoot(meta[4 : 4+ml])
	if !ok {
		return bad("message")
	}
	const headerRecordBatch = 3
	if ht, _ := msg.uint(1, 1, 0); ht != headerRecordBatch {
		return bad("message of type %d, want a record batch", ht)
	}
	rb, ok := msg.table(2)
	if !ok {
		return bad("record batch")
	}
	length, _ := rb.uint(0, 8, 0)
	np, nn, ok := rb.vector(1, 16)
	if !ok || nn != 1 {
		return bad("%d field nodes, want 1", nn)
	}
	if nodeLen, nulls := binary.LittleEndian.Uint64(rb.b[np:]), binary.LittleEndian.Uint64(rb.b[np+8:]); nodeLen != length || nulls != 0 {
		return bad("column of %d rows with %d nulls in a batch of %d", nodeLen, nulls, length)
	}
	if length > rows {
		return bad("%d deleted rows of %d", length, rows)
	}
	vp, nbuf, ok := rb.vector(2, 16)
	if !ok || nbuf != 2 {
		return bad("%d buffers, want 2", nbuf)
	}
	vo, vl := int64(binary.LittleEndian.Uint64(rb.b[vp+16:])), int64(binary.LittleEndian.Uint64(rb.b[vp+24:]))
	if vo < 0 || vl < 0 || vo > int64(len(body)) || vl > int64(len(body))-vo {
		return bad("values buffer out of the body")
	}
	vals := body[vo : vo+vl]
	want := int(length) * 4
	if comp, ok := rb.table(3); ok {
		const codecZstd = 1
		codec, _ := comp.uint(0, 1, 0)
		if len(vals) < 8 && length > 0 {
			return bad("compressed buffer of %d bytes", len(vals))
		}
		if length > 0 {
			n := int64(binary.LittleEndian.Uint64(vals))
			vals = vals[8:]
			switch {
			case n == -1:
			case n != int64(want):
				return bad("buffer of %d bytes uncompressed, want %d", n, want)
			case codec != codecZstd:
				return nil, fmt.Errorf("arrow file: compression codec %d: %w", codec, ErrUnsupported)
			default:
				dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(want)+1<<20))
				if err != nil {
					return nil, err
				}
				out, err := dec.DecodeAll(vals, make([]byte, 0, want))
				dec.Close()
				if err != nil || len(out) != want {
					return bad("zstd: %d of %d bytes: %v", len(out), want, err)
				}
				vals = out
			}
		}
	}
	if len(vals) < want {
		return bad("values buffer of %d bytes for %d rows", len(vals), length)
	}
	d := make(deletions, length)
	for i := range d {
		d[i] = binary.LittleEndian.Uint32(vals[4*i:])
	}
	slices.Sort(d)
	d = slices.Compact(d)
	if len(d) > 0 && uint64(d[len(d)-1]) >= rows {
		return bad("deleted row %d of %d", d[len(d)-1], rows)
	}
	return d, nil
}
