package writer

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Page dictionaries: the dictionaries of Arrow dictionary arrays gathered
// for a page, and the dictionaries the writer builds for pages of plain
// values (strings, 64/128-bit values, fixed-size-list rows).

// pageDict is the page dictionary of a dictionary-encoded page.
type pageDict struct {
	n        int
	items    []byte                       // block-encoded items (after ready)
	encoding *enc21pb.CompressiveEncoding // (after ready)
	// compressed, when not nil, is closed once the items are compressed
	// in the background (compressItemsSoon): items and encoding are read
	// after it.
	compressed chan struct{}
	// raw and rawOffsets: variable-width items as they are (n+1 offsets),
	// for pages that store them zipped (sparse x indexed).
	raw        []byte
	rawOffsets []uint64
}

// gatherDict builds the page's indices (Arrow key width, nulls as 0) and the
// page dictionary: the dictionaries of the page's arrays, back to back, each
// array's keys shifted past the dictionaries before it.
func (c *pageEnc) gatherDict(segs []structural.Segment) ([]byte, *pageDict) {
	kw := c.info.bits / 8
	vi := c.info.dict
	var idx []byte
	// Arrays are told apart by their data: slices of one dictionary array
	// (each with its own Dictionary() array) share one copy.
	type dictBase struct {
		data  arrow.ArrayData
		base  int
		used  []bool   // the items the page's keys reach
		count int      // how many
		remap []uint64 // compacted or merged: the page index of each item
	}
	var seen []dictBase
	var fixed []byte
	offsets := []uint64{0}
	var vdata []byte
	n := 0
	find := func(d arrow.ArrayData) int {
		return slices.IndexFunc(seen, func(x dictBase) bool { return x.data == d })
	}
	// First the items each dictionary's keys reach: a page of a slice
	// keeps only those (a small page of a large batch would otherwise
	// carry the whole dictionary, and a reader joining pages adds them up).
	total := 0
	for _, s := range segs {
		da := s.Arr.(*array.Dictionary)
		d := da.Dictionary().Data()
		k := find(d)
		if k < 0 {
			seen = append(seen, dictBase{data: d, used: make([]bool, d.Len())})
			k = len(seen) - 1
		}
		b := &seen[k]
		for i := s.Start; i < s.End; i++ {
			if da.IsValid(i) {
				if v := da.GetValueIndex(i); v >= 0 && v < len(b.used) && !b.used[v] {
					b.used[v] = true
					b.count++
				}
			}
		}
	}
	for _, b := range seen {
		total += b.count
	}
	// The dictionaries go back to back, unless that would outgrow the keys
	// (a page that is never cut, below a structural fixed-size list): then
	// equal values are merged (the column's distinct values fit its keys:
	// dictUnion).
	var merged map[string]uint64
	if uint64(total) > maxKeys(c.leaf.Field.Type) {
		merged = map[string]uint64{}
	}
	add := func(d arrow.Array, b dictBase) dictBase {
		seg := []structural.Segment{{Arr: d, Start: 0, End: d.Len()}}
		if merged == nil && b.count == d.Len() {
			b.base = n
			if vi.kind == values.KindVariable {
				offsets, vdata = gatherVariable(offsets, vdata, seg)
			} else {
				fixed = gatherFixed(fixed, seg, vi.bits/8)
			}
			n += d.Len()
			return b
		}
		var ioffs []uint64
		var idata, ifixed []byte
		if vi.kind == values.KindVariable {
			ioffs, idata = gatherVariable([]uint64{0}, nil, seg)
		} else {
			ifixed = gatherFixed(nil, seg, vi.bits/8)
		}
		b.remap = make([]uint64, d.Len())
		for j := range b.remap {
			if !b.used[j] {
				continue
			}
			var v []byte
			if vi.kind == values.KindVariable {
				v = idata[ioffs[j]:ioffs[j+1]]
			} else {
				w := vi.bits / 8
				v = ifixed[j*w : (j+1)*w]
			}
			k, ok := uint64(0), false
			if merged != nil {
				k, ok = merged[string(v)]
			}
			if !ok {
				k = uint64(n)
				if merged != nil {
					merged[string(v)] = k
				}
				n++
				if vi.kind == values.KindVariable {
					vdata = append(vdata, v...)
					offsets = append(offsets, uint64(len(vdata)))
				} else {
					fixed = append(fixed, v...)
				}
			}
			b.remap[j] = k
		}
		return b
	}
	added := make([]bool, len(seen))
	baseOf := func(d arrow.Array) dictBase {
		k := find(d.Data())
		if !added[k] {
			seen[k] = add(d, seen[k])
			added[k] = true
		}
		return seen[k]
	}
	var buf [8]byte
	for _, s := range segs {
		da := s.Arr.(*array.Dictionary)
		db := baseOf(da.Dictionary())
		for i := s.Start; i < s.End; i++ {
			k := uint64(0)
			if da.IsValid(i) {
				if db.remap != nil {
					k = db.remap[da.GetValueIndex(i)]
				} else {
					k = uint64(da.GetValueIndex(i) + db.base)
				}
			}
			binary.LittleEndian.PutUint64(buf[:], k)
			idx = append(idx, buf[:kw]...)
		}
	}
	pd := &pageDict{n: n}
	if vi.kind == values.KindVariable {
		pd.items = values.AppendVariableBlock(nil, vi.offBits, offsets, vdata)
		pd.encoding = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: values.FlatEncoding(vi.offBits)}}}
	} else {
		pd.items = fixed
		pd.encoding = values.FlatEncoding(vi.bits)
	}
	compressDictItems(c.opts, pd)
	return idx, pd
}

