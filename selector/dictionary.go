package selector

import (
	"fmt"
	"math"

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
	// ValueDict: variable-width values, or 64/128-bit fixed-width ones.
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
// bit packed to their width and wants it strictly under. A dictionary of
// strings over DictMaxBytes (8 MiB when unset) is refused either way.
func DictionaryPays(o Options, variable bool, n, d, itemBytes, valueBytes, offBits int) bool {
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
	if max := o.DictMaxBytes; variable && itemBytes > max && (max != 0 || itemBytes > 8<<20) {
		return false
	}
	return true
}

// DistinctNeeded reports whether the stats pass must count a page's
// distinct fixed-width values: only a value dictionary's rule
// (tooManyDistinct) reads the count, and of fixed-width values only 64- and
// 128-bit ones may get one.
func DistinctNeeded(p Page) bool {
	return p.Kind == values.KindFixed && !p.DictIndices && (p.Bits == 64 || p.Bits == 128)
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
