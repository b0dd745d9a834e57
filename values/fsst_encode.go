package values

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
)

// Coding strings with an FSST table: the encoder's index over the table's
// symbols, the longest-match step, and the coding of a page's values in
// pieces and lanes. The table's format and decoding are in fsst.go, its
// training in fsst_train.go.

// fsstScanMax is the most symbols a bucket holds and is still scanned.
const fsstScanMax = 4

// fsstExactSlots is the size of the exact-match table (a power of two, at
// least four times the symbols it may hold).
const fsstExactSlots = 1 << 10

// fsstExactHash places a symbol of length l in the exact table.
func fsstExactHash(sym uint64, l int) int {
	return int(((sym ^ uint64(l)<<59) * 0x9e3779b97f4a7c15) >> (64 - 10))
}

// crowded finds the longest symbol of crowded bucket h at the start of
// word (rem bytes left): its code and length, or length 0.
func (t *FsstTable) crowded(word uint64, rem, h int) (int, int) {
	for m := t.lenBits[h]; m != 0; {
		top := bits.Len8(m) - 1
		m &^= 1 << top
		l := top + 3
		if l > rem {
			continue
		}
		key := word & fsstLenMask[l]
		for j := fsstExactHash(key, l); ; j = (j + 1) & (fsstExactSlots - 1) {
			e := &t.exact[j]
			if e.len == 0 {
				break
			}
			if int(e.len) == l && e.sym == key {
				return int(e.code), l
			}
		}
	}
	return -1, 0
}

// fsstEntry is a symbol of three or more bytes as match tests it: its bytes
// (little-endian), the mask of its length, its code and length, side by
// side so that a test loads one entry.
type fsstEntry struct {
	sym, mask       uint64
	code, len, more uint8
}

// fsstBuckets is the number of buckets of the three-byte prefix index.
const fsstBuckets = 1 << 10

// fsstHash3 buckets a little-endian three-byte prefix.
func fsstHash3(p uint64) int {
	return int((uint32(p&0xffffff) * 2654435761) >> (32 - 10))
}

// fsstLenMask[l] keeps the low l bytes of a word.
var fsstLenMask = [9]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xff_ffffffff, 0xffff_ffffffff, 0xffffff_ffffffff, ^uint64(0)}

// match returns the code and length of the longest symbol at the start of
// word (the next min(rem, 8) input bytes, little-endian), or code -1 and
// length 1 when no symbol covers the first byte.
func (t *FsstTable) match(word uint64, rem int) (int, int) {
	// The bucket's head straight from the hash, then the rest of the
	// bucket, as the page coders look them up.
	h := fsstHash3(word)
	if e := &t.head[h]; int(e.len) <= rem && word&e.mask == e.sym {
		if e.code != fsstEscape {
			return int(e.code), int(e.len)
		}
		if c, l := t.crowded(word, rem, h); l > 0 { // a crowded bucket's stand-in
			return c, l
		}
	} else if e.more != 0 {
		for k := t.first3[h] + 1; k < t.first3[h+1]; k++ {
			if e := &t.long3[k]; int(e.len) <= rem && word&e.mask == e.sym {
				return int(e.code), int(e.len)
			}
		}
	}
	if rem >= 2 {
		x := t.short[uint16(word)]
		if c := byte(x); c != fsstEscape {
			return int(c), int(x >> 8)
		}
		return -1, 1
	}
	return int(t.single[byte(word)]), 1
}

// AppendEncoded appends the FSST coding of src to dst (greedy longest match,
// escaping bytes no symbol covers). With a verbatim table it appends src.
// The first call on a parsed table builds its encoder index: a table is not
// safe for concurrent encoding until it has encoded once.
func (t *FsstTable) AppendEncoded(dst, src []byte) []byte {
	return t.appendEncodedIn(dst, src, 0, len(src))
}