// autoDict decides whether a variable-width or fixed-width page (prof: its
// stats pass; plainBytes: its values' estimated size without a dictionary,
// selector.PlainBytes) is worth dictionary encoding (Lance's rule: at least
// 100 values, at most one distinct value in two, and the dictionary plus
// indices under 0.8 of the raw size; selector.DictionaryPays) and if so
// builds the page dictionary (first-occurrence order over every slot) and
// u32 indices.
func (c *pageEnc) autoDict(pv pageValues, prof *values.Profile, plainBytes int) (*pageDict, []byte, bool) {
	distinct := estimatedDistinct(prof)
	n := pv.n
	if n < 100 {
		return nil, nil, false
	}
	divisor, _ := c.opts.DictLimits()
	limit := min(n/divisor, 100000)
	bw := 0
	if pv.info.kind == values.KindFixed {
		bw = pv.info.bits / 8
	}
	idx := bulk.Make(4 * n)[:4*n] // (every value's id is written: internPage)
	tab, ok := internPage(pv, idx, limit, bw, distinct)
	if !ok {
		return nil, nil, false
	}
	if bw > 0 {
		tab.items = tab.appendRows(nil)
	}
	items, offsets := tab.items, tab.offsets
	d := tab.n
	if d == 0 {
		return nil, nil, false
	}
	vi := pv.info
	variable := vi.kind == values.KindVariable
	valueBytes := len(pv.fixed)
	if variable {
		valueBytes = int(pv.offsets[n] - pv.offsets[0])
	}
	if !selector.DictionaryPays(c.opts, variable, n, d, len(items), valueBytes, vi.offBits, plainBytes) {
		return nil, nil, false
	}
	block, venc := items, values.FlatEncoding(vi.bits)
	if variable {
		block = values.AppendVariableBlock(nil, vi.offBits, offsets, items)
		venc = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: values.FlatEncoding(vi.offBits)}}}
	}
	pd := &pageDict{n: d, items: block, encoding: venc}
	if vi.kind == values.KindVariable {
		pd.raw, pd.rawOffsets = items, offsets
	}
	c.compressItemsSoon(pd)
	return pd, idx, true
}

