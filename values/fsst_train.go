package values

import (
	"cmp"
	"slices"
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
	// Gather a bounded training set.
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

	t := &FsstTable{coded: true}
	t.index()
	if total == 0 {
		return t
	}
	// Codes during training: 0..n-1 are symbols, 256+b is the literal byte b.
	const nCodes = 512
	count1 := make([]int32, nCodes)
	count2 := make([]int32, nCodes*nCodes)
	symOf := func(code int) fsstSym {
		if code >= 256 {
			return fsstSym{v: uint64(code - 256), l: 1}
		}
		return fsstSym{v: t.sym[code], l: t.lens[code]}
	}
	var codes []int
	var cands []fsstCand
	gains := 0 // the previous round's candidate count, to size the next map
	const rounds = 5
	for round := range rounds {
		clear(count1)
		clear(count2)
		for _, s := range train {
			codes = t.trainCodes(codes[:0], s)
			for k, c := range codes {
				count1[c]++
				if k+1 < len(codes) {
					count2[c*nCodes+codes[k+1]]++
				}
			}
		}
		gain := make(map[fsstSym]int, gains)
		for c := range nCodes {
			if count1[c] == 0 {
				continue
			}
			s := symOf(c)
			// Single bytes are worth keeping: an escaped byte costs 2.
			g := int(count1[c]) * int(s.l)
			if s.l == 1 {
				g *= 2
			}
			gain[s] += g
			if round == rounds-1 {
				continue
			}
			row := count2[c*nCodes : (c+1)*nCodes]
			for d, cnt := range row {
				if cnt == 0 {
					continue
				}
				if cs, ok := s.concat(symOf(d)); ok {
					gain[cs] += int(cnt) * int(cs.l)
				}
			}
		}
		// The fsstMaxSymbols best, highest gain first (then longer, then
		// smaller value: a total order, so the table does not depend on map
		// iteration).
		gains = len(gain)
		cands = cands[:0]
		for s, g := range gain {
			cands = append(cands, fsstCand{s, g})
		}
		cands = topCands(cands, fsstMaxSymbols)
		// Longer symbols first, as the reference implementation orders codes.
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
	return t
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
		for k := min(len(s), i+8) - 1; k >= i; k-- {
			word = word<<8 | uint64(s[k])
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
