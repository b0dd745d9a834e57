package selector

import (
	"strings"
	"testing"

	"github.com/planarlance/planar/values"
)

// TestStructureRules: the choice of dense or sparse structure in 2.3, for
// both policies (Lance 14's rules under lance; the cost policy forces only
// the rules that do not guess at sizes and measures the rest: TrySparse).
func TestStructureRules(t *testing.T) {
	wide := Page{Format23: true, HasLevels: true, NumVisible: 1000, NumLevels: 1000, NumRows: 1000, MaxValueBytes: 3072, CanZip: true, Kind: values.KindFSL, Bits: 32, Dims: []int{768}}
	narrow := Page{Format23: true, HasLevels: true, NumVisible: 1000, NumLevels: 1000, NumRows: 1000, MaxValueBytes: 8, CanZip: true, Kind: values.KindFixed, Bits: 64}
	with := func(p Page, f func(*Page)) Page {
		f(&p)
		if p.ValidLeaves == 0 && !p.AllNull {
			p.ValidLeaves = p.NumVisible
		}
		p.ValidBytes = p.ValidLeaves * p.MaxValueBytes
		return p
	}
	type want struct {
		s   StructuralPlane
		v   ValuePlane
		try bool
	}
	for _, tc := range []struct {
		name        string
		page        Page
		opts        Options
		lance, cost want
	}{
		{"wide, under half valid", with(wide, func(p *Page) { p.ValidLeaves = 499 }), Options{},
			want{Sparse, Zipped, false}, want{Dense, Zipped, true}},
		{"wide, exactly half valid", with(wide, func(p *Page) { p.ValidLeaves = 500 }), Options{},
			want{Dense, Zipped, false}, want{Dense, Zipped, true}},
		{"wide, fullzip asked", with(wide, func(p *Page) { p.ValidLeaves = 10 }), Options{Structural: StructuralFullZip},
			want{Dense, Zipped, false}, want{Dense, Zipped, false}},
		{"narrow, mostly null", with(narrow, func(p *Page) { p.ValidLeaves = 10 }), Options{},
			want{Dense, Chunked, false}, want{Dense, Chunked, true}},
		{"narrow, few nulls", with(narrow, func(p *Page) { p.ValidLeaves = 990 }), Options{},
			want{Dense, Chunked, false}, want{Dense, Chunked, false}},
		{"explicit sparse", with(narrow, func(p *Page) { p.ValidLeaves = 990 }), Options{Structural: StructuralSparse},
			want{Sparse, Chunked, false}, want{Sparse, Zipped, false}},
		{"explicit sparse, trivial structure", with(narrow, func(p *Page) { p.HasLevels, p.Degenerate = false, true }), Options{Structural: StructuralSparse},
			want{Dense, Chunked, false}, want{Dense, Chunked, false}},
		{"over the level budget", with(narrow, func(p *Page) { p.HasLists, p.OverBudget = true, true }), Options{},
			want{Sparse, Chunked, false}, want{Sparse, Chunked, false}},
		{"over budget, miniblock asked", with(narrow, func(p *Page) { p.HasLists, p.OverBudget = true, true }), Options{Structural: StructuralMiniBlock},
			want{Dense, Chunked, false}, want{Dense, Chunked, false}},
		{"early list rule", with(narrow, func(p *Page) {
			p.HasLists, p.NumRows, p.NumLevels, p.NumVisible, p.ValidLeaves = true, 100000, 100000, 6000, 6000
		}), Options{},
			want{Sparse, Chunked, false}, want{Dense, Chunked, true}},
		{"early list rule, rows/16 values", with(narrow, func(p *Page) {
			p.HasLists, p.NumRows, p.NumLevels, p.NumVisible, p.ValidLeaves = true, 100000, 100000, 6250, 6250
		}), Options{},
			want{Dense, Chunked, false}, want{Dense, Chunked, true}},
		{"list with a structural FSL", with(narrow, func(p *Page) { p.HasLists, p.HasFSLLayer = true, true }), Options{},
			want{Sparse, Chunked, false}, want{Dense, Chunked, false}},
		{"constant under nulls, miniblock asked", with(narrow, func(p *Page) { p.ValidLeaves, p.Scalar = 10, []byte{42, 0, 0, 0, 0, 0, 0, 0} }), Options{Structural: StructuralMiniBlock},
			want{Sparse, Constant, false}, want{Sparse, Constant, false}},
		{"all null, fullzip asked", with(wide, func(p *Page) { p.AllNull = true }), Options{Structural: StructuralFullZip},
			want{Sparse, None, false}, want{Sparse, None, false}},
	} {
		for _, pol := range []Policy{PolicyLance, PolicyCost} {
			o := tc.opts
			o.Policy = pol
			w := tc.lance
			if pol == PolicyCost {
				w = tc.cost
			}
			p := Choose(tc.page, o)
			if p.Structure != w.s || p.Values != w.v || p.TrySparse != w.try {
				t.Errorf("%s (%v): %v x %v try=%v, want %v x %v try=%v (%s)", tc.name, pol, p.Structure, p.Values, p.TrySparse, w.s, w.v, w.try, p.Reason)
			}
			// Canonicality: trivial structure is never sparse.
			if !tc.page.HasLevels && p.Structure == Sparse {
				t.Errorf("%s (%v): sparse with trivial structure", tc.name, pol)
			}
		}
	}
}

