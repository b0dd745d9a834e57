package writer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/stats"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// encode runs the page's trials as the selector lists them (a
// selector.Ladder) and returns the one it picks.
func (c *pageEnc) encode(d structural.Dense, segs []structural.Segment, f Format) (encoded, error) {
	pv := c.gather(segs, d.NumVisible, len(d.Layers) == 1)
	if pv.err != nil {
		return encoded{}, pv.err
	}
	maskAncestorNulls(&pv, d)
	if pv.compact {
		sp := c.page(d, pv, f)
		if enc, ok, err := c.runLadder(d, pv, sp, selector.NewLadder(sp, c.opts, true), f); ok {
			return enc, err
		}
		// Only the valid rows were gathered, for a plan that did not
		// come (or did not encode): gather every slot.
		pv = c.gather(segs, d.NumVisible, false)
		maskAncestorNulls(&pv, d)
	}
	sp := c.page(d, pv, f)
	enc, _, err := c.runLadder(d, pv, sp, selector.NewLadder(sp, c.opts, false), f)
	return enc, err
}

// runLadder encodes each trial the ladder lists and returns the one it
// picks, its reason completed; ok is false when it picks none.
func (c *pageEnc) runLadder(d structural.Dense, pv pageValues, sp selector.Page, l *selector.Ladder, f Format) (encoded, bool, error) {
	var encs []encoded
	var errs []error
	kept, swapped := 0, false
	for t, ok := l.Next(); ok; t, ok = l.Next() {
		// The trials before point into the scratch this one reuses.
		for ; kept < len(encs); kept++ {
			if errs[kept] == nil {
				swapped = c.keepBuffers(&encs[kept], pv.fixed, kept == 0) || swapped
			}
		}
		c.deferZip = deferZipTrials && t.Plan.TrySparse && t.Plan.Structure == selector.Dense
		enc, err := c.encodePlan(d, pv, sp, t.Plan, f, t.Dict)
		c.deferZip = false
		if errors.Is(err, errNeedLevels) {
			return encoded{}, true, err // (no trial may win without the levels)
		}
		encs, errs = append(encs, enc), append(errs, err)
		l.Record(measure(enc, err, d.NumVisible, sp.ValidLeaves))
	}
	i, why := l.Pick()
	if swapped && i != 0 {
		// The first trial's data scratch, which it kept, is free again:
		// the next page writes there, not into a second one.
		c.data, c.spareData = c.spareData, c.data
	}
	if i < 0 {
		return encoded{}, false, nil
	}
	encs[i].plan.Reason += why
	if e := &encs[i]; e.later != nil && errs[i] == nil {
		// The kept trial's records, written now into the data scratch
		// (the trials after it, dropped, may have used it).
		bufs, err := e.later()
		e.bufs, e.later, e.laterLens = bufs, nil, nil
		if testHookDeferred != nil {
			testHookDeferred(true)
		}
		return *e, true, err
	}
	return encs[i], true, errs[i]
}

// keepBuffers keeps an encoded page's buffers from the scratch memory that
// the next trial reuses, mostly by copying them. A buffer that is the
// page's gathered values as they are (in: records zipped without control
// words) stays, as trials only read those. With swap (the ladder's first
// trial), a buffer that starts the data scratch stays too, and the next
// trials write into the spare one: a page that weighs two cells copies
// neither's values.
func (c *pageEnc) keepBuffers(enc *encoded, in []byte, swap bool) (swapped bool) {
	joined := -1
	if enc.parts != nil {
		// Chunk heads in the data scratch, with the values: joined into
		// a buffer of their own.
		n := 0
		for _, p := range enc.parts {
			n += len(p)
		}
		b := make([]byte, 0, n)
		for _, p := range enc.parts {
			b = append(b, p...)
		}
		enc.bufs[1], enc.parts, joined = b, nil, 1
	}
	for i, b := range enc.bufs {
		switch {
		case len(b) == 0, i == joined:
			continue
		case unsafe.SliceData(b) == unsafe.SliceData(in):
			continue
		case swap && !swapped && unsafe.SliceData(b) == unsafe.SliceData(c.data):
			swapped = true
			continue
		}
		enc.bufs[i] = slices.Clone(b)
	}
	if swapped {
		c.data, c.spareData = c.spareData, c.data
	}
	return swapped
}