// internPage interns the n values of pv into a table of at most limit
// keys of width bw (0: variable), writing each value's id to idx (4 bytes
// a value); false when the values hold more than limit distinct keys. Null
// slots take part with their (empty) value, as in Lance: the first null
// adds "" (or zeros) to the dictionary and later nulls index it.
//
// A large page of few distinct values (distinct, the stats pass's
// estimate, at most 1/minValuesPerKey of them) is interned in pieces side
// by side, each into a table of its own; the pieces' keys are then interned
// in piece order into one table, which gives every key the id of its first
// occurrence in the page, as one pass would, and the pieces' ids are mapped
// to those. (With many distinct values the merge costs more than the
// pieces save: float64 with 50k distinct in 1M, 27.8 -> 29.4 ms on two
// cores; dictionary strings, 30.7 -> 25.3 ms.) A large page of many
// distinct 8-byte keys is interned by hash parts instead
// (internRows8ByHash).
func internPage(pv pageValues, idx []byte, limit, bw int, distinct uint64) (*dictTable, bool) {
	n := pv.n
	nulls := pv.nulls
	if len(nulls) < n {
		nulls = nil
	}
	if parts := runtime.GOMAXPROCS(0); bw == 8 && parts > 1 && n >= 2*par.MinValues && distinct > uint64(n)/minValuesPerKey {
		return internRows8ByHash(pv.fixed[:8*n], idx, limit, min(parts, maxInternParts), distinct)
	}
	cuts := []int{0, n}
	if n >= 2*par.MinValues && distinct <= uint64(n)/minValuesPerKey {
		cuts = par.Pieces(n, par.MinValues)
	}
	tabs := make([]*dictTable, len(cuts)-1)
	expect := 0
	if len(cuts) == 2 {
		expect = int(min(distinct, uint64(limit))) * 11 / 10 // (one table for the page: sized for the estimate)
	}
	err := par.EachPiece(cuts, func(j, lo, hi int) error {
		tab := newDictTableFor(limit, bw, expect)
		if !internRange(tab, pv, nulls, idx, lo, hi) {
			return errDictFull
		}
		tabs[j] = tab
		return nil
	})
	if err != nil {
		return nil, false
	}
	if len(tabs) == 1 {
		return tabs[0], true
	}
	g := newDictTable(limit, bw)
	remaps := make([][]uint32, len(tabs))
	for j, tab := range tabs {
		remaps[j] = make([]uint32, tab.n)
		for id := range tab.n {
			var gid uint32
			var ok bool
			if bw > 0 {
				gid, ok = g.internRow(pv.fixed, int(tab.rows[id]))
			} else {
				gid, ok = g.intern(tab.key(uint32(id)))
			}
			if !ok {
				return nil, false
			}
			remaps[j][id] = gid
		}
	}
	par.EachPiece(cuts, func(j, lo, hi int) error {
		remap := remaps[j]
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint32(idx[4*i:], remap[binary.LittleEndian.Uint32(idx[4*i:])])
		}
		return nil
	})
	return g, true
}

// estimatedDistinct is the stats pass's count of a page's distinct values
// (exact up to 256, then estimated), or the most there can be when it has
// none.
func estimatedDistinct(p *values.Profile) uint64 {
	switch {
	case p == nil:
	case p.Fixed != nil:
		return p.Fixed.Distinct
	case p.Var != nil:
		return p.Var.Distinct
	}
	return math.MaxUint64
}

// internRows8ByHash interns n 8-byte keys (src) as one pass over them
// would, with parts goroutines side by side, each interning the keys whose
// hash falls in its part: every goroutine reads every key but probes only a
// part-sized table, and no key is in two tables. A key's id is then its
// rank by first occurrence among all parts' keys (each part lists its own in
// that order, so the lists merge), and every index is mapped to it. A page
// of many distinct 8-byte keys (float64: 58k in 1M) has no pieces path:
// pieces' tables would each hold most of its keys.
//
// Null slots intern their gathered zeros, as one pass does. False when the
// parts hold more than limit keys together.
func internRows8ByHash(src, idx []byte, limit, parts int, distinct uint64) (*dictTable, bool) {
	n := len(src) / 8
	// A key's part: the top bits of a hash other than the tables' (so a
	// part's keys spread over its table); one part takes all (shift 64).
	const mix = 0xc2b2ae3d27d4eb4f
	shift := uint(64 - bits.Len(uint(parts-1)))
	var keys atomic.Int64 // all parts' keys so far, added keysStep at a time
	tabs := make([]*dictTable, parts)
	err := par.Each(parts, func(p int) error {
		// Sized for the estimate's share, 10% over (no doubling), its
		// slots holding the keys (internKeys8) from the start.
		tab := &dictTable{limit: limit, bw: 8, src: src, rows: make([]uint32, 0, 64)}
		tab.resize(startSize(limit, int(min(distinct, uint64(limit)))*11/10/parts))
		tabs[p] = tab
		counted := 0
		var ks [internBatch]uint64
		var rows [internBatch]uint32
		m := 0
		for i := 0; i < n; i++ {
			// Every key is written to the batch, which takes it only
			// when it is this part's: no branch on a coin toss.
			k := binary.LittleEndian.Uint64(src[8*i:])
			ks[m], rows[m] = k, uint32(i)
			if m += b2i(int((k*mix)>>shift) == p); m < internBatch {
				continue
			}
			if !tab.internKeys8(ks[:m], rows[:m], idx) {
				return errDictFull
			}
			m = 0
			if tab.n-counted >= keysStep {
				if keys.Add(int64(tab.n-counted)) > int64(limit) {
					return errDictFull
				}
				counted = tab.n
			}
		}
		if m > 0 && !tab.internKeys8(ks[:m], rows[:m], idx) {
			return errDictFull
		}
		if keys.Add(int64(tab.n-counted)) > int64(limit) {
			return errDictFull
		}
		return nil
	})
	if err != nil {
		return nil, false
	}
	// Merge the parts' first occurrences: global ids in page order.
	total := 0
	for _, tab := range tabs {
		total += tab.n
	}
	g := &dictTable{limit: limit, bw: 8, src: src, rows: make([]uint32, 0, total), n: total}
	remaps := make([][]uint32, parts)
	heads := make([]int, parts)
	for p, tab := range tabs {
		remaps[p] = make([]uint32, tab.n)
	}
	for len(g.rows) < total {
		best := -1
		for p, tab := range tabs {
			if heads[p] < tab.n && (best < 0 || tab.rows[heads[p]] < tabs[best].rows[heads[best]]) {
				best = p
			}
		}
		remaps[best][heads[best]] = uint32(len(g.rows))
		g.rows = append(g.rows, tabs[best].rows[heads[best]])
		heads[best]++
	}
	par.EachPiece(par.Pieces(n, par.MinValues), func(_, lo, hi int) error {
		for i := lo; i < hi; i++ {
			k := binary.LittleEndian.Uint64(src[8*i:])
			binary.LittleEndian.PutUint32(idx[4*i:], remaps[(k*mix)>>shift][binary.LittleEndian.Uint32(idx[4*i:])])
		}
		return nil
	})
	return g, true
}

