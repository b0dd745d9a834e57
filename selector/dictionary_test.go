package selector

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/planarlance/planar/stats"
	"github.com/planarlance/planar/values"
)

// strPage is a page of n strings with the given stats.
func strPage(n int, st stats.VarStats, f func(*Page)) Page {
	p := trialPage(n, n-st.Nulls, func(p *Page) {
		p.Kind, p.Bits, p.MaxValueBytes = values.KindVariable, 0, st.MaxLen
		p.Profile = &values.Profile{N: n, OffBits: 32, Var: &st}
	})
	if f != nil {
		f(&p)
	}
	return p
}

// TestPageDictionary: which page dictionary the writer tries for a plan.
func TestPageDictionary(t *testing.T) {
	chunked, zipped := Plan{Values: Chunked}, Plan{Values: Zipped}
	sparseZip := Plan{Structure: Sparse, Values: Zipped}
	fsl := func(valid int) Page {
		return trialPage(1000, valid, func(p *Page) { p.Kind, p.Bits, p.Dims, p.MaxValueBytes = values.KindFSL, 32, []int{768}, 3072 })
	}
	sparseChunks := Plan{Structure: Sparse, Values: Chunked}
	// sparseStrs: 100,000 slots, valid of them strings, distinct distinct.
	sparseStrs := func(valid, distinct int) Page {
		return strPage(100000, stats.VarStats{N: 100000, Nulls: 100000 - valid, Bytes: 16 * valid, MaxLen: 16, Distinct: uint64(distinct)}, nil)
	}
	// fixed64: 1,000 slots, valid of them 64-bit values, distinct distinct.
	fixed64 := func(valid, distinct int) Page {
		return trialPage(1000, valid, func(p *Page) {
			p.Profile = &values.Profile{N: 1000, Bits: 64, Fixed: &stats.FixedStats{N: 1000, Nulls: 1000 - valid, Distinct: uint64(distinct)}}
		})
	}
	// fixed32: 100,000 32-bit values, distinct of them, of the bit width
	// width, in runs runs.
	fixed32 := func(distinct, width, runs int) Page {
		return trialPage(100000, 100000, func(p *Page) {
			p.Bits = 32
			p.Profile = &values.Profile{N: 100000, Bits: 32, Fixed: &stats.FixedStats{N: 100000, Distinct: uint64(distinct), BitWidth: width, Runs: runs}}
		})
	}
	few := strPage(1000, stats.VarStats{N: 1000, Bytes: 8000, MaxLen: 8, Distinct: 20}, nil)
	many := strPage(1000, stats.VarStats{N: 1000, Bytes: 8000, MaxLen: 8, Distinct: 900}, nil)
	for _, tc := range []struct {
		name string
		page Page
		plan Plan
		opts Options
		want PageDict
		rows int
	}{
		{"fixed-size-list rows, chunked", fsl(400), chunked, Options{}, RowDict, 1000},
		{"fixed-size-list rows, dense zipped", fsl(400), zipped, Options{}, RowDict, 1000},
		{"wide rows zipped sparse: the valid rows", fsl(400), sparseZip, Options{}, RowDict, 400},
		{"fixed-size-list rows before 2.3", func() Page { p := fsl(400); p.Format23 = false; return p }(), chunked, Options{}, NoDict, 0},
		{"strings, chunked", few, chunked, Options{}, ValueDict, 0},
		{"strings, sparse zipped", few, sparseZip, Options{}, ValueDict, 0},
		{"strings, dense zipped", few, zipped, Options{}, NoDict, 0},
		{"strings, FSST asked", few, chunked, Options{Compression: CompressionFsst}, NoDict, 0},
		{"strings, too many distinct", many, chunked, Options{}, NoDict, 0},
		{"strings, a divisor that admits them", many, chunked, Options{DictDivisor: 1}, ValueDict, 0},
		{"64-bit values", trialPage(1000, 1000, nil), chunked, Options{}, ValueDict, 0},
		{"128-bit values", trialPage(1000, 1000, func(p *Page) { p.Bits = 128 }), chunked, Options{}, ValueDict, 0},
		{"32-bit values, not counted", trialPage(1000, 1000, func(p *Page) { p.Bits = 32 }), chunked, Options{}, NoDict, 0},
		// 32-bit values under the cost policy: indices two bits narrower
		// than the values packed, in runs of about one value.
		{"32-bit values, narrow indices", fixed32(1000, 31, 90000), chunked, Options{}, ValueDict, 0},
		{"32-bit values, the lance policy", fixed32(1000, 31, 90000), chunked, Options{Policy: PolicyLance}, NoDict, 0},
		{"32-bit values, indices one bit narrower", fixed32(1<<14, 15, 90000), chunked, Options{}, NoDict, 0},
		{"32-bit values, indices two bits narrower", fixed32(1<<14, 16, 90000), chunked, Options{}, ValueDict, 0},
		{"32-bit values, in long runs", fixed32(1000, 31, 50000), chunked, Options{}, NoDict, 0},
		{"Arrow dictionary indices", trialPage(1000, 1000, func(p *Page) { p.DictIndices = true }), chunked, Options{}, NoDict, 0},
		// Sparse pages under the cost policy: the valid values count.
		{"sparse strings, many and nearly all distinct", sparseStrs(2000, 1950), sparseZip, Options{}, NoDict, 0},
		{"sparse strings, the lance policy counts slots", sparseStrs(2000, 1950), sparseZip, Options{Policy: PolicyLance}, ValueDict, 0},
		{"sparse strings, half distinct", sparseStrs(2000, 1000), sparseZip, Options{}, ValueDict, 0},
		{"sparse strings, few and all distinct", sparseStrs(500, 500), sparseZip, Options{}, ValueDict, 0},
		{"sparse 64-bit values, distinct past half the valid", fixed64(100, 100), sparseChunks, Options{}, NoDict, 0},
		{"dense 64-bit values, the same page", fixed64(100, 100), chunked, Options{}, ValueDict, 0},
		{"sparse 64-bit values, few distinct", fixed64(100, 20), sparseChunks, Options{}, ValueDict, 0},
	} {
		if got, rows := PageDictionary(tc.page, tc.plan, tc.opts); got != tc.want || rows != tc.rows {
			t.Errorf("%s: %v, %d rows; want %v, %d", tc.name, got, rows, tc.want, tc.rows)
		}
	}
}

