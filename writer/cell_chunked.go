package writer

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Dense x chunked pages (mini-block bytes): values cut into chunks of a
// power-of-two count, each with its slice of the level streams.

// encodeChunked writes the page as dense x chunked (mini-block bytes): values
// in chunks of a power-of-two count, each chunk carrying its slice of the
// level streams (flat u16), plus the repetition index when there are lists.
func (c *pageEnc) encodeChunked(d structural.Dense, pv pageValues, enc *encoded) error {
	plan := enc.plan
	codec := plan.Codec
	venc := codec.Encoding()
	if fc, ok := fsstOf(codec); ok && pv.fsst {
		codec = withoutFsst(codec, fc) // the page is already coded
	}
	nbuf := codec.NumBuffers()
	counts := selector.ChunkCounts(codec, pv.info.kind, values.Block{Bits: pv.info.rowBits(), N: pv.n, Data: pv.fixed, Offsets: pv.offsets}, pv.info.offBits)
	// The level codecs depend on the chunk count: the selector chooses
	// them now.
	plan = selector.WithLevelCodecs(plan, d.Rep, d.Def, len(counts), c.cfg.format.planarMetadata())
	enc.plan = plan
	c.repEnc.Codec, c.defEnc.Codec = plan.RepCodec, plan.DefCodec
	R := structural.NumLists(d.Layers)
	maxVis := structural.MaxVisibleDef(d.Layers)
	visible := func(i int) bool { return R == 0 || int(d.Def[i]) <= maxVis }
	if d.Def == nil {
		visible = func(int) bool { return true }
	}
	cl := values.ChunkLayout{HasRep: d.Rep != nil, HasDef: d.Def != nil, NumBuffers: nbuf, Large: true}
	// Where each chunk's levels and values lie: the levels up to and
	// including the cnt-th visible entry, the last chunk taking everything
	// left.
	spans := make([]chunkSpan, len(counts))
	level, value := 0, 0
	for ci, cnt := range counts {
		last := ci == len(counts)-1
		lstart := level
		if d.Rep != nil || d.Def != nil {
			switch {
			case last:
				level = d.NumItems
			case d.Def == nil || R == 0:
				level = min(level+cnt, d.NumItems) // every level is a visible value
			default:
				seen := 0
				for level < d.NumItems && seen < cnt {
					if visible(level) {
						seen++
					}
					level++
				}
			}
		}
		if nlev := level - lstart; nlev > 0xFFFF {
			return fmt.Errorf("chunk of %d values needs %d levels: %w", cnt, nlev, errTooManyLevels)
		}
		lg := log2(cnt)
		if last && (1<<lg != cnt || cnt == 1) {
			lg = 0
		}
		spans[ci] = chunkSpan{lstart: lstart, lend: level, value: value, cnt: cnt, lg: lg}
		value += cnt
	}
	// A chunk that is its values as they are (flat whole bytes, no levels)
	// is written from where they lie: only its head is made here, and the
	// page's data buffer is parts (heads, values, padding) written back to
	// back. Otherwise pieces of the chunks are encoded side by side, each
	// into buffers of its own, joined in order after: a chunk's bytes do
	// not depend on where it lies.
	if fc, ok := codec.(values.FlatCodec); ok && fc.Bits%8 == 0 && d.Rep == nil && d.Def == nil && pv.info.kind == values.KindFixed {
		if err := c.chunkHeads(pv, cl, spans, enc); err != nil {
			return err
		}
	} else if err := c.encodeChunks(d, pv, codec, cl, spans, enc); err != nil {
		return err
	}
	var repIndex []byte
	if d.Rep != nil {
		var prevPartial bool
		for ci, sp := range spans {
			repIndex, prevPartial = values.AppendRepIndex(repIndex, d.Rep[sp.lstart:sp.lend], uint16(R), ci == len(spans)-1, prevPartial)
		}
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
	var repEnc, defEnc *enc21pb.CompressiveEncoding
	if d.Def != nil {
		defEnc = plan.DefCodec.Encoding()
		mb.DefCompression = defEnc
	}
	data := c.data
	if enc.parts != nil {
		data = nil // (the parts are the data buffer)
	}
	bufs := [][]byte{c.meta, data}
	if pv.dict != nil {
		pv.dict.ready()
		mb.Dictionary = pv.dict.encoding
		mb.NumDictionaryItems = uint64(pv.dict.n)
		bufs = append(bufs, pv.dict.items)
	}
	if d.Rep != nil {
		repEnc = plan.RepCodec.Encoding()
		mb.RepCompression = repEnc
		mb.RepetitionIndexDepth = 1
		bufs = append(bufs, repIndex)
	}
	enc.layout = &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: mb}}
	enc.bufs = bufs
	enc.desc = describe(plan.Codec.Name(), defEnc, repEnc, d)
	return nil
}

// minChunksPerPiece is the fewest chunks a piece of a page encodes on its
// own goroutine.
const minChunksPerPiece = 8

