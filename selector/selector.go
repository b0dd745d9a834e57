// Package selector chooses, for each page, the cell of the planar matrix
// (structural codec x value codec) and the compressive codecs, from the page's
// stats and the field's options. The writer executes the plan it returns and
// makes no choice of its own.
package selector

import (
	"github.com/planarlance/planar/stats"
)

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
)

func (v ValueCodec) String() string {
	return [...]string{"chunked", "zipped", "constant", "none"}[v]
}

func (s Structure) String() string {
	return [...]string{"dense", "sparse"}[s]
}

// Compression names a compressive codec for one stream.
type Compression int

// Compressive codecs the writer can execute.
const (
	Flat Compression = iota
)

func (c Compression) String() string { return [...]string{"flat"}[c] }

// Plan is the selector's decision for one page.
type Plan struct {
	Structure Structure
	Values    ValueCodec
	ValueComp Compression // codec of the values
	LevelComp Compression // codec of the def/rep streams inside chunks
	Reason    string      // why this plan won, for reports
}

// Options are the field-level knobs the selector honours.
type Options struct{}

// Choose returns the plan for one page. For now every page is dense x chunked
// with flat values and flat levels, which every Lance reader accepts.
func Choose(s stats.Page, _ Options) Plan {
	return Plan{Structure: Dense, Values: Chunked, ValueComp: Flat, LevelComp: Flat,
		Reason: "only dense x chunked with flat codecs is implemented"}
}
