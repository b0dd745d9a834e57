package writer

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/internal/bitmap"
	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Pages whose values are all null or all one scalar but whose structure is
// not trivial have no dense planar cell (dense x constant / none are
// degenerate only). planar writes them as sparse x none / sparse x constant
// in 2.3 and as Lance's ConstantLayout with level buffers in pb21 files.

// encodeStructuredConstant fills enc for such a page. scalar is nil for
// all-null pages.
func (c *pageEnc) encodeStructuredConstant(d structural.Dense, scalar []byte, f Format, enc *encoded) error {
	if !f.planarMetadata() {
		// pb21: ConstantLayout with raw u16 level buffers [rep, def]
		// (an absent stream is an empty buffer). Lance's all-null
		// decoder makes every leaf slot null whatever the layers say; a
		// non-nullable child is still masked, as the struct layers on
		// its path are nullable wherever a null row lies above them
		// (structural.BuildDense). The layers are the column's own:
		// a struct layer nullable here and all-valid in another page
		// of the column is miscounted when a list lies inside it.
		if scalar == nil && d.Rep == nil && len(d.Layers) == 1 && d.Layers[0] == structural.NullableItem {
			// A flat column's all-null page: Lance 2.2's own form, the
			// layer alone, no level buffers (every row is null).
			enc.layout = &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{
				Layers: d.Layers,
			}}}
			enc.bufs = nil
			enc.desc = "no values"
			return nil
		}
		var rep, def []byte
		if d.Rep != nil {
			rep = values.AppendFlatLevels(nil, d.Rep)
		}
		if d.Def != nil {
			def = values.AppendFlatLevels(nil, d.Def)
		}
		enc.layout = &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{
			Layers: d.Layers, InlineValue: scalar,
		}}}
		enc.bufs = [][]byte{rep, def}
		enc.desc = "levels as raw u16 page buffers"
		return nil
	}
	vp := &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_None{None: &enc23pb.NoValues{}}}
	enc.desc = "no values"
	if scalar != nil {
		vp = &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Constant{Constant: &enc23pb.ConstantValue{Scalar: scalar}}}
		enc.desc = fmt.Sprintf("scalar %d bytes", len(scalar))
	}
	enc.bufs = nil
	return c.finishSparse(d, vp, enc)
}

// encodeSparseChunked fills enc for a sparse x chunked page: the structure
// as sparse sets, every leaf slot (nulls included) in chunks without levels,
// the value buffers first (Lance 14's sparse/planar.rs writes and reads these
// pages the same way).
func (c *pageEnc) encodeSparseChunked(d structural.Dense, pv pageValues, enc *encoded) error {
	if err := c.encodeChunked(flatDense(d.NumVisible), pv, enc); err != nil {
		return err
	}
	p, err := format.PlanarFromPB21(enc.layout)
	if err != nil {
		return err
	}
	ch := p.GetValues().GetChunked()
	if ch == nil {
		return fmt.Errorf("sparse x chunked: chunked encoding gave %T", p.GetValues().GetCodec())
	}
	ch.Levels, ch.NumItems = nil, 0
	return c.finishSparse(d, p.Values, enc)
}

// sparseStructure turns a page's dense levels into sparse structural sets
// and the buffers of their sequences (structural.BuildSparse).
func (c *pageEnc) sparseStructure(d structural.Dense) (*enc23pb.StructuralPlane, [][]byte, error) {
	var s *enc23pb.SparseStructure
	var bufs [][]byte
	var err error
	if c.layers != nil {
		s, bufs, err = structural.BuildSparse(c.layers, c.path) // (the shell's, ListShell)
	} else if lds, ok := structural.ListLayers(c.arrays, c.path); ok {
		// A list of leaves: the layers straight from the page's arrays,
		// not unraveled from its levels.
		s, bufs, err = structural.BuildSparse(lds, c.path)
	} else {
		s, bufs, err = structural.BuildSparseDense(d, c.path)
	}
	if err != nil {
		return nil, nil, err
	}
	return &enc23pb.StructuralPlane{Codec: &enc23pb.StructuralPlane_Sparse{Sparse: s}}, bufs, nil
}

