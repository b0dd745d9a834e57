package writer

import (
	"encoding/binary"
	"fmt"
	"google.golang.org/protobuf/proto"
	"math/bits"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Pages whose values are all null or all one scalar but whose structure is
// not trivial have no dense planar cell (dense x constant / none are
// degenerate only). planar writes them as sparse x none / sparse x constant
// in 2.3 and as Lance's ConstantLayout with level buffers in pb21 files.

// encodeStructuredConstant fills enc for such a page. scalar is nil for
// all-null pages.
func (c *column) encodeStructuredConstant(d structural.Dense, scalar []byte, f Format, enc *encoded) error {
	if !f.planarMetadata() {
		// pb21: ConstantLayout with raw u16 level buffers [rep, def]
		// (an absent stream is an empty buffer). Lance's all-null
		// decoder makes every leaf slot null whatever the layers say; a
		// non-nullable child is still masked, as the struct layers on
		// its path are nullable wherever a null row lies above them
		// (structural.BuildDense). The layers are the column's own:
		// a struct layer nullable here and all-valid in another page
		// of the column is miscounted when a list lies inside it.
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
	plane, bufs, err := c.sparseStructure(d)
	if err != nil {
		return err
	}
	vp := &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_None{None: &enc23pb.NoValues{}}}
	enc.desc = "sparse sets, no values"
	if scalar != nil {
		vp = &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Constant{Constant: &enc23pb.ConstantValue{Scalar: scalar}}}
		enc.desc = fmt.Sprintf("sparse sets, scalar %d bytes", len(scalar))
	}
	enc.planar = &enc23pb.PlanarLayout{Structure: plane, Values: vp}
	enc.bufs = bufs
	return nil
}