// measure is what the selector compares of an encoded page (rows: its leaf
// slots, stored: those holding a value).
func measure(enc encoded, err error, rows, stored int) selector.Measured {
	vb, records := 0, 0
	switch {
	case enc.later != nil:
		vb = enc.laterLens[0]
	case len(enc.bufs) > 0:
		vb = len(enc.bufs[0])
	}
	if z := enc.planar.GetValues().GetZipped(); z != nil {
		records = int(z.NumItems)
	}
	return selector.Measured{
		Bytes:         storedBytes(enc),
		TakeBytes:     selector.TakeBytes(enc.plan, vb, records, rows, stored),
		Failed:        err != nil,
		TooManyLevels: errors.Is(err, errTooManyLevels),
	}
}

// storedBytes is what an encoded page adds to the file: its buffers and
// its description (which holds FSST symbol tables and inline scalars).
func storedBytes(enc encoded) int {
	n := 0
	for _, b := range enc.bufs {
		n += len(b)
	}
	for _, l := range enc.laterLens {
		n += l
	}
	for _, b := range enc.parts {
		n += len(b)
	}
	if enc.planar != nil {
		n += proto.Size(enc.planar)
	}
	if enc.layout != nil {
		n += proto.Size(enc.layout)
	}
	return n
}

// page describes one page to the selector: its structure facts and, from
// the stats pass, its values.
func (c *pageEnc) page(d structural.Dense, pv pageValues, f Format) selector.Page {
	sp := selector.Page{
		Degenerate:     structural.IsDegenerate(d.Layers),
		SingleNullable: len(d.Layers) == 1 && d.Layers[0] == structural.NullableItem,
		NumVisible:     d.NumVisible,
		AllNull:        pv.allNull || pv.info.kind == values.KindNull,
		CanZip:         pv.info.kind != values.KindBool && pv.info.kind != values.KindNull && pv.info.kind != values.KindDict && pv.info.rowBits()%8 == 0,
		HasLevels:      d.Rep != nil || d.Def != nil || d.LevelsOmitted,
		SparseOnly:     c.sparse,
		NumRows:        d.NumRows / max(c.fslScale, 1),
		NumLevels:      d.NumItems,
		HasLists:       c.hasLists,
		HasFSLLayer:    c.fslScale > 1,
		NoLengthStat:   pv.info.kind == values.KindDict || (pv.info.kind == values.KindFSL && pv.info.bits%8 != 0),
		LanceStructure: c.fslScale > 1,
	}
	if sp.HasLists && f.planarMetadata() {
		// (A page whose levels were left out is one over the budget.)
		sp.OverBudget = d.LevelsOmitted || structural.OverLevelBudget(d, sp.HasFSLLayer)
	}
	switch {
	case sp.AllNull:
	case pv.counted && pv.offsets == nil:
		sp.ValidLeaves = pv.n - pv.nullCount
	case pv.compact:
		sp.ValidLeaves = pv.n - pv.nullCount
		sp.ValidBytes = int(pv.offsets[sp.ValidLeaves] - pv.offsets[0])
	case pv.counted && pv.nullCount == 0:
		sp.ValidLeaves = pv.n
		sp.ValidBytes = int(pv.offsets[pv.n] - pv.offsets[0])
	default:
		sp.ValidLeaves, sp.ValidBytes = validCounts(pv.nulls[:pv.n], pv.offsets)
	}
	if !sp.AllNull && pv.offsets == nil {
		sp.ValidBytes = sp.ValidLeaves * (pv.info.rowBits() / 8)
	}
	switch pv.info.kind {
	case values.KindVariable, values.KindVarPacked:
		sp.MaxValueBytes = maxLen(pv.offsets)
	case values.KindNull, values.KindDict:
	default:
		sp.MaxValueBytes = pv.info.rowBits() / 8
		sp.Scalar, sp.NullFree = c.scalar(pv)
	}
	c.describeValues(&sp, pv)
	return sp
}