// appendEncodedIn is AppendEncoded of buf[start:end]. Bytes of buf past end
// are read (and masked off) to load whole words near the end of the value:
// a page's values lie back to back in one buffer, so short values need no
// byte-by-byte loads.
func (t *FsstTable) appendEncodedIn(dst, buf []byte, start, end int) []byte {
	if !t.coded {
		return append(dst, buf[start:end]...)
	}
	if t.short == nil {
		t.index()
	}
	// At most two bytes a byte (an escape and the byte), written in place.
	at := len(dst)
	dst = slices.Grow(dst, 2*(end-start))
	out := dst[at : at+2*(end-start)]
	j, i := 0, start
	for i < end && i+8 <= len(buf) {
		rem := end - i
		word := binary.LittleEndian.Uint64(buf[i:])
		if rem < 8 {
			word &= fsstLenMask[rem]
		}
		// match, inline: the longest symbol of three or more bytes (the
		// bucket's head first, straight from the hash), else of two, else
		// of one. The two-byte lookup is loaded up front, beside the head.
		x := t.short[uint16(word)]
		c, l := -1, 0
		h := fsstHash3(word)
		if e := &t.head[h]; int(e.len) <= rem && word&e.mask == e.sym {
			c, l = int(e.code), int(e.len)
			if c == fsstEscape { // a crowded bucket's stand-in
				c, l = t.crowded(word, rem, h)
			}
		} else if e.more != 0 {
			for k := t.first3[h] + 1; k < t.first3[h+1]; k++ {
				if e := &t.long3[k]; int(e.len) <= rem && word&e.mask == e.sym {
					c, l = int(e.code), int(e.len)
					break
				}
			}
		}
		if l == 0 {
			c, l = int(byte(x)), int(x>>8)
			if rem == 1 { // (the prefix's second byte is past the value)
				c = int(byte(t.single[byte(word)]))
			}
		}
		// An escape (code fsstEscape, or -1 from single) is followed by
		// its byte; the byte is written after any code, and kept only
		// after an escape (out has room for two bytes a byte).
		out[j], out[j+1] = byte(c), byte(word)
		j++
		if byte(c) == fsstEscape {
			j++
		}
		i += l
	}
	dst = dst[:at+j]
	for i < end {
		var word uint64
		for k := min(end, i+8) - 1; k >= i; k-- {
			word = word<<8 | uint64(buf[k])
		}
		c, l := t.match(word, end-i)
		if c < 0 {
			dst = append(dst, fsstEscape, buf[i])
		} else {
			dst = append(dst, byte(c))
		}
		i += l
	}
	return dst
}

// index builds the encoder lookup (see FsstTable.single, short and first3).
// Among equal symbols the lowest code is used, and longer symbols come
// first, so that match takes the longest symbol at a position, as a scan
// of every symbol longest first would.
func (t *FsstTable) index() {
	t.indexBuckets()
	for h := range fsstBuckets {
		lo, hi := t.first3[h], t.first3[h+1]
		if lo == hi {
			t.head[h] = fsstEntry{sym: 1}
			continue
		}
		t.head[h] = t.long3[lo]
		if hi-lo > 1 {
			t.head[h].more = 1
		}
	}
}

