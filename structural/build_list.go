package structural

import (
	"slices"

	"github.com/planarlance/planar/internal/bitmap"
)

// listOfLeaf is walk over list slots [s, e) of n at depth d whose items
// are leaf (no dictionary) at depth d+1, with no inherited condition: the
// same entries, written into levels grown once for the slots' items
// rather than a call and appends per list.
func (b *builder) listOfLeaf(chain []node, d, s, e int) error {
	n, leaf := &chain[d], &chain[d+1]
	cs0, _, err := n.listRange(s)
	if err != nil {
		return err
	}
	_, ce1, err := n.listRange(e - 1)
	if err != nil {
		return err
	}
	// At most one entry per list plus one per item of the span (a null
	// list's items are skipped, an out-of-order list is refused below).
	most := (e - s) + max(0, ce1-cs0)
	at := len(b.def)
	b.def = slices.Grow(b.def, most)[:at+most]
	if b.R > 0 {
		b.rep = slices.Grow(b.rep, most)[:at+most]
	}
	def, rep := b.def, b.rep
	j := at
	k, nc, ec, lc := b.listNum[d], nullCode(d), emptyCode(d), nullCode(d+1)
	pending := b.pending
	for i := s; i < e; i++ {
		cs, ce, err := n.listRange(i)
		if err != nil {
			b.def, b.rep = def[:j], rep[:min(j, len(rep))]
			return err
		}
		pending = max(pending, k)
		switch {
		case n.isNull(i):
			b.used[d] |= usedNull
			def[j] = nc
		case cs == ce:
			b.used[d] |= usedEmpty
			def[j] = ec
		default:
			cnt := ce - cs
			if cs < cs0 || j+cnt > len(def) {
				// Offsets that go back: the general walk copes.
				b.def, b.rep, b.pending = def[:j], rep[:min(j, len(rep))], pending
				for ; i < e; i++ {
					if err := b.listSlot(chain, d, i, 0); err != nil {
						return err
					}
				}
				return nil
			}
			if b.R > 0 {
				rep[j] = pending
				clear(rep[j+1 : j+cnt])
			}
			pending = 0
			t := def[j : j+cnt]
			clear(t)
			switch {
			case !leaf.nulls:
			case leaf.bm != nil:
				if bitmap.Levels(t, leaf.bm, leaf.off+cs, lc) > 0 {
					b.used[d+1] |= usedNull
				}
			default:
				for x := range t {
					t[x] = lc
				}
				b.used[d+1] |= usedNull
			}
			b.visible += cnt
			if l := len(b.segs) - 1; l >= 0 && b.segs[l].Arr == leaf.arr && b.segs[l].End == cs {
				b.segs[l].End = ce
			} else {
				b.segs = append(b.segs, Segment{Arr: leaf.arr, Start: cs, End: ce})
			}
			j += cnt
			continue
		}
		if b.R > 0 {
			rep[j] = pending
		}
		pending = 0
		j++
	}
	b.def, b.pending = def[:j], pending
	if b.R > 0 {
		b.rep = rep[:j]
	}
	return nil
}

// listSlot is walk's list step for slot i of the list array at depth d,
// below an inherited condition cond (0 = none).
func (b *builder) listSlot(chain []node, d, i int, cond uint16) error {
	n := &chain[d]
	cs, ce, err := n.listRange(i)
	if err != nil {
		return err
	}
	b.pending = max(b.pending, b.listNum[d])
	switch {
	case cond != 0:
		b.used[d] |= usedMasked
		b.emit(cond)
	case n.isNull(i):
		b.used[d] |= usedNull
		b.emit(nullCode(d))
	case cs == ce:
		b.used[d] |= usedEmpty
		b.emit(emptyCode(d))
	default:
		return b.walk(chain, d+1, cs, ce, 0)
	}
	return nil
}
