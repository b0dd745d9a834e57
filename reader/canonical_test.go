package reader

import (
	"errors"
	"testing"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
)

// TestCanonicalityRules: the reader rejects, with ErrNonCanonical (and
// ErrCorrupt), every page that breaks one of the planar legality rules.
func TestCanonicalityRules(t *testing.T) {
	flat16 := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: 16}}}
	flat32 := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: 32}}}
	allValid := []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM}
	nullable := []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM}
	listed := []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM, enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST}
	dense := func(layers []enc21pb.RepDefLayer, v *enc23pb.ValuePlane) *enc23pb.PlanarLayout {
		return &enc23pb.PlanarLayout{Structure: &enc23pb.StructuralPlane{Codec: &enc23pb.StructuralPlane_Dense{Dense: &enc23pb.DenseStructure{Layers: layers}}}, Values: v}
	}
	constant := &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_Constant{Constant: &enc23pb.ConstantValue{Scalar: []byte{1, 0, 0, 0}}}}
	none := &enc23pb.ValuePlane{Codec: &enc23pb.ValuePlane_None{None: &enc23pb.NoValues{}}}
	for name, pl := range map[string]*enc23pb.PlanarLayout{
		"dense x constant under a nullable layer": dense(nullable, constant),
		"dense x constant under a list":           dense(listed, constant),
		"dense x none with trivial structure":     dense(allValid, none),
		"dense x none under a list":               dense(listed, none),
	} {
		if _, err := format.PB21FromPlanar(pl); !errors.Is(err, ErrNonCanonical) || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrNonCanonical", name, err)
		}
	}
	if _, err := format.PB21FromPlanar(dense(allValid, constant)); err != nil {
		t.Errorf("degenerate dense x constant rejected: %v", err)
	}

	// Level streams must follow from the layers.
	mb := func(layers []enc21pb.RepDefLayer, def, rep *enc21pb.CompressiveEncoding, depth uint32) *page {
		return &page{layout: &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: &enc21pb.MiniBlockLayout{
			Layers: layers, DefCompression: def, RepCompression: rep, RepetitionIndexDepth: depth, ValueCompression: flat32, HasLargeChunk: true}}},
			buffers: make([]format.BufferRange, 2+int(depth))}
	}
	for name, p := range map[string]*page{
		"def stream without a nullable layer": mb(allValid, flat16, nil, 0),
		"no def stream for a nullable layer":  mb(nullable, nil, nil, 0),
		"rep stream without a list":           mb(allValid, nil, flat16, 0),
		"list without rep stream":             mb(listed, nil, nil, 1),
		"repetition index without a list":     mb(allValid, nil, nil, 1),
		"list without repetition index":       mb(listed, nil, flat16, 0),
	} {
		if err := p.validate(3); !errors.Is(err, ErrNonCanonical) {
			t.Errorf("%s: err = %v, want ErrNonCanonical", name, err)
		}
	}
	if err := mb(listed, nil, flat16, 1).validate(3); err != nil {
		t.Errorf("canonical list page rejected: %v", err)
	}

	// No all-valid sparse structure.
	noNulls := &enc23pb.SparseValiditySet{Meaning: enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS,
		Positions: &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: &enc21pb.Constant{}}}}
	sp := &page{sparse: &enc23pb.PlanarLayout{
		Structure: &enc23pb.StructuralPlane{Codec: &enc23pb.StructuralPlane_Sparse{Sparse: &enc23pb.SparseStructure{Layers: []*enc23pb.SparseStructuralLayer{
			{Layer: &enc23pb.SparseStructuralLayer_Validity{Validity: noNulls}},
			{Layer: &enc23pb.SparseStructuralLayer_Validity{Validity: noNulls}},
		}}}},
		Values: none,
	}}
	if err := validateSparse(sp); !errors.Is(err, ErrNonCanonical) {
		t.Errorf("all-valid sparse structure: err = %v, want ErrNonCanonical", err)
	}
}
