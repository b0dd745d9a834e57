package reader

import (
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// A take reads each run of consecutive rows as one window. Before that, the
// value ordinals every run needs from each sparse zipped page are gathered
// and fetched once, one request per run of adjacent or nearby ordinals (less
// than coalesceGap bytes apart): two rows whose values are neighbours in the
// page cost one request even when null rows lie between them.

// valueSpan holds the stored bytes of value ordinals [k0, k1) of a sparse
// zipped page.
type valueSpan struct {
	k0, k1 int
	data   []byte
}

// prefetchSparse fetches the stored values that runs need from the sparse
// zipped pages of every column.
func (f *File) prefetchSparse(layout []fieldColumns, runs []rowRun, cacheFor func(ci int) pageCache) error {
	type leaf struct {
		ci   int
		path []structural.Step
	}
	var leaves []leaf
	for _, fc := range layout {
		for k, ci := range fc.cols {
			leaves = append(leaves, leaf{ci, fc.paths[k]})
		}
	}
	return par.Each(len(leaves), func(i int) error {
		l := leaves[i]
		if err := f.prefetchColumn(l.ci, l.path, runs, cacheFor(l.ci)); err != nil {
			return fmt.Errorf("column %q: %w", f.leaves[l.ci].Path, err)
		}
		return nil
	})
}

func (f *File) prefetchColumn(ci int, path []structural.Step, runs []rowRun, cache pageCache) error {
	pages := f.columns[ci]
	dims := f.dims[ci]
	type plan struct {
		m   *sparseMeta
		cur *structural.Cursor // the runs rise: searches resume
		ks  [][2]int           // ordinal ranges of the runs
	}
	need := map[*page]*plan{}
	var order []*page
	for _, r := range runs {
		es, ee := uint64(r.start)*dims, uint64(r.end)*dims
		first := sort.Search(len(pages), func(k int) bool { return pages[k].firstRow+pages[k].rows > es })
		for pi := first; pi < len(pages) && pages[pi].firstRow < ee; pi++ {
			p := pages[pi]
			if p.sparse == nil || p.sparse.GetValues().GetZipped() == nil {
				continue
			}
			pl := need[p]
			if pl == nil {
				m, err := f.sparseMetaFor(p, path)
				if err != nil {
					return err
				}
				pl = &plan{m: m, cur: m.ix.Cursor()}
				need[p] = pl
				order = append(order, p)
			}
			m := pl.m
			a, b := max(es, p.firstRow)-p.firstRow, min(ee, p.firstRow+p.rows)-p.firstRow
			if a%m.scale != 0 || b%m.scale != 0 {
				continue // the read reports it
			}
			s0, s1 := pl.cur.LeafRange(int(a/m.scale), int(b/m.scale))
			if k0, k1 := pl.cur.Ordinal(s0), pl.cur.Ordinal(s1); k0 < k1 {
				pl.ks = append(pl.ks, [2]int{k0, k1})
			}
		}
	}
	for _, p := range order {
		ks := need[p].ks
		if len(ks) < 2 {
			continue // one window reads its own range
		}
		slices.SortFunc(ks, func(x, y [2]int) int { return x[0] - y[0] })
		m := need[p].m
		merged := ks[:1]
		for _, x := range ks[1:] {
			// Overlapping, adjacent or nearby (the values between read
			// through, as for dense pages): one request.
			if last := &merged[len(merged)-1]; x[0] <= last[1] || m.zippedOffset(x[0])-m.zippedOffset(last[1]) <= coalesceGap {
				last[1] = max(last[1], x[1])
				continue
			}
			merged = append(merged, x)
		}
		for _, x := range merged {
			data, err := f.zippedBytes(p, m, x[0], x[1])
			if err != nil {
				return err
			}
			cache.spans[p] = append(cache.spans[p], valueSpan{k0: x[0], k1: x[1], data: data})
		}
	}
	return nil
}

// prefetched returns the stored bytes of value ordinals [k0, k1) when a
// prefetched span holds them.
// The spans of a page are disjoint and in order.
func (c pageCache) prefetched(p *page, m *sparseMeta, k0, k1 int) ([]byte, bool) {
	spans := c.spans[p]
	i := sort.Search(len(spans), func(i int) bool { return spans[i].k0 > k0 }) - 1
	if i < 0 || k1 > spans[i].k1 {
		return nil, false
	}
	s := spans[i]
	lo, hi := m.zippedOffset(k0)-m.zippedOffset(s.k0), m.zippedOffset(k1)-m.zippedOffset(s.k0)
	return s.data[lo:hi:hi], true
}

// zippedOffset is the byte offset of value ordinal k in buffer 0.
func (m *sparseMeta) zippedOffset(k int) uint64 {
	if m.width > 0 {
		return uint64(k) * m.width
	}
	return m.offsets.Offset(k)
}

// zippedBytes reads the stored bytes of value ordinals [k0, k1).
func (f *File) zippedBytes(p *page, m *sparseMeta, k0, k1 int) ([]byte, error) {
	lo, hi := m.zippedOffset(k0), m.zippedOffset(k1)
	if hi <= lo {
		return nil, nil
	}
	return f.readAt(p.buffers[0].Position+lo, hi-lo)
}

// decodeSparseWindows decodes element windows of one sparse page, in
// order, into one projected array: the windows' structure is expanded
// joined from the page's cached index, their values decoded and joined,
// and one array is built (not one per window). It returns errNoJoin when the
// windows' values cannot be joined.
func (f *File) decodeSparseWindows(p *page, types []arrow.DataType, path []structural.Step, leafType arrow.DataType, wins [][2]uint64, cache pageCache) (arrow.Array, error) {
	m, err := f.sparseMetaFor(p, path)
	if err != nil {
		return nil, err
	}
	tops := make([][2]int, len(wins))
	for k, w := range wins {
		if tops[k][0], tops[k][1], err = m.topSlots(p, w[0], w[1]); err != nil {
			return nil, err
		}
	}
	lds, leaf := m.ix.Windows(tops)
	if ch := p.sparse.GetValues().GetChunked(); ch != nil {
		if err := f.decodeTakeChunks(p, ch, m, leaf, cache); err != nil {
			return nil, err
		}
	}
	var blocks []values.Block
	all := &pageData{}
	kind := -1 // of the windows with values: 0 values, 1 all null, 2 constant
	_, zipped := p.sparse.GetValues().GetCodec().(*enc23pb.ValuePlane_Zipped)
	var alive []bool // zipped: which of the windows' leaf slots are stored
	var cur *structural.Cursor
	if zipped {
		cur = m.ix.Cursor() // the windows' slots rise
	}
	for _, ls := range leaf {
		s0, s1 := ls[0], ls[1]
		if s0 == s1 {
			continue // no leaf slots: nothing to join
		}
		if zipped {
			// Stored values only; they are scattered once, below. A window
			// of null rows alone (most, on a sparse page) has none to decode.
			alive = slices.Grow(alive, s1-s0)[:len(alive)+s1-s0]
			cur.Alive(alive[len(alive)-(s1-s0):], s0)
			if k0, k1 := cur.Ordinal(s0), cur.Ordinal(s1); k0 < k1 {
				vals, err := f.zippedOrdinals(p, m, k0, k1, cache)
				if err != nil {
					return nil, err
				}
				if vals.NullItems || vals.Children != nil || len(blocks) > 0 && !joinable(blocks[0], vals) {
					return nil, errNoJoin
				}
				blocks = append(blocks, vals)
			}
			kind = 0
			continue
		}
		pd, err := f.slotValues(p, m, s0, s1, cache)
		if err != nil {
			return nil, err
		}
		k := 0
		switch {
		case pd.allNull:
			k = 1
		case pd.constant != nil:
			k = 2
			if all.constant != nil && string(all.constant) != string(pd.constant) {
				return nil, errNoJoin
			}
			all.constant = pd.constant
		default:
			if pd.vals.NullItems || pd.vals.Children != nil || pd.scalarBuf != nil || pd.dict != all.dict && len(blocks) > 0 {
				return nil, errNoJoin
			}
			if len(blocks) > 0 && !joinable(blocks[0], pd.vals) {
				return nil, errNoJoin
			}
			all.dict = pd.dict
			blocks = append(blocks, pd.vals)
		}
		if kind >= 0 && k != kind {
			return nil, errNoJoin
		}
		kind = k
		all.numVisible += pd.numVisible
	}
	if zipped && len(blocks) == 0 {
		kind = 1 // no window stores a value: every slot is null
		all.numVisible = len(alive)
	}
	switch kind {
	case -1, 1:
		all.allNull = true
	case 0:
		if all.vals, err = concatBlocks(blocks); err != nil {
			return nil, err
		}
		if zipped {
			if all.vals, err = scatter(all.vals, alive); err != nil {
				return nil, err
			}
			all.numVisible = len(alive)
		}
	}
	return buildLeafArray(types, path, leafType, all, lds)
}