// TestDictionaryPlacement: Lance 14 stores a sparse page's dictionary
// indexed only for variable-width items of at least 64 KiB and no smaller
// than the indices; dense plans are left alone.
func TestDictionaryPlacement(t *testing.T) {
	sp := Plan{Structure: Sparse, Values: Chunked}
	for _, tc := range []struct {
		variable   bool
		items, idx int
		want       ValuePlane
	}{
		{true, 64 << 10, 80000, Chunked},
		{true, 100 << 10, 80000, Indexed},
		{true, 63 << 10, 1000, Chunked},
		{false, 1 << 20, 80000, Chunked},
	} {
		if got := Dictionary(sp, tc.variable, tc.items, tc.idx).Values; got != tc.want {
			t.Errorf("variable=%v items=%d indices=%d: %v, want %v", tc.variable, tc.items, tc.idx, got, tc.want)
		}
	}
	if got := Dictionary(Plan{Structure: Dense, Values: Chunked}, true, 1<<20, 10).Values; got != Chunked {
		t.Errorf("dense plan placed %v", got)
	}
}

// TestReasonsSayWhatWasAsked: a reason starts with what the column's
// metadata asked, says when a forced encoding was not applied and why, and
// never shows an option the user did not set (the sparse trial once read
// "structural-encoding=sparse (trial)" on every column).
func TestReasonsSayWhatWasAsked(t *testing.T) {
	narrow := Page{Format23: true, HasLevels: true, NumVisible: 1000, NumLevels: 1000, NumRows: 1000, ValidLeaves: 10, MaxValueBytes: 8, CanZip: true, Kind: values.KindFixed, Bits: 64}
	notZippable := Page{Degenerate: true, NumVisible: 1000, NumRows: 1000, ValidLeaves: 1000, MaxValueBytes: 8, Kind: values.KindFixed, Bits: 64}
	for _, tc := range []struct {
		name   string
		plan   Plan
		starts string
		has    string
		hasNot string
	}{
		{"nothing asked", Choose(narrow, Options{}), "narrow values", "", "asked"},
		{"sparse trial, nothing asked", ForceSparse(narrow, Options{}), "sparse: measured against dense (trial)", "", "structural-encoding"},
		{"compression asked", Choose(narrow, Options{Compression: CompressionZstd}), "asked compression=zstd; ", "", ""},
		{"fullzip asked and applied", Choose(Page{NumVisible: 10, NumRows: 10, ValidLeaves: 10, MaxValueBytes: 8, CanZip: true, Degenerate: true}, Options{Structural: StructuralFullZip}),
			"asked structural-encoding=fullzip; zipped as asked", "", ""},
		{"fullzip asked, not possible", Choose(notZippable, Options{Structural: StructuralFullZip}), "asked structural-encoding=fullzip; ", "not zipped: these values have no per-value form", ""},
		{"sparse asked in 2.2", Choose(func() Page { p := narrow; p.Format23 = false; return p }(), Options{Structural: StructuralSparse}), "asked structural-encoding=sparse; ", "needs format 2.3", ""},
		{"sparse asked, applied", Choose(narrow, Options{Structural: StructuralSparse}), "asked structural-encoding=sparse; sparse: structural-encoding=sparse", "", ""},
	} {
		r := tc.plan.Reason
		if !strings.HasPrefix(r, tc.starts) || tc.has != "" && !strings.Contains(r, tc.has) || tc.hasNot != "" && strings.Contains(r, tc.hasNot) {
			t.Errorf("%s: reason %q (want it to start %q, hold %q, not %q)", tc.name, r, tc.starts, tc.has, tc.hasNot)
		}
	}
}