// indexBuckets builds the lookup tables but head: single, short, the
// buckets of long3 and the exact table.
func (t *FsstTable) indexBuckets() {
	for b := range t.single {
		t.single[b] = -1
	}
	t.first3 = [fsstBuckets + 1]uint16{}
	// Count the long symbols per bucket into first3[h+1], prefix-sum, then
	// place them longest first (codes are visited by decreasing length).
	var byLen [256]uint8
	n := 0
	for c := range t.n {
		switch l := t.lens[c]; {
		case l == 1:
			if t.single[byte(t.sym[c])] < 0 {
				t.single[byte(t.sym[c])] = int16(c)
			}
		case l == 2:
			// (placed below, once the one-byte symbols are known)
		case l >= 3:
			byLen[n] = uint8(c)
			n++
			t.first3[fsstHash3(t.sym[c])+1]++
		}
	}
	// short: a prefix's first byte's symbol (the low byte decides, so the
	// first 256 entries repeat), then the two-byte symbols over it, the
	// lowest code of equal ones.
	if t.short == nil {
		t.short = make([]uint16, 1<<16)
	}
	for b := range 256 {
		t.short[b] = uint16(byte(t.single[b])) | 1<<8 // -1 becomes fsstEscape
	}
	for k := 256; k < len(t.short); k *= 2 {
		copy(t.short[k:], t.short[:k])
	}
	for c := range t.n {
		if p := uint16(t.sym[c]); t.lens[c] == 2 && t.short[p]>>8 != 2 {
			t.short[p] = uint16(c) | 2<<8
		}
	}
	for h := 1; h <= fsstBuckets; h++ {
		t.first3[h] += t.first3[h-1]
	}
	long := byLen[:n]
	sort.SliceStable(long, func(x, y int) bool { return t.lens[long[x]] > t.lens[long[y]] })
	var fill [fsstBuckets]uint8
	t.lenBits = [fsstBuckets]uint8{}
	for _, c := range long {
		h := fsstHash3(t.sym[c])
		l := t.lens[c]
		t.long3[int(t.first3[h])+int(fill[h])] = fsstEntry{sym: t.sym[c], mask: fsstLenMask[l], code: c, len: l}
		fill[h]++
		t.lenBits[h] |= 1 << (l - 3)
	}
	// The exact table holds the symbols of crowded buckets, longest
	// first and, among equal symbols, the first placed (lowest code).
	// (Made only for a table with a crowded bucket.)
	clear(t.exact)
	for h := range fsstBuckets {
		if t.first3[h+1]-t.first3[h] <= fsstScanMax {
			continue
		}
		if t.exact == nil {
			t.exact = make([]fsstEntry, fsstExactSlots)
		}
		for _, e := range t.long3[t.first3[h]:t.first3[h+1]] {
			j := fsstExactHash(e.sym, int(e.len))
			for t.exact[j].len != 0 && (t.exact[j].sym != e.sym || t.exact[j].len != e.len) {
				j = (j + 1) & (fsstExactSlots - 1)
			}
			if t.exact[j].len == 0 {
				t.exact[j] = e
			}
		}
	}
	if t.exact == nil {
		return
	}
	// Crowded buckets keep only their stand-in.
	var starts [fsstBuckets + 1]uint16
	k := uint16(0)
	for h := range fsstBuckets {
		starts[h] = k
		lo, hi := t.first3[h], t.first3[h+1]
		if hi-lo > fsstScanMax {
			t.long3[k] = fsstEntry{code: fsstEscape}
			k++
			continue
		}
		k += uint16(copy(t.long3[k:], t.long3[lo:hi]))
	}
	starts[fsstBuckets] = k
	t.first3 = starts
}

// Code returns the FSST-coded form of a variable block. A large block is
// coded in pieces side by side (each value is coded on its own, so the
// bytes do not depend on the cut), then joined.
func (c FsstCodec) Code(b Block) Block {
	return c.CodeInto(Block{}, b)
}

// CodeInto is Code into the memory of dst's Data and Offsets where their
// capacity is enough (scratch from an earlier page: no fresh memory to
// fault in); what dst held is overwritten.
func (c FsstCodec) CodeInto(dst, b Block) Block {
	return c.codeSpans(dst, b.Offsets[:b.N+1], []par.Span{{Data: b.Data, Lo: 0, Hi: b.N}})
}

// CodeParts is Code of the n = len(offsets)-1 values of a variable block
// whose bytes lie in parts rather than in one buffer: part k holds values
// [firsts[k], firsts[k+1]) (the last part up to n), back to back from its
// first byte, which is offsets[firsts[k]].
func (c FsstCodec) CodeParts(offsets []uint64, parts [][]byte, firsts []int) Block {
	return c.CodePartsInto(Block{}, offsets, parts, firsts)
}

// CodePartsInto is CodeParts into dst's memory, as CodeInto.
func (c FsstCodec) CodePartsInto(dst Block, offsets []uint64, parts [][]byte, firsts []int) Block {
	return c.codeSpans(dst, offsets, par.PartSpans(offsets, parts, firsts))
}

// codeSpans codes the values of spans (in order, covering offsets' values),
// large spans in pieces side by side, into dst's memory where it is large
// enough. The pieces code into one buffer, each into a region of its own
// as large as its values' bytes and one byte a value (and some slack:
// fsstRegionSlack), writing their ends from the region's start, and are
// then joined in place (bulk.Compact).
func (c FsstCodec) codeSpans(dst Block, offsets []uint64, spans []par.Span) Block {
	if t := c.Table; t.coded && t.short == nil {
		t.index() // before any piece reads it
	}
	n := len(offsets) - 1
	out := Block{N: n, Offsets: bulk.Grow(dst.Offsets[:0], n+1)[:n+1]}
	out.Offsets[0] = 0
	if n == 0 {
		return out
	}
	pieces := par.SpanPieces(spans)
	starts := make([]int, len(pieces)+1)
	for j, pc := range pieces {
		raw := int(offsets[pc.Hi] - offsets[pc.Lo])
		starts[j+1] = starts[j] + raw + pc.Hi - pc.Lo + min(raw, fsstRegionSlack)
	}
	region := dst.Data[:0]
	if cap(region) < starts[len(pieces)] {
		region = bulk.Make(starts[len(pieces)])
	}
	parts := make([][]byte, len(pieces))
	_ = par.Each(len(pieces), func(j int) error {
		pc := pieces[j]
		parts[j] = c.codeInto(region[starts[j]:starts[j]:starts[j+1]], out.Offsets[pc.Lo+1:pc.Hi+1], pc, offsets)
		return nil
	})
	out.Data = bulk.Compact(region, starts, parts)

	// Each piece's ends count from its start: add where it now lies.
	at := 0
	for j, p := range parts {
		if at > 0 {
			for i := pieces[j].Lo + 1; i <= pieces[j].Hi; i++ {
				out.Offsets[i] += uint64(at)
			}
		}
		at += len(p)
	}
	return out
}

