package writer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/stats"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// pageValues is the visible leaf values of one page, gathered.
type pageValues struct {
	info      leafInfo // how this page's values are laid out (the column's, or its dictionary form)
	n         int
	fixed     []byte   // kindFixed / kindFSL data, kindBool bitmap
	offsets   []uint64 // kindVariable: n+1
	itemValid [][]byte // kindFSL: per list layer (outer first), its children's validity when stored (nil: none stored)
	dict      *pageDict
	fsst      bool   // kindVariable: the values are FSST coded (with the plan's table)
	nulls     []bool // visible leaf slots holding no value: null, or under a null ancestor
	allNull   bool
	err       error // gathering failed (records that cannot be encoded)
}

func (c *column) gather(segs []structural.Segment, n int) pageValues {
	pv := pageValues{n: n, info: c.info}
	nulls := 0
	if cap(c.nulls) < n {
		c.nulls = make([]bool, 0, n)
	}
	pv.nulls = c.nulls[:0]
	for _, s := range segs {
		cnt := s.End - s.Start
		at := len(pv.nulls)
		pv.nulls = slices.Grow(pv.nulls, cnt)[:at+cnt]
		bm := s.Arr.NullBitmapBytes()
		if len(bm) == 0 || s.Arr.NullN() == 0 {
			clear(pv.nulls[at:])
			continue
		}
		off := s.Arr.Data().Offset()
		for i := 0; i < cnt; i++ {
			null := !bitutil.BitIsSet(bm, off+s.Start+i)
			pv.nulls[at+i] = null
			if null {
				nulls++
			}
		}
	}
	pv.allNull = nulls == n
	switch c.info.kind {
	case kindFixed:
		if need := n * c.info.bits / 8; cap(c.vals) < need {
			c.vals = make([]byte, 0, need)
		}
		pv.fixed = gatherFixed(c.vals[:0], segs, c.info.bits/8)
	case kindBool:
		pv.fixed, _ = gatherBits(c.vals[:0], 0, segs)
	case kindVariable:
		pv.offsets = append(c.offsets[:0], 0)
		pv.offsets, pv.fixed = gatherVariable(pv.offsets, c.vals[:0], segs)
	case kindFSL:
		// Lance stores a layer's validity whenever its children have
		// nulls; the cost policy only when such a null is visible.
		pv.fixed, pv.itemValid = gatherFSL(c.vals[:0], nil, segs, c.info, c.opts.Policy == selector.PolicyCost)
		if !slices.ContainsFunc(pv.itemValid, func(b []byte) bool { return b != nil }) {
			pv.itemValid = nil
		}
	case kindDict:
		pv.fixed, pv.dict = c.gatherDict(segs)
	case kindPacked:
		if need := n * c.info.bits / 8; cap(c.vals) < need {
			c.vals = make([]byte, 0, need)
		}
		pv.fixed = gatherPacked(c.vals[:0], segs, c.info)
	case kindVarPacked:
		var err error
		pv.fixed, pv.offsets, err = gatherVarPacked(c.vals[:0], c.offsets[:0], segs, c.info, n)
		if err != nil {
			pv.err = err
		}
	}
	c.vals = pv.fixed
	c.offsets = pv.offsets
	c.nulls = pv.nulls
	return pv
}

// scalar returns the inline constant of a page whose non-null visible values
// are all equal (at least one; fixed-width values of at most 32 bytes), or
// nil, and whether no visible value is null.
func (c *column) scalar(pv pageValues) ([]byte, bool) {
	nullFree := true
	first := -1
	for i, null := range pv.nulls[:pv.n] {
		if null {
			nullFree = false
		} else if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return nil, nullFree
	}
	switch pv.info.kind {
	case kindFixed:
		w := pv.info.bits / 8
		if w > 32 {
			return nil, nullFree
		}
		v := pv.fixed[first*w : (first+1)*w]
		for i := first + 1; i < pv.n; i++ {
			if !pv.nulls[i] && !bytes.Equal(pv.fixed[i*w:(i+1)*w], v) {
				return nil, nullFree
			}
		}
		return append([]byte(nil), v...), nullFree
	case kindBool:
		v := (pv.fixed[first/8] >> (first % 8)) & 1
		for i := first + 1; i < pv.n; i++ {
			if !pv.nulls[i] && (pv.fixed[i/8]>>(i%8))&1 != v {
				return nil, nullFree
			}
		}
		return []byte{v}, nullFree
	}
	return nil, nullFree
}

// maskAncestorNulls marks as null the visible slots that a null ancestor
// hides although the leaf array holds a value there (Arrow leaves the
// children of a null struct slot undefined): such a value is not data, and
// must not make a page constant or count as a value.
func maskAncestorNulls(pv *pageValues, d structural.Dense) {
	outer := false
	for _, l := range d.Layers[min(1, len(d.Layers)):] {
		outer = outer || structural.DefLevels(l) > 0
	}
	if d.Def == nil || !outer || len(d.Def) < pv.n || len(pv.nulls) < pv.n {
		return
	}
	maxVis := uint16(structural.MaxVisibleDef(d.Layers))
	k, nulls := 0, 0
	var masked []int
	for _, def := range d.Def {
		if def > maxVis {
			continue // a null or empty list: no slot
		}
		if k == pv.n {
			return
		}
		if def > 0 && !pv.nulls[k] {
			pv.nulls[k] = true
			masked = append(masked, k)
		}
		if pv.nulls[k] {
			nulls++
		}
		k++
	}
	pv.allNull = nulls == pv.n
	scrubMasked(pv, masked)
}

