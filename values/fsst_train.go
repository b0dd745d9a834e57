package values

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/planarlance/planar/internal/bulk"
)

// Training an FSST symbol table from sample strings (BuildFsstTable); the
// table, its coding and decoding are in fsst.go.

// fsstSym is a candidate symbol during training.
type fsstSym struct {
	v uint64
	l uint8
}

func (s fsstSym) concat(o fsstSym) (fsstSym, bool) {
	if int(s.l)+int(o.l) > 8 {
		return fsstSym{}, false
	}
	return fsstSym{v: s.v | o.v<<(8*uint(s.l)), l: s.l + o.l}, true
}

// fsstCand is a training candidate symbol with its gain.
type fsstCand struct {
	s fsstSym
	g int
}

// FsstTrainBytes caps how much of the sample is used for training.
const FsstTrainBytes = 16 << 10

// BuildFsstTable builds a symbol table from sample strings. It follows the
// shape of the FSST training loop: a few rounds of compressing the sample
// with the current table, counting emitted symbols and adjacent symbol pairs,
// and keeping the 255 candidates (symbols and concatenations of up to 8
// bytes) with the highest gain = frequency × length.
func BuildFsstTable(sample [][]byte) *FsstTable {
	train, total := trainingSet(sample)
	t := &FsstTable{coded: true}
	t.index()
	if total == 0 {
		return t
	}
	tr := fsstTrainers.Get().(*fsstTrainer)
	defer fsstTrainers.Put(tr)
	symOf := func(code int) fsstSym {
		if code >= 256 {
			return fsstSym{v: uint64(code - 256), l: 1}
		}
		return fsstSym{v: t.sym[code], l: t.lens[code]}
	}
	codes, cands := tr.codes, tr.cands
	defer func() { tr.codes, tr.cands = codes[:0], cands[:0] }()
	count1 := &tr.count1
	const rounds = 5
	for round := range rounds {
		// Count the codes and, but in the last round, the pairs of
		// adjacent codes, listing each pair as it is first counted.
		pairs := round < rounds-1
		clear(count1[:])
		tr.pairs = tr.pairs[:0]
		for _, s := range train {
			codes = t.trainCodes(codes[:0], s)
			for k, c := range codes {
				count1[c]++
				if pairs && k+1 < len(codes) {
					p := int32(c*fsstTrainCodes + codes[k+1])
					if tr.count2[p] == 0 {
						tr.pairs = append(tr.pairs, p)
					}
					tr.count2[p]++
				}
			}
		}
		g := &tr.gains
		g.reset(len(tr.pairs) + fsstTrainCodes)
		for c, n := range count1 {
			if n == 0 {
				continue
			}
			s := symOf(c)
			// Single bytes are worth keeping: an escaped byte costs 2.
			gain := int(n) * int(s.l)
			if s.l == 1 {
				gain *= 2
			}
			g.add(s, gain)
		}
		for _, p := range tr.pairs {
			n := tr.count2[p]
			tr.count2[p] = 0 // (the counts stay zero for the next round and trainer)
			if cs, ok := symOf(int(p) / fsstTrainCodes).concat(symOf(int(p) % fsstTrainCodes)); ok {
				g.add(cs, int(n)*int(cs.l))
			}
		}
		// The fsstMaxSymbols best, highest gain first (then longer, then
		// smaller value: a total order, so the table does not depend on
		// the order gains were added in).
		cands = cands[:0]
		for _, i := range g.used {
			e := &g.slots[i]
			cands = append(cands, fsstCand{fsstSym{v: e.v, l: e.l}, e.g})
		}
		t.adopt(cands)
	}
	return t
}

// adopt makes the fsstMaxSymbols best of cands (reordered) the table's
// symbols, longer ones first as the reference implementation orders
// codes, and indexes them.
func (t *FsstTable) adopt(cands []fsstCand) {
	cands = topCands(cands, fsstMaxSymbols)
	slices.SortStableFunc(cands, func(a, b fsstCand) int { return cmp.Compare(b.s.l, a.s.l) })
	t.n = len(cands)
	clear(t.sym[:])
	clear(t.lens[:])
	for i, c := range cands {
		t.sym[i] = c.s.v
		t.lens[i] = c.s.l
	}
	t.index()
}