// fsstRegionSlack bounds the room a piece's region has past its values'
// bytes and one byte a value. Coding asks for two bytes a byte of what is
// left (a value, a lane's run) before it writes: a piece of a few long
// values (the tail of a page cut across batches) outgrew a region of its
// bytes alone, and the page's coded values were then copied whole into
// fresh memory to be joined. Up to this much, a region has room for two
// bytes a byte.
const fsstRegionSlack = fsstLaneBytes

// codeInto appends the values of pc, coded, to dst and writes the end of
// each, from dst's start, into ends.
func (c FsstCodec) codeInto(dst []byte, ends []uint64, pc par.Span, offsets []uint64) []byte {
	if c.Table.coded && pc.Hi-pc.Lo >= fsstLaneMin {
		// In runs of about fsstLaneBytes: the second lane's scratch stays
		// small (and in cache) however large the piece.
		for lo := pc.Lo; lo < pc.Hi; {
			hi, _ := slices.BinarySearch(offsets[lo:pc.Hi+1], offsets[lo]+fsstLaneBytes)
			hi = max(lo+hi, lo+fsstLaneMin)
			if pc.Hi-hi < fsstLaneMin {
				hi = pc.Hi
			}
			dst = c.Table.codeTwoLanes(dst, ends[lo-pc.Lo:hi-pc.Lo], par.Span{Data: pc.Data, Base: pc.Base, Lo: lo, Hi: hi}, offsets)
			lo = hi
		}
		return dst
	}
	for i := pc.Lo; i < pc.Hi; i++ {
		if s, e := offsets[i], offsets[i+1]; e > s { // (null slots are empty)
			dst = c.Table.appendEncodedIn(dst, pc.Data, int(s-pc.Base), int(e-pc.Base))
		}
		ends[i-pc.Lo] = uint64(len(dst))
	}
	return dst
}

// fsstLaneMin is the fewest values a piece codes in two lanes (fewer are
// coded one at a time).
const fsstLaneMin = 64

// fsstLaneBytes is about the most value bytes one codeTwoLanes call codes:
// its second lane's scratch, two bytes a byte of half of them, stays small
// and in cache however large the piece.
const fsstLaneBytes = 256 << 10