// TestPlaceDictionary: indexed when the items are large; else, for the
// cost policy's sparse strings, the stored values zipped as the rival.
func TestPlaceDictionary(t *testing.T) {
	p := strPage(1000, stats.VarStats{N: 1000, Bytes: 8000, MaxLen: 8, Distinct: 20, Nulls: 500}, nil)
	sparseChunks := Plan{Structure: Sparse, Values: Chunked, Reason: "sparse"}
	sparseZip := Plan{Structure: Sparse, Values: Zipped, Reason: "sparse zipped"}
	for _, tc := range []struct {
		name   string
		plan   Plan
		opts   Options
		items  int
		values ValuePlane
		rival  string // the rival's reason, "" for none
	}{
		{"large items: indexed", sparseChunks, Options{}, 1 << 20, Indexed, ""},
		{"small items: chunks against zipped", sparseChunks, Options{}, 100, Chunked, "sparse: trial; stored values zipped"},
		{"a zipped plan is its own rival", sparseZip, Options{}, 100, Zipped, "sparse zipped"},
		{"lance policy: no rival", sparseChunks, Options{Policy: PolicyLance}, 100, Chunked, ""},
		{"dense: no rival", Plan{Values: Chunked}, Options{}, 1 << 20, Chunked, ""},
	} {
		placed, rival := PlaceDictionary(p, tc.plan, tc.opts, tc.items, 4000)
		r := ""
		if rival != nil {
			r = rival.Reason
		}
		if placed.Values != tc.values || r != tc.rival {
			t.Errorf("%s: %v, rival %q; want %v, %q", tc.name, placed.Values, r, tc.values, tc.rival)
		}
	}
	if won, why := PickDictionary(Measured{Bytes: 100}, Measured{Bytes: 99}); !won || why != "" {
		t.Errorf("smaller chunks: %v %q", won, why)
	}
	if won, why := PickDictionary(Measured{Bytes: 100}, Measured{Bytes: 100}); won || why != "; zipped 100 B <= dictionary chunks 100 B" {
		t.Errorf("a tie: %v %q", won, why)
	}
	if won, _ := PickDictionary(Measured{Bytes: 100}, Measured{Bytes: 1, Failed: true}); won {
		t.Error("failed chunks won")
	}
}