// validCounts counts the slots not null and, with offsets (variable-width
// values), their bytes.
func validCounts(nulls []bool, offsets []uint64) (leaves, bytes int) {
	if offsets == nil {
		return len(nulls) - bitmap.CountTrue(nulls), 0
	}
	for i, null := range nulls {
		if !null {
			leaves++
			bytes += int(offsets[i+1] - offsets[i])
		}
	}
	return leaves, bytes
}

// encodePlan executes a plan: the page dictionary the selector admits
// first (dict: one may be built), then the cell.
func (c *pageEnc) encodePlan(d structural.Dense, pv pageValues, sp selector.Page, plan selector.Plan, f Format, dict bool) (encoded, error) {
	if !dict {
		return c.encodeCell(d, pv, sp, plan, f)
	}
	switch kind, rows := selector.PageDictionary(sp, plan, c.opts); kind {
	case selector.RowDict:
		if pd, idx, ok := c.autoDictFSL(pv, rows); ok {
			return c.encodeDictPage(d, pv, sp, plan, pd, idx, f)
		}
	case selector.ValueDict:
		if pd, idx, ok := c.autoDict(pv, sp.Profile, selector.PlainBytes(sp, plan)); ok {
			return c.encodeValueDict(d, pv, sp, plan, pd, idx, f)
		}
	}
	return c.encodeCell(d, pv, sp, plan, f)
}

// encodeValueDict encodes a page through the value dictionary it was
// found to have, where the selector places it: indexed, or chunked indices
// (measured, when the selector asks, against the stored values zipped).
func (c *pageEnc) encodeValueDict(d structural.Dense, pv pageValues, sp selector.Page, plan selector.Plan, pd *pageDict, idx []byte, f Format) (encoded, error) {
	placed, rival := selector.PlaceDictionary(sp, plan, c.opts, len(pd.raw), len(idx))
	if placed.Values == selector.Indexed {
		enc := encoded{plan: placed}
		return enc, c.encodeSparseIndexed(d, idx, pd, &enc)
	}
	if rival == nil {
		return c.encodeDictPage(d, pv, sp, placed, pd, idx, f)
	}
	z, err := c.encodePlan(d, pv, sp, *rival, f, false)
	if err != nil {
		return z, err
	}
	c.keepBuffers(&z, pv.fixed, false)
	ch, err := c.encodeDictPage(d, pv, sp, placed, pd, idx, f)
	rows := d.NumVisible
	won, why := selector.PickDictionary(measure(z, nil, rows, sp.ValidLeaves), measure(ch, err, rows, sp.ValidLeaves))
	if !won {
		z.plan.Reason += why
		return z, nil
	}
	return ch, nil
}

// encodeDictPage encodes a page through its page dictionary: the chunks
// hold u32 indices, the page dictionary the distinct values. The column's
// leaf info is switched to the dictionary form for this page only.
func (c *pageEnc) encodeDictPage(d structural.Dense, pv pageValues, sp selector.Page, plan selector.Plan, pd *pageDict, idx []byte, f Format) (encoded, error) {
	saved := pv.info
	pv.info = leafInfo{kind: values.KindDict, bits: 32, dict: &saved}
	if c.opts.Policy == selector.PolicyCost && (!pv.counted || pv.nullCount > 0) {
		// A null slot's index is never read: the cost policy repeats the
		// index before it, so nulls extend runs instead of breaking them.
		// (A page counted without nulls has none to fill: a float64 page
		// of 1M values spent 0.8 ms finding that out.)
		idx = fillNullIndices(idx, pv.nulls[:pv.n])
	}
	pv.fixed, pv.dict, pv.offsets, pv.parts = idx, pd, nil, nil
	c.describeValues(&sp, pv)
	sp.MaxValueBytes, sp.CanZip = 4, false
	return c.encodeCell(d, pv, sp, selector.IndexPlan(sp, plan, c.opts, pd.n), f)
}

