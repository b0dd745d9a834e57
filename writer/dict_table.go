package writer

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/planarlance/planar/internal/bulk"
)

// dictTable interns a page's values into dense ids in first-occurrence
// order, for page dictionaries. It is an open-addressing table sized once
// for the most entries the dictionary may hold (a dictionary that would
// grow past them is abandoned), so it never rehashes; keys live in the
// items arena the dictionary is built from, not in Go strings.
type dictTable struct {
	slots  []uint32 // id+1 per slot, 0 when empty
	hashes []uint32 // the high bits of each slot's hash, to skip most compares
	shift  uint     // 64 - log2(len(slots))
	limit  int
	n      int

	// Keys: fixed-width keys of width bw in items (bw > 0), or
	// variable-width ones delimited by offsets; or, for internRow, records
	// of width bw in src, the first row of each id in rows (no copy).
	bw         int
	items      []byte
	offsets    []uint64
	src        []byte
	rows       []uint32
	ents8      []ent8     // internRow of 8-byte records: key and id+1 per slot (one cache line a probe)
	shorts     []entShort // intern of keys of at most 8 bytes, held in the slot (no hash of bytes, no compare)
	nShort     int        // keys in shorts
	shortShift uint       // 64 - log2(len(shorts))
	seed       maphash.Seed
	touched    uint32 // what internKeys8's early reads of slots add up to (kept, so they are made)
}

// newDictTable makes a table for at most limit distinct keys, of width bw
// bytes (0: variable width). It starts small and doubles whenever half
// full, so its memory follows the keys it holds rather than the limit (a
// page of 58k distinct float64 values probed 6 MB of slots sized for the
// 100k limit; the keys alone are 1 MB).
func newDictTable(limit, bw int) *dictTable { return newDictTableFor(limit, bw, 0) }

// newDictTableFor is newDictTable for about expect keys (the stats pass's
// estimate; 0 when none): it starts sized for them, not to be doubled and
// rehashed all the way up from dictTableStart.
func newDictTableFor(limit, bw, expect int) *dictTable {
	t := &dictTable{limit: limit, bw: bw, seed: maphash.MakeSeed()}
	t.resize(startSize(limit, expect))
	if bw == 0 {
		t.offsets = []uint64{0}
	}
	return t
}

// dictTableStart is the slots a table starts with.
const dictTableStart = 1 << 10

// startSize is the slots of a table for at most limit keys, expecting
// about expect.
func startSize(limit, expect int) int {
	return min(max(dictTableStart, tableSize(expect)), tableSize(limit))
}

// tableSize is the slot count for n keys at most half full.
func tableSize(n int) int {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	return size
}

// resize sets the table to size slots (a power of two), moving the keys
// it holds. Keys land where their hash says; ids do not change.
func (t *dictTable) resize(size int) {
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := uint64(size - 1)
	if t.ents8 != nil || ((t.bw == 8 || t.bw == 4) && t.rows != nil) {
		old := t.ents8
		t.ents8 = faultedIn(make([]ent8, size))
		for _, e := range old {
			if e.id == 0 {
				continue
			}
			j := (e.key * 0x9e3779b97f4a7c15) >> t.shift
			for t.ents8[j].id != 0 {
				j = (j + 1) & mask
			}
			t.ents8[j] = e
		}
		t.slots, t.hashes = nil, nil
		return
	}
	old, oldTags := t.slots, t.hashes
	t.slots, t.hashes = bulk.Table[uint32](size), bulk.Table[uint32](size)
	for k, s := range old {
		if s == 0 {
			continue
		}
		h := t.hash(t.key(s - 1))
		j := h >> t.shift
		for t.slots[j] != 0 {
			j = (j + 1) & mask
		}
		t.slots[j], t.hashes[j] = s, oldTags[k]
	}
}

// roomFor grows the table, when it is half full, before one more key.
func (t *dictTable) roomFor() {
	size := len(t.slots)
	if t.ents8 != nil {
		size = len(t.ents8)
	}
	if 2*(t.n+1) > size && size < tableSize(t.limit) {
		t.resize(2 * size)
	}
}

// hash mixes a key: 8- and 16-byte keys by multiplication (fast, and
// enough for a table whose order does not leak into the output), others by
// maphash of at most their first and last 64 bytes (long keys, vectors,
// differ early; equal keys still hash equal, and compares settle the rest).
func (t *dictTable) hash(v []byte) uint64 {
	switch len(v) {
	case 8:
		return binary.LittleEndian.Uint64(v) * 0x9e3779b97f4a7c15
	case 16:
		a := binary.LittleEndian.Uint64(v) * 0x9e3779b97f4a7c15
		b := binary.LittleEndian.Uint64(v[8:]) * 0xc2b2ae3d27d4eb4f
		return (a ^ bits.RotateLeft64(b, 31)) * 0x165667b19e3779f9
	}
	if len(v) > 128 {
		return maphash.Bytes(t.seed, v[:64]) ^ bits.RotateLeft64(maphash.Bytes(t.seed, v[len(v)-64:]), 17) ^ uint64(len(v))
	}
	return maphash.Bytes(t.seed, v)
}