// codeTwoLanes codes the values of pc as codeInto does, in two lanes run
// side by side: the first half of the values appends to dst, the second
// half into scratch, then joined. Coding a value is one long chain of
// dependent steps (a code's length decides where the next code starts),
// so one lane leaves the core mostly waiting; two independent lanes in
// one loop fill that wait. Each lane codes its values exactly as
// appendEncodedIn would, so the bytes do not change.
func (t *FsstTable) codeTwoLanes(dst []byte, ends []uint64, pc par.Span, offsets []uint64) []byte {
	lo, hi := pc.Lo, pc.Hi
	// Split the bytes about evenly.
	half := offsets[lo] + (offsets[hi]-offsets[lo])/2
	mid, _ := slices.BinarySearch(offsets[lo:hi+1], half)
	mid += lo
	mid = min(max(mid, lo+1), hi-1)
	bytesA := int(offsets[mid] - offsets[lo])
	bytesB := int(offsets[hi] - offsets[mid])
	at := len(dst)
	dst = slices.Grow(dst, 2*bytesA)
	outA := dst[at : at+2*bytesA]
	sc := getScratch()
	defer putScratch(sc)
	sc.b = slices.Grow(sc.b[:0], 2*bytesB)
	outB := sc.b[:2*bytesB]

	buf, base := pc.Data, pc.Base
	short := (*[1 << 16]uint16)(t.short)
	va, vb := lo, mid
	ia, ea := int(offsets[va]-base), int(offsets[va+1]-base)
	ib, eb := int(offsets[vb]-base), int(offsets[vb+1]-base)
	ja, jb := 0, 0
	limit := len(buf) - 8
	for {
		for ia >= ea {
			ends[va-lo] = uint64(ja)
			if va++; va == mid {
				break
			}
			ia, ea = int(offsets[va]-base), int(offsets[va+1]-base)
		}
		for ib >= eb {
			ends[vb-lo] = uint64(jb)
			if vb++; vb == hi {
				break
			}
			ib, eb = int(offsets[vb]-base), int(offsets[vb+1]-base)
		}
		if va == mid || vb == hi || ia > limit || ib > limit {
			break
		}
		// One step of lane A, then one of lane B: match, inline, as in
		// appendEncodedIn, written out once a lane (a call, a loop over
		// the lanes or lane states swapped each step all lost the gain:
		// URL class 680 MB/s two lanes, 546 one, 560-580 those). Later,
		// two lanes measured again at 550 MB/s on one core, the bucket's
		// head straight from the hash took the URL class to 705 MB/s and
		// random letters from 232 to 250; a branch-free head test gave 680
		// and 267.
		{
			rem := ea - ia
			word := binary.LittleEndian.Uint64(buf[ia:])
			if rem < 8 {
				word &= fsstLenMask[rem]
			}
			x := short[uint16(word)]
			c, l := -1, 0
			h := fsstHash3(word)
			if e := &t.head[h]; int(e.len) <= rem && word&e.mask == e.sym {
				c, l = int(e.code), int(e.len)
				if c == fsstEscape {
					c, l = t.crowded(word, rem, h)
				}
			} else if e.more != 0 {
				for k := t.first3[h] + 1; k < t.first3[h+1]; k++ {
					if e := &t.long3[k]; int(e.len) <= rem && word&e.mask == e.sym {
						c, l = int(e.code), int(e.len)
						break
					}
				}
			}
			if l == 0 {
				c, l = int(byte(x)), int(x>>8)
				if rem == 1 {
					c = int(byte(t.single[byte(word)]))
				}
			}
			outA[ja], outA[ja+1] = byte(c), byte(word)
			ja++
			if byte(c) == fsstEscape {
				ja++
			}
			ia += l
		}
		{
			rem := eb - ib
			word := binary.LittleEndian.Uint64(buf[ib:])
			if rem < 8 {
				word &= fsstLenMask[rem]
			}
			x := short[uint16(word)]
			c, l := -1, 0
			h := fsstHash3(word)
			if e := &t.head[h]; int(e.len) <= rem && word&e.mask == e.sym {
				c, l = int(e.code), int(e.len)
				if c == fsstEscape {
					c, l = t.crowded(word, rem, h)
				}
			} else if e.more != 0 {
				for k := t.first3[h] + 1; k < t.first3[h+1]; k++ {
					if e := &t.long3[k]; int(e.len) <= rem && word&e.mask == e.sym {
						c, l = int(e.code), int(e.len)
						break
					}
				}
			}
			if l == 0 {
				c, l = int(byte(x)), int(x>>8)
				if rem == 1 {
					c = int(byte(t.single[byte(word)]))
				}
			}
			outB[jb], outB[jb+1] = byte(c), byte(word)
			jb++
			if byte(c) == fsstEscape {
				jb++
			}
			ib += l
		}
	}
	// Each lane finishes alone, from where it stopped.
	a := outA[:ja]
	for va < mid {
		a = t.appendEncodedIn(a, buf, ia, ea)
		ends[va-lo] = uint64(len(a))
		if va++; va < mid {
			ia, ea = int(offsets[va]-base), int(offsets[va+1]-base)
		}
	}
	b := outB[:jb]
	for vb < hi {
		b = t.appendEncodedIn(b, buf, ib, eb)
		ends[vb-lo] = uint64(len(b))
		if vb++; vb < hi {
			ib, eb = int(offsets[vb]-base), int(offsets[vb+1]-base)
		}
	}
	sc.b = b
	// a lies at dst[at:]: outA has room for two bytes a byte, the most a
	// value codes to, so the lane never moved it.
	dst = dst[:at+len(a)]
	for k := mid - lo; k < hi-lo; k++ {
		ends[k] += uint64(at + len(a))
	}
	for k := range mid - lo {
		ends[k] += uint64(at)
	}
	return append(dst, b...)
}