// codedScratch holds the memory pages were FSST-coded into (a
// *values.Block's Data and Offsets), for the next page to code into: a
// page's coded values are scratch once its cell is encoded, and memory
// the process has touched before costs no page faults (a fresh write of
// the URL class faulted in 14,500 pages, a fifth of them coded values).
var codedScratch sync.Pool

// holds reports whether a buffer of enc lies in b's memory.
func holds(enc encoded, b []byte) bool {
	if cap(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(cap(b))
	in := func(x []byte) bool {
		if cap(x) == 0 {
			return false
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
		return p < hi && p+uintptr(cap(x)) > lo
	}
	return slices.ContainsFunc(enc.bufs, in) || slices.ContainsFunc(enc.parts, in)
}

// encodeCell executes a plan's cell over the page's values (FSST coding
// them first when the plan's codec asks for it). Dense chunks holding too
// many levels are encoded again as selector.Fallback says.
func (c *pageEnc) encodeCell(d structural.Dense, pv pageValues, sp selector.Page, plan selector.Plan, f Format) (enc encoded, err error) {
	sparse := plan.Structure == selector.Sparse
	if d.LevelsOmitted && !sparse {
		return encoded{plan: plan}, errNeedLevels
	}
	if fc, ok := fsstOf(plan.Codec); !ok {
		// Every codec but FSST takes a page's values from one buffer.
		c.vals = pv.materialize(c.vals)
	} else {
		// Code the page once, so chunks are cut on coded sizes, into
		// scratch an earlier page coded into (codedScratch).
		sc, _ := codedScratch.Get().(*values.Block)
		if sc == nil {
			sc = &values.Block{}
		}
		var coded values.Block
		if pv.parts != nil {
			coded = fc.CodePartsInto(*sc, pv.offsets[:pv.stored()+1], pv.parts.data, pv.parts.firsts)
			pv.parts = nil
		} else {
			coded = fc.CodeInto(*sc, values.Block{N: pv.stored(), Data: pv.fixed, Offsets: pv.offsets})
		}
		pv.fixed, pv.offsets = coded.Data, coded.Offsets
		pv.fsst = true
		defer func() {
			// Back to the pool unless the page's buffers hold it.
			if !holds(enc, coded.Data) {
				*sc = values.Block{Data: coded.Data[:0], Offsets: coded.Offsets[:0]}
				codedScratch.Put(sc)
			}
		}()
	}
	enc = encoded{plan: plan}
	structured := sparse || d.Rep != nil || d.Def != nil
	switch plan.Values {
	case selector.None:
		if structured {
			err = c.encodeStructuredConstant(d, nil, f, &enc)
			break
		}
		enc.layout = constantLayout(d.Layers, nil)
		enc.desc = "no values"
	case selector.Constant:
		if structured {
			err = c.encodeStructuredConstant(d, sp.Scalar, f, &enc)
			break
		}
		enc.layout = constantLayout(d.Layers, sp.Scalar)
		enc.desc = fmt.Sprintf("scalar %d bytes", len(sp.Scalar))
	case selector.Zipped:
		if sparse {
			err = c.encodeSparseZipped(d, pv, &enc)
			break
		}
		err = c.encodeZipped(d, pv, &enc)
	case selector.Indexed:
		err = fmt.Errorf("indexed values without a page dictionary")
	default:
		if sparse {
			err = c.encodeSparseChunked(d, pv, &enc)
			break
		}
		err = c.encodeChunked(d, pv, &enc)
		for errors.Is(err, errTooManyLevels) {
			next, ok := selector.Fallback(enc.plan, sp)
			if !ok {
				break
			}
			enc = encoded{plan: next}
			if next.Values == selector.Zipped {
				err = c.encodeZipped(d, pv, &enc)
			} else {
				err = c.encodeChunked(d, pv, &enc)
			}
		}
	}
	return enc, err
}

// describeValues fills the selector's view of the page's values: their kind
// and the stats pass over them (once per page), plus a sample for codecs
// estimated by trial.
func (c *pageEnc) describeValues(sp *selector.Page, pv pageValues) {
	sp.Bits, sp.Float, sp.Dims = pv.info.bits, pv.info.float, pv.info.dims
	sp.ItemValidity = sp.ItemValidity[:0]
	for _, v := range pv.itemValid {
		sp.ItemValidity = append(sp.ItemValidity, v != nil)
	}
	sp.Format23 = c.cfg.format.planarMetadata()
	sp.Fsst = nil
	prof := &values.Profile{N: pv.n, Bits: pv.info.rowBits()}
	sp.Profile = prof
	sample := min(pv.n, values.SampleValues)
	// Dictionary indices are fixed-width values to the selector.
	sp.Kind, sp.DictIndices = pv.info.kind, pv.info.kind == values.KindDict
	switch pv.info.kind {
	case values.KindFixed, values.KindDict:
		sp.Kind = values.KindFixed
		// (The sample first: whether the pass counts distinct 32-bit
		// values depends on it.)
		prof.Sample = c.spreadSample(pv, sample)
		if bits := pv.info.packBits(); bits > 0 {
			var st stats.FixedStats
			if selector.DistinctNeeded(*sp, c.opts) {
				st = stats.FixedUpTo(pv.fixed, bits, pv.n, pv.nulls, selector.DistinctBound(pv.n, c.opts))
			} else {
				st = stats.FixedOnly(pv.fixed, bits, pv.n, pv.nulls)
			}
			prof.Fixed = &st
			// RLE candidates count their entries exactly over the page.
			prof.Data = values.Block{Bits: bits, N: pv.n, Data: pv.fixed}
		}
	case values.KindBool:
		prof.Sample = values.Block{Bits: 1, N: sample, Data: pv.fixed[:(sample+7)/8]}
	case values.KindPacked:
		sp.PackedBits = pv.info.fields
	case values.KindVariable:
		prof.Bits, prof.OffBits = 0, pv.info.offBits
		nulls := pv.nulls
		if pv.compact {
			nulls = nil
		}
		var st stats.VarStats
		if pv.parts != nil {
			st = stats.VariableParts(pv.offsets, pv.parts.data, pv.parts.firsts, nulls)
		} else {
			st = stats.Variable(pv.offsets, pv.fixed, nulls)
		}
		if pv.compact {
			// The stored values are the page's non-null ones: every
			// measure but the counts is the page's.
			st.N, st.Nulls = pv.n, pv.nullCount
		}
		prof.Var = &st
		prof.Sample = c.spreadSample(pv, sample)
		if selector.TrainFsst(prof, pv.info.utf8, c.opts) {
			sp.Fsst = c.trainFsst(pv)
		}
	}
}

// spreadSample copies n values of the page, taken as four runs spread over
// it, so trial encodings see more than the page's first values.
func (c *pageEnc) spreadSample(pv pageValues, n int) values.Block {
	const parts = 4
	if n == pv.n || n < parts {
		if pv.info.kind == values.KindVariable && (pv.compact || pv.parts != nil) {
			data, offs := pv.appendSlots(c.sampleData[:0], append(c.sampleOffs[:0], 0), 0, n, 0)
			c.sampleData, c.sampleOffs = data, offs
			return values.Block{N: n, Data: data, Offsets: offs}
		}
		if pv.info.kind == values.KindVariable {
			return values.Block{N: n, Data: pv.fixed, Offsets: pv.offsets[:n+1]}
		}
		return values.Block{Bits: pv.info.bits, N: n, Data: pv.fixed[:n*pv.info.bits/8]}
	}
	per := n / parts
	// Dictionary indices count up in first-seen order, so the page's first
	// values have the smallest: the cost policy samples after them (their
	// run made trial compressions of float64 indices 20% optimistic).
	skipFirst := pv.info.kind == values.KindDict && c.opts.Policy == selector.PolicyCost
	out := values.Block{Bits: pv.info.bits, N: per * parts}
	if pv.info.kind == values.KindVariable {
		out.Bits, out.Offsets = 0, append(c.sampleOffs[:0], 0)
	}
	data := c.sampleData[:0]
	from, at := 0, 0 // a slot before the next run and its value's index
	for k := 0; k < parts; k++ {
		start := k * (pv.n - per) / (parts - 1)
		if skipFirst {
			start = (k + 1) * (pv.n - per) / parts
		}
		if pv.info.kind == values.KindVariable {
			from, at = start, pv.valueAt(from, at, start)
			data, out.Offsets = pv.appendSlots(data, out.Offsets, start, start+per, at)
			continue
		}
		bw := pv.info.bits / 8
		data = append(data, pv.fixed[start*bw:(start+per)*bw]...)
	}
	out.Data = data
	c.sampleData, c.sampleOffs = data, out.Offsets
	return out
}

// trainFsst builds a symbol table from values spread over the page, up to
// the trainer's byte budget (runs of consecutive values from evenly spaced
// places, so both local and page-wide repetition is seen).
func (c *pageEnc) trainFsst(pv pageValues) *values.FsstTable {
	n, m := pv.n, pv.stored()
	total := int(pv.offsets[m] - pv.offsets[0])
	sample := make([][]byte, 0, 1024)
	if total <= values.FsstTrainBytes {
		for i := 0; i < m; i++ {
			if pv.offsets[i+1] > pv.offsets[i] { // (empty values, null slots among them, teach nothing)
				sample = append(sample, pv.value(i))
			}
		}
		return values.BuildFsstTable(sample)
	}
	const runs = 64
	budget := values.FsstTrainBytes / runs
	from, at := 0, 0 // a slot before the next run and its value's index
	for k := 0; k < runs; k++ {
		from, at = k*n/runs, pv.valueAt(from, at, k*n/runs)
		got := 0
		// (The values from a slot on, null slots' empty ones left out,
		// are those of a compact page from the slot's index on.)
		for i := at; i < m && got < budget; i++ {
			if v := pv.value(i); len(v) > 0 {
				sample = append(sample, v)
				got += len(v)
			}
		}
	}
	return values.BuildFsstTable(sample)
}

// errNeedLevels reports a dense cell planned for a page whose levels were
// left out (structural.ListShell): the page is encoded again from its
// levels.
var errNeedLevels = errors.New("planar/writer: a dense cell for a page built without levels")

// errTooManyLevels reports a chunk that would need more than 65535 levels.
var errTooManyLevels = errors.New("planar/writer: more than 65535 levels in one chunk")

func constantLayout(layers []structural.Layer, scalar []byte) *enc21pb.PageLayout {
	return &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{Layers: layers, InlineValue: scalar}}}
}