func (t *dictTable) key(id uint32) []byte {
	if t.rows != nil {
		r := int(t.rows[id])
		return t.src[r*t.bw : (r+1)*t.bw]
	}
	if t.bw > 0 {
		return t.items[int(id)*t.bw : int(id+1)*t.bw]
	}
	return t.items[t.offsets[id]:t.offsets[id+1]]
}

// intern returns v's id, adding v when it is new; ok is false when v is new
// and the table already holds limit keys.
func (t *dictTable) intern(v []byte) (id uint32, ok bool) {
	if t.bw == 0 && len(v) <= 8 {
		return t.internShort(v)
	}
	t.roomFor()
	j, tag, id, found := t.lookup(v)
	if found {
		return id, true
	}
	if id, ok = t.claim(j, tag); ok {
		t.items = append(t.items, v...)
		if t.bw == 0 {
			t.offsets = append(t.offsets, uint64(len(t.items)))
		}
	}
	return id, ok
}

// internRow is intern of record i of src (fixed-width records of the
// table's width) without copying it: the table keeps the row number. A
// table uses intern or internRow, not both.
func (t *dictTable) internRow(src []byte, i int) (id uint32, ok bool) {
	t.src = src
	if t.rows == nil {
		t.rows = make([]uint32, 0, 64)
	}
	if t.bw == 8 || t.bw == 4 {
		return t.internRow8(wordKey(src, t.bw, i), i)
	}
	t.roomFor()
	j, tag, id, found := t.lookup(src[i*t.bw : (i+1)*t.bw])
	if found {
		return id, true
	}
	if id, ok = t.claim(j, tag); ok {
		t.rows = append(t.rows, uint32(i))
	}
	return id, ok
}

// lookup finds v: its id, or the empty slot j where it would go, with the
// tag (high hash bits) the slot keeps.
func (t *dictTable) lookup(v []byte) (j uint64, tag, id uint32, found bool) {
	h := t.hash(v)
	tag = uint32(h >> 32)
	mask := uint64(len(t.slots) - 1)
	for j = h >> t.shift; ; j = (j + 1) & mask {
		s := t.slots[j]
		if s == 0 {
			return j, tag, 0, false
		}
		if t.hashes[j] == tag && bytes.Equal(t.key(s-1), v) {
			return j, tag, s - 1, true
		}
	}
}

// claim gives the next id to empty slot j; false when the table already
// holds limit keys. The caller records the key.
func (t *dictTable) claim(j uint64, tag uint32) (uint32, bool) {
	if t.n >= t.limit {
		return 0, false
	}
	id := uint32(t.n)
	t.n++
	t.slots[j], t.hashes[j] = id+1, tag
	return id, true
}

// wordKey is record i of src, of bw (4 or 8) bytes, as a word.
func wordKey(src []byte, bw, i int) uint64 {
	if bw == 4 {
		return uint64(binary.LittleEndian.Uint32(src[i*4:]))
	}
	return binary.LittleEndian.Uint64(src[i*8:])
}

// internRow8 is internRow of a key of 4 or 8 bytes as a word, kept in the
// table itself: a probe compares words, without reading the record back.
func (t *dictTable) internRow8(k uint64, i int) (uint32, bool) {
	if t.ents8 == nil {
		t.resize(len(t.slots))
	}
	if 2*(t.n+1) > len(t.ents8) && len(t.ents8) < tableSize(t.limit) {
		t.resize(2 * len(t.ents8))
	}
	mask := uint64(len(t.ents8) - 1)
	for j := (k * 0x9e3779b97f4a7c15) >> t.shift; ; j = (j + 1) & mask {
		e := &t.ents8[j]
		if e.id == 0 {
			if t.n >= t.limit {
				return 0, false
			}
			id := uint32(t.n)
			t.n++
			e.key, e.id = k, id+1
			t.rows = append(t.rows, uint32(i))
			return id, true
		}
		if e.key == k {
			return e.id - 1, true
		}
	}
}

// internBatch is how many 8-byte keys internKeys8 looks up together.
const internBatch = 16