// The value plane of sparse pages: the values are stored without levels;
// the structure goes to sparse sets (sparseStructure). Value buffers come
// first, then the structural buffers, as Lance 14 writes them.

// flatDense is the structure of n values stored one after the other with
// no levels.
func flatDense(n int) structural.Dense {
	return structural.Dense{Layers: []structural.Layer{structural.AllValidItem}, NumItems: n, NumVisible: n, NumRows: n}
}

// finishSparse puts the page's sparse structure after the value plane vp
// (whose buffers are already in enc.bufs).
func (c *pageEnc) finishSparse(d structural.Dense, vp *enc23pb.ValuePlane, enc *encoded) error {
	plane, bufs, err := c.sparseStructure(d)
	if err != nil {
		return err
	}
	enc.layout = nil
	enc.planar = &enc23pb.PlanarLayout{Structure: plane, Values: vp}
	enc.bufs = append(enc.bufs, bufs...)
	enc.desc = "sparse sets; " + enc.desc
	return nil
}

// zippedPlane re-expresses a zipped page without levels (as encodeZipped
// writes it for a flat structure) as the value plane of a sparse page.
func zippedPlane(l *enc21pb.PageLayout) (*enc23pb.ValuePlane, error) {
	p, err := format.PlanarFromPB21(l)
	if err != nil {
		return nil, err
	}
	z := p.GetValues().GetZipped()
	if z == nil {
		return nil, fmt.Errorf("sparse x zipped: zipped encoding gave %T", p.GetValues().GetCodec())
	}
	z.Levels = nil
	return p.Values, nil
}

// encodeSparseZipped fills enc for a sparse x zipped page: only the stored
// values (valid all the way up), one record each with no control words,
// addressed by stride (fixed width) or by an offset index of n+1 entries
// (variable width).
func (c *pageEnc) encodeSparseZipped(d structural.Dense, pv pageValues, enc *encoded) error {
	stored := c.compactValues(pv)
	if err := c.encodeZipped(flatDense(stored.n), stored, enc); err != nil {
		return err
	}
	vp, err := zippedPlane(enc.layout)
	if err != nil {
		return err
	}
	enc.desc = fmt.Sprintf("%d stored values, %s", stored.n, enc.desc)
	return c.finishSparse(d, vp, enc)
}

// compactValues keeps the values of the slots that hold one (the others
// are null or under a null ancestor), in the stored scratch.
func (c *pageEnc) compactValues(pv pageValues) pageValues {
	if pv.compact {
		k := pv.stored()
		return pageValues{info: pv.info, n: k, fixed: pv.fixed, offsets: pv.offsets, fsst: pv.fsst, nulls: make([]bool, k)}
	}
	k := pv.n - bitmap.CountTrue(pv.nulls[:pv.n])
	out := pageValues{info: pv.info, n: k, fsst: pv.fsst, nulls: make([]bool, k)}
	switch pv.info.kind {
	case values.KindVariable, values.KindVarPacked:
		out.offsets = make([]uint64, 1, k+1)
		var size uint64
		for i, null := range pv.nulls[:pv.n] {
			if !null {
				size += pv.offsets[i+1] - pv.offsets[i]
			}
		}
		out.fixed = slices.Grow(c.stored[:0], int(size))
		for i, null := range pv.nulls[:pv.n] {
			if !null {
				out.fixed = append(out.fixed, pv.fixed[pv.offsets[i]:pv.offsets[i+1]]...)
				out.offsets = append(out.offsets, uint64(len(out.fixed)))
			}
		}
	default:
		w := pv.info.rowBits() / 8
		out.fixed = slices.Grow(c.stored[:0], k*w)
		for i := 0; i < pv.n; {
			if pv.nulls[i] {
				i++
				continue
			}
			j := i + 1
			for j < pv.n && !pv.nulls[j] {
				j++
			}
			out.fixed = append(out.fixed, pv.fixed[i*w:j*w]...)
			i = j
		}
		if pv.itemValid != nil {
			out.itemValid = make([][]byte, len(pv.itemValid))
			per := 1
			for l, iv := range pv.itemValid {
				per *= pv.info.dims[l]
				if iv == nil {
					continue
				}
				dst := make([]byte, (k*per+7)/8)
				r := 0
				for i, null := range pv.nulls[:pv.n] {
					if null {
						continue
					}
					bitutil.CopyBitmap(iv, i*per, per, dst, r*per)
					r++
				}
				if !allSet(dst, k*per) {
					out.itemValid[l] = dst
				}
			}
			if !slices.ContainsFunc(out.itemValid, func(b []byte) bool { return b != nil }) {
				// The stored vectors have no null items (Lance removes the
				// validity of what it does not store).
				out.itemValid = nil
			}
		}
	}
	c.stored = out.fixed
	return out
}

