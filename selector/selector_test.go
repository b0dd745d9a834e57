package selector

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/planarlance/planar/stats"
	"github.com/planarlance/planar/values"
)

func TestChooseRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		page Page
		want ValuePlane
		str  StructuralPlane
	}{
		{"flat all null", Page{SingleNullable: true, NumVisible: 9, AllNull: true}, None, Sparse},
		{"nested all null", Page{NumVisible: 9, AllNull: true}, None, Sparse},
		{"no visible values", Page{NumVisible: 0}, None, Sparse},
		{"trivial constant", Page{Degenerate: true, NumVisible: 9, Scalar: []byte{1}, NullFree: true}, Constant, Dense},
		{"structured constant", Page{NumVisible: 9, Scalar: []byte{1}, NullFree: true}, Constant, Sparse},
		{"narrow", Page{Degenerate: true, NumVisible: 9, MaxValueBytes: 8, CanZip: true}, Chunked, Dense},
		{"wide", Page{NumVisible: 9, MaxValueBytes: 256, CanZip: true}, Zipped, Dense},
		{"wide but not zippable", Page{NumVisible: 9, MaxValueBytes: 4096}, Chunked, Dense},
		{"just under wide", Page{NumVisible: 9, MaxValueBytes: 255, CanZip: true}, Chunked, Dense},
	} {
		tc.page.Format23 = true
		p := Choose(tc.page, Options{})
		if p.Values != tc.want || p.Structure != tc.str {
			t.Errorf("%s: got %v x %v, want %v x %v", tc.name, p.Structure, p.Values, tc.str, tc.want)
		}
		if p.Reason == "" {
			t.Errorf("%s: no reason", tc.name)
		}
		// Canonicality: dense constant / none only with trivial structure.
		if p.Structure == Dense && (p.Values == Constant && !tc.page.Degenerate || p.Values == None && !tc.page.SingleNullable) {
			t.Errorf("%s: dense %v with non-trivial structure", tc.name, p.Values)
		}
		// Before 2.3 there is no sparse structure.
		tc.page.Format23 = false
		if p := Choose(tc.page, Options{}); p.Structure != Dense {
			t.Errorf("%s in 2.2: got %v x %v", tc.name, p.Structure, p.Values)
		}
	}
}

func pageOf(t *testing.T, n int, f func(i int) uint32) Page {
	t.Helper()
	return pageOfWidth(t, n, 32, func(i int) uint64 { return uint64(f(i)) })
}

// pageOfWidth is a page of n values of bits bits (32 or 64).
func pageOfWidth(t *testing.T, n, bits int, f func(i int) uint64) Page {
	t.Helper()
	w := bits / 8
	data := make([]byte, w*n)
	for i := 0; i < n; i++ {
		if w == 8 {
			binary.LittleEndian.PutUint64(data[8*i:], f(i))
		} else {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(f(i)))
		}
	}
	st := stats.Fixed(data, bits, n, nil)
	b := values.Block{Bits: bits, N: n, Data: data}
	sample := b
	if n > values.SampleValues {
		sample = values.Block{Bits: bits, N: values.SampleValues, Data: data[:w*values.SampleValues]}
	}
	return Page{Degenerate: true, NumVisible: n, MaxValueBytes: w, CanZip: true, Kind: values.KindFixed, Bits: bits,
		Profile: &values.Profile{N: n, Bits: bits, Fixed: &st, Sample: sample, Data: b}}
}

func names(p Plan) []string {
	var out []string
	for _, c := range p.Candidates {
		out = append(out, c.Codec.Name())
	}
	return out
}