// plainEncoding is the uncompressed description of the page's values (the
// per-value codec of zipped pages) and its chunk buffer count.
func (c *pageEnc) plainEncoding(pv pageValues) (*enc21pb.CompressiveEncoding, int) {
	switch pv.info.kind {
	case values.KindVariable:
		return values.VariableCodec{OffBits: pv.info.offBits}.Encoding(), 1
	case values.KindFSL:
		var inner values.Codec = values.FlatCodec{Bits: pv.info.bits}
		for k := len(pv.info.dims) - 1; k >= 0; k-- {
			inner = values.FslCodec{Dim: pv.info.dims[k], HasValidity: pv.itemValid != nil && pv.itemValid[k] != nil, Values: inner}
		}
		return inner.Encoding(), inner.NumBuffers()
	}
	return values.FlatEncoding(pv.info.bits), 1
}

// packBits is the value width bit packing applies to (0 if none).
func (l leafInfo) packBits() int {
	switch l.kind {
	case values.KindFixed, values.KindDict:
		switch l.bits {
		case 8, 16, 32, 64:
			return l.bits
		}
	}
	return 0
}

// fillNullIndices gives every null slot the u32 index of the slot before it
// (the first slots, if null, that of the first valid slot), in place.
func fillNullIndices(idx []byte, nulls []bool) []byte {
	first := slices.Index(nulls, false)
	if first < 0 {
		return idx
	}
	prev := binary.LittleEndian.Uint32(idx[4*first:])
	for i, null := range nulls {
		if null {
			binary.LittleEndian.PutUint32(idx[4*i:], prev)
		} else {
			prev = binary.LittleEndian.Uint32(idx[4*i:])
		}
	}
	return idx
}
