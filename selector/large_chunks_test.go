package selector

import (
	"math/rand/v2"
	"testing"

	"github.com/planarlance/planar/values"
)

// TestWindowCandidates: the cost policy offers Zstd over large chunks on
// big compressible pages (at most 2^15 values, about LargeChunkBytes raw), the
// lance policy never does, a window's take reads the whole window, and
// windows shrink (or vanish) when the page has many levels per value.
func TestWindowCandidates(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var set [16]uint32
	for i := range set {
		set[i] = r.Uint32() | 1<<31
	}
	page := pageOf(t, 200_000, func(int) uint32 { return set[r.IntN(len(set))] })
	window := func(p Plan) (Candidate, bool) {
		for _, c := range p.Candidates {
			if g, ok := c.Codec.(values.GeneralCodec); ok && g.ChunkValues > 4096 {
				return c, true
			}
		}
		return Candidate{}, false
	}
	cost := Choose(page, Options{})
	w, ok := window(cost)
	if !ok {
		t.Fatalf("no window candidate: %v", names(cost))
	}
	g := w.Codec.(values.GeneralCodec)
	if g.ChunkValues > 1<<values.MaxChunkValuesLog2 || g.ChunkValues*4 > LargeChunkBytes || g.Scheme != values.SchemeZstd {
		t.Errorf("window %+v: want Zstd over at most 2^15 values and %d raw bytes", g, LargeChunkBytes)
	}
	if w.InnerBytes <= w.Bytes {
		t.Errorf("window compresses %d bytes to %d", w.InnerBytes, w.Bytes)
	}
	if !isWindow(cost.Codec) {
		t.Errorf("16 distinct 32-bit values: chose %s, want a window (%v)", cost.Codec.Name(), cost.Candidates)
	}
	// The take of a window reads all of it: a heavy read weight prefers
	// smaller chunks.
	if slow := Choose(page, Options{Weights: Weights{Lambda: 20}}); isWindow(slow.Codec) {
		t.Errorf("lambda=20 still chose the window %s", slow.Codec.Name())
	}
	if _, ok := window(Choose(page, Options{Policy: PolicyLance})); ok {
		t.Errorf("lance policy offers windows")
	}
	// Levels: 2 per value halve the window to fit a chunk's u16 level
	// count with a margin; 20 per value leave no window.
	for _, tc := range []struct {
		levels, most int
	}{{2, 16384}, {20, 0}} {
		lp := page
		lp.HasLevels, lp.Degenerate, lp.NumLevels = true, false, tc.levels*lp.NumVisible
		got := 0
		if w, ok := window(Choose(lp, Options{})); ok {
			got = w.Codec.(values.GeneralCodec).ChunkValues
		}
		if got > tc.most || tc.most > 0 && got == 0 {
			t.Errorf("%d levels per value: window of %d values, want up to %d", tc.levels, got, tc.most)
		}
	}
}

func isWindow(c values.Codec) bool {
	g, ok := c.(values.GeneralCodec)
	return ok && g.ChunkValues > 4096
}
