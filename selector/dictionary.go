package selector

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/planarlance/planar/stats"
	"github.com/planarlance/planar/values"
)

// Page dictionaries: which one the writer tries for a plan's values, where
// a sparse page puts the one it found, and, for the cost policy, whether
// it beats the stored values zipped. The writer builds the dictionary
// (its hash table settles the exact count) and encodes what is chosen.

// PageDict is the page dictionary a plan's values may get.
type PageDict int

// Page dictionaries.
const (
	NoDict PageDict = iota
	// RowDict: whole fixed-size-list rows (Lance 2.3).
	RowDict
	// ValueDict: variable-width values, or 64/128-bit fixed-width ones
	// (and, under the cost policy, 32-bit ones of narrow indices).
	ValueDict
)

// PageDictionary says which page dictionary the writer tries for the
// values of plan, and for a row dictionary the row count its size must
// beat: the rows stored without it (only the valid ones on a sparse page
// that zips its wide rows). A value dictionary is tried for chunked values
// and for the zipped strings of a sparse page, unless FSST was asked for
// or the stats pass already counts too many distinct values.
func PageDictionary(p Page, plan Plan, o Options) (PageDict, int) {
	sparse := plan.Structure == Sparse
	if p.Format23 && p.Kind == values.KindFSL && (plan.Values == Chunked || plan.Values == Zipped) {
		rows := p.NumVisible
		if sparse && p.MaxValueBytes >= WideValueBytes {
			rows = p.ValidLeaves
		}
		return RowDict, rows
	}
	admits := plan.Values == Chunked || (sparse && plan.Values == Zipped && p.Kind == values.KindVariable)
	candidate := p.Kind == values.KindVariable || (p.Kind == values.KindFixed && !p.DictIndices && (p.Bits == 64 || p.Bits == 128))
	if p.Kind == values.KindFixed && !p.DictIndices && p.Bits == 32 && o.Policy == PolicyCost && p.Profile != nil && p.Profile.Fixed != nil {
		st := p.Profile.Fixed
		candidate = narrowIndices(st.Distinct, st.BitWidth) && 2*st.Runs > st.N && !windowsTakeLevels(p, plan)
	}
	// A sparse page's dictionary indexes its valid values only: under the
	// cost policy their count, not the slots', bounds the items worth
	// keeping (a page of distinct values among nulls gains nothing).
	validOnly := sparse && o.Policy == PolicyCost
	if admits && candidate && o.Compression != CompressionFsst && !tooManyDistinct(p.Profile, o, validOnly) {
		return ValueDict, 0
	}
	return NoDict, 0
}

// DictionaryPays reports whether a value dictionary the writer built over
// a page of n values (valueBytes of fixed-width values, or of variable-width
// ones with offBits-wide offsets) pays: its d items (itemBytes) and the
// indices against the values as they are. The Lance policy budgets 4-byte
// indices and takes the dictionary unless it exceeds the ratio of the raw
// values (Lance's dictionary_encode); the cost policy counts the indices
// bit packed to their width and wants it strictly under, and, given
// plainBytes (above 0: PlainBytes), under nine tenths of it. A dictionary
// of strings over DictMaxBytes (8 MiB when unset) is refused either way.
func DictionaryPays(o Options, variable bool, n, d, itemBytes, valueBytes, offBits, plainBytes int) bool {
	_, ratio := o.DictLimits()
	w := 1
	for 1<<w < d {
		w++
	}
	var raw, est int
	switch {
	case o.Policy == PolicyLance && !variable:
		raw, est = valueBytes, itemBytes+4*n
	case o.Policy == PolicyLance:
		ob := offBits / 8
		raw = valueBytes + ob*(n+1)
		est = itemBytes + 4*n + ob*(d+1)
	case !variable:
		raw = valueBytes
		est = itemBytes + (n*w+7)/8 + 4*((n+1023)/1024)
	default:
		raw = valueBytes + 4*(n+1)
		est = itemBytes + 4*(d+1) + 16 + (n*w+7)/8 + 4*((n+1023)/1024)
	}
	if lance := o.Policy == PolicyLance; (lance && est > int(float64(raw)*ratio)) || (!lance && float64(est) >= float64(raw)*ratio) {
		return false
	}
	if o.Policy == PolicyCost && !variable && plainBytes > 0 && 10*est >= 9*plainBytes {
		return false // the values are about as small stored as they are
	}
	if max := o.DictMaxBytes; variable && itemBytes > max && (max != 0 || itemBytes > 8<<20) {
		return false
	}
	return true
}