// scrubMasked clears the values of newly masked slots as null slots are
// cleared when gathered (zeros, no bytes), so that the value codecs, sized
// from statistics that skip nulls, can hold every slot.
func scrubMasked(pv *pageValues, masked []int) {
	if len(masked) == 0 {
		return
	}
	switch pv.info.kind {
	case kindFixed, kindDict:
		if w := pv.info.bits / 8; pv.info.bits%8 == 0 && len(pv.fixed) >= pv.n*w {
			for _, k := range masked {
				clear(pv.fixed[k*w : (k+1)*w])
			}
		}
	case kindBool:
		for _, k := range masked {
			if k/8 < len(pv.fixed) {
				pv.fixed[k/8] &^= 1 << (k % 8)
			}
		}
	case kindVariable:
		if len(pv.offsets) != pv.n+1 {
			return
		}
		// Drop the masked values' bytes, shifting the rest down.
		out, m := pv.offsets[0], 0
		for i := 0; i < pv.n; i++ {
			lo, hi := pv.offsets[i], pv.offsets[i+1]
			if m < len(masked) && masked[m] == i {
				m++
				hi = lo
			}
			copy(pv.fixed[out:], pv.fixed[lo:hi])
			pv.offsets[i] = out
			out += hi - lo
		}
		pv.offsets[pv.n] = out
		pv.fixed = pv.fixed[:out]
	}
}

func (c *column) encode(d structural.Dense, segs []structural.Segment, f Format) (encoded, error) {
	pv := c.gather(segs, d.NumVisible)
	if pv.err != nil {
		return encoded{}, pv.err
	}
	maskAncestorNulls(&pv, d)
	sp := c.page(d, pv, f)
	plan := selector.Choose(sp, c.opts)
	enc, err := c.encodePlan(d, pv, sp, plan, f, true)
	if !plan.TrySparse || (err != nil && !errors.Is(err, errTooManyLevels)) {
		return enc, err
	}
	// The cost policy measures the page under sparse structure too.
	if err == nil {
		for i, b := range enc.bufs {
			enc.bufs[i] = slices.Clone(b)
		}
	}
	alt, aerr := c.encodePlan(d, pv, sp, selector.ForceSparse(sp, c.opts), f, true)
	if aerr != nil {
		if err != nil {
			return enc, err
		}
		return enc, nil
	}
	rows := max(d.NumVisible, 1)
	a := selector.Measured{Bytes: bufBytes(alt.bufs), TakeBytes: takeBytes(alt, rows, sp.ValidLeaves)}
	if err != nil {
		alt.plan.Reason += "; dense levels do not fit chunks"
		return alt, nil
	}
	b := selector.Measured{Bytes: bufBytes(enc.bufs), TakeBytes: takeBytes(enc, rows, sp.ValidLeaves)}
	if selector.Cheaper(a, b, c.opts) {
		alt.plan.Reason += fmt.Sprintf("; cost: sparse %d B < dense %d B", a.Bytes, b.Bytes)
		return alt, nil
	}
	enc.plan.Reason += fmt.Sprintf("; cost: dense %d B <= sparse %d B", b.Bytes, a.Bytes)
	return enc, nil
}

func bufBytes(bufs [][]byte) int {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n
}

// page describes one page to the selector: its structure facts and, from
// the stats pass, its values.
func (c *column) page(d structural.Dense, pv pageValues, f Format) selector.Page {
	sp := selector.Page{
		Degenerate:     structural.IsDegenerate(d.Layers),
		SingleNullable: len(d.Layers) == 1 && d.Layers[0] == structural.NullableItem,
		NumVisible:     d.NumVisible,
		AllNull:        pv.allNull || pv.info.kind == kindNull,
		CanZip:         pv.info.kind != kindBool && pv.info.kind != kindNull && pv.info.kind != kindDict && pv.info.rowBits()%8 == 0,
		HasLevels:      d.Rep != nil || d.Def != nil,
		SparseOnly:     c.sparse,
		NumRows:        d.NumRows / max(c.fslScale, 1),
		NumLevels:      d.NumItems,
		HasLists:       c.hasLists,
		HasFSLLayer:    c.fslScale > 1,
	}
	if sp.HasLists && f.planarMetadata() {
		sp.OverBudget = structural.OverLevelBudget(d, sp.HasFSLLayer)
	}
	if !sp.AllNull {
		for i, null := range pv.nulls[:pv.n] {
			if !null {
				sp.ValidLeaves++
				if pv.offsets != nil {
					sp.ValidBytes += int(pv.offsets[i+1] - pv.offsets[i])
				}
			}
		}
		if pv.offsets == nil {
			sp.ValidBytes = sp.ValidLeaves * (pv.info.rowBits() / 8)
		}
	}
	switch pv.info.kind {
	case kindVariable, kindVarPacked:
		sp.MaxValueBytes = maxLen(pv.offsets)
	case kindNull, kindDict:
	default:
		sp.MaxValueBytes = pv.info.rowBits() / 8
		sp.Scalar, sp.NullFree = c.scalar(pv)
	}
	c.describeValues(&sp, pv)
	return sp
}

// encodePlan executes a plan: page dictionaries and FSST coding first when
// the plan's values admit them, then the cell.
func (c *column) encodePlan(d structural.Dense, pv pageValues, sp selector.Page, plan selector.Plan, f Format, dict bool) (encoded, error) {
	dictCandidate := pv.info.kind == kindVariable || (pv.info.kind == kindFixed && (pv.info.bits == 64 || pv.info.bits == 128))
	sparse := plan.Structure == selector.Sparse
	tryDict := plan.Values == selector.Chunked || (sparse && plan.Values == selector.Zipped && pv.info.kind == kindVariable)
	if dict && tryDict && dictCandidate && c.opts.Compression != selector.CompressionFsst && !tooManyDistinct(sp.Profile, c.opts) {
		if pd, idx, ok := c.autoDict(pv); ok {
			if sparse {
				ip := selector.Dictionary(plan, pv.info.kind == kindVariable, len(pd.raw), len(idx))
				if ip.Values == selector.Indexed {
					enc := encoded{plan: ip}
					return enc, c.encodeSparseIndexed(d, idx, pd, &enc)
				}
				if sp.CanZip && pv.info.kind == kindVariable && c.opts.Policy == selector.PolicyCost {
					// The cost policy measures the stored values zipped
					// against the dictionary over every slot.
					zp := plan
					if zp.Values != selector.Zipped {
						zp = selector.SparseZipped(sp, c.opts, "trial")
					}
					z, err := c.encodePlan(d, pv, sp, zp, f, false)
					if err != nil {
						return z, err
					}
					for i, b := range z.bufs {
						z.bufs[i] = slices.Clone(b)
					}
					ch, err := c.encodeDictPage(d, pv, sp, pd, idx, sparse, f)
					if err != nil || bufBytes(ch.bufs) >= bufBytes(z.bufs) {
						z.plan.Reason += fmt.Sprintf("; zipped %d B <= dictionary chunks %d B", bufBytes(z.bufs), bufBytes(ch.bufs))
						return z, nil
					}
					return ch, nil
				}
			}
			return c.encodeDictPage(d, pv, sp, pd, idx, sparse, f)
		}
	}
	return c.encodeCell(d, pv, sp, plan, f)
}

