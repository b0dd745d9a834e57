package structural

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// Positions is a set of slots of a domain [0, Len()) with rank queries: the
// leaf slots of a sparse page whose values are stored (valid all the way
// up), where a slot's rank is the index of its stored value record. A dense
// set is a bitmap with a popcount index (one count per 512 slots); a set
// with fewer members than a 16th of its domain is sorted 16-bit offsets in
// buckets of 65536 slots (with the members before each bucket), as
// RoaringBitmap's array containers are. Rank is O(1) on the bitmap and a
// binary search inside one bucket otherwise, and never allocates
// (FORMAT.md §5b' has the measurements against RoaringBitmap and plain
// sorted positions).
type Positions struct {
	n, count int
	words    []uint64 // bitmap form; nil in the sorted form
	ranks    []uint32 // ranks[i]: members in words[:i*rankWords]
	low      []uint16 // sorted form: members' low 16 bits
	starts   []uint32 // sorted form: starts[k]: members below k<<16
}

const (
	rankWords   = 8  // words per rank index entry (512 slots)
	bucketShift = 16 // slots per bucket of the sorted form: 1<<bucketShift
)

// NewPositionsBitmap is the set of the set bits of an Arrow validity bitmap
// (LSB first): bits [offset, offset+n).
func NewPositionsBitmap(bitmap []byte, offset, n int) *Positions {
	nw := (n + 63) / 64
	w := make([]uint64, nw)
	if offset%8 == 0 {
		src := bitmap[offset/8 : (offset+n+7)/8]
		full := len(src) / 8
		for i := 0; i < full; i++ {
			w[i] = binary.LittleEndian.Uint64(src[8*i:])
		}
		for k, b := range src[8*full:] {
			w[full] |= uint64(b) << (8 * k)
		}
	} else {
		for i := 0; i < n; i++ {
			j := offset + i
			if bitmap[j>>3]>>(j&7)&1 != 0 {
				w[i>>6] |= 1 << (i & 63)
			}
		}
	}
	if r := n % 64; r != 0 {
		w[nw-1] &= 1<<r - 1
	}
	return fromWords(w, n)
}

// NewPositionsBools is the set of the true entries of mask.
func NewPositionsBools(mask []bool) *Positions {
	n := len(mask)
	w := make([]uint64, (n+63)/64)
	for i, b := range mask {
		if b {
			w[i>>6] |= 1 << (i & 63)
		}
	}
	return fromWords(w, n)
}

// fromWords takes ownership of a bitmap of n slots (bits past n clear).
func fromWords(w []uint64, n int) *Positions {
	count := 0
	for _, x := range w {
		count += bits.OnesCount64(x)
	}
	p := &Positions{n: n, count: count}
	if count < n/16 {
		p.low = make([]uint16, 0, count)
		p.starts = make([]uint32, n>>bucketShift+2)
		const wordsPerBucket = 1 << bucketShift / 64
		for i, x := range w {
			if i%wordsPerBucket == 0 {
				p.starts[i/wordsPerBucket] = uint32(len(p.low))
			}
			for x != 0 {
				p.low = append(p.low, uint16(i%wordsPerBucket*64+bits.TrailingZeros64(x)))
				x &= x - 1
			}
		}
		for k := (len(w) + wordsPerBucket - 1) / wordsPerBucket; k < len(p.starts); k++ {
			p.starts[k] = uint32(count)
		}
		return p
	}
	p.words = w
	p.ranks = make([]uint32, (len(w)+rankWords-1)/rankWords+1)
	c := 0
	for i, x := range w {
		if i%rankWords == 0 {
			p.ranks[i/rankWords] = uint32(c)
		}
		c += bits.OnesCount64(x)
	}
	p.ranks[len(p.ranks)-1] = uint32(c)
	return p
}

// Len is the size of the domain.
func (p *Positions) Len() int { return p.n }

// Count is the number of members.
func (p *Positions) Count() int { return p.count }