// keysStep is how many new keys a part of internRows8ByHash finds before
// it adds them to the count of all parts' (one shared counter per key
// costs a contended cache line: 10% of a float64 write).
const keysStep = 1024

// maxInternParts bounds the parts of internRows8ByHash: every part reads
// every key.
const maxInternParts = 8

// minValuesPerKey is the fewest values a distinct key of a page interned
// in pieces stands for.
const minValuesPerKey = 64

// errDictFull stops the pieces of internPage when one outgrows the limit.
var errDictFull = errors.New("planar/writer: page dictionary past its limit")

// internRange interns values [lo, hi) of pv into tab, writing their ids
// to idx; false when tab reaches its limit. nulls is pv.nulls, or nil when
// it does not cover the page.
func internRange(tab *dictTable, pv pageValues, nulls []bool, idx []byte, lo, hi int) bool {
	if tab.bw == 8 || tab.bw == 4 {
		return internRange8(tab, pv.fixed, idx, lo, hi)
	}
	// A null slot's value is zeros (fixed) or empty (variable) as gathered:
	// its key is looked up once, at the first null, and reused.
	nullKey, haveNull := uint32(0), false
	data, base, next := pv.partAt(lo) // (strings: where value i lies)
	for i := lo; i < hi; i++ {
		if nulls != nil && nulls[i] && haveNull {
			binary.LittleEndian.PutUint32(idx[4*i:], nullKey)
			continue
		}
		var k uint32
		var ok bool
		if tab.bw > 0 {
			k, ok = tab.internRow(pv.fixed, i)
		} else {
			if i >= next {
				data, base, next = pv.partAt(i)
			}
			k, ok = tab.intern(data[pv.offsets[i]-base : pv.offsets[i+1]-base])
		}
		if !ok {
			return false
		}
		if nulls != nil && nulls[i] {
			nullKey, haveNull = k, true
		}
		binary.LittleEndian.PutUint32(idx[4*i:], k)
	}
	return true
}

// internRange8 is internRange of 8- or 4-byte values (the table's width)
// as words, a batch of keys at a time (a null slot's zeros are a key like
// the others: the same id).
func internRange8(tab *dictTable, src, idx []byte, lo, hi int) bool {
	tab.src = src
	if tab.rows == nil {
		tab.rows = make([]uint32, 0, 64)
	}
	var ks [internBatch]uint64
	var rows [internBatch]uint32
	for i := lo; i < hi; i += internBatch {
		m := min(internBatch, hi-i)
		for b := range m {
			ks[b], rows[b] = wordKey(src, tab.bw, i+b), uint32(i+b)
		}
		if !tab.internKeys8(ks[:m], rows[:m], idx) {
			return false
		}
	}
	return true
}

// compressItemsSoon compresses the items of a page dictionary built from
// the page's values (compressDictItems), large items in the background
// while the indices are measured and encoded (a float64 page of 58k
// distinct values: 1.9 ms of LZ4).
//
// The background work holds the column's options, not the encoder: the
// page may be encoded without the dictionary, and the encoder serve
// another page, before it ends.
func (c *pageEnc) compressItemsSoon(pd *pageDict) {
	opts := c.opts
	if len(pd.items) < minBackgroundItems {
		compressDictItems(opts, pd)
		return
	}
	pd.compressed = make(chan struct{})
	go func() {
		compressDictItems(opts, pd)
		close(pd.compressed)
	}()
}

