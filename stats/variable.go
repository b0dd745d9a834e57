package stats

import (
	"fmt"
	"math/bits"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/internal/par"
)

// Variable measures n variable-width values: value i is
// data[offsets[i]:offsets[i+1]]. nulls is nil or has length n. It panics if
// offsets are not n+1 non-decreasing positions within data.
func Variable(offsets []uint64, data []byte, nulls []bool) VarStats {
	if len(offsets) == 0 {
		return VarStats{}
	}
	n := len(offsets) - 1
	s := VarStats{N: n}
	if nulls != nil {
		if len(nulls) != n {
			panic(fmt.Sprintf("stats.Variable: %d nulls for %d values", len(nulls), n))
		}
		s.Nulls = bitmap.CountTrue(nulls)
		if s.Nulls == 0 {
			nulls = nil
		}
	}
	total := offsets[n] - offsets[0]
	s.Bytes = int(total)
	s.OffsetWidth = bits.Len64(total)
	if n == 0 || s.Nulls == n {
		return s
	}
	if offsets[n] > uint64(len(data)) {
		panic(fmt.Sprintf("stats.Variable: offsets reach %d, data has %d bytes", offsets[n], len(data)))
	}
	var one varPiece
	all := &one
	if n < 2*par.MinValues {
		one.sc = getScratch()
		defer putScratch(one.sc)
		one.measure(offsets, data, nulls, 0, n)
	} else {
		// Large pages are measured in pieces side by side and the
		// pieces' measures merged in order: the same result as one pass.
		cuts := par.Pieces(n, par.MinValues)
		parts := make([]varPiece, len(cuts)-1)
		for j := range parts {
			parts[j].sc = getScratch()
			defer putScratch(parts[j].sc)
		}
		par.EachPiece(cuts, func(j, lo, hi int) error {
			parts[j].measure(offsets, data, nulls, lo, hi)
			return nil
		})
		all = &parts[0]
		for j := 1; j < len(parts); j++ {
			all.merge(&parts[j])
		}
	}
	s.MinLen, s.MaxLen = all.minLen, all.maxLen
	s.Constant = all.constant
	s.Distinct = all.sc.hll.Estimate()
	return s
}

// varPiece is what Variable measures of one piece of a page's values.
type varPiece struct {
	sc                  *scratch // its HLL
	minLen, maxLen      int
	first               []byte // the first non-null value
	haveFirst, constant bool
}

// measure measures values [lo, hi).
func (p *varPiece) measure(offsets []uint64, data []byte, nulls []bool, lo, hi int) {
	h := &p.sc.hll
	reg := &h.reg
	minLen, maxLen := int(^uint(0)>>1), 0
	var first []byte
	haveFirst, constant := false, true
	for i := lo; i < hi; i++ {
		if nulls != nil && nulls[i] {
			continue
		}
		v := data[offsets[i]:offsets[i+1]]
		l := len(v)
		minLen = min(minLen, l)
		maxLen = max(maxLen, l)
		if constant {
			if !haveFirst {
				first, haveFirst = v, true
			} else if string(v) != string(first) {
				constant = false
			}
		}
		x := HashBytes(v)
		if h.dense {
			j, r := hllSlot(x)
			if r > reg[j] {
				reg[j] = r
			}
		} else {
			h.addSparse(x)
		}
	}
	p.minLen, p.maxLen, p.first, p.haveFirst, p.constant = minLen, maxLen, first, haveFirst, constant
}

// merge adds the measures of the piece that follows p's values.
func (p *varPiece) merge(q *varPiece) {
	if !q.haveFirst {
		return // no value
	}
	p.minLen, p.maxLen = min(p.minLen, q.minLen), max(p.maxLen, q.maxLen)
	switch {
	case !p.haveFirst:
		p.first, p.haveFirst, p.constant = q.first, true, q.constant
	default:
		p.constant = p.constant && q.constant && string(p.first) == string(q.first)
	}
	p.sc.hll.Merge(&q.sc.hll)
}