// encodeSparseIndexed fills enc for a sparse x indexed page: one u32 index
// per leaf slot (null slots index the empty item) under the smallest block
// codec, then the dictionary items zipped with no control words and their
// offset index.
func (c *pageEnc) encodeSparseIndexed(d structural.Dense, idx []byte, pd *pageDict, enc *encoded) error {
	n := len(idx) / 4
	idxEnc, payload := indexBlock(idx, n, pd.n, c.opts.Policy == selector.PolicyCost)
	items := pageValues{
		info: leafInfo{kind: values.KindVariable, offBits: c.info.offBits, utf8: c.info.utf8},
		n:    pd.n, fixed: pd.raw, offsets: pd.rawOffsets, nulls: make([]bool, pd.n),
	}
	// Lance compresses dictionary items it stores per value with Zstd.
	itemEnc := encoded{plan: selector.Plan{Codec: values.GeneralCodec{Scheme: values.SchemeZstd, Level: c.opts.Level, Inner: values.VariableCodec{OffBits: c.info.offBits}}}}
	if c.opts.DictItems == selector.CompressionNone {
		itemEnc.plan.Codec = values.VariableCodec{OffBits: c.info.offBits}
	}
	if err := c.encodeZipped(flatDense(pd.n), items, &itemEnc); err != nil {
		return err
	}
	vp, err := zippedPlane(itemEnc.layout)
	if err != nil {
		return err
	}
	enc.bufs = append([][]byte{payload}, itemEnc.bufs...)
	enc.desc = fmt.Sprintf("%d indices %s, %d items %s", n, values.EncodingName(idxEnc), pd.n, itemEnc.desc)
	return c.finishSparse(d, &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Indexed{Indexed: &enc23pb.IndexedValues{
		Indices: idxEnc, Items: vp.GetZipped(),
	}}}, enc)
}

// indexBlock encodes the u32 indices of an indexed page as the smallest of
// the block forms Lance reads: flat, out-of-line bit packing, and Zstd or
// LZ4 over flat (the cost policy also tries Zstd at a better level).
func indexBlock(idx []byte, n, items int, better bool) (*enc21pb.CompressiveEncoding, []byte) {
	blk := values.Block{Bits: 32, N: n, Data: idx}
	var best values.Codec = values.FlatCodec{Bits: 32}
	bestBuf := idx
	cands := []values.Codec{
		values.GeneralCodec{Scheme: values.SchemeZstd, Inner: values.FlatCodec{Bits: 32}},
		values.GeneralCodec{Scheme: values.SchemeLZ4, Inner: values.FlatCodec{Bits: 32}},
	}
	if better {
		cands = append(cands, values.GeneralCodec{Scheme: values.SchemeZstd, Level: 9, Inner: values.FlatCodec{Bits: 32}})
	}
	if w := bits.Len(uint(max(items-1, 1))); w < 32 {
		cands = append(cands, values.OutOfLineCodec{Bits: 32, Width: w})
	}
	for _, cd := range cands {
		if cd.Check(blk) != nil {
			continue
		}
		if b, err := cd.AppendBlock(nil, blk); err == nil && len(b) < len(bestBuf) {
			best, bestBuf = cd, b
		}
	}
	return best.Encoding(), bestBuf
}

// allSet reports whether the first n bits of bm are all set.
func allSet(bm []byte, n int) bool {
	for i := 0; i < n/8; i++ {
		if bm[i] != 0xFF {
			return false
		}
	}
	for i := n &^ 7; i < n; i++ {
		if bm[i/8]&(1<<(i%8)) == 0 {
			return false
		}
	}
	return true
}