// TestCandidatesByPolicyAndOptions: the candidate set follows the policy
// and the field options, and the winner is the cheapest candidate.
func TestCandidatesByPolicyAndOptions(t *testing.T) {
	page := pageOf(t, 20000, func(i int) uint32 { return uint32(i % 1000) })
	has := func(p Plan, prefix string) bool {
		for _, n := range names(p) {
			if strings.HasPrefix(n, prefix) {
				return true
			}
		}
		return false
	}
	cost := Choose(page, Options{})
	lance := Choose(page, Options{Policy: PolicyLance})
	if !has(cost, "general(") {
		t.Errorf("cost policy without general candidates: %v", names(cost))
	}
	if has(lance, "general(") {
		t.Errorf("lance policy with general candidates it was not asked for: %v", names(lance))
	}
	if none := Choose(page, Options{Compression: CompressionNone}); len(none.Candidates) != 1 || none.Codec.Name() != "flat32" {
		t.Errorf("compression=none: %v", names(none))
	}
	if forced := Choose(page, Options{Codec: "rle", Policy: PolicyLance}); forced.Codec.Name() != "rle(flat32,flat8)" {
		t.Errorf("planar:codec=rle: %s", forced.Codec.Name())
	}
	for _, p := range []Plan{cost, lance} {
		for _, c := range p.Candidates[1:] {
			if c.Cost < p.Candidates[0].Cost {
				t.Errorf("winner %v is not the cheapest (%v)", p.Candidates[0], c)
			}
		}
	}
	// A heavy read weight rules out codecs that are slow to read.
	slow := Choose(page, Options{Weights: Weights{Lambda: 100}})
	if strings.HasPrefix(slow.Codec.Name(), "general(zstd") {
		t.Errorf("lambda=100 still chose %s", slow.Codec.Name())
	}
	// Bytes only: the smallest estimate wins.
	bytesOnly := Choose(page, Options{Weights: Weights{Lambda: -1, Mu: -1}})
	for _, c := range bytesOnly.Candidates {
		if c.Bytes < bytesOnly.Candidates[0].Bytes {
			t.Errorf("bytes-only winner %v larger than %v", bytesOnly.Candidates[0], c)
		}
	}
}

// TestWideValuesBitpack: random int64s of 63 bits are bit-packed under the
// cost policy (1.6% smaller than flat, as pylance stores them): packing
// costs per value, so 64-bit values pay half the per-byte work of 32-bit
// ones (perValue).
func TestWideValuesBitpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	page := pageOfWidth(t, 1<<20, 64, func(int) uint64 { return rng.Uint64() >> 1 })
	if got := Choose(page, Options{}).Codec.Name(); got != "bitpack64" {
		t.Errorf("63-bit int64s: chose %s, want bitpack64", got)
	}
	if got := Choose(page, Options{Policy: PolicyLance}).Codec.Name(); got != "bitpack64" {
		t.Errorf("63-bit int64s, lance policy: chose %s, want bitpack64", got)
	}
}

// TestPrunedTrialsCannotWin: the cost policy skips general compression
// trials whose work alone costs more than a candidate already estimated;
// on pages of every shape and under several weights the winner (and its
// estimate) is the one chosen with every trial run, and some pages (few
// distinct small values, the indices of a low-cardinality string page)
// run fewer trials.
func TestPrunedTrialsCannotWin(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	shapes := []struct {
		name string
		f    func(int) uint32
	}{
		{"10 values", func(int) uint32 { return uint32(r.IntN(10)) }},
		{"16 wide", func(int) uint32 { return uint32(r.IntN(16)) << 27 }},
		{"random", func(int) uint32 { return r.Uint32() }},
		{"small", func(int) uint32 { return uint32(r.IntN(1000)) }},
		{"runs", func(i int) uint32 { return uint32(i / 500) }},
		{"sorted", func(i int) uint32 { return uint32(3 * i) }},
		{"repeated text", func(i int) uint32 { return uint32("planar lance"[i%12]) }},
	}
	weights := []Weights{{}, {Lambda: 20}, {Lambda: -1}, {Mu: 0.5}, {Lambda: 0.001, Mu: -1}}
	fewer := 0
	for _, sh := range shapes {
		name, f := sh.name, sh.f
		for _, n := range []int{5000, 200_000} {
			page := pageOf(t, n, f)
			for _, w := range weights {
				o := Options{Weights: w}
				pruned := Choose(page, o)
				pruneTrials = false
				full := Choose(page, o)
				pruneTrials = true
				if pruned.Codec.Name() != full.Codec.Name() || pruned.Candidates[0].Bytes != full.Candidates[0].Bytes {
					t.Errorf("%s, %d values, %+v: pruned trials chose %v, all trials %v", name, n, w, pruned.Candidates[0], full.Candidates[0])
				}
				if len(pruned.Candidates) < len(full.Candidates) {
					fewer++
				}
			}
		}
	}
	if fewer == 0 {
		t.Fatal("no page skipped a trial")
	}
}
