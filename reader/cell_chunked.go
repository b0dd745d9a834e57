package reader

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// pageData is one decoded dense page of a leaf column: its layers, level
// streams and visible leaf values.
type pageData struct {
	layers     []structural.Layer
	rep, def   []uint16 // nil when absent
	numVisible int
	vals       values.Block // the visible values (indices when dict != nil)
	// chunks: variable-width values left as their chunks decoded them
	// (decodeChunkedChunks; vals is then unset): each of N values and N+1
	// offsets into its own Data.
	chunks    []values.Block
	dict      *values.Block // page dictionary items
	constant  []byte        // every visible value is this scalar (vals unset)
	scalarBuf []byte        // every visible value is the scalar of this Lance scalar value buffer
	constVar  bool          // constant is a variable-width value
	allNull   bool          // no value bytes: every visible value is null
}

func (f *File) pageBuffers(p *page) ([][]byte, error) {
	bufs := make([][]byte, len(p.buffers))
	for i, r := range p.buffers {
		b, err := f.readAt(r.Position, r.Size)
		if err != nil {
			return nil, err
		}
		bufs[i] = b
	}
	return bufs, nil
}

// decodeDense decodes a dense page (pb21 execution form) into levels and
// visible values.
func decodeDense(p *page, bufs [][]byte) (*pageData, error) {
	switch x := p.layout.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		return decodeChunkedPage(x.MiniBlockLayout, bufs, int(p.rows))
	case *enc21pb.PageLayout_ConstantLayout:
		return decodeConstantWindow(x.ConstantLayout, bufs, p.rows, 0, p.rows)
	case *enc21pb.PageLayout_FullZipLayout:
		return decodeZippedPage(x.FullZipLayout, bufs, int(p.rows))
	}
	return nil, fmt.Errorf("layout %T: %w", p.layout.GetLayout(), ErrUnsupported)
}

// countVisible returns the number of visible entries of a level stream.
func countVisible(layers []structural.Layer, rep, def []uint16, n int) int {
	if rep == nil || def == nil {
		return n
	}
	return structural.CountVisible(def, structural.MaxVisibleDef(layers))
}

func decodeChunkedPage(m *enc21pb.MiniBlockLayout, bufs [][]byte, rows int) (*pageData, error) {
	pd, _, err := decodeChunkedCoded(m, bufs, rows, false)
	return pd, err
}

// decodeChunkedCoded is decodeChunkedPage; with keepFsst, FSST-coded values
// are left coded and the page's table returned (nil when the values are
// not FSST-coded).
func decodeChunkedCoded(m *enc21pb.MiniBlockLayout, bufs [][]byte, rows int, keepFsst bool) (*pageData, *values.FsstTable, error) {
	pd, t, err := decodeChunkedBody(m, bufs, rows, true)
	if err != nil || t == nil || keepFsst {
		return pd, t, err
	}
	if pd.vals, err = t.DecodeBlock(pd.vals); err != nil {
		return nil, nil, fmt.Errorf("fsst values: %w", err)
	}
	return pd, nil, nil
}

// decodeChunkedChunks is decodeChunkedCoded keeping FSST-coded values
// coded, and variable-width values in the blocks their chunks decode to
// (pd.chunks) instead of joining them.
func decodeChunkedChunks(m *enc21pb.MiniBlockLayout, bufs [][]byte, rows int) (*pageData, *values.FsstTable, error) {
	return decodeChunkedBody(m, bufs, rows, false)
}