// SizeBytes is the memory the set holds.
func (p *Positions) SizeBytes() int {
	return 8*len(p.words) + 4*len(p.ranks) + 2*len(p.low) + 4*len(p.starts)
}

// bucketRank is, in the sorted form, the number of members below slot (in
// [0, n]) and whether slot is one.
func (p *Positions) bucketRank(slot int) (int, bool) {
	k := slot >> bucketShift
	lo, hi := int(p.starts[k]), int(p.starts[k+1])
	i, found := slices.BinarySearch(p.low[lo:hi], uint16(slot))
	return lo + i, found
}

// Contains reports whether slot is a member.
func (p *Positions) Contains(slot int) bool {
	if slot < 0 || slot >= p.n {
		return false
	}
	if p.words == nil {
		_, ok := p.bucketRank(slot)
		return ok
	}
	return p.words[slot>>6]>>(slot&63)&1 != 0
}

// Rank is the number of members below slot (slot is clamped to the domain):
// for a member, the index of its stored record.
func (p *Positions) Rank(slot int) int {
	slot = max(0, min(slot, p.n))
	if p.words == nil {
		r, _ := p.bucketRank(slot)
		return r
	}
	wi := slot >> 6
	r := int(p.ranks[wi/rankWords])
	for k := wi / rankWords * rankWords; k < wi; k++ {
		r += bits.OnesCount64(p.words[k])
	}
	if b := slot & 63; b != 0 {
		r += bits.OnesCount64(p.words[wi] & (1<<b - 1))
	}
	return r
}

// AppendRange appends the members in [lo, hi) to dst, in order, and returns
// the rank of the first of them (the record index the range starts at).
func (p *Positions) AppendRange(dst []uint32, lo, hi int) ([]uint32, int) {
	lo, hi = max(0, min(lo, p.n)), max(0, min(hi, p.n))
	first := p.Rank(lo)
	if lo >= hi {
		return dst, first
	}
	if p.words == nil {
		end := p.Rank(hi)
		k := lo >> bucketShift
		for i := first; i < end; i++ {
			for uint32(i) >= p.starts[k+1] {
				k++
			}
			dst = append(dst, uint32(k<<bucketShift|int(p.low[i])))
		}
		return dst, first
	}
	for wi := lo >> 6; wi <= (hi-1)>>6; wi++ {
		x := p.words[wi]
		if wi == lo>>6 {
			x &^= 1<<(lo&63) - 1
		}
		if wi == (hi-1)>>6 && hi&63 != 0 {
			x &= 1<<(hi&63) - 1
		}
		for x != 0 {
			dst = append(dst, uint32(wi*64+bits.TrailingZeros64(x)))
			x &= x - 1
		}
	}
	return dst, first
}

// MaterializedMask marks the leaf slots (of the last layer) whose every
// ancestor slot and own slot are valid: the slots whose values a sparse
// page stores. lds must be consistent, as ReadSparse and UnravelPath return
// them.
func MaterializedMask(lds []LayerData) []bool {
	if len(lds) == 0 {
		return nil
	}
	alive := make([]bool, lds[0].Len)
	for i := range alive {
		alive[i] = true
	}
	for _, ld := range lds {
		for i, v := range ld.Valid[:min(len(ld.Valid), len(alive))] {
			alive[i] = alive[i] && v
		}
		switch {
		case ld.Offsets != nil:
			next := make([]bool, ld.Offsets[len(ld.Offsets)-1])
			for i := 0; i < ld.Len; i++ {
				if alive[i] {
					for j := ld.Offsets[i]; j < ld.Offsets[i+1]; j++ {
						next[j] = true
					}
				}
			}
			alive = next
		case ld.Dim > 0:
			next := make([]bool, ld.Len*ld.Dim)
			for i := range next {
				next[i] = alive[i/ld.Dim]
			}
			alive = next
		}
	}
	return alive
}

// Materialized is the set of MaterializedMask.
func Materialized(lds []LayerData) *Positions { return NewPositionsBools(MaterializedMask(lds)) }
