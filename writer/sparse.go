package writer

import (
	"fmt"

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
// and the buffers of their sequences (structural.BuildSparse).
func (c *column) sparseStructure(d structural.Dense) (*enc23pb.StructuralPlane, [][]byte, error) {
	s, bufs, err := structural.BuildSparseDense(d, c.path)
	if err != nil {
		return nil, nil, err
	}
	return &enc23pb.StructuralPlane{Codec: &enc23pb.StructuralPlane_Sparse{Sparse: s}}, bufs, nil
}