// trainingSet is the sample's first FsstTrainBytes bytes (the value that
// crosses the bound cut short) and their size.
func trainingSet(sample [][]byte) ([][]byte, int) {
	var train [][]byte
	total := 0
	for _, s := range sample {
		if total >= FsstTrainBytes {
			break
		}
		if len(s) > FsstTrainBytes-total {
			s = s[:FsstTrainBytes-total]
		}
		train = append(train, s)
		total += len(s)
	}
	return train, total
}

// fsstTrainCodes is the number of training codes: 0..255 are symbols,
// 256+b is the literal byte b.
const fsstTrainCodes = 512

// fsstTrainer is the scratch of one training, reused through fsstTrainers:
// code and pair counts, and the gains of a round's candidates.
type fsstTrainer struct {
	count1 [fsstTrainCodes]int32
	count2 []int32 // fsstTrainCodes², zero between rounds
	pairs  []int32 // the entries of count2 counted this round
	gains  gainTable
	codes  []int
	cands  []fsstCand
}

var fsstTrainers = sync.Pool{New: func() any {
	return &fsstTrainer{count2: bulk.Table[int32](fsstTrainCodes * fsstTrainCodes)}
}}

// gainTable sums the gains of candidate symbols: open addressing over a
// power-of-two table, a slot empty while its length is 0 (symbols have at
// least one byte); used lists the filled slots in the order they filled.
type gainTable struct {
	slots []gainSlot
	used  []int32
	shift uint
}

type gainSlot struct {
	v uint64
	l uint8
	g int
}

// reset empties the table and sizes it for up to n symbols at most half
// full.
func (g *gainTable) reset(n int) {
	size := 1 << bits.Len(uint(2*n))
	if len(g.slots) < size {
		// (pre-written like bulk.Table: probed at random from the start)
		g.slots = make([]gainSlot, size)
		bulk.FaultIn(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(g.slots))), size*int(unsafe.Sizeof(gainSlot{}))))
		g.shift = uint(64 - bits.Len(uint(size-1)))
	} else {
		for _, i := range g.used {
			g.slots[i] = gainSlot{}
		}
	}
	g.used = g.used[:0]
}

// add adds gain to symbol s's sum.
func (g *gainTable) add(s fsstSym, gain int) {
	mask := len(g.slots) - 1
	i := int((s.v*0x9E3779B97F4A7C15 ^ uint64(s.l)*0xC2B2AE3D27D4EB4F) >> g.shift)
	for {
		e := &g.slots[i]
		switch {
		case e.l == 0:
			*e = gainSlot{v: s.v, l: s.l, g: gain}
			g.used = append(g.used, int32(i))
			return
		case e.v == s.v && e.l == s.l:
			e.g += gain
			return
		}
		i = (i + 1) & mask
	}
}

// trainCodes greedily codes s with the current table, appending training
// codes (symbol index, or 256+byte for an escaped byte) to codes.
func (t *FsstTable) trainCodes(codes []int, s []byte) []int {
	if t.short == nil {
		t.index()
	}
	for i := 0; i < len(s); {
		first := s[i]
		var word uint64
		if len(s)-i >= 8 {
			word = binary.LittleEndian.Uint64(s[i:])
		} else {
			for k := len(s) - 1; k >= i; k-- {
				word = word<<8 | uint64(s[k])
			}
		}
		code, step := t.match(word, len(s)-i)
		if code < 0 {
			code = 256 + int(first)
		}
		codes = append(codes, code)
		i += step
	}
	return codes
}

// candBefore is the order of training candidates: higher gain, then
// longer, then smaller value.
func candBefore(a, b fsstCand) int {
	if a.g != b.g {
		return cmp.Compare(b.g, a.g)
	}
	if a.s.l != b.s.l {
		return cmp.Compare(b.s.l, a.s.l)
	}
	return cmp.Compare(a.s.v, b.s.v)
}

// topCands returns the k first of cs in candBefore order, sorted (cs is
// reordered): a pass keeping the k best in a heap whose root is the worst
// kept, then a sort of those k, instead of sorting every candidate.
func topCands(cs []fsstCand, k int) []fsstCand {
	if len(cs) <= k {
		slices.SortFunc(cs, candBefore)
		return cs
	}
	h := cs[:k]
	// Max-heap under candBefore: the root comes last in the order.
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && candBefore(h[r], h[l]) > 0 {
				l = r
			}
			if candBefore(h[l], h[i]) <= 0 {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, c := range cs[k:] {
		if candBefore(c, h[0]) < 0 {
			h[0] = c
			down(0)
		}
	}
	slices.SortFunc(h, candBefore)
	return h
}