// encodeDictPage encodes a page through its page dictionary: the chunks
// hold u32 indices, the page dictionary the distinct values. The column's
// leaf info is switched to the dictionary form for this page only.
func (c *column) encodeDictPage(d structural.Dense, pv pageValues, sp selector.Page, pd *pageDict, idx []byte, sparse bool, f Format) (encoded, error) {
	saved := pv.info
	pv.info = leafInfo{kind: kindDict, bits: 32, dict: &saved}
	pv.fixed, pv.dict, pv.offsets = idx, pd, nil
	c.describeValues(&sp, pv)
	sp.MaxValueBytes, sp.CanZip = 4, false
	var plan selector.Plan
	if sparse {
		plan = selector.ForceSparse(sp, c.opts)
	} else {
		plan = selector.Choose(sp, c.opts)
	}
	plan.Reason += fmt.Sprintf("; dictionary of %d values", pd.n)
	return c.encodeCell(d, pv, sp, plan, f)
}

// encodeCell executes a plan's cell over the page's values (FSST coding
// them first when the plan's codec asks for it).
func (c *column) encodeCell(d structural.Dense, pv pageValues, sp selector.Page, plan selector.Plan, f Format) (encoded, error) {
	sparse := plan.Structure == selector.Sparse
	if fc, ok := plan.Codec.(values.FsstCodec); ok {
		// Code the page once, so chunks are cut on coded sizes.
		coded := fc.Code(values.Block{N: pv.n, Data: pv.fixed, Offsets: pv.offsets})
		pv.fixed, pv.offsets = coded.Data, coded.Offsets
		pv.fsst = true
	}
	enc := encoded{plan: plan}
	var err error
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
		if errors.Is(err, errTooManyLevels) && pv.info.kind != kindDict && pv.info.kind != kindBool && !pv.fsst && !plan.TrySparse {
			// A value preceded by more than 65535 invisible entries cannot be
			// chunked; zipped pages have no per-chunk limit.
			enc.plan.Values, enc.plan.Reason = selector.Zipped, "over 65535 levels in one chunk"
			err = c.encodeZipped(d, pv, &enc)
		}
	}
	return enc, err
}

// describeValues fills the selector's view of the page's values: their kind
// and the stats pass over them (once per page), plus a sample for codecs
// estimated by trial.
func (c *column) describeValues(sp *selector.Page, pv pageValues) {
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
	switch pv.info.kind {
	case kindFixed, kindDict:
		sp.Kind, sp.DictIndices = selector.KindFixed, pv.info.kind == kindDict
		if bits := pv.info.packBits(); bits > 0 {
			st := stats.Fixed(pv.fixed, bits, pv.n, pv.nulls)
			prof.Fixed = &st
			// RLE candidates count their entries exactly over the page.
			prof.Data = values.Block{Bits: bits, N: pv.n, Data: pv.fixed}
		}
		prof.Sample = c.spreadSample(pv, sample)
	case kindBool:
		sp.Kind = selector.KindBool
		prof.Sample = values.Block{Bits: 1, N: sample, Data: pv.fixed[:(sample+7)/8]}
	case kindFSL:
		sp.Kind = selector.KindFSL
	case kindNull:
		sp.Kind = selector.KindNull
	case kindPacked:
		sp.Kind, sp.PackedBits = selector.KindPacked, pv.info.fields
	case kindVarPacked:
		sp.Kind = selector.KindVarPacked
	case kindVariable:
		sp.Kind = selector.KindVariable
		prof.Bits, prof.OffBits = 0, pv.info.offBits
		st := stats.Variable(pv.offsets, pv.fixed, pv.nulls)
		prof.Var = &st
		prof.Sample = c.spreadSample(pv, sample)
		if pv.info.utf8 && st.MaxLen >= selector.FsstMinMaxLen && (c.opts.Compression == selector.CompressionFsst ||
			(c.opts.Compression == selector.CompressionAuto && prof.RawBytes() >= selector.FsstMinBytes)) {
			sp.Fsst = c.trainFsst(pv)
		}
	}
}