// chunkSpan is where one chunk's levels [lstart, lend) and values
// [value, value+cnt) lie in its page, and its log2 value count.
type chunkSpan struct {
	lstart, lend, value, cnt int
	lg                       uint8
}

// chunkScratch is what one piece of a page's chunks is encoded with and
// into.
type chunkScratch struct {
	rep, def       []byte
	bufs           [][]byte
	one            [1][]byte // a chunk's one buffer taken in place
	meta, data     []byte
	repEnc, defEnc values.LevelEncoder
	valueBytes     int
}

// encode appends one chunk: its levels and its values under codec.
func (o *chunkScratch) encode(d structural.Dense, pv pageValues, codec values.Codec, cl values.ChunkLayout, sp chunkSpan) error {
	parts := values.ChunkParts{LogNumValues: sp.lg}
	if d.Rep != nil || d.Def != nil {
		parts.NumLevels = sp.lend - sp.lstart
	}
	var err error
	if d.Rep != nil {
		if o.rep, err = o.repEnc.Append(o.rep[:0], d.Rep[sp.lstart:sp.lend]); err != nil {
			return err
		}
		parts.Rep = o.rep
	}
	if d.Def != nil {
		if o.def, err = o.defEnc.Append(o.def[:0], d.Def[sp.lstart:sp.lend]); err != nil {
			return err
		}
		parts.Def = o.def
	}
	if parts.Values, err = chunkValues(&o.bufs, &o.one, pv, sp.value, sp.cnt, codec); err != nil {
		return err
	}
	for _, b := range parts.Values {
		o.valueBytes += len(b)
	}
	o.meta, o.data, err = values.AppendChunk(o.meta, o.data, cl, parts)
	return err
}

// fsstOf returns the FSST codec of a chunked tree: the codec itself or the
// child of general compression over it.
func fsstOf(c values.Codec) (values.FsstCodec, bool) {
	if g, ok := c.(values.GeneralCodec); ok {
		c = g.Inner
	}
	fc, ok := c.(values.FsstCodec)
	return fc, ok
}

// withoutFsst is the tree that stores already coded values: FSST's values
// codec, under the general compression of c if any.
func withoutFsst(c values.Codec, fc values.FsstCodec) values.Codec {
	if g, ok := c.(values.GeneralCodec); ok {
		g.Inner = fc.Values
		return g
	}
	return fc.Values
}

// chunkValues encodes values [start, start+cnt) with the page's codec.
func chunkValues(scratch *[][]byte, one *[1][]byte, pv pageValues, start, cnt int, codec values.Codec) ([][]byte, error) {
	var b values.Block
	switch pv.info.kind {
	case values.KindVariable:
		b = values.Block{N: cnt, Data: pv.fixed, Offsets: pv.offsets[start : start+cnt+1]}
	case values.KindBool:
		b = values.Block{Bits: 1, N: cnt, Data: sliceBits(pv.fixed, start, cnt)}
	case values.KindFSL:
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
		if fc, ok := codec.(values.FlatCodec); ok && fc.Bits == b.Bits && b.Bits%8 == 0 {
			// Flat whole bytes are the gathered values as they are: the
			// chunk takes them in place (one copy, into the page, not two).
			*one = [1][]byte{b.Data}
			return one[:], nil
		}
	}
	for len(*scratch) < codec.NumBuffers() {
		*scratch = append(*scratch, nil)
	}
	bufs := (*scratch)[:codec.NumBuffers()]
	for i := range bufs {
		bufs[i] = bufs[i][:0]
	}
	bufs, err := codec.AppendChunk(bufs, b)
	copy(*scratch, bufs)
	return bufs, err
}

