package selector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/planarlance/planar/stats"
	"github.com/planarlance/planar/values"
)

// trialPage is a 2.3 page under structure (levels), Kind Fixed of 64 bits
// unless changed, with visible slots of which valid hold a value.
func trialPage(visible, valid int, f func(*Page)) Page {
	p := Page{Format23: true, HasLevels: true, NumVisible: visible, NumLevels: visible, NumRows: visible,
		MaxValueBytes: 8, CanZip: true, Kind: values.KindFixed, Bits: 64, ValidLeaves: valid}
	if f != nil {
		f(&p)
	}
	p.ValidBytes = p.ValidLeaves * p.MaxValueBytes
	return p
}

// climb runs a ladder, feeding it the outcomes in order, and returns its
// trials as "structure x values" (with "+dict" where a page dictionary may
// be built).
func climb(t *testing.T, l *Ladder, outcomes []Measured) []string {
	t.Helper()
	var got []string
	for tr, ok := l.Next(); ok; tr, ok = l.Next() {
		if len(got) == len(outcomes) {
			t.Fatalf("trial %d (%v x %v) past the outcomes given", len(got), tr.Plan.Structure, tr.Plan.Values)
		}
		s := fmt.Sprintf("%v x %v", tr.Plan.Structure, tr.Plan.Values)
		if tr.Dict {
			s += "+dict"
		}
		got = append(got, s)
		l.Record(outcomes[len(got)-1])
	}
	return got
}

