package selector

import (
	"fmt"
	"strings"

	"github.com/planarlance/planar/values"
)

// The choice of structure (format 2.3). Dense or sparse is decided first,
// from the page's structure facts, then the value codec under that
// structure; the two are independent choices of one plan.

// EarlyListRows is the row count above which Lance 14 stores a list page
// sparse when it has few values (one chunk's level limit at one bit per
// level).
const EarlyListRows = 65535

// sparseStructure reports whether a 2.3 page gets sparse structure before
// any size comparison, and why. These are Lance 14's rules
// (planar.rs try_plan_pages) in its order; under the cost policy the
// rules that only guess at sizes (the early list rule and wide values
// under half valid) are left to the trial of TrySparse.
func sparseStructure(p Page, o Options) (bool, string) {
	requested := o.Structural != StructuralAuto
	trivial := !p.HasLevels
	lance := o.Policy == PolicyLance || p.LanceStructure
	switch {
	case o.Structural == StructuralSparse && (!trivial || p.HasFSLLayer):
		// (A structural fixed-size list is structure even without nulls.)
		return true, "structural-encoding=sparse"
	case lance && !requested && p.HasLists && p.HasFSLLayer:
		return true, "a list with a structural fixed-size list"
	case lance && !requested && p.HasLists && p.NumRows > EarlyListRows && p.NumVisible < p.NumRows/16:
		return true, fmt.Sprintf("list page of %d rows with %d values (< rows/16)", p.NumRows, p.NumVisible)
	case p.NumVisible == 0 || p.ValidLeaves == 0:
		return true, "no values"
	case trivial:
		return false, ""
	case p.OverBudget && !requested:
		// Lance's writer rule, kept by the cost policy too: measuring such
		// pages dense and sparse (both encoded) made the list class 7%
		// smaller but its writes ~1.4x slower. Lance reads dense chunks of
		// any level count a chunk header can hold.
		return true, "levels over the mini-block level budget"
	case p.Scalar != nil:
		return true, "every value equal under non-trivial structure"
	case lance && !requested && p.ValidLeaves < p.NumVisible/2 && (p.MaxValueBytes >= WideValueBytes || p.NoLengthStat):
		return true, fmt.Sprintf("wide values, %d of %d valid (< half)", p.ValidLeaves, p.NumVisible)
	}
	return false, ""
}

// sparsePlan chooses the value codec of a sparse page (Lance 14's
// sparse/planar.rs order): none without values, constant when every
// stored value is one inline scalar, chunked over every leaf slot for
// narrow values (and values that cannot be stored per record), zipped
// (only the stored values) otherwise. The cost policy also zips narrow
// values when the stored values alone are estimated smaller than chunks
// over every slot. A page dictionary, when the writer finds one, is
// placed by Dictionary.
func sparsePlan(p Page, o Options, why string) Plan {
	plan := Plan{Structure: Sparse, Reason: "sparse: " + why}
	switch {
	case p.NumVisible == 0 || p.ValidLeaves == 0:
		plan.Values = None
		return plan
	case p.Scalar != nil:
		plan.Values = Constant
		return plan
	case p.Kind == values.KindVarPacked:
		plan.Values = Zipped
		return plan
	}
	narrow := p.MaxValueBytes < WideValueBytes
	if !narrow && p.CanZip {
		plan.Values, plan.Codec = Zipped, sparseZippedCodec(p, o)
		plan.Reason += "; wide values, stored ones zipped"
		return plan
	}
	q := p
	q.HasLevels, q.Degenerate, q.Scalar = false, true, nil
	qo := o
	qo.Structural = StructuralMiniBlock
	ch := choose(q, qo)
	ch.Structure, ch.TrySparse = Sparse, false
	ch.Reason = plan.Reason + "; every leaf slot chunked" + strings.TrimPrefix(ch.Reason, "structural-encoding=miniblock")
	if o.Policy == PolicyCost && p.CanZip && p.Kind != values.KindFSL && len(ch.Candidates) > 0 {
		if z := zippedBytes(p); z < ch.Candidates[0].Bytes {
			plan.Values, plan.Codec = Zipped, sparseZippedCodec(p, o)
			plan.Reason += fmt.Sprintf("; stored values zipped (~%d B) < chunks over every slot (~%d B)", z, ch.Candidates[0].Bytes)
			return plan
		}
	}
	return ch
}