// PlainBytes is what a page dictionary must beat by a tenth
// (DictionaryPays) on a page of 32-bit values, which only the cost policy
// gives one (narrowIndices): the estimated size of the chunked plan's
// values stored without it, its best candidate's. Its estimate counts the
// indices bit packed and the items raw, and leaves out what the values'
// codec does for the chunks' levels (general compression over windows
// takes them too), hence the margin. 0 (no test) for other pages, whose
// dictionaries follow Lance's rule, and plans without an estimate.
func PlainBytes(p Page, plan Plan) int {
	if p.Kind != values.KindFixed || p.Bits != 32 || plan.Values != Chunked || len(plan.Candidates) == 0 {
		return 0
	}
	return plan.Candidates[0].Bytes
}

// DistinctNeeded reports whether the stats pass must count a page's
// distinct fixed-width values: only a value dictionary's rules
// (tooManyDistinct, narrowIndices) read the count. Of fixed-width values,
// 64- and 128-bit ones may always get a dictionary; 32-bit ones under the
// cost policy, when the page's sample already holds few distinct values
// (at most half of it) whose indices would be narrower than the sample's
// values bit packed, in runs of about one value (longer runs are run
// length encoding's): a page of random or small values is not counted
// (counting is most of the stats pass's work on such values).
func DistinctNeeded(p Page, o Options) bool {
	if p.Kind != values.KindFixed || p.DictIndices {
		return false
	}
	switch p.Bits {
	case 64, 128:
		return true
	case 32:
		if o.Policy != PolicyCost || p.Profile == nil || p.Profile.Sample.N == 0 || p.Profile.Sample.Bits != 32 {
			return false
		}
		smp := p.Profile.Sample
		st := stats.Fixed(smp.Data, 32, smp.N, nil)
		return st.Distinct <= uint64(smp.N/2) && narrowIndices(st.Distinct, st.BitWidth) && 2*st.Runs > st.N
	}
	return false
}

// windowsTakeLevels reports whether the plan's values go in large chunks
// of general compression (windows: largeChunkCandidates) that hold the
// page's levels too (a dense page with levels), which compress them with
// the values: a dictionary's estimate leaves that out, and on such pages
// its indices came out larger than the values and levels compressed
// together (nested lists of 20,000 rows, 11-13%).
func windowsTakeLevels(p Page, plan Plan) bool {
	if !p.HasLevels || plan.Structure != Dense || plan.Values != Chunked || len(plan.Candidates) == 0 {
		return false
	}
	g, ok := plan.Candidates[0].Codec.(values.GeneralCodec)
	return ok && g.ChunkValues*max(p.Bits, 8)/8 >= largeChunk
}

// narrowIndices reports whether the indices of a dictionary of d values
// are at least two bits narrower than the values bit packed to width bits:
// short of that, a 32-bit page's dictionary saves too little over bit
// packing to pay for its items and the lookup on read.
func narrowIndices(d uint64, width int) bool {
	return d > 0 && bits.Len64(d-1)+2 <= width
}

// tooManyDistinct reports whether the stats pass already shows more
// distinct values than a page dictionary may hold (the HyperLogLog estimate
// is within a few percent; 10% of slack keeps borderline pages for the exact
// count the writer's dictionary table makes). With validOnly, for a sparse
// page: fixed-width values are counted against the valid values, and
// strings nearly all distinct among them are settled too.
func tooManyDistinct(p *values.Profile, o Options, validOnly bool) bool {
	if p == nil {
		return false
	}
	switch {
	case p.Fixed != nil:
		n := p.N
		if validOnly {
			n -= p.Fixed.Nulls
		}
		return float64(p.Fixed.Distinct) > distinctLimit(n, o)
	case p.Var != nil:
		// Strings repeat in longer runs of bytes than the divisor rule
		// sees: among valid ones, only a page of many, nearly all
		// distinct values is settled (on small pages a dictionary's
		// fixed costs are below the zipped values' and may still win).
		d, valid := float64(p.Var.Distinct), p.N-p.Var.Nulls
		return d > distinctLimit(p.N, o) || validOnly && valid >= minSettledValid && d >= 0.9*float64(valid)
	}
	return false
}

// distinctLimit is the most distinct values among n that a page
// dictionary may hold, with 10% of slack for the estimate.
func distinctLimit(n int, o Options) float64 {
	divisor, _ := o.DictLimits()
	return 1.1 * float64(min(n/divisor, 100000))
}

// DistinctBound is the count past which a page of n fixed-width values need
// not count its distinct ones (stats.FixedUpTo): tooManyDistinct settles
// any count above it the same way, counted over all n values or over the
// valid ones.
func DistinctBound(n int, o Options) uint64 {
	return uint64(math.Ceil(distinctLimit(n, o)))
}

// minSettledValid is the fewest valid strings of a sparse page for which
// tooManyDistinct settles a page of nearly all distinct ones.
const minSettledValid = 1024