// spreadSample copies n values of the page, taken as four runs spread over
// it, so trial encodings see more than the page's first values.
func (c *column) spreadSample(pv pageValues, n int) values.Block {
	const parts = 4
	if n == pv.n || n < parts {
		if pv.info.kind == kindVariable {
			return values.Block{N: n, Data: pv.fixed, Offsets: pv.offsets[:n+1]}
		}
		return values.Block{Bits: pv.info.bits, N: n, Data: pv.fixed[:n*pv.info.bits/8]}
	}
	per := n / parts
	out := values.Block{Bits: pv.info.bits, N: per * parts}
	if pv.info.kind == kindVariable {
		out.Bits, out.Offsets = 0, append(c.sampleOffs[:0], 0)
	}
	data := c.sampleData[:0]
	for k := 0; k < parts; k++ {
		start := k * (pv.n - per) / (parts - 1)
		if pv.info.kind == kindVariable {
			for i := start; i < start+per; i++ {
				data = append(data, pv.fixed[pv.offsets[i]:pv.offsets[i+1]]...)
				out.Offsets = append(out.Offsets, uint64(len(data)))
			}
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
func (c *column) trainFsst(pv pageValues) *values.FsstTable {
	n := pv.n
	total := int(pv.offsets[n] - pv.offsets[0])
	sample := make([][]byte, 0, 1024)
	if total <= values.FsstTrainBytes {
		for i := 0; i < n; i++ {
			sample = append(sample, pv.fixed[pv.offsets[i]:pv.offsets[i+1]])
		}
		return values.BuildFsstTable(sample)
	}
	const runs = 64
	budget := values.FsstTrainBytes / runs
	for k := 0; k < runs; k++ {
		start := k * n / runs
		got := 0
		for i := start; i < n && got < budget; i++ {
			v := pv.fixed[pv.offsets[i]:pv.offsets[i+1]]
			sample = append(sample, v)
			got += len(v)
		}
	}
	return values.BuildFsstTable(sample)
}

// tooManyDistinct reports whether the stats pass already shows more
// distinct values than a page dictionary may hold (the HyperLogLog estimate
// is within a few percent; 10% of slack keeps borderline pages for the exact
// count in autoDict).
func tooManyDistinct(p *values.Profile, o selector.Options) bool {
	divisor, _ := o.DictLimits()
	limit := float64(min(p.N/divisor, 100000))
	var d uint64
	switch {
	case p.Fixed != nil:
		d = p.Fixed.Distinct
	case p.Var != nil:
		d = p.Var.Distinct
	default:
		return false
	}
	return float64(d) > 1.1*limit
}

// errTooManyLevels reports a chunk that would need more than 65535 levels.
var errTooManyLevels = errors.New("planar/writer: more than 65535 levels in one chunk")

func constantLayout(layers []structural.Layer, scalar []byte) *enc21pb.PageLayout {
	return &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{Layers: layers, InlineValue: scalar}}}
}

// plainEncoding is the uncompressed description of the page's values (the
// per-value codec of zipped pages) and its chunk buffer count.
func (c *column) plainEncoding(pv pageValues) (*enc21pb.CompressiveEncoding, int) {
	switch pv.info.kind {
	case kindVariable:
		return values.VariableCodec{OffBits: pv.info.offBits}.Encoding(), 1
	case kindFSL:
		var inner values.Codec = values.FlatCodec{Bits: pv.info.bits}
		for k := len(pv.info.dims) - 1; k >= 0; k-- {
			inner = values.FslCodec{Dim: pv.info.dims[k], HasValidity: pv.itemValid != nil && pv.itemValid[k] != nil, Values: inner}
		}
		return inner.Encoding(), inner.NumBuffers()
	}
	return values.FlatEncoding(pv.info.bits), 1
}

// chunkCounts splits n visible values into chunk value counts: powers of two
// for every chunk but the last, sized for the codec that stores them.
func (c *column) chunkCounts(pv pageValues, codec values.Codec) []int {
	n := pv.n
	var counts []int
	if g, ok := codec.(values.GeneralCodec); ok {
		if g.ChunkValues > 0 {
			for start := 0; start < n; start += g.ChunkValues {
				counts = append(counts, min(g.ChunkValues, n-start))
			}
			return counts
		}
		codec = g.Inner
	}
	switch codec.(type) {
	case values.BitpackCodec:
		// One bit-packing block per chunk.
		for start := 0; start < n; start += rleChunk {
			counts = append(counts, min(rleChunk, n-start))
		}
		return counts
	case values.RleCodec:
		return rleChunkCounts(pv.fixed, pv.info.bits, n, codec.(values.RleCodec))
	}
	if pv.info.kind == kindVariable {
		// Offset bits per value: the offset width, or what the offsets
		// codec packs them to.
		wbits := pv.info.offBits
		if v, ok := codec.(values.VariableCodec); ok {
			wbits = v.OffsetBits()
		}
		for start := 0; start < n; {
			cnt := 2
			for cnt < 4096 {
				next := cnt * 2
				end := min(start+next, n)
				size := (end-start+1)*wbits/8 + int(pv.offsets[end]-pv.offsets[start])
				if size > values.VariableChunkBytes || start+next > n {
					break
				}
				cnt = next
			}
			if start+cnt >= n {
				cnt = n - start
			}
			counts = append(counts, cnt)
			start += cnt
		}
		return counts
	}
	per := 1 << values.FlatChunkLog2(pv.info.rowBits())
	for start := 0; start < n; start += per {
		counts = append(counts, min(per, n-start))
	}
	return counts
}

func log2(n int) uint8 {
	k := uint8(0)
	for 1<<k < n {
		k++
	}
	return k
}

// encodeChunked writes the page as dense x chunked (mini-block bytes): values
// in chunks of a power-of-two count, each chunk carrying its slice of the
// level streams (flat u16), plus the repetition index when there are lists.
func (c *column) encodeChunked(d structural.Dense, pv pageValues, enc *encoded) error {
	plan := enc.plan
	codec := plan.Codec
	venc := codec.Encoding()
	if fc, ok := codec.(values.FsstCodec); ok && pv.fsst {
		codec = fc.Values // the page is already coded
	}
	nbuf := codec.NumBuffers()
	counts := c.chunkCounts(pv, codec)
	f23 := c.cfg.format.planarMetadata()
	repEnc, repPack := levelCodec(d.Rep, d.NumItems, len(counts), plan, f23)
	defEnc, defPack := levelCodec(d.Def, d.NumItems, len(counts), plan, f23)
	R := structural.NumLists(d.Layers)
	maxVis := structural.MaxVisibleDef(d.Layers)
	visible := func(i int) bool { return R == 0 || int(d.Def[i]) <= maxVis }
	if d.Def == nil {
		visible = func(int) bool { return true }
	}
	cl := values.ChunkLayout{HasRep: d.Rep != nil, HasDef: d.Def != nil, NumBuffers: nbuf, Large: true}
	c.meta, c.data = c.meta[:0], c.data[:0]
	if need := len(pv.fixed) + 8*len(pv.offsets) + 2*(len(d.Rep)+len(d.Def)) + 40*len(counts); cap(c.data) < need {
		c.data = make([]byte, 0, need)
	}
	var repIndex []byte
	level, value := 0, 0
	var prevPartial bool
	for ci, cnt := range counts {
		last := ci == len(counts)-1
		// Levels: up to and including the cnt-th visible entry; the last
		// chunk takes everything left.
		lstart := level
		if d.Rep != nil || d.Def != nil {
			if last {
				level = d.NumItems
			} else {
				seen := 0
				for level < d.NumItems && seen < cnt {
					if visible(level) {
						seen++
					}
					level++
				}
			}
		}
		nlev := level - lstart
		if nlev > 0xFFFF {
			return fmt.Errorf("chunk of %d values needs %d levels: %w", cnt, nlev, errTooManyLevels)
		}
		lg := log2(cnt)
		if last && 1<<lg != cnt {
			lg = 0
		}
		if last && cnt == 1 {
			lg = 0
		}
		parts := values.ChunkParts{LogNumValues: lg}
		if d.Rep != nil || d.Def != nil {
			parts.NumLevels = nlev
		}
		var err error
		if d.Rep != nil {
			if c.rep, err = repPack(c.rep[:0], d.Rep[lstart:level]); err != nil {
				return err
			}
			parts.Rep = c.rep
		}
		if d.Def != nil {
			if c.def, err = defPack(c.def[:0], d.Def[lstart:level]); err != nil {
				return err
			}
			parts.Def = c.def
		}
		if parts.Values, err = c.chunkValues(pv, value, cnt, codec); err != nil {
			return err
		}
		for _, b := range parts.Values {
			enc.valueBytes += len(b)
		}
		if c.meta, c.data, err = values.AppendChunk(c.meta, c.data, cl, parts); err != nil {
			return err
		}
		if d.Rep != nil {
			repIndex, prevPartial = appendRepIndex(repIndex, d.Rep[lstart:level], uint16(R), last, prevPartial)
		}
		value += cnt
	}
	if pv.fsst {
		enc.valueBytes += values.FsstTableSize // the symbol table is stored too
	}
	mb := &enc21pb.MiniBlockLayout{
		ValueCompression: venc,
		Layers:           d.Layers,
		NumBuffers:       uint64(nbuf),
		NumItems:         uint64(d.NumVisible),
		HasLargeChunk:    true,
	}
	if d.Def != nil {
		mb.DefCompression = defEnc
	}
	bufs := [][]byte{c.meta, c.data}
	if pv.dict != nil {
		mb.Dictionary = pv.dict.encoding
		mb.NumDictionaryItems = uint64(pv.dict.n)
		bufs = append(bufs, pv.dict.items)
	}
	if d.Rep != nil {
		mb.RepCompression = repEnc
		mb.RepetitionIndexDepth = 1
		bufs = append(bufs, repIndex)
	}
	enc.layout = &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: mb}}
	enc.bufs = bufs
	enc.desc = describe(plan.Codec.Name(), defEnc, repEnc, d)
	return nil
}