// zippedBytes estimates the zipped size of a page's stored values.
func zippedBytes(p Page) int {
	if p.Kind == values.KindVariable {
		off := 4
		if p.Profile != nil && p.Profile.OffBits == 64 {
			off = 8
		}
		return p.ValidBytes + off*p.ValidLeaves + 2*(p.ValidLeaves+1)
	}
	return p.ValidBytes
}

// trySparse reports whether the cost policy should also encode a dense
// plan's page sparse and compare: the structure is not trivial, no
// structural encoding was asked for, and enough of the page is null or
// empty for sparse structure to have a chance (a quarter of the leaf
// slots null, or a quarter of the levels without a slot).
func trySparse(p Page, o Options, plan Plan) bool {
	if o.Policy != PolicyCost || p.LanceStructure || !p.Format23 || plan.Structure != Dense || !p.HasLevels || o.Structural != StructuralAuto {
		return false
	}
	return 4*(p.NumVisible-p.ValidLeaves) >= p.NumVisible || 4*(p.NumLevels-p.NumVisible) >= p.NumLevels
}

// SettledSparseShare: a page whose valid leaf slots are at most one in
// this many is not encoded dense at all for the comparison TrySparse asks
// for; the estimate settles it. Dense structure stores a level for every
// slot and chunked values for the null slots too, sparse only the valid
// values and their positions (runs of nulls cost a sparse set no more than
// they cost dense levels); on the 99%-null classes dense measured 4x to
// 17x larger, and its trial encoding cost the writer a third of its time.
const SettledSparseShare = 64

// SparseSettled reports whether the estimate alone decides a TrySparse
// comparison for sparse: at least a chunk's worth of leaf slots, of which
// at most one in SettledSparseShare is valid.
func SparseSettled(p Page) bool {
	return SettledCounts(p.NumVisible, p.ValidLeaves)
}

// SettledCounts is SparseSettled from the counts alone: visible leaf
// slots, of which valid hold a value.
func SettledCounts(visible, valid int) bool {
	return visible >= 4096 && SettledSparseShare*valid <= visible
}

// SettledZipped reports, from the counts alone, whether a format 2.3 page
// of values rowBytes wide goes sparse x zipped without a trial: the cost
// policy and automatic structure, settled counts, values wide enough to be
// zipped. The writer then gathers the valid values only; it still checks
// the plan it gets, and gathers every slot when the plan differs.
func SettledZipped(visible, valid, rowBytes int, format23 bool, o Options) bool {
	return SettledSparse(visible, valid, format23, o) && rowBytes >= WideValueBytes
}

// SettledSparse reports, from the counts alone, whether a format 2.3 page
// goes sparse without a trial: the cost policy, automatic structure and
// settled counts. The writer then gathers the valid strings of a flat page
// only; whether they are zipped, and without a page dictionary, the ladder
// settles from the stats of those values (NewLadder with validOnly).
func SettledSparse(visible, valid int, format23 bool, o Options) bool {
	return format23 && o.Policy == PolicyCost && o.Structural == StructuralAuto && SettledCounts(visible, valid)
}

// ForceSparse returns the plan of the page under sparse structure (the
// alternative TrySparse asks the writer to measure).
func ForceSparse(p Page, o Options) Plan {
	why := "measured against dense (trial)"
	if ok, w := sparseStructure(p, Options{Structural: StructuralSparse, Policy: o.Policy}); ok && o.Structural == StructuralSparse {
		why = w
	}
	return withAsked(sparsePlan(p, o, why), p, o)
}

// sparseZipped is the plan storing a sparse page's stored values zipped
// (the alternative the cost policy measures against a page dictionary
// over every slot).
func sparseZipped(p Page, o Options, why string) Plan {
	return Plan{Structure: Sparse, Values: Zipped, Codec: sparseZippedCodec(p, o), Reason: "sparse: " + why + "; stored values zipped"}
}

// sparseZippedCodec is the per-value codec of a sparse zipped page: that of
// a zipped page, with FSST's size rule applied to the stored values only
// (with their offsets), which are all the page holds.
func sparseZippedCodec(p Page, o Options) values.Codec {
	c := zippedCodec(p, o)
	if f, ok := c.(values.FsstCodec); ok && o.Compression != CompressionFsst && p.ValidBytes+4*(p.ValidLeaves+1) < FsstMinBytes {
		return f.Values
	}
	return c
}