// TestIndexPlan: the indices keep the structure of the plan that found
// the dictionary.
func TestIndexPlan(t *testing.T) {
	idx := trialPage(1000, 300, func(p *Page) { p.Bits, p.DictIndices, p.MaxValueBytes, p.CanZip = 32, true, 4, false })
	if ip := IndexPlan(idx, Plan{Structure: Sparse}, Options{}, 7); ip.Structure != Sparse || !strings.HasSuffix(ip.Reason, "; dictionary of 7 values") {
		t.Errorf("sparse: %v %q", ip.Structure, ip.Reason)
	}
	if ip := IndexPlan(idx, Plan{}, Options{Policy: PolicyLance}, 7); ip.Structure != Dense || ip.Values != Chunked {
		t.Errorf("dense: %v x %v", ip.Structure, ip.Values)
	}
}

// TestTrainFsst: a table is trained for UTF-8 pages FSST may take, not for
// a page sure to get a dictionary.
func TestTrainFsst(t *testing.T) {
	big := stats.VarStats{N: 10000, Bytes: 200000, MaxLen: 40, Distinct: 5000}
	sure := stats.VarStats{N: 10000, Bytes: 200000, MaxLen: 40, Distinct: 10}
	prof := func(st stats.VarStats) *values.Profile {
		return &values.Profile{N: st.N, OffBits: 32, Var: &st}
	}
	for _, tc := range []struct {
		name string
		st   stats.VarStats
		utf8 bool
		opts Options
		want bool
	}{
		{"large varied strings", big, true, Options{}, true},
		{"binary", big, false, Options{}, false},
		{"short values", stats.VarStats{N: 10000, Bytes: 40000, MaxLen: 4, Distinct: 5000}, true, Options{}, false},
		{"a small page", stats.VarStats{N: 100, Bytes: 2000, MaxLen: 40, Distinct: 50}, true, Options{}, false},
		{"a small page, FSST asked", stats.VarStats{N: 100, Bytes: 2000, MaxLen: 40, Distinct: 50}, true, Options{Compression: CompressionFsst}, true},
		{"sure to get a dictionary", sure, true, Options{}, false},
		{"a quarter null: may go sparse", stats.VarStats{N: 10000, Bytes: 200000, MaxLen: 40, Distinct: 10, Nulls: 2500}, true, Options{}, true},
		{"other compression asked", big, true, Options{Compression: CompressionZstd}, false},
	} {
		if got := TrainFsst(prof(tc.st), tc.utf8, tc.opts); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDictionaryPays: each policy's budget at its edge. Lance: 4-byte
// indices plus items against the raw values, taken up to the ratio (0.8)
// inclusive; cost: indices bit packed to their width, taken strictly
// under; a string dictionary over 8 MiB refused unless DictMaxBytes allows.
func TestDictionaryPays(t *testing.T) {
	lance := Options{Policy: PolicyLance}
	cost := Options{}
	cases := []struct {
		name                                 string
		o                                    Options
		variable                             bool
		n, d, itemBytes, valueBytes, offBits int
		want                                 bool
	}{
		// Lance fixed: est = items + 4n = 800 + 4000 = 4800; raw 8000·0.8 = 6400.
		{"lance fixed under", lance, false, 1000, 100, 800, 8000, 0, true},
		// est 1600+4000 = 5600 ... at 6400 exactly (items 2400) still taken.
		{"lance fixed at ratio", lance, false, 1000, 300, 2400, 8000, 0, true},
		{"lance fixed over", lance, false, 1000, 301, 2408, 8000, 0, false},
		// Lance variable: raw = 10000 + 4·1001 = 14004 → 11203; est = items + 4000 + 4·(d+1).
		{"lance strings under", lance, true, 1000, 10, 100, 10000, 32, true},
		{"lance strings over", lance, true, 1000, 500, 8000, 10000, 32, false},
		// Cost fixed: est = items + n·w/8 + 4·ceil(n/1024); d=256 → w=8: 1000+4 = 1004 + items.
		{"cost fixed under", cost, false, 1000, 256, 2048, 8000, 0, true},
		{"cost fixed at ratio", cost, false, 1000, 256, 6400 - 1004, 8000, 0, false},
		{"cost strings", cost, true, 1000, 10, 100, 10000, 32, true},
		{"cost strings over 8 MiB", cost, true, 1 << 22, 2, 9 << 20, 64 << 20, 32, false},
		{"cost strings over max allowed", Options{DictMaxBytes: 10 << 20}, true, 1 << 22, 2, 9 << 20, 64 << 20, 32, true},
	}
	for _, tc := range cases {
		if got := DictionaryPays(tc.o, tc.variable, tc.n, tc.d, tc.itemBytes, tc.valueBytes, tc.offBits, 0); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// Cost fixed against the values stored without a dictionary
	// (plainBytes): 1000 values of 256 distinct (w=8), items 1024: est
	// 1024+1000+4 = 2028, taken under nine tenths of plainBytes (2254:
	// 2028.6), not at 2253. The lance policy does not look.
	for _, tc := range []struct {
		o     Options
		plain int
		want  bool
	}{{cost, 2254, true}, {cost, 2253, false}, {cost, 0, true}, {lance, 100, true}} {
		if got := DictionaryPays(tc.o, false, 1000, 256, 1024, 8000, 0, tc.plain); got != tc.want {
			t.Errorf("%v, values %d bytes without: %v, want %v", tc.o.Policy, tc.plain, got, tc.want)
		}
	}
}

// TestDistinctNeeded: 64- and 128-bit pages are counted; 32-bit ones only
// under the cost policy and when their sample holds few distinct values,
// narrower as indices than packed, not in long runs.
func TestDistinctNeeded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	page32 := func(v func(i int) uint32) Page {
		smp := values.Block{Bits: 32, N: values.SampleValues, Data: make([]byte, 4*values.SampleValues)}
		for i := range smp.N {
			binary.LittleEndian.PutUint32(smp.Data[4*i:], v(i))
		}
		return trialPage(100000, 100000, func(p *Page) {
			p.Bits = 32
			p.Profile = &values.Profile{N: 100000, Bits: 32, Sample: smp}
		})
	}
	set := make([]uint32, 1000)
	for i := range set {
		set[i] = r.Uint32()
	}
	fromSet := page32(func(int) uint32 { return set[r.IntN(len(set))] })
	for _, tc := range []struct {
		name string
		page Page
		o    Options
		want bool
	}{
		{"64-bit", trialPage(1000, 1000, nil), Options{}, true},
		{"64-bit, the lance policy", trialPage(1000, 1000, nil), Options{Policy: PolicyLance}, true},
		{"128-bit", trialPage(1000, 1000, func(p *Page) { p.Bits = 128 }), Options{}, true},
		{"32-bit from 1,000 wide values", fromSet, Options{}, true},
		{"32-bit from 1,000 wide values, the lance policy", fromSet, Options{Policy: PolicyLance}, false},
		{"32-bit random", page32(func(int) uint32 { return r.Uint32() }), Options{}, false},
		{"32-bit small", page32(func(int) uint32 { return uint32(r.IntN(100)) }), Options{}, false},
		{"32-bit wide values in runs", page32(func(i int) uint32 { return set[i/8] }), Options{}, false},
		{"Arrow dictionary indices", trialPage(1000, 1000, func(p *Page) { p.DictIndices = true }), Options{}, false},
	} {
		if got := DistinctNeeded(tc.page, tc.o); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPlainBytes: only 32-bit pages' chunked plans give their best
// candidate's estimate for a dictionary to beat.
func TestPlainBytes(t *testing.T) {
	p32 := trialPage(1000, 1000, func(p *Page) { p.Bits = 32 })
	chunked := Plan{Values: Chunked, Candidates: []Candidate{{Bytes: 700}, {Bytes: 900}}}
	for _, tc := range []struct {
		name string
		p    Page
		plan Plan
		want int
	}{
		{"32-bit chunked", p32, chunked, 700},
		{"32-bit zipped", p32, Plan{Values: Zipped, Candidates: chunked.Candidates}, 0},
		{"32-bit, no estimate", p32, Plan{Values: Chunked}, 0},
		{"64-bit chunked", trialPage(1000, 1000, nil), chunked, 0},
	} {
		if got := PlainBytes(tc.p, tc.plan); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