// encodeSparseChunked fills enc for a sparse x chunked page: the structure
// as sparse sets, every leaf slot (nulls included) in chunks without levels,
// the value buffers first (Lance 14's sparse/planar.rs writes and reads these
// pages the same way).
func (c *column) encodeSparseChunked(d structural.Dense, pv pageValues, enc *encoded) error {
	flat := structural.Dense{Layers: []structural.Layer{structural.AllValidItem}, NumItems: d.NumVisible, NumVisible: d.NumVisible, NumRows: d.NumVisible}
	if err := c.encodeChunked(flat, pv, enc); err != nil {
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
	plane, bufs, err := c.sparseStructure(d)
	if err != nil {
		return err
	}
	enc.layout = nil
	enc.planar = &enc23pb.PlanarLayout{Structure: plane, Values: p.Values}
	enc.bufs = append(enc.bufs, bufs...)
	enc.desc = "sparse sets; " + enc.desc
	return nil
}

// sparseStructure turns a page's dense levels into sparse structural sets
// and the buffers of their sequences.
func (c *column) sparseStructure(d structural.Dense) (*enc23pb.StructuralPlane, [][]byte, error) {
	lds, err := structural.UnravelPath(d.Layers, c.path, d.Rep, d.Def, d.NumRows, d.NumVisible)
	if err != nil {
		return nil, nil, fmt.Errorf("unraveling own levels: %w", err)
	}
	var layers []*enc23pb.SparseStructuralLayer
	var bufs [][]byte
	for i, ld := range lds {
		v, b := sparseValidity(ld.Valid, ld.Len)
		bufs = append(bufs, b...)
		switch c.path[i].Kind {
		case structural.StepList:
			var ne, counts []uint64
			for s := 0; s < ld.Len; s++ {
				if n := ld.Offsets[s+1] - ld.Offsets[s]; n > 0 {
					ne = append(ne, uint64(s))
					counts = append(counts, uint64(n))
				}
			}
			neEnc, neBuf := u64Sequence(ne)
			cEnc, cBuf := u64Sequence(counts)
			// Buffer order: non-empty positions, counts, validity.
			bufs = bufs[:len(bufs)-len(b)]
			bufs = append(bufs, neBuf...)
			bufs = append(bufs, cBuf...)
			bufs = append(bufs, b...)
			layers = append(layers, &enc23pb.SparseStructuralLayer{Layer: &enc23pb.SparseStructuralLayer_List{List: &enc23pb.SparseListLayer{
				NumChildSlots: uint64(ld.Offsets[ld.Len]), NonEmptyPositions: neEnc, NumNonEmptyPositions: uint64(len(ne)),
				Counts: cEnc, Validity: v,
			}}})
		case structural.StepFSL:
			layers = append(layers, &enc23pb.SparseStructuralLayer{Layer: &enc23pb.SparseStructuralLayer_FixedSizeList{FixedSizeList: &enc23pb.SparseFixedSizeListLayer{
				Dimension: uint64(ld.Dim), Validity: v,
			}}})
		default:
			layers = append(layers, &enc23pb.SparseStructuralLayer{Layer: &enc23pb.SparseStructuralLayer_Validity{Validity: v}})
		}
	}
	return &enc23pb.StructuralPlane{Codec: &enc23pb.StructuralPlane_Sparse{Sparse: &enc23pb.SparseStructure{Layers: layers}}}, bufs, nil
}

// u64Sequence encodes a u64 sequence (positions, counts) as a block, in the
// forms Lance 14's sequence decoder accepts (sequence.rs, compression.rs):
// Constant{} exactly when empty; Constant{value} (8 bytes, little-endian)
// when every value is one value, the single-value case included; Range only
// with at least two values and a positive step; otherwise the smallest of
// Flat{64}, out-of-line bit packing of a width in 1..63, inline bit packing
// (one 1024-value window at most, all Lance reads as a block) and Delta over
// out-of-line bit packing (sorted sequences, as Lance writes positions).
// Lance refuses Range with step 0, Delta of fewer than two values and
// out-of-line widths 0 or 64.
func u64Sequence(xs []uint64) (*enc21pb.CompressiveEncoding, [][]byte) {
	if len(xs) == 0 {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: &enc21pb.Constant{}}}, nil
	}
	equal, arith := true, len(xs) > 1 && xs[1] > xs[0]
	var or uint64
	for i, x := range xs {
		or |= x
		if x != xs[0] {
			equal = false
		}
		if i > 1 && (x < xs[i-1] || x-xs[i-1] != xs[1]-xs[0]) {
			arith = false
		}
	}
	if equal {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: &enc21pb.Constant{
			Value: binary.LittleEndian.AppendUint64(nil, xs[0]),
		}}}, nil
	}
	if arith {
		return values.RangeCodec{Bits: 64, Start: xs[0], Step: xs[1] - xs[0]}.Encoding(), nil
	}
	raw := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		raw = binary.LittleEndian.AppendUint64(raw, x)
	}
	blk := values.Block{Bits: 64, N: len(xs), Data: raw}
	var cands []values.Codec
	// Not all equal, so some value is non-zero: the width is at least 1.
	if w := bits.Len64(or); w < 64 {
		cands = append(cands, values.OutOfLineCodec{Bits: 64, Width: w})
	}
	if len(xs) <= 1024 {
		cands = append(cands, values.BitpackCodec{Bits: 64})
	}
	// Sorted and not arithmetic: at least three values and two different
	// deltas, so the delta width is at least 1.
	if d, err := values.NewDelta(blk); err == nil {
		if oc, ok := d.Deltas.(values.OutOfLineCodec); ok && oc.Width >= 1 && oc.Width < 64 {
			cands = append(cands, d)
		}
	}
	best, bestBuf := values.Codec(values.FlatCodec{Bits: 64}), raw
	for _, c := range cands {
		if c.Check(blk) != nil {
			continue
		}
		b, err := c.AppendBlock(nil, blk)
		if err == nil && len(b) < len(bestBuf) {
			best, bestBuf = c, b
		}
	}
	return best.Encoding(), [][]byte{bestBuf}
}

// sparseValidity stores the cheaper of the null and the valid positions:
// fewer stored bits (positions times packed width), then the smaller
// description, then the null positions (the choices Lance 14 makes).
func sparseValidity(valid []bool, n int) (*enc23pb.SparseValiditySet, [][]byte) {
	var nulls, ok []uint64
	for i := 0; i < n; i++ {
		if valid != nil && !valid[i] {
			nulls = append(nulls, uint64(i))
		} else {
			ok = append(ok, uint64(i))
		}
	}
	ve, vb := u64Sequence(ok)
	ne, nb := u64Sequence(nulls)
	vs, ns := seqBits(ve, len(ok)), seqBits(ne, len(nulls))
	if vs < ns || (vs == ns && proto.Size(ve) < proto.Size(ne)) {
		return &enc23pb.SparseValiditySet{Meaning: enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS, Positions: ve, NumPositions: uint64(len(ok))}, vb
	}
	return &enc23pb.SparseValiditySet{Meaning: enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS, Positions: ne, NumPositions: uint64(len(nulls))}, nb
}

// seqBits is the ideal stored size of n positions under e, in bits.
func seqBits(e *enc21pb.CompressiveEncoding, n int) int {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Constant, *enc21pb.CompressiveEncoding_Range:
		return 0
	case *enc21pb.CompressiveEncoding_Delta:
		return seqBits(c.Delta.GetDeltas(), n)
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		return n * int(c.OutOfLineBitpacking.GetValues().GetFlat().GetBitsPerValue())
	}
	return 64 * n
}
