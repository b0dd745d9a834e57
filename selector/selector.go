// Package selector chooses, for each page, the cell of the planar matrix
// (structural codec x value codec) and the compressive codecs, from what the
// stats pass measured and the field's options. The writer executes the plan
// it returns and makes no choice of its own.
package selector

import "fmt"

// Structure is the structural codec of a plan.
type Structure int

// Structural codecs.
const (
	Dense Structure = iota
	Sparse
)

// ValueCodec is the value codec of a plan.
type ValueCodec int

// Value codecs.
const (
	Chunked ValueCodec = iota
	Zipped
	Constant
	None
	// SparseNone and SparseConstant are the sparse-structure cells of pages
	// whose values are all null / all one scalar under non-trivial
	// structure (written as Lance's ConstantLayout with level buffers in
	// pb21 files).
	SparseNone
	SparseConstant
)

func (v ValueCodec) String() string {
	return [...]string{"chunked", "zipped", "constant", "none", "none", "constant"}[v]
}

func (s Structure) String() string {
	return [...]string{"dense", "sparse"}[s]
}

// Compression names a compressive codec for one stream.
type Compression int

// Compressive codecs the writer can execute.
const (
	Flat Compression = iota
	// Bitpacked values: FastLanes inline bit packing, one width per 1024
	// values. Bitpacked levels: inline bit packing when a chunk's levels fit
	// one 1024-level block, else out-of-line bit packing at the page's width.
	Bitpacked
	// Rle values: run values and u8 run lengths, runs cut at chunk
	// boundaries.
	Rle
)

func (c Compression) String() string { return [...]string{"flat", "bitpacked", "rle"}[c] }

// Plan is the selector's decision for one page.
type Plan struct {
	Structure Structure
	Values    ValueCodec
	ValueComp Compression // codec of the values
	LevelComp Compression // codec of the def/rep streams inside chunks
	Reason    string      // why this plan won, for reports
}

// Page is what the selector needs to know about one page.
type Page struct {
	Degenerate     bool   // every layer all-valid: no level streams
	SingleNullable bool   // exactly one layer, a nullable leaf
	NumVisible     int    // leaf value slots
	AllNull        bool   // every visible value is null
	Scalar         []byte // non-nil: every visible value is non-null and equal to this inline scalar
	MaxValueBytes  int    // largest visible value in bytes
	CanZip         bool   // values are byte aligned, so per-record storage is possible
	NullFree       bool   // no visible value is null (so a scalar needs no leaf validity)
	// Bit packing of fixed-width values (widths 8/16/32/64 only).
	RawValueBytes    int // the values stored flat
	PackedValueBytes int // the values inline bit packed; 0 when bit packing does not apply
	RleValueBytes    int // the values run-length encoded; 0 when RLE does not apply
	HasLevels        bool
}

// WideValueBytes is the value size from which pages are zipped instead of
// chunked (Lance's narrow/wide threshold).
const WideValueBytes = 256

// Options are the field-level knobs the selector honours.
type Options struct{}

// Choose returns the plan for one page. The rules follow Lance's writer
// (constant detection, then narrow -> chunked, wide -> zipped) and the
// planar canonicality rules (dense x constant and dense x none only in the
// degenerate form).
func Choose(p Page, _ Options) Plan {
	plan := Plan{Structure: Dense, ValueComp: Flat, LevelComp: Flat}
	switch {
	case p.NumVisible > 0 && p.AllNull && p.SingleNullable:
		plan.Values, plan.Reason = None, "every value null, no other structure"
	case p.NumVisible > 0 && p.Degenerate && p.Scalar != nil:
		plan.Values, plan.Reason = Constant, "every value equal, trivial structure"
	case p.NumVisible == 0 || p.AllNull:
		plan.Structure, plan.Values, plan.Reason = Sparse, SparseNone, "no non-null values under non-trivial structure"
	case p.Scalar != nil && p.NullFree:
		plan.Structure, plan.Values, plan.Reason = Sparse, SparseConstant, "every value equal under non-trivial structure"
	case p.MaxValueBytes >= WideValueBytes && p.CanZip:
		plan.Values, plan.Reason = Zipped, "wide values (>= 256 bytes)"
	default:
		plan.Values, plan.Reason = Chunked, "narrow values"
		best := p.RawValueBytes
		if p.PackedValueBytes > 0 && p.PackedValueBytes < best {
			plan.ValueComp, best = Bitpacked, p.PackedValueBytes
		}
		if p.RleValueBytes > 0 && p.RleValueBytes < best {
			plan.ValueComp, best = Rle, p.RleValueBytes
		}
		if plan.ValueComp != Flat {
			plan.Reason += fmt.Sprintf("; %v %d -> %d bytes", plan.ValueComp, p.RawValueBytes, best)
		}
		if p.HasLevels {
			plan.LevelComp = Bitpacked
		}
	}
	return plan
}