// rleChunk is the value count of bit-packed chunks: one FastLanes block.
const rleChunk = 1024

// rleMaxChunkBytes bounds an RLE chunk (Lance's mini-block byte budget).
const rleMaxChunkBytes = 8186

// rleChunkCounts cuts n values into RLE chunks as Lance does: each chunk the
// largest power-of-two prefix whose runs fit the byte budget, the last chunk
// whatever remains when it fits.
func rleChunkCounts(data []byte, bits, n int, codec values.RleCodec) []int {
	bw := bits / 8
	lw, maxRun := 1, 255
	if codec.LenBits == 16 {
		lw, maxRun = 2, 65535
	}
	vw := bw // stored bytes per run value
	if codec.ValueWidth > 0 {
		vw = max(1, (codec.ValueWidth+7)/8) // packed values: budget by packed width
	}
	maxVals := codec.MaxChunkValues()
	size := func(start, cnt int) int {
		runs := values.RunCount(bits, data[start*bw:(start+cnt)*bw], cnt)
		return runs*(vw+lw) + cnt/maxRun*(vw+lw)
	}
	var counts []int
	for start := 0; start < n; {
		rest := n - start
		if rest <= maxVals && size(start, rest) <= rleMaxChunkBytes {
			counts = append(counts, rest)
			break
		}
		p := maxVals
		for p > 1 && (p > rest || size(start, p) > rleMaxChunkBytes) {
			p /= 2
		}
		counts = append(counts, p)
		start += p
	}
	return counts
}

// packBits is the value width bit packing applies to (0 if none).
func (l leafInfo) packBits() int {
	switch l.kind {
	case kindFixed, kindDict:
		switch l.bits {
		case 8, 16, 32, 64:
			return l.bits
		}
	}
	return 0
}

type levelPacker func(dst []byte, levels []uint16) ([]byte, error)

