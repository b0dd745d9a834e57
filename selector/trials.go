package selector

import (
	"fmt"
	"slices"

	"github.com/planarlance/planar/values"
)

// Trials: some choices are made by encoding. The cost policy encodes a
// page whose structure may go either way both dense and sparse and keeps
// the cheaper; a page whose levels do not fit a chunk is encoded again in
// a form without the limit. The selector lists those encodings (a Ladder)
// and picks among what they measured; the writer only runs them.

// Trial is one encoding of a page: a plan, and whether a page dictionary
// may be built for its values (PageDictionary says which); off for a plan
// that stores the values as they are.
type Trial struct {
	Plan Plan
	Dict bool
}

// Measured is what one trial's encoding measured.
type Measured struct {
	Bytes int // page buffer bytes, with the page's metadata
	// TakeBytes is the expected value bytes a take of one random row reads
	// (0 for a null row of a sparse page; TakeBytes).
	TakeBytes float64
	// Failed: the encoding failed; TooManyLevels: because a chunk would
	// hold more than 65535 levels (another form may take the page).
	Failed, TooManyLevels bool
}

// Cheaper reports whether a (sparse) costs less than b (dense) under the
// options' weights: stored bytes plus Lambda times the bytes a random
// one-row take reads. Ties go to b.
func Cheaper(a, b Measured, o Options) bool {
	l := o.Weights.lambda()
	return float64(a.Bytes)+l*a.TakeBytes < float64(b.Bytes)+l*b.TakeBytes
}

// TakeBytes estimates the value bytes a take of one random row reads from
// a page encoded under plan: a chunk (at most 8 KiB) for chunked or indexed
// values, a record for zipped values, which on a sparse page only a row
// holding one reads. valueBytes is the page's value buffer (its first),
// records the values a sparse zipped page stores, rows its leaf slots and
// stored the slots holding a value.
func TakeBytes(plan Plan, valueBytes, records, rows, stored int) float64 {
	switch plan.Values {
	case Zipped:
		if plan.Structure == Sparse {
			return float64(valueBytes) / float64(max(1, records)) * float64(stored) / float64(max(rows, 1))
		}
		return float64(valueBytes) / float64(max(rows, 1))
	case Chunked, Indexed:
		return min(float64(valueBytes), 8192)
	}
	return 0
}

// rung is one step of a page's ladder.
type rung int

const (
	// rungSettled: sparse structure for a TrySparse page whose counts
	// settle it (SparseSettled): when it encodes, the page keeps it and
	// nothing else runs (dense measured 4x to 17x larger on such pages).
	rungSettled rung = iota
	// rungPlan: the plan Choose made.
	rungPlan
	// rungZipped: after the plan failed with too many levels in a chunk
	// (a value behind more than 65535 null or empty lists: 2.2 has no
	// sparse structure, or chunks were asked for), the values zipped
	// plain, without a dictionary or FSST coding: no per-chunk limit.
	rungZipped
	// rungSparse: the plan's page under sparse structure, compared with
	// the plan by Cheaper (the cost policy's TrySparse).
	rungSparse
)

// Ladder is the trials of one page, in order: what comes next depends on
// what the trials before measured. The writer runs it:
//
//	for t, ok := l.Next(); ok; t, ok = l.Next() { encode t; l.Record(what it measured) }
//	i, why := l.Pick()
type Ladder struct {
	p    Page
	o    Options
	plan Plan
	// validOnly: the writer gathered the valid slots' values only (from
	// the counts, SettledZipped), which serve the settled sparse zipped
	// trial alone.
	validOnly bool
	rungs     []rung
	got       []Measured
}

// NewLadder chooses the page's plan (Choose) and returns its trials. With
// validOnly the page's values are those of its valid slots only: the
// ladder then holds at most the settled trial, and when that does not
// come or fails, Pick finds no winner and the writer gathers every slot
// for a new ladder.
func NewLadder(p Page, o Options, validOnly bool) *Ladder {
	return &Ladder{p: p, o: o, plan: Choose(p, o), validOnly: validOnly}
}

// Next returns the next trial to encode; false when the ladder is done.
func (l *Ladder) Next() (Trial, bool) {
	if len(l.got) < len(l.rungs) {
		panic("selector: Ladder.Next before the last trial was recorded")
	}
	r, ok := l.next()
	if !ok {
		return Trial{}, false
	}
	l.rungs = append(l.rungs, r)
	switch r {
	case rungSettled:
		// Valid-only values are not per slot: no page dictionary.
		return Trial{Plan: ForceSparse(l.p, l.o), Dict: !l.validOnly}, true
	case rungZipped:
		return Trial{Plan: Plan{Structure: Dense, Values: Zipped, Reason: "over 65535 levels in one chunk: zipped"}}, true
	case rungSparse:
		return Trial{Plan: ForceSparse(l.p, l.o), Dict: true}, true
	}
	return Trial{Plan: l.plan, Dict: true}, true
}