// IndexedMinItemBytes is the dictionary item size from which Lance 14
// stores a sparse page's dictionary indexed (64 KiB).
const IndexedMinItemBytes = 64 << 10

// Dictionary places a page dictionary found for a sparse page: indexed
// (u32 indices per leaf slot, items zipped) when the items are variable
// width, at least IndexedMinItemBytes and no smaller than the indices;
// chunked indices with a page dictionary otherwise (Lance 14's rule).
func Dictionary(plan Plan, variable bool, itemBytes, indexBytes int) Plan {
	if plan.Structure != Sparse {
		return plan
	}
	if variable && itemBytes >= IndexedMinItemBytes && itemBytes >= indexBytes {
		plan.Values, plan.Codec, plan.Candidates = Indexed, nil, nil
		plan.Reason += fmt.Sprintf("; dictionary items %d B >= 64 KiB and >= indices %d B: indexed", itemBytes, indexBytes)
		return plan
	}
	return plan
}

// PlaceDictionary places the value dictionary the writer built for plan
// (Dictionary) and returns, when the cost policy measures one, the rival
// the dictionary's chunks must beat (PickDictionary): on a sparse page of
// strings that are not indexed, their stored values zipped (plan itself
// when it zips them).
func PlaceDictionary(p Page, plan Plan, o Options, itemBytes, indexBytes int) (Plan, *Plan) {
	placed := Dictionary(plan, p.Kind == values.KindVariable, itemBytes, indexBytes)
	if plan.Structure != Sparse || placed.Values == Indexed || !p.CanZip || p.Kind != values.KindVariable || o.Policy != PolicyCost {
		return placed, nil
	}
	rival := plan
	if rival.Values != Zipped {
		rival = sparseZipped(p, o, "trial")
	}
	return placed, &rival
}

// PickDictionary reports whether the dictionary's chunks (which may have
// failed to encode) beat the stored values zipped, and otherwise what to
// add to the zipped page's reason. Ties go to the zipped values.
func PickDictionary(zipped, chunks Measured) (bool, string) {
	if !chunks.Failed && chunks.Bytes < zipped.Bytes {
		return true, ""
	}
	return false, fmt.Sprintf("; zipped %d B <= dictionary chunks %d B", zipped.Bytes, chunks.Bytes)
}

// IndexPlan is the plan of a page's dictionary indices (p describes the
// indices): under the structure of the plan that found the dictionary,
// sparse or chosen afresh, its reason telling the dictionary's size.
func IndexPlan(p Page, plan Plan, o Options, items int) Plan {
	var ip Plan
	if plan.Structure == Sparse {
		ip = ForceSparse(p, o)
	} else {
		ip = Choose(p, o)
	}
	ip.Reason += fmt.Sprintf("; dictionary of %d values", items)
	return ip
}

// dictSure reports whether a page of variable-width values (prof: their
// Var stats over N slots) will certainly be dictionary encoded under
// either policy, so that no FSST table need be trained for it: a few short
// distinct values (counted exactly), whose dictionary and indices, sized
// at their worst, are well under the size limit of the writer's dictionary
// (both policies' estimates: the lance one is the larger).
func dictSure(prof *values.Profile, o Options) bool {
	v, n := prof.Var, prof.N
	if v == nil || v.Distinct > 256 || n < 100 || v.MaxLen > 64 || o.Structural != StructuralAuto || 4*v.Nulls >= n {
		// (Pages a quarter null may go sparse, where zipped values, FSST
		// coded, are weighed against the dictionary.)
		return false
	}
	divisor, ratio := o.DictLimits()
	d := int(v.Distinct) + 1 // null slots add the empty value
	if d > min(n/divisor, 100000) {
		return false
	}
	items := d * v.MaxLen
	raw := v.Bytes + 4*(n+1)
	est := items + 4*n + 4*(d+1) + 16 // the lance policy's estimate, the larger
	return float64(est) < 0.9*ratio*float64(raw)
}

// TrainFsst reports whether the writer trains an FSST symbol table for a
// page of variable-width values (prof, with its Var stats) for the
// selector to weigh: UTF-8 strings with a value of at least FsstMinMaxLen
// bytes, when FSST is asked for, or under automatic compression when the
// page holds at least FsstMinBytes and is not sure to get a dictionary.
func TrainFsst(prof *values.Profile, utf8 bool, o Options) bool {
	if !utf8 || prof.Var == nil || prof.Var.MaxLen < FsstMinMaxLen {
		return false
	}
	return o.Compression == CompressionFsst ||
		(o.Compression == CompressionAuto && prof.RawBytes() >= FsstMinBytes && !dictSure(prof, o))
}