// levelCodec returns the page's codec for one level stream and the function
// that encodes a chunk's slice of it: flat u16, inline bit packing when the
// whole stream fits one 1024-level block, else out-of-line bit packing at the
// stream's width.
func levelCodec(levels []uint16, n, chunks int, plan selector.Plan, rleLevels bool) (*enc21pb.CompressiveEncoding, levelPacker) {
	flat := func(dst []byte, l []uint16) ([]byte, error) { return values.AppendFlatLevels(dst, l), nil }
	if levels == nil || plan.LevelComp != selector.Bitpacked {
		return values.FlatEncoding(16), flat
	}
	var raw []byte
	ls := stats.Levels(levels)
	w := ls.BitWidth
	// Keep flat levels when packing would not shrink them (tiny pages).
	packed := (n*w + 7) / 8
	if n <= 1024 {
		packed = (1 + 64*w) * 2
	}
	// Long runs of one level (leading or trailing nulls): u16 runs, as
	// Lance 2.3 writes them, when smaller than packing (Lance 2.2 readers
	// accept only u8 run lengths over flat values).
	if rle := (ls.Runs+chunks)*4 + 8*chunks; rleLevels && rle < packed && rle < 2*n {
		// Run lengths of one or two bytes, whichever stores the runs in
		// fewer bytes (Lance's choice; runs longer than the width allows
		// are cut).
		lenBits := 16
		if e8, e16 := runEntries(levels); 3*e8 <= 4*e16 {
			lenBits = 8
		}
		codec := values.RleCodec{Bits: 16, LenBits: lenBits}
		return codec.Encoding(), func(dst []byte, l []uint16) ([]byte, error) {
			raw = values.AppendFlatLevels(raw[:0], l)
			return codec.AppendBlock(dst, values.Block{Bits: 16, N: len(l), Data: raw})
		}
	}
	if packed >= 2*n {
		return values.FlatEncoding(16), flat
	}
	if n <= 1024 {
		e := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &enc21pb.InlineBitpacking{UncompressedBitsPerValue: 16}}}
		return e, func(dst []byte, l []uint16) ([]byte, error) {
			raw = values.AppendFlatLevels(raw[:0], l)
			return values.AppendInlineBitpacked(dst, 16, raw, len(l))
		}
	}
	e := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: &enc21pb.OutOfLineBitpacking{
		UncompressedBitsPerValue: 16, Values: values.FlatEncoding(w)}}}
	return e, func(dst []byte, l []uint16) ([]byte, error) {
		raw = values.AppendFlatLevels(raw[:0], l)
		return values.AppendOutOfLineBitpacked(dst, 16, w, raw, len(l))
	}
}

// runEntries counts the RLE entries of levels with one- and two-byte run
// lengths (a run longer than the largest length takes several entries).
func runEntries(levels []uint16) (e8, e16 int) {
	for i := 0; i < len(levels); {
		j := i + 1
		for j < len(levels) && levels[j] == levels[i] {
			j++
		}
		e8 += (j - i + 254) / 255
		e16 += (j - i + 65534) / 65535
		i = j
	}
	return e8, e16
}

// appendRepIndex appends the (ends, partial) pair of one chunk and fixes up
// the previous chunk's pair when this chunk starts exactly at a row.
func appendRepIndex(idx []byte, rep []uint16, R uint16, last, prevPartial bool) ([]byte, bool) {
	ends, lastStart := 0, -1
	for j, r := range rep {
		if r == R {
			if j >= 1 {
				ends++
			}
			lastStart = j
		}
	}
	if last {
		ends++
	}
	partial := 0
	if !last {
		if lastStart < 0 {
			partial = len(rep)
		} else {
			partial = len(rep) - lastStart
		}
	}
	if len(idx) >= 16 && len(rep) > 0 && rep[0] == R && prevPartial {
		p := len(idx) - 16
		binary.LittleEndian.PutUint64(idx[p:], binary.LittleEndian.Uint64(idx[p:])+1)
		binary.LittleEndian.PutUint64(idx[p+8:], 0)
	}
	idx = binary.LittleEndian.AppendUint64(idx, uint64(ends))
	idx = binary.LittleEndian.AppendUint64(idx, uint64(partial))
	return idx, partial != 0
}

// chunkValues encodes values [start, start+cnt) with the page's codec.
func (c *column) chunkValues(pv pageValues, start, cnt int, codec values.Codec) ([][]byte, error) {
	var b values.Block
	switch pv.info.kind {
	case kindVariable:
		b = values.Block{N: cnt, Data: pv.fixed, Offsets: pv.offsets[start : start+cnt+1]}
	case kindBool:
		b = values.Block{Bits: 1, N: cnt, Data: sliceBits(pv.fixed, start, cnt)}
	case kindFSL:
		rb := pv.info.rowBits()
		b = values.Block{Bits: rb, N: cnt, Dims: pv.info.dims}
		if pv.itemValid != nil {
			b.ItemValid = make([][]byte, len(pv.itemValid))
			per := 1
			for k, v := range pv.itemValid {
				per *= pv.info.dims[k]
				if v != nil {
					b.ItemValid[k] = sliceBits(v, start*per, cnt*per)
				}
			}
		}
		if pv.info.itemType.ID() == arrow.BOOL {
			b.Data = sliceBits(pv.fixed, start*rb, cnt*rb)
		} else {
			b.Data = pv.fixed[start*rb/8 : (start+cnt)*rb/8]
		}
	default:
		bw := pv.info.bits / 8
		b = values.Block{Bits: pv.info.bits, N: cnt, Data: pv.fixed[start*bw : (start+cnt)*bw]}
	}
	for len(c.chunkBufs) < codec.NumBuffers() {
		c.chunkBufs = append(c.chunkBufs, nil)
	}
	bufs := c.chunkBufs[:codec.NumBuffers()]
	for i := range bufs {
		bufs[i] = bufs[i][:0]
	}
	bufs, err := codec.AppendChunk(bufs, b)
	copy(c.chunkBufs, bufs)
	return bufs, err
}