// next is the rung after those run.
func (l *Ladder) next() (rung, bool) {
	if len(l.rungs) == 0 {
		switch {
		case l.settles():
			return rungSettled, true
		case l.validOnly:
			return 0, false
		}
		return rungPlan, true
	}
	last, m := l.rungs[len(l.rungs)-1], l.got[len(l.got)-1]
	switch last {
	case rungSettled:
		if !m.Failed || l.validOnly {
			return 0, false
		}
		return rungPlan, true
	case rungPlan:
		if m.TooManyLevels && !l.plan.TrySparse && l.zipsPlain() {
			return rungZipped, true
		}
		// (After a failed settled trial the sparse one is the same
		// encoding: it would fail again.)
		if l.plan.TrySparse && (!m.Failed || m.TooManyLevels) && !slices.Contains(l.rungs, rungSettled) {
			return rungSparse, true
		}
	}
	return 0, false
}

// settles reports whether the settled trial comes first: a TrySparse page
// whose counts settle it, and, for valid-only values, whose sparse plan
// zips them and, for strings, tries no page dictionary (whose indices
// cover every slot).
func (l *Ladder) settles() bool {
	if !l.plan.TrySparse || !SparseSettled(l.p) {
		return false
	}
	if !l.validOnly {
		return true
	}
	plan := ForceSparse(l.p, l.o)
	if plan.Values != Zipped {
		return false
	}
	if l.p.Kind == values.KindVariable {
		dict, _ := PageDictionary(l.p, plan, l.o)
		return dict == NoDict
	}
	return true
}

// zipsPlain reports whether the page's values have a plain zipped form to
// fall back to (variable-width values and fixed-width ones that are not
// Arrow dictionary indices).
func (l *Ladder) zipsPlain() bool {
	return l.p.Kind == values.KindVariable || (l.p.Kind == values.KindFixed && !l.p.DictIndices)
}

// Record takes what the last trial measured.
func (l *Ladder) Record(m Measured) {
	if len(l.got) == len(l.rungs) {
		panic("selector: Ladder.Record without a trial")
	}
	l.got = append(l.got, m)
}

// Pick returns the trial the page keeps (its index in the order Next gave
// them) and what to add to its plan's reason; -1 when no trial was run or,
// for valid-only values, the settled one failed. The page keeps a settled
// trial that encoded; else the plan (or its zipped fallback), unless a
// sparse trial encoded and the plan failed or costs more (Cheaper). When
// the kept trial failed, its error is the page's.
func (l *Ladder) Pick() (int, string) {
	at := func(r rung) int { return slices.Index(l.rungs, r) }
	if s := at(rungSettled); s >= 0 && !l.got[s].Failed {
		return s, fmt.Sprintf("; cost: %d of %d slots valid settles sparse", l.p.ValidLeaves, l.p.NumVisible)
	}
	d := at(rungZipped)
	if d < 0 {
		d = at(rungPlan)
	}
	if d < 0 {
		return -1, ""
	}
	s := at(rungSparse)
	if s < 0 || l.got[s].Failed {
		return d, ""
	}
	dense, sparse := l.got[d], l.got[s]
	if dense.Failed {
		return s, "; dense levels do not fit chunks"
	}
	if Cheaper(sparse, dense, l.o) {
		return s, fmt.Sprintf("; cost: sparse %d B < dense %d B", sparse.Bytes, dense.Bytes)
	}
	return d, fmt.Sprintf("; cost: dense %d B <= sparse %d B", dense.Bytes, sparse.Bytes)
}

// Fallback is the plan to encode after plan's dense chunks failed because
// one would hold more than 65535 levels (false: none, the page fails with
// that error): a General large-chunk codec's chunks a quarter the size, down
// to 1024 values; then the values zipped with the plan's codec, which has
// no per-chunk limit, for values that have a zipped form under it (not
// dictionary indices, booleans or FSST-coded strings) and a plan with no
// sparse trial to take the page instead.
func Fallback(plan Plan, p Page) (Plan, bool) {
	if plan.Structure != Dense || plan.Values != Chunked {
		return plan, false
	}
	if g, ok := plan.Codec.(values.GeneralCodec); ok && g.ChunkValues > 1024 {
		g.ChunkValues /= 4
		plan.Codec = g
		return plan, true
	}
	if p.DictIndices || p.Kind == values.KindBool || fsstCoded(plan.Codec) || plan.TrySparse {
		return plan, false
	}
	plan.Values, plan.Reason = Zipped, "over 65535 levels in one chunk"
	return plan, true
}

// fsstCoded reports whether a chunked codec tree codes its strings with
// FSST (itself or under general compression).
func fsstCoded(c values.Codec) bool {
	if g, ok := c.(values.GeneralCodec); ok {
		c = g.Inner
	}
	_, ok := c.(values.FsstCodec)
	return ok
}