// TestLadder: which trials a page runs, given what each measured, and
// which one it keeps, with what reason.
func TestLadder(t *testing.T) {
	ok := func(bytes int) Measured { return Measured{Bytes: bytes} }
	tooMany := Measured{Failed: true, TooManyLevels: true}
	failed := Measured{Failed: true}
	lance := Options{Policy: PolicyLance}
	mostlyNull := trialPage(1000, 300, nil) // cost policy: TrySparse
	fewNulls := trialPage(1000, 990, nil)
	settled := trialPage(8192, 100, nil)
	wideFSL := func(p *Page) { p.Kind, p.Bits, p.Dims, p.MaxValueBytes = values.KindFSL, 32, []int{768}, 3072 }
	// wideStrings: strings of 300 bytes, distinct of them among the
	// valid ones.
	wideStrings := func(distinct uint64) func(*Page) {
		return func(p *Page) {
			p.Kind, p.Bits, p.MaxValueBytes = values.KindVariable, 0, 300
			p.Profile = &values.Profile{N: p.NumVisible, OffBits: 32, Var: &stats.VarStats{
				N: p.NumVisible, Nulls: p.NumVisible - p.ValidLeaves, Bytes: 300 * p.ValidLeaves, MinLen: 300, MaxLen: 300, Distinct: distinct}}
		}
	}
	narrowFSL := func(p *Page) { p.Kind, p.Bits, p.Dims, p.MaxValueBytes = values.KindFSL, 32, []int{4}, 16 }
	for _, tc := range []struct {
		name      string
		page      Page
		opts      Options
		validOnly bool
		outcomes  []Measured
		trials    []string
		pick      int
		why       string // the reason Pick adds
	}{
		{"lance policy: the plan alone", mostlyNull, lance, false,
			[]Measured{ok(100)}, []string{"dense x chunked+dict"}, 0, ""},
		{"failed plan: its error", fewNulls, Options{}, false,
			[]Measured{failed}, []string{"dense x chunked+dict"}, 0, ""},
		{"too many levels: values zipped plain", fewNulls, Options{}, false,
			[]Measured{tooMany, ok(100)}, []string{"dense x chunked+dict", "dense x zipped"}, 1, ""},
		{"too many levels, zipped fails too: its error", fewNulls, Options{}, false,
			[]Measured{tooMany, failed}, []string{"dense x chunked+dict", "dense x zipped"}, 1, ""},
		{"too many levels, strings zip plain", trialPage(1000, 990, func(p *Page) { p.Kind, p.Bits = values.KindVariable, 0 }), Options{}, false,
			[]Measured{tooMany, ok(100)}, []string{"dense x chunked+dict", "dense x zipped"}, 1, ""},
		{"too many levels, booleans: no fallback", trialPage(1000, 990, func(p *Page) { p.Kind, p.Bits, p.CanZip = values.KindBool, 1, false }), Options{}, false,
			[]Measured{tooMany}, []string{"dense x chunked+dict"}, 0, ""},
		{"too many levels, Arrow dictionary indices: no fallback", trialPage(1000, 990, func(p *Page) { p.Bits, p.DictIndices = 32, true }), Options{}, false,
			[]Measured{tooMany}, []string{"dense x chunked+dict"}, 0, ""},
		{"sparse cheaper", mostlyNull, Options{}, false,
			[]Measured{ok(1000), ok(500)}, []string{"dense x chunked+dict", "sparse x zipped+dict"}, 1, "; cost: sparse 500 B < dense 1000 B"},
		{"a tie keeps dense", mostlyNull, Options{}, false,
			[]Measured{ok(500), ok(500)}, []string{"dense x chunked+dict", "sparse x zipped+dict"}, 0, "; cost: dense 500 B <= sparse 500 B"},
		{"the take of a row counts", mostlyNull, Options{}, false,
			[]Measured{ok(1000), {Bytes: 999, TakeBytes: 1000}}, []string{"dense x chunked+dict", "sparse x zipped+dict"}, 0, "; cost: dense 1000 B <= sparse 999 B"},
		{"dense levels do not fit: sparse, no zipped fallback", mostlyNull, Options{}, false,
			[]Measured{tooMany, ok(500)}, []string{"dense x chunked+dict", "sparse x zipped+dict"}, 1, "; dense levels do not fit chunks"},
		{"dense and sparse fail: dense's error", mostlyNull, Options{}, false,
			[]Measured{tooMany, failed}, []string{"dense x chunked+dict", "sparse x zipped+dict"}, 0, ""},
		{"sparse fails: dense", mostlyNull, Options{}, false,
			[]Measured{ok(1000), failed}, []string{"dense x chunked+dict", "sparse x zipped+dict"}, 0, ""},
		{"dense fails otherwise: no sparse trial", mostlyNull, Options{}, false,
			[]Measured{failed}, []string{"dense x chunked+dict"}, 0, ""},
		{"settled by the counts", settled, Options{}, false,
			[]Measured{ok(500)}, []string{"sparse x zipped+dict"}, 0, "; cost: 100 of 8192 slots valid settles sparse"},
		{"settled trial fails: dense alone (sparse again would fail again)", settled, Options{}, false,
			[]Measured{failed, ok(900)}, []string{"sparse x zipped+dict", "dense x chunked+dict"}, 1, ""},
		{"valid only: the settled zipped trial, no dictionary", trialPage(8192, 100, wideFSL), Options{}, true,
			[]Measured{ok(500)}, []string{"sparse x zipped"}, 0, "; cost: 100 of 8192 slots valid settles sparse"},
		{"valid only, settled trial fails: none", trialPage(8192, 100, wideFSL), Options{}, true,
			[]Measured{failed}, []string{"sparse x zipped"}, -1, ""},
		{"valid only, settled sparse plan chunks: none", trialPage(8192, 100, narrowFSL), Options{}, true,
			nil, nil, -1, ""},
		{"valid only, not settled: none", trialPage(1000, 300, wideFSL), Options{}, true,
			nil, nil, -1, ""},
		{"valid only strings, nearly all distinct: the settled zipped trial", trialPage(200000, 2000, wideStrings(1990)), Options{}, true,
			[]Measured{ok(500)}, []string{"sparse x zipped"}, 0, "; cost: 2000 of 200000 slots valid settles sparse"},
		{"valid only strings a page dictionary may pay for: none", trialPage(200000, 2000, wideStrings(100)), Options{}, true,
			nil, nil, -1, ""},
		{"every slot, the same strings: the settled trial with a dictionary", trialPage(200000, 2000, wideStrings(100)), Options{}, false,
			[]Measured{ok(500)}, []string{"sparse x zipped+dict"}, 0, "; cost: 2000 of 200000 slots valid settles sparse"},
	} {
		l := NewLadder(tc.page, tc.opts, tc.validOnly)
		got := climb(t, l, tc.outcomes)
		if strings.Join(got, ", ") != strings.Join(tc.trials, ", ") {
			t.Errorf("%s: trials %q, want %q", tc.name, got, tc.trials)
		}
		if i, why := l.Pick(); i != tc.pick || why != tc.why {
			t.Errorf("%s: pick %d %q, want %d %q", tc.name, i, why, tc.pick, tc.why)
		}
	}
}