// sliceBits returns bits [start, start+n) of an LSB-first bitmap, shifted to
// start at bit 0.
func sliceBits(bm []byte, start, n int) []byte {
	if start%8 == 0 {
		return bm[start/8 : (start+n+7)/8]
	}
	out := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		j := start + i
		if bm[j/8]&(1<<(j%8)) != 0 {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

func describe(vals string, defEnc, repEnc *enc21pb.CompressiveEncoding, d structural.Dense) string {
	s := "values=" + vals
	if d.Def != nil {
		s += " def=" + values.EncodingName(defEnc)
	}
	if d.Rep != nil {
		s += " rep=" + values.EncodingName(repEnc)
	}
	return s
}

// encodeZipped writes the page as dense x zipped (full-zip bytes): one record
// per level entry, control word then value bytes.
func (c *column) encodeZipped(d structural.Dense, pv pageValues, enc *encoded) error {
	if d.NumItems > 0xFFFFFFFF {
		return fmt.Errorf("zipped page of %d items exceeds the u32 item count: %w", d.NumItems, ErrInvalidOption)
	}
	br, bd := values.LevelWidths(d.Rep, d.Def)
	if bd == 0 && d.Def != nil {
		// Def levels that are all zero still have layers with bands (a
		// struct layer kept nullable, an unused null band): without a
		// def width Lance's reader takes the page as all valid and, when
		// another page of the batch has nulls there, gives such a layer
		// one valid entry per item, not per slot ("Incorrect number of
		// nulls for StructArray"). Lance's own writer sizes the width by
		// the bands, never 0 when there is one.
		bd = 1
	}
	lv := values.ZipLevels{BitsRep: br, BitsDef: bd, MaxRep: structural.NumLists(d.Layers), MaxVisibleDef: structural.MaxVisibleDef(d.Layers)}
	fz := &enc21pb.FullZipLayout{
		BitsRep: uint32(br), BitsDef: uint32(bd), NumItems: uint32(d.NumItems), NumVisibleItems: uint32(d.NumVisible),
		Layers: d.Layers,
	}
	n := 0
	if d.Rep == nil && d.Def == nil {
		n = d.NumItems
	}
	var data, idx []byte
	var err error
	switch pv.info.kind {
	case kindVarPacked:
		ob := values.VariablePackedOffsetBits(pv.offsets)
		fz.Details = &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: uint32(ob)}
		fe := make([]values.VarPackedFieldEncoding, len(pv.info.layouts))
		for k, l := range pv.info.layouts {
			fe[k].PackedLayout = l
		}
		fz.ValueCompression = values.VariablePackedStructEncoding(fe)
		data, idx, err = values.AppendZippedVariable(c.data[:0], lv, d.Rep, d.Def, pv.offsets, pv.fixed, ob)
	case kindVariable:
		fz.Details = &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: uint32(pv.info.offBits)}
		fz.ValueCompression, _ = c.plainEncoding(pv)
		offs, vals := pv.offsets, pv.fixed
		switch pc := enc.plan.Codec.(type) {
		case values.FsstCodec:
			if pv.fsst { // coded by encode
				fz.ValueCompression = pc.Encoding()
			}
		case values.GeneralCodec:
			// Each value compressed on its own (empty values stay empty).
			fz.ValueCompression = pc.Encoding()
			vals = c.zvals[:0]
			offs = append(c.zoffs[:0], 0)
			for i := 0; i < pv.n; i++ {
				if v := pv.fixed[pv.offsets[i]:pv.offsets[i+1]]; len(v) > 0 {
					if vals, err = values.AppendCompressed(vals, pc.Scheme, pc.Level, v); err != nil {
						return err
					}
				}
				offs = append(offs, uint64(len(vals)))
			}
			c.zvals, c.zoffs = vals, offs
		}
		data, idx, err = values.AppendZippedVariable(c.data[:0], lv, d.Rep, d.Def, offs, vals, pv.info.offBits)
	default:
		width, rows := c.zipRecords(pv)
		fz.Details = &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: uint32(8 * width)}
		fz.ValueCompression = c.zipEncoding(pv)
		data, idx, err = values.AppendZippedFixed(c.data[:0], lv, d.Rep, d.Def, rows, width, n)
	}
	if err != nil {
		return err
	}
	c.data = data
	enc.bufs = [][]byte{data}
	if idx != nil {
		enc.bufs = append(enc.bufs, idx)
	}
	enc.layout = &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_FullZipLayout{FullZipLayout: fz}}
	enc.desc = "per-value " + values.EncodingName(fz.ValueCompression)
	if br+bd > 0 {
		enc.desc += fmt.Sprintf(" cw=%d+%d bits", br, bd)
	}
	return nil
}

// zipRecords returns the record width in bytes and the concatenated value
// records of a fixed-width zipped page (item validity bytes first for
// fixed-size lists with null items).
func (c *column) zipRecords(pv pageValues) (int, []byte) {
	switch pv.info.kind {
	case kindNull:
		return 1, make([]byte, pv.n)
	case kindBool:
		// Zipped booleans are widened to one byte per value.
		out := make([]byte, pv.n)
		for i := range out {
			out[i] = (pv.fixed[i/8] >> (i % 8)) & 1
		}
		return 1, out
	case kindFSL:
		rb := pv.info.rowBits() / 8
		if pv.itemValid == nil {
			return rb, pv.fixed
		}
		// Per row: the row's bits of every layer that stores validity
		// (outer first, rounded up to bytes), then the data (Lance's
		// per-value FSL records).
		vb := 0
		per := make([]int, len(pv.itemValid))
		for k, v := range pv.itemValid {
			per[k] = pv.info.dims[k]
			if k > 0 {
				per[k] *= per[k-1]
			}
			if v != nil {
				vb += (per[k] + 7) / 8
			}
		}
		out := make([]byte, 0, pv.n*(vb+rb))
		for r := 0; r < pv.n; r++ {
			for k, v := range pv.itemValid {
				if v != nil {
					out = append(out, sliceBits(v, r*per[k], per[k])...)
				}
			}
			out = append(out, pv.fixed[r*rb:(r+1)*rb]...)
		}
		return vb + rb, out
	}
	return pv.info.bits / 8, pv.fixed
}

func (c *column) zipEncoding(pv pageValues) *enc21pb.CompressiveEncoding {
	switch pv.info.kind {
	case kindFSL:
		e, _ := c.plainEncoding(pv)
		return e
	case kindBool, kindNull:
		return values.FlatEncoding(8)
	case kindPacked:
		return values.PackedStructEncoding(pv.info.fields)
	}
	return values.FlatEncoding(pv.info.bits)
}