// decodeChunkedBody decodes a chunked page's levels and values, FSST-coded
// values left coded with the page's table returned; without join,
// variable-width values are left in their chunks' blocks (pd.chunks).
func decodeChunkedBody(m *enc21pb.MiniBlockLayout, bufs [][]byte, rows int, join bool) (*pageData, *values.FsstTable, error) {
	if m.NumBuffers == 0 || m.NumBuffers > 16 {
		return nil, nil, fmt.Errorf("mini-block page with %d value buffers: %w", m.NumBuffers, ErrCorrupt)
	}
	if m.NumItems > 1<<40 {
		return nil, nil, fmt.Errorf("mini-block page with %d items: %w", m.NumItems, ErrCorrupt)
	}
	hasRep := m.RepCompression != nil
	if !hasRep && m.NumItems != uint64(rows) {
		return nil, nil, fmt.Errorf("mini-block page has %d items for %d rows: %w", m.NumItems, rows, ErrCorrupt)
	}
	refs, err := values.ParseChunkMeta(bufs[0], m.HasLargeChunk, len(bufs[1]), m.NumItems)
	if err != nil {
		return nil, nil, err
	}
	pd := &pageData{layers: m.Layers, numVisible: int(m.NumItems)}
	if m.Dictionary != nil {
		if pd.dict, err = decodePageDict(m.Dictionary, bufs[2], m.NumDictionaryItems); err != nil {
			return nil, nil, err
		}
	}
	layout := values.ChunkLayout{HasRep: hasRep, HasDef: m.DefCompression != nil, NumBuffers: int(m.NumBuffers), Large: m.HasLargeChunk}
	// Each chunk's level count leads its header: the levels are decoded
	// in place into one slice per stream of the page's level count (when
	// the page's bytes can back that many), each chunk into its own part.
	levelAt := chunkLevels(refs, bufs[1], layout)
	size := int(m.NumItems)
	if levelAt != nil {
		size = levelAt[len(refs)]
	}
	if layout.HasDef {
		pd.def = make([]uint16, 0, size)
	}
	if layout.HasRep {
		pd.rep = make([]uint16, 0, size)
	}
	maxVis := structural.MaxVisibleDef(m.Layers)
	// FSST-coded chunks are joined still coded (a fraction of the size)
	// and expanded once, into one buffer of the page's exact size.
	fs, _ := values.FsstCoded(m.ValueCompression)
	blocks := make([]values.Block, len(refs))
	// Pieces of the chunks decode side by side, each into levels of its
	// own, joined in order after.
	cuts := []int{0, len(refs)}
	plain := m.ValueCompression.GetFlat() != nil && !layout.HasDef && !layout.HasRep // decoding is a copy
	if m.NumItems >= 2*par.MinValues && !plain {
		cuts = par.Pieces(len(refs), minParallelChunks)
	}
	// Fixed-width values are decoded in place into one buffer of the page's
	// values (when the chunks' bytes can back it), each chunk into its part.
	var page []byte
	var valAt []int
	w, fixed := values.FixedChunkBits(m.ValueCompression)
	if fixed && fs == nil && m.ValueCompression.GetFlat() == nil { // (flat chunks are joined by one copy anyway)
		valAt = make([]int, len(refs)+1)
		for ci, r := range refs {
			valAt[ci+1] = valAt[ci] + r.NumValues
		}
		if n := valAt[len(refs)]; backed(uint64(n), uint64(len(bufs[1]))) {
			page = bulk.Make(n * w / 8)[:n*w/8] // (every chunk fills its part)
		}
	}
	reps, defs := make([][]uint16, len(cuts)-1), make([][]uint16, len(cuts)-1)
	reps[0], defs[0] = pd.rep, pd.def
	R := uint16(structural.NumLists(m.Layers))
	starts := make([]int, len(cuts)-1) // rows starting in each piece's levels
	err = par.EachPiece(cuts, func(j, lo, hi int) error {
		rep, def := reps[j], defs[j]
		switch {
		case levelAt != nil:
			a, b := levelAt[lo], levelAt[hi]
			if layout.HasRep {
				rep = pd.rep[a:a:b]
			}
			if layout.HasDef {
				def = pd.def[a:a:b]
			}
		case j > 0:
			share := int(m.NumItems) / (len(cuts) - 1)
			if layout.HasRep {
				rep = make([]uint16, 0, share)
			}
			if layout.HasDef {
				def = make([]uint16, 0, share)
			}
		}
		var sink *valueSink
		if page != nil {
			sink = &valueSink{}
		}
		for ci := lo; ci < hi; ci++ {
			r := refs[ci]
			if sink != nil {
				a, b := valAt[ci]*w/8, valAt[ci+1]*w/8
				sink.dst = page[a:a:b]
			}
			var err error
			if rep, def, blocks[ci], err = decodeChunkInto(m, layout, maxVis, bufs[1][r.Offset:r.Offset+r.Size], r, ci, rep, def, fs != nil, sink); err != nil {
				return err
			}
			if sink != nil {
				// Values that did not land in place (a tree decoding into
				// memory of its own) are copied there.
				v := blocks[ci]
				a, b := valAt[ci]*w/8, valAt[ci+1]*w/8
				if v.Bits != w || v.N != r.NumValues || v.Variable() || v.Children != nil || v.NullItems || len(v.ItemValid) > 0 || len(v.Data) < b-a {
					return fmt.Errorf("chunk %d decoded to %d %d-bit values, want %d of %d bits: %w", ci, v.N, v.Bits, r.NumValues, w, ErrCorrupt)
				}
				if b > a && &v.Data[0] != &page[a] {
					copy(page[a:b], v.Data)
				}
				blocks[ci] = values.Block{}
			}
		}
		if hasRep {
			// rep holds this piece's levels alone.
			n := 0
			for _, r := range rep {
				n += b2i(r == R)
			}
			starts[j] = n
		}
		reps[j], defs[j] = rep, def
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if levelAt != nil {
		// Every chunk decoded the levels its header counts, in place.
		for j := range reps {
			n := levelAt[cuts[j+1]] - levelAt[cuts[j]]
			if layout.HasRep && len(reps[j]) != n || layout.HasDef && len(defs[j]) != n {
				return nil, nil, fmt.Errorf("chunks %d to %d decoded %d, %d levels, headers say %d: %w", cuts[j], cuts[j+1], len(reps[j]), len(defs[j]), n, ErrCorrupt)
			}
		}
		pd.rep, pd.def = pd.rep[:cap(pd.rep)], pd.def[:cap(pd.def)]
	} else {
		pd.rep, pd.def = reps[0], defs[0]
		for j := 1; j < len(reps); j++ {
			pd.rep = append(pd.rep, reps[j]...)
			pd.def = append(pd.def, defs[j]...)
		}
	}
	if hasRep {
		rowStarts := 0
		for _, n := range starts {
			rowStarts += n
		}
		if rowStarts != rows {
			return nil, nil, fmt.Errorf("levels hold %d rows, page %d: %w", rowStarts, rows, ErrCorrupt)
		}
	}
	switch {
	case page != nil:
		pd.vals = values.Block{Bits: w, N: valAt[len(refs)], Data: page}
	case !join && variableChunks(blocks):
		pd.chunks = slices.DeleteFunc(blocks, func(b values.Block) bool { return b.N == 0 })
	default:
		if pd.vals, err = concatBlocks(blocks); err != nil {
			return nil, nil, err
		}
	}
	if fs == nil {
		return pd, nil, nil
	}
	t, err := values.ParseFsstTable(fs.SymbolTable)
	if err != nil {
		return nil, nil, fmt.Errorf("fsst values: %w", err)
	}
	return pd, t, nil
}

// decodePageDict decodes the n items of a chunked page's dictionary (enc
// over buf), refusing a count its bytes cannot back.
func decodePageDict(enc *enc21pb.CompressiveEncoding, buf []byte, n uint64) (*values.Block, error) {
	if n > 1<<32 || !backed(n, uint64(len(buf))) {
		return nil, fmt.Errorf("dictionary of %d items: %w", n, ErrCorrupt)
	}
	d, err := values.DecodeBlock(enc, buf, int(n))
	if err != nil {
		return nil, fmt.Errorf("dictionary: %w", err)
	}
	return &d, nil
}

// chunkLevels returns the running level count of a chunked page's chunks
// from their headers (levelAt[ci] levels before chunk ci, the total last),
// or nil when the page has no levels or its bytes cannot back that many
// (its chunks then fail to decode, or decode growing their levels).
func chunkLevels(refs []values.ChunkRef, data []byte, layout values.ChunkLayout) []int {
	if !layout.HasRep && !layout.HasDef {
		return nil
	}
	levelAt := make([]int, len(refs)+1)
	for ci, r := range refs {
		n := 0
		if r.Size >= 2 {
			n = int(binary.LittleEndian.Uint16(data[r.Offset:]))
		}
		levelAt[ci+1] = levelAt[ci] + n
	}
	if !backed(uint64(levelAt[len(refs)]), uint64(len(data))) {
		return nil
	}
	return levelAt
}

// minParallelChunks is the fewest chunks a piece of a page decodes on its
// own goroutine.
const minParallelChunks = 8

// decodeOneChunk decodes chunk ci (data, located by r) of a chunked page:
// its levels are appended to rep and def, its values returned. With
// fsstCoded, values under an FSST encoding are returned still FSST-coded
// (the caller expands the ones it needs with the page's table).
func decodeOneChunk(m *enc21pb.MiniBlockLayout, layout values.ChunkLayout, maxVis int, data []byte, r values.ChunkRef, ci int, rep, def []uint16, fsstCoded bool) ([]uint16, []uint16, values.Block, error) {
	return decodeChunkInto(m, layout, maxVis, data, r, ci, rep, def, fsstCoded, nil)
}

// valueSink is where a chunk's fixed-width values go (decodeChunkInto):
// dst, with room for them, and the general-compression scratch the chunks
// of one piece share.
type valueSink struct {
	dst, scratch []byte
}

// decodeChunkInto is decodeOneChunk with, when sink is not nil, the values
// decoded into sink.dst (values.DecodeMiniBlockInto).
func decodeChunkInto(m *enc21pb.MiniBlockLayout, layout values.ChunkLayout, maxVis int, data []byte, r values.ChunkRef, ci int, rep, def []uint16, fsstCoded bool, sink *valueSink) ([]uint16, []uint16, values.Block, error) {
	parts, err := values.ParseChunk(data, layout)
	if err != nil {
		return rep, def, values.Block{}, fmt.Errorf("chunk %d: %w", ci, err)
	}
	if !layout.HasRep && layout.HasDef && parts.NumLevels != r.NumValues {
		return rep, def, values.Block{}, fmt.Errorf("chunk %d has %d levels for %d values: %w", ci, parts.NumLevels, r.NumValues, ErrCorrupt)
	}
	if layout.HasRep {
		if rep, err = values.DecodeLevels(m.RepCompression, parts.Rep, parts.NumLevels, rep); err != nil {
			return rep, def, values.Block{}, fmt.Errorf("chunk %d rep: %w", ci, err)
		}
	}
	if layout.HasDef {
		start := len(def)
		if def, err = values.DecodeLevels(m.DefCompression, parts.Def, parts.NumLevels, def); err != nil {
			return rep, def, values.Block{}, fmt.Errorf("chunk %d def: %w", ci, err)
		}
		if layout.HasRep {
			if vis := structural.CountVisible(def[start:], maxVis); vis != r.NumValues {
				return rep, def, values.Block{}, fmt.Errorf("chunk %d has %d visible levels for %d values: %w", ci, vis, r.NumValues, ErrCorrupt)
			}
		}
	} else if layout.HasRep && parts.NumLevels != r.NumValues {
		return rep, def, values.Block{}, fmt.Errorf("chunk %d has %d levels for %d values: %w", ci, parts.NumLevels, r.NumValues, ErrCorrupt)
	}
	var v values.Block
	fs, coded := values.FsstCoded(m.ValueCompression)
	switch {
	case fs != nil && fsstCoded:
		v, err = values.DecodeMiniBlock(coded, parts.Values, r.NumValues)
	case sink != nil:
		v, sink.scratch, err = values.DecodeMiniBlockInto(m.ValueCompression, parts.Values, r.NumValues, sink.dst, sink.scratch)
	default:
		v, err = values.DecodeMiniBlock(m.ValueCompression, parts.Values, r.NumValues)
	}
	if err != nil {
		return rep, def, values.Block{}, fmt.Errorf("chunk %d values: %w", ci, err)
	}
	return rep, def, v, nil
}

// variableChunks reports whether every decoded chunk block holding values
// is variable width, its offsets one more than its values and within its
// data.
func variableChunks(bs []values.Block) bool {
	for _, b := range bs {
		if b.N > 0 && (!b.Variable() || len(b.Offsets) != b.N+1 || b.Offsets[0] > b.Offsets[b.N] || b.Offsets[b.N] > uint64(len(b.Data))) {
			return false
		}
	}
	return true
}

// concatBlocks joins decoded chunk blocks into one.
func concatBlocks(bs []values.Block) (values.Block, error) {
	// Blocks without values (a window of no stored values) take no part:
	// they may lack even the leading offset of a variable-width block.
	if slices.ContainsFunc(bs, func(b values.Block) bool { return b.N == 0 }) {
		kept := make([]values.Block, 0, len(bs))
		for _, b := range bs {
			if b.N > 0 {
				kept = append(kept, b)
			}
		}
		if len(kept) == 0 {
			out := bs[0]
			if out.Variable() && len(out.Offsets) == 0 {
				out.Offsets = []uint64{0}
			}
			return out, nil
		}
		bs = kept
	}
	if len(bs) == 1 {
		return bs[0], nil
	}
	var out values.Block
	if len(bs) == 0 {
		return out, nil
	}
	out.Bits, out.Dims = bs[0].Bits, bs[0].Dims
	// Size the output once: chunks are appended into it.
	total, nvals := 0, 0
	for _, b := range bs {
		total += len(b.Data)
		nvals += b.N
	}
	out.Data = bulk.Make(total)
	if out.Bits == 0 {
		out.Offsets = append(bulk.Grow([]uint64(nil), nvals+1), 0)
	}
	// Bits per row of every FSL layer's item validity.
	layerBits := make([]int, len(bs[0].ItemValid))
	per := 1
	for k := range layerBits {
		per *= out.Dims[k]
		layerBits[k] = per
	}
	out.ItemValid = make([][]byte, len(layerBits))
	nbits := 0
	var moved bulk.Counter // the appends below cannot be preempted (internal/bulk)
	for _, b := range bs {
		moved.Add(len(b.Data))
		if b.Bits != out.Bits || len(b.ItemValid) != len(out.ItemValid) {
			return out, fmt.Errorf("chunks decoded to different widths: %w", ErrCorrupt)
		}
		if out.Bits == 0 {
			base := uint64(len(out.Data))
			for _, o := range b.Offsets[1:] {
				out.Offsets = append(out.Offsets, base+o)
			}
			out.Data = append(out.Data, b.Data...)
		} else if out.Bits%8 == 0 {
			out.Data = append(out.Data, b.Data[:b.N*out.Bits/8]...)
		} else {
			out.Data = appendBits(out.Data, nbits, b.Data, b.N*out.Bits)
			nbits += b.N * out.Bits
		}
		for k, lb := range layerBits {
			if (b.ItemValid[k] == nil) != (bs[0].ItemValid[k] == nil) {
				return out, fmt.Errorf("chunks disagree on item validity: %w", ErrCorrupt)
			}
			if b.ItemValid[k] != nil {
				out.ItemValid[k] = appendBits(out.ItemValid[k], out.N*lb, b.ItemValid[k], b.N*lb)
			}
		}
		out.N += b.N
	}
	return out, nil
}

// appendBits appends n bits of src (from bit 0) at bit position at of dst.
func appendBits(dst []byte, at int, src []byte, n int) []byte {
	return appendBitsFrom(dst, at, src, 0, n)
}