// TestLadderZippedFallbackPlan: the zipped fallback stores the values
// plain, its reason saying why.
func TestLadderZippedFallbackPlan(t *testing.T) {
	l := NewLadder(trialPage(1000, 990, nil), Options{}, false)
	l.Next()
	l.Record(Measured{Failed: true, TooManyLevels: true})
	tr, ok := l.Next()
	if !ok || tr.Dict || tr.Plan.Codec != nil || tr.Plan.Reason != "over 65535 levels in one chunk: zipped" {
		t.Errorf("fallback %+v", tr)
	}
}

// TestFallback: windows shrink by four down to 1024 values, then the
// values are zipped when they have a zipped form under the plan.
func TestFallback(t *testing.T) {
	window := Plan{Values: Chunked, Reason: "r", Codec: values.GeneralCodec{Scheme: values.SchemeZstd, Inner: values.FlatCodec{Bits: 32}, ChunkValues: 1 << 15}}
	fixed := trialPage(1000, 990, nil)
	var sizes []int
	p, ok := window, true
	for ok && p.Values == Chunked {
		sizes = append(sizes, p.Codec.(values.GeneralCodec).ChunkValues)
		p, ok = Fallback(p, fixed)
	}
	if fmt.Sprint(sizes) != "[32768 8192 2048 512]" || !ok || p.Values != Zipped || p.Reason != "over 65535 levels in one chunk" || p.Codec == nil {
		t.Errorf("windows %v, then %v %v %q %v", sizes, ok, p.Values, p.Reason, p.Codec)
	}
	if _, ok := Fallback(p, fixed); ok {
		t.Error("a zipped plan falls back")
	}
	fsst := Plan{Values: Chunked, Codec: values.GeneralCodec{Scheme: values.SchemeLZ4, Inner: values.FsstCodec{}}}
	for _, tc := range []struct {
		name string
		plan Plan
		page Page
		want bool
	}{
		{"plain chunks", Plan{Values: Chunked, Codec: values.FlatCodec{Bits: 64}}, fixed, true},
		{"booleans", Plan{Values: Chunked}, trialPage(10, 10, func(p *Page) { p.Kind = values.KindBool }), false},
		{"dictionary indices", Plan{Values: Chunked}, trialPage(10, 10, func(p *Page) { p.DictIndices = true }), false},
		{"FSST-coded strings", fsst, trialPage(10, 10, func(p *Page) { p.Kind = values.KindVariable }), false},
		{"a sparse trial follows", Plan{Values: Chunked, TrySparse: true}, fixed, false},
		{"sparse structure", Plan{Structure: Sparse, Values: Chunked}, fixed, false},
	} {
		if _, ok := Fallback(tc.plan, tc.page); ok != tc.want {
			t.Errorf("%s: fallback %v, want %v", tc.name, ok, tc.want)
		}
	}
}

func TestTakeBytes(t *testing.T) {
	for _, tc := range []struct {
		plan                             Plan
		valueBytes, records, rows, store int
		want                             float64
	}{
		{Plan{Structure: Sparse, Values: Zipped}, 1000, 10, 100, 10, 10}, // a record, read by one row in ten
		{Plan{Structure: Dense, Values: Zipped}, 1000, 0, 100, 10, 10},   // a record per row
		{Plan{Values: Chunked}, 20000, 0, 100, 100, 8192},                // a chunk
		{Plan{Values: Indexed}, 100, 0, 100, 100, 100},
		{Plan{Values: Constant}, 100, 0, 100, 100, 0},
		{Plan{Values: Zipped}, 1000, 0, 0, 0, 1000}, // no rows: one
	} {
		if got := TakeBytes(tc.plan, tc.valueBytes, tc.records, tc.rows, tc.store); got != tc.want {
			t.Errorf("%v x %v: %v, want %v", tc.plan.Structure, tc.plan.Values, got, tc.want)
		}
	}
}