// pageDict is the page dictionary of a dictionary-encoded page.
type pageDict struct {
	n        int
	items    []byte // block-encoded items
	encoding *enc21pb.CompressiveEncoding
	// raw and rawOffsets: variable-width items as they are (n+1 offsets),
	// for pages that store them zipped (sparse x indexed).
	raw        []byte
	rawOffsets []uint64
}

// gatherDict builds the page's indices (Arrow key width, nulls as 0) and the
// page dictionary: the dictionaries of the page's arrays, back to back, each
// array's keys shifted past the dictionaries before it.
func (c *column) gatherDict(segs []structural.Segment) ([]byte, *pageDict) {
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
			if vi.kind == kindVariable {
				offsets, vdata = gatherVariable(offsets, vdata, seg)
			} else {
				fixed = gatherFixed(fixed, seg, vi.bits/8)
			}
			n += d.Len()
			return b
		}
		var ioffs []uint64
		var idata, ifixed []byte
		if vi.kind == kindVariable {
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
			if vi.kind == kindVariable {
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
				if vi.kind == kindVariable {
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
	if vi.kind == kindVariable {
		pd.items = values.AppendVariableBlock(nil, vi.offBits, offsets, vdata)
		pd.encoding = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: values.FlatEncoding(vi.offBits)}}}
	} else {
		pd.items = fixed
		pd.encoding = values.FlatEncoding(vi.bits)
	}
	c.compressDictItems(pd)
	return idx, pd
}

// autoDict decides whether a variable-width or 64/128-bit page is worth
// dictionary encoding (Lance's rule: at least 100 values, at most one distinct value in
// two, and the dictionary plus indices under 0.8 of the raw size) and if so
// builds the page dictionary (first-occurrence order over every slot) and u32
// indices.
func (c *column) autoDict(pv pageValues) (*pageDict, []byte, bool) {
	n := pv.n
	if n < 100 {
		return nil, nil, false
	}
	divisor, ratio := c.opts.DictLimits()
	limit := min(n/divisor, 100000)
	seen := make(map[string]uint32, 64)
	var items []byte
	offsets := []uint64{0}
	idx := make([]byte, 4*n)
	// Null slots take part with their (empty) value, as in Lance: the first
	// null adds "" to the dictionary and later nulls index it.
	value := func(i int) []byte { return pv.fixed[pv.offsets[i]:pv.offsets[i+1]] }
	if pv.info.kind == kindFixed {
		bw := pv.info.bits / 8
		value = func(i int) []byte { return pv.fixed[i*bw : (i+1)*bw] }
	}
	for i := 0; i < n; i++ {
		v := value(i)
		k, ok := seen[string(v)]
		if !ok {
			if len(seen) >= limit {
				return nil, nil, false
			}
			k = uint32(len(seen))
			seen[string(v)] = k
			items = append(items, v...)
			offsets = append(offsets, uint64(len(items)))
		}
		binary.LittleEndian.PutUint32(idx[4*i:], k)
	}
	d := len(seen)
	if d == 0 {
		return nil, nil, false
	}
	w := 1
	for 1<<w < d {
		w++
	}
	vi := pv.info
	var raw, est int
	var block []byte
	var venc *enc21pb.CompressiveEncoding
	switch {
	case c.opts.Policy == selector.PolicyLance && vi.kind == kindFixed:
		// Lance's budget: the items plus 4-byte indices against the raw
		// values (dict.rs dictionary_encode).
		raw, est = len(pv.fixed), len(items)+4*n
		block, venc = items, values.FlatEncoding(vi.bits)
	case c.opts.Policy == selector.PolicyLance:
		ob := vi.offBits / 8
		raw = int(pv.offsets[n]-pv.offsets[0]) + ob*(n+1)
		est = len(items) + 4*n + ob*(d+1)
		block = values.AppendVariableBlock(nil, vi.offBits, offsets, items)
		venc = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: values.FlatEncoding(vi.offBits)}}}
	case vi.kind == kindFixed:
		raw = len(pv.fixed)
		est = len(items) + (n*w+7)/8 + 4*((n+1023)/1024)
		block, venc = items, values.FlatEncoding(vi.bits)
	default:
		raw = int(pv.offsets[n]-pv.offsets[0]) + 4*(n+1)
		est = len(items) + 4*(d+1) + 16 + (n*w+7)/8 + 4*((n+1023)/1024)
		block = values.AppendVariableBlock(nil, vi.offBits, offsets, items)
		venc = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: values.FlatEncoding(vi.offBits)}}}
	}
	if lance := c.opts.Policy == selector.PolicyLance; (lance && est > int(float64(raw)*ratio)) || (!lance && float64(est) >= float64(raw)*ratio) {
		return nil, nil, false
	}
	if max := c.opts.DictMaxBytes; vi.kind == kindVariable && len(items) > max && (max != 0 || len(items) > 8<<20) {
		return nil, nil, false
	}
	pd := &pageDict{n: d, items: block, encoding: venc}
	if vi.kind == kindVariable {
		pd.raw, pd.rawOffsets = items, offsets
	}
	c.compressDictItems(pd)
	return pd, idx, true
}

// compressDictItems compresses page dictionary items like Lance 14: LZ4
// (or the scheme the column asks for), always under the lance policy, when
// it shrinks them under the cost policy.
func (c *column) compressDictItems(pd *pageDict) {
	scheme, level := values.SchemeLZ4, 0
	switch c.opts.DictItems {
	case selector.CompressionNone:
		return
	case selector.CompressionZstd:
		scheme, level = values.SchemeZstd, c.opts.Level
	}
	always := c.opts.DictItems != selector.CompressionAuto || c.opts.Policy == selector.PolicyLance
	if z, err := values.AppendCompressed(nil, scheme, level, pd.items); err == nil && (len(z) < len(pd.items) || always) {
		pd.items = z
		pd.encoding = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_General{General: &enc21pb.General{
			Compression: &enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme(scheme)},
			Values:      pd.encoding,
		}}}
	}
}