// internKeys8 interns the 8-byte keys ks of rows rows (at most
// internBatch, rows rising) as internRow8 one by one would, and writes
// each id to idx[4*row]; false when the table reaches its limit. It finds
// every key's first slot and reads it before probing any: the slots' cache
// misses overlap instead of each waiting for the one before (float64 keys,
// 58k distinct in 1M, 15.0 -> 11.0 ms on one core).
func (t *dictTable) internKeys8(ks []uint64, rows []uint32, idx []byte) bool {
	if t.ents8 == nil {
		t.resize(len(t.slots))
	}
	// Room for every key of the batch first: no resize among them.
	for 2*(t.n+len(ks)) > len(t.ents8) && len(t.ents8) < tableSize(t.limit) {
		t.resize(2 * len(t.ents8))
	}
	ents, mask := t.ents8, uint64(len(t.ents8)-1)
	var first [internBatch]uint64
	var touch uint32
	for b, k := range ks[:min(len(ks), internBatch)] {
		first[b] = (k * 0x9e3779b97f4a7c15) >> t.shift
		touch += ents[first[b]&mask].id
	}
	t.touched = touch
	for b, k := range ks[:min(len(ks), internBatch)] {
		var id uint32
		for j := first[b] & mask; ; j = (j + 1) & mask {
			e := &ents[j]
			if e.key == k && e.id != 0 {
				id = e.id - 1
				break
			}
			if e.id == 0 {
				if t.n >= t.limit {
					return false
				}
				id = uint32(t.n)
				t.n++
				e.key, e.id = k, id+1
				t.rows = append(t.rows, rows[b])
				break
			}
		}
		binary.LittleEndian.PutUint32(idx[4*rows[b]:], id)
	}
	return true
}

// internShort is intern of a variable-width key of at most 8 bytes: the
// key's bytes as a little-endian word and its length are the slot's key.
// Its ids come from the same count as the other keys', so ids stay in
// first-occurrence order.
func (t *dictTable) internShort(v []byte) (uint32, bool) {
	var word uint64
	if cap(v) >= 8 {
		// (The bytes past v within its capacity are read and masked off.)
		word = binary.LittleEndian.Uint64(v[:8]) & (^uint64(0) >> (64 - 8*len(v))) // (its low len(v) bytes; none for "")
	} else {
		for k := len(v) - 1; k >= 0; k-- {
			word = word<<8 | uint64(v[k])
		}
	}
	l := uint8(len(v))
	if 2*(t.nShort+1) > len(t.shorts) {
		t.growShorts()
	}
	mask := uint64(len(t.shorts) - 1)
	for j := ((word ^ uint64(l)<<59) * 0x9e3779b97f4a7c15) >> t.shortShift; ; j = (j + 1) & mask {
		e := &t.shorts[j]
		if e.id == 0 {
			if t.n >= t.limit {
				return 0, false
			}
			id := uint32(t.n)
			t.n++
			t.nShort++
			e.key, e.len, e.id = word, l, id+1
			t.items = append(t.items, v...)
			t.offsets = append(t.offsets, uint64(len(t.items)))
			return id, true
		}
		if e.key == word && e.len == l {
			return e.id - 1, true
		}
	}
}

// growShorts doubles the short-key table (or makes its first), moving its
// keys.
func (t *dictTable) growShorts() {
	size := max(64, 2*len(t.shorts))
	old := t.shorts
	t.shorts = faultedIn(make([]entShort, size))
	t.shortShift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := uint64(size - 1)
	for _, e := range old {
		if e.id == 0 {
			continue
		}
		j := ((e.key ^ uint64(e.len)<<59) * 0x9e3779b97f4a7c15) >> t.shortShift
		for t.shorts[j].id != 0 {
			j = (j + 1) & mask
		}
		t.shorts[j] = e
	}
}

// entShort is a slot of the short-key table: the key's bytes, its length
// and its id+1 (0: empty).
type entShort struct {
	key uint64
	len uint8
	id  uint32
}

// ent8 is a slot of an 8-byte-key table: the key and its id+1 (0: empty).
type ent8 struct {
	key uint64
	id  uint32
}

// faultedIn is bulk.Table for the tables of pointer-free entries here.
func faultedIn[T ent8 | entShort](s []T) []T {
	if len(s) > 0 {
		bulk.FaultIn(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0]))))
	}
	return s
}

// appendRows appends the keys interned by internRow, in id order.
func (t *dictTable) appendRows(dst []byte) []byte {
	dst = slices.Grow(dst, len(t.rows)*t.bw)
	for _, r := range t.rows {
		dst = append(dst, t.src[int(r)*t.bw:(int(r)+1)*t.bw]...)
	}
	return dst
}