// sliceBits returns bits [start, start+n) of an LSB-first bitmap, shifted to
// start at bit 0.
func sliceBits(bm []byte, start, n int) []byte {
	if start%8 == 0 {
		return bm[start/8 : (start+n+7)/8]
	}
	out := make([]byte, (n+7)/8)
	bitutil.CopyBitmap(bm, start, n, out, 0)
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

func log2(n int) uint8 {
	k := uint8(0)
	for 1<<k < n {
		k++
	}
	return k
}

// encodeChunks encodes the page's chunks into c.meta and c.data, pieces of
// them side by side when the page is large. Each piece appends its chunks
// into a region of c.data of its own, as large as its share of the page's
// bound (chunkRegions), and the pieces are then joined (bulk.Compact).
func (c *pageEnc) encodeChunks(d structural.Dense, pv pageValues, codec values.Codec, cl values.ChunkLayout, spans []chunkSpan, enc *encoded) error {
	plan := enc.plan
	cuts := []int{0, len(spans)}
	if pv.n >= 2*par.MinValues {
		cuts = par.Pieces(len(spans), minChunksPerPiece)
	}
	starts := chunkRegions(d, pv, spans, cuts)
	if need := starts[len(cuts)-1]; cap(c.data) < need {
		c.data = bulk.Make(need)
	}
	c.meta, c.data = c.meta[:0], c.data[:0]
	region := func(j int) []byte { return c.data[starts[j]:starts[j]:starts[j+1]] }
	outs := make([]chunkScratch, len(cuts)-1)
	outs[0] = chunkScratch{rep: c.rep, def: c.def, bufs: c.chunkBufs, meta: c.meta, data: region(0),
		repEnc: c.repEnc, defEnc: c.defEnc}
	for len(c.pieces) < len(outs)-1 {
		c.pieces = append(c.pieces, chunkScratch{})
	}
	for j := 1; j < len(outs); j++ {
		o := c.pieces[j-1]
		o.meta, o.data, o.valueBytes = o.meta[:0], region(j), 0
		o.repEnc.Codec, o.defEnc.Codec = plan.RepCodec, plan.DefCodec
		outs[j] = o
	}
	err := par.EachPiece(cuts, func(j, lo, hi int) error {
		o := &outs[j]
		for _, sp := range spans[lo:hi] {
			if err := o.encode(d, pv, codec, cl, sp); err != nil {
				return err
			}
		}
		return nil
	})
	c.rep, c.def, c.chunkBufs, c.repEnc, c.defEnc = outs[0].rep, outs[0].def, outs[0].bufs, outs[0].repEnc, outs[0].defEnc
	c.meta = outs[0].meta
	// Their scratch serves the next page; their bytes are moved below.
	copy(c.pieces, outs[1:])
	for j := range c.pieces {
		c.pieces[j].data = nil
	}
	if err != nil {
		return err
	}
	datas := make([][]byte, len(outs))
	for j, o := range outs {
		enc.valueBytes += o.valueBytes
		datas[j] = o.data
		if j > 0 {
			c.meta = append(c.meta, o.meta...)
		}
	}
	if len(datas) > 1 && !plan.TrySparse {
		// The pieces are the page's data buffer, written back to back
		// from their regions (no trial follows whose scratch they would
		// have to leave: keepBuffers would copy them).
		enc.parts, c.data = datas, c.data[:0]
		return nil
	}
	c.data = bulk.Compact(c.data, starts, datas)
	return nil
}

// chunkRegions returns where each piece of a page's chunks (spans[cuts[j]:
// cuts[j+1]]) starts appending its chunks in the page's data buffer, and
// the buffer's size last: room for the piece's values (and their offsets,
// 8 bytes each), two bytes a level of each stream, and 40 bytes a chunk
// (heads, padding).
func chunkRegions(d structural.Dense, pv pageValues, spans []chunkSpan, cuts []int) []int {
	starts := make([]int, len(cuts))
	if len(spans) == 0 {
		return starts
	}
	streams := 0
	if d.Rep != nil {
		streams++
	}
	if d.Def != nil {
		streams++
	}
	first, last := spans[0].value, spans[len(spans)-1].value+spans[len(spans)-1].cnt
	for j := range len(cuts) - 1 {
		a, b := spans[cuts[j]], spans[cuts[j+1]-1]
		vlo, vhi := a.value, b.value+b.cnt
		var bytes int
		if pv.info.kind == values.KindVariable {
			bytes = int(pv.offsets[vhi]-pv.offsets[vlo]) + 8*(vhi-vlo+1)
		} else if last > first {
			bytes = (len(pv.fixed)*(vhi-vlo)+last-first-1)/(last-first) + 8
		}
		size := bytes + 2*streams*(b.lend-a.lstart) + 40*(cuts[j+1]-cuts[j])
		if testSqueezeRegions {
			size /= 8
		}
		starts[j+1] = starts[j] + size
	}
	return starts
}

// testSqueezeRegions, when set, makes chunkRegions' regions too small for
// their pieces (tests of the pieces that outgrow them).
var testSqueezeRegions bool

// chunkHeads makes the heads of chunks that are their values as they are
// (flat whole bytes, no levels) into c.meta and c.data, and sets the page's
// data buffer as parts: each chunk's head, its values from where they lie
// (the gathered page, or the caller's arrays), their padding.
func (c *pageEnc) chunkHeads(pv pageValues, cl values.ChunkLayout, spans []chunkSpan, enc *encoded) error {
	bw := pv.info.bits / 8
	c.meta, c.data = c.meta[:0], c.data[:0]
	var one [1][]byte
	ends := make([]int, len(spans))
	for k, sp := range spans {
		one[0] = pv.fixed[sp.value*bw : (sp.value+sp.cnt)*bw]
		var err error
		if c.meta, c.data, err = values.AppendChunkHead(c.meta, c.data, cl, values.ChunkParts{LogNumValues: sp.lg, Values: one[:]}); err != nil {
			return err
		}
		ends[k] = len(c.data)
	}
	parts := make([][]byte, 0, 3*len(spans))
	start := 0
	for k, sp := range spans {
		vals := pv.fixed[sp.value*bw : (sp.value+sp.cnt)*bw]
		parts = append(parts, c.data[start:ends[k]], vals)
		if pad := values.ChunkPadding(len(vals)); len(pad) > 0 {
			parts = append(parts, pad)
		}
		enc.valueBytes += len(vals)
		start = ends[k]
	}
	enc.parts = parts
	return nil
}
