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
	return variable("Variable", offsets, nulls, []par.Span{{Data: data, Lo: 0, Hi: len(offsets) - 1}})
}

// VariableParts is Variable of n = len(offsets)-1 values whose bytes lie in
// parts rather than in one buffer: part k holds values [firsts[k],
// firsts[k+1]) (the last part up to n), back to back from its first byte,
// which is offsets[firsts[k]]. The measures are Variable's of the parts
// joined. It panics if the parts do not hold the values so.
func VariableParts(offsets []uint64, parts [][]byte, firsts []int, nulls []bool) VarStats {
	if len(offsets) == 0 {
		return VarStats{}
	}
	n := len(offsets) - 1
	if len(parts) != len(firsts) || len(parts) == 0 || firsts[0] != 0 {
		panic(fmt.Sprintf("stats.VariableParts: %d parts, %d first values", len(parts), len(firsts)))
	}
	for k := range firsts[1:] {
		if firsts[k] > firsts[k+1] || firsts[k+1] > n {
			panic(fmt.Sprintf("stats.VariableParts: parts from values %v of %d", firsts, n))
		}
	}
	spans := par.PartSpans(offsets, parts, firsts)
	for k, sp := range spans {
		if offsets[sp.Hi]-offsets[sp.Lo] != uint64(len(sp.Data)) {
			panic(fmt.Sprintf("stats.VariableParts: part %d of %d bytes for values [%d, %d)", k, len(sp.Data), sp.Lo, sp.Hi))
		}
	}
	return variable("VariableParts", offsets, nulls, spans)
}

// variable is Variable of values whose bytes lie in spans (in order,
// covering them all); fn names the caller in panics.
func variable(fn string, offsets []uint64, nulls []bool, spans []par.Span) VarStats {
	n := len(offsets) - 1
	s := VarStats{N: n}
	if nulls != nil {
		if len(nulls) != n {
			panic(fmt.Sprintf("stats.%s: %d nulls for %d values", fn, len(nulls), n))
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
	for _, sp := range spans {
		if end := offsets[sp.Hi] - sp.Base; offsets[sp.Lo] < sp.Base || end > uint64(len(sp.Data)) {
			panic(fmt.Sprintf("stats.%s: offsets reach %d, data has %d bytes", fn, end, len(sp.Data)))
		}
	}
	all := measurePieces(offsets, nulls, spans)
	s.MinLen, s.MaxLen = all.minLen, all.maxLen
	s.Constant = all.constant
	s.Distinct = all.sc.hll.Estimate()
	putScratch(all.sc)
	return s
}

// measurePieces measures the values of spans, in order: large spans cut
// into pieces measured side by side (par.SpanPieces), the pieces' measures
// merged in order (the same result as one pass). The result holds a
// scratch to put back.
func measurePieces(offsets []uint64, nulls []bool, spans []par.Span) varPiece {
	if sp := spans[0]; len(spans) == 1 && sp.Hi-sp.Lo < 2*par.MinValues {
		one := varPiece{sc: getScratch()}
		one.measure(offsets, sp.Data, sp.Base, nulls, sp.Lo, sp.Hi)
		return one
	}
	pieces := par.SpanPieces(spans)
	parts := make([]varPiece, len(pieces))
	for j := range parts {
		parts[j].sc = getScratch()
	}
	_ = par.Each(len(pieces), func(j int) error {
		pc := pieces[j]
		parts[j].measure(offsets, pc.Data, pc.Base, nulls, pc.Lo, pc.Hi)
		return nil
	})
	for j := 1; j < len(parts); j++ {
		parts[0].merge(&parts[j])
		putScratch(parts[j].sc)
	}
	return parts[0]
}

// varPiece is what Variable measures of one piece of a page's values.
type varPiece struct {
	sc                  *scratch // its HLL
	minLen, maxLen      int
	first               []byte // the first non-null value
	haveFirst, constant bool
}

// measure measures values [lo, hi), whose bytes lie in data from offset
// base.
func (p *varPiece) measure(offsets []uint64, data []byte, base uint64, nulls []bool, lo, hi int) {
	h := &p.sc.hll
	reg := &h.reg
	minLen, maxLen := int(^uint(0)>>1), 0
	var first []byte
	haveFirst, constant := false, true
	for i := lo; i < hi; i++ {
		if nulls != nil && nulls[i] {
			continue
		}
		v := data[offsets[i]-base : offsets[i+1]-base]
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