// minBackgroundItems is the size of page dictionary items from which
// compressItemsSoon compresses them in the background.
const minBackgroundItems = 64 << 10

// ready waits until the items and their encoding are final.
func (pd *pageDict) ready() {
	if pd.compressed != nil {
		<-pd.compressed
	}
}

// compressDictItems compresses page dictionary items like Lance 14: LZ4
// (or the scheme the column asks for), always under the lance policy, when
// it shrinks them under the cost policy.
func compressDictItems(opts selector.Options, pd *pageDict) {
	scheme, level := values.SchemeLZ4, 0
	switch opts.DictItems {
	case selector.CompressionNone:
		return
	case selector.CompressionZstd:
		scheme, level = values.SchemeZstd, opts.Level
	}
	always := opts.DictItems != selector.CompressionAuto || opts.Policy == selector.PolicyLance
	if z, err := values.AppendCompressed(nil, scheme, level, pd.items); err == nil && (len(z) < len(pd.items) || always) {
		pd.items = z
		pd.encoding = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_General{General: &enc21pb.General{
			Compression: &enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme(scheme)},
			Values:      pd.encoding,
		}}}
	}
}

// fslSampleBlocks, fslSampleMax and fslSampleMin shape Lance's sample of a
// page's rows before a dictionary is built: up to 4096 rows in 32 evenly
// spread runs, used when it has at least 1024 rows.
const (
	fslSampleBlocks = 32
	fslSampleMax    = 4096
	fslSampleMin    = 1024
	// fslSampleUnique: a sample at least this unique builds no dictionary.
	fslSampleUnique = 0.98
)

// autoDictFSL builds a page dictionary of whole fixed-size-list rows (each
// row as its zipped record: validity bytes, then the items), as Lance 2.3
// does: at least 100 rows, a sample of rows not almost all distinct, at most
// rows/divisor (and 100,000) distinct rows, and 4-byte indices plus items
// within the size ratio of the records, scaled by fallback/rows (the rows a
// page stores without the dictionary: only the valid ones when it zips
// them). It returns the dictionary and the u32 index of every row.
func (c *pageEnc) autoDictFSL(pv pageValues, fallback int) (*pageDict, []byte, bool) {
	n := pv.n
	if n < 100 || fallback <= 0 || pv.info.bits%8 != 0 {
		// (Lance keys rows only over byte-aligned items: no booleans.)
		return nil, nil, false
	}
	w, recs := c.zipRecords(pv)
	if w == 0 || len(recs) != n*w {
		return nil, nil, false
	}
	divisor, ratio := c.opts.DictLimits()
	limit := min(n/divisor, 100000)
	maxEnc := int(uint64(float64(n*w)*ratio) * uint64(fallback) / uint64(n))
	unique := fslSampleUniqueRatio(recs, w, n)
	if limit == 0 || 4*n > maxEnc || unique >= fslSampleUnique {
		return nil, nil, false
	}
	if c.opts.Policy == selector.PolicyCost && unique*float64(n) > 0.9*float64(limit) {
		// The sample says the rows are too varied for the cardinality
		// limit: the cost policy does not hash every row to find out.
		return nil, nil, false
	}
	tab := newDictTable(limit, w)
	idx := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		k, ok := tab.internRow(recs, i)
		if !ok || tab.n*w+4*n > maxEnc {
			return nil, nil, false
		}
		binary.LittleEndian.PutUint32(idx[4*i:], k)
	}
	items := tab.appendRows(nil)
	enc, _ := c.plainEncoding(pv)
	pd := &pageDict{n: tab.n, items: items, encoding: enc}
	c.compressItemsSoon(pd)
	return pd, idx, true
}

// fslSampleUniqueRatio is the share of distinct rows among Lance's sample
// of a page's records (0 when the page is too small to sample).
func fslSampleUniqueRatio(recs []byte, w, n int) float64 {
	count := min(n, fslSampleMax)
	if count < fslSampleMin {
		return 0
	}
	blocks := min(fslSampleBlocks, count, n)
	per := max(count/blocks, 1)
	tab := newDictTable(count, w)
	total := 0
	for b := 0; b < blocks; b++ {
		start, next := b*n/blocks, min((b+1)*n/blocks, n)
		for i := start; i < start+min(per, next-start); i++ {
			tab.internRow(recs, i)
			total++
		}
	}
	if total < fslSampleMin {
		return 0
	}
	return float64(tab.n) / float64(total)
}
