// Package roaringbench measures RoaringBitmap against structural.Positions
// for the materialized positions of a sparse page. It is a module of its own
// so that planar does not depend on roaring (which did not win; see
// FORMAT.md). Run: cd structural/roaringbench && go test -bench .
package roaringbench

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/planarlance/planar/structural"
)

const slots = 1 << 20

var nulls = []struct {
	name string
	p    float64
}{{"null50", 0.5}, {"null99", 0.99}, {"null99.99", 0.9999}}

// bitmap is an Arrow validity bitmap of n slots, each null with
// probability p (the same draws as structural's benchmarks).
func bitmap(n int, p float64) []byte {
	rng := rand.New(rand.NewPCG(1, 1))
	bm := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		if rng.Float64() >= p {
			bm[i/8] |= 1 << (i % 8)
		}
	}
	return bm
}

// fromArrow builds a roaring bitmap from an Arrow bitmap (whole bytes).
func fromArrow(bm []byte) *roaring.Bitmap {
	w := make([]uint64, (len(bm)+7)/8)
	for i := range w {
		var b [8]byte
		copy(b[:], bm[8*i:min(8*i+8, len(bm))])
		w[i] = binary.LittleEndian.Uint64(b[:])
	}
	rb := roaring.FromDense(w, false)
	rb.RunOptimize()
	return rb
}

// rank is the number of members below slot.
func rank(rb *roaring.Bitmap, slot int) int {
	if slot == 0 {
		return 0
	}
	return int(rb.Rank(uint32(slot - 1)))
}

func TestSame(t *testing.T) {
	for _, c := range nulls {
		bm := bitmap(slots, c.p)
		rb := fromArrow(bm)
		ps := structural.NewPositionsBitmap(bm, 0, slots)
		var it roaring.IntIterator
		for s := 0; s < slots; s += 997 {
			if rank(rb, s) != ps.Rank(s) {
				t.Fatalf("%s: rank(%d) %d vs %d", c.name, s, rank(rb, s), ps.Rank(s))
			}
			got, _ := ps.AppendRange(nil, s, s+1000)
			want := rangeOf(rb, &it, nil, s, s+1000)
			if len(got) != len(want) {
				t.Fatalf("%s: range at %d: %d vs %d members", c.name, s, len(got), len(want))
			}
		}
		t.Logf("%s: %d members; roaring %d bytes (run-optimized), Positions %d bytes", c.name, rb.GetCardinality(), rb.GetSizeInBytes(), ps.SizeBytes())
	}
}

func rangeOf(rb *roaring.Bitmap, it *roaring.IntIterator, dst []uint32, lo, hi int) []uint32 {
	it.Initialize(rb)
	it.AdvanceIfNeeded(uint32(lo))
	for it.HasNext() && it.PeekNext() < uint32(hi) {
		dst = append(dst, it.Next())
	}
	return dst
}

func BenchmarkBuild(b *testing.B) {
	for _, c := range nulls {
		bm := bitmap(slots, c.p)
		b.Run("roaring/"+c.name, func(b *testing.B) {
			for b.Loop() {
				fromArrow(bm)
			}
		})
		b.Run("positions/"+c.name, func(b *testing.B) {
			for b.Loop() {
				structural.NewPositionsBitmap(bm, 0, slots)
			}
		})
	}
}

func BenchmarkRank(b *testing.B) {
	for _, c := range nulls {
		bm := bitmap(slots, c.p)
		rb := fromArrow(bm)
		ps := structural.NewPositionsBitmap(bm, 0, slots)
		q := make([]int, 4096)
		rng := rand.New(rand.NewPCG(2, 2))
		for i := range q {
			q[i] = rng.IntN(slots)
		}
		b.Run("roaring/"+c.name, func(b *testing.B) {
			i, s := 0, 0
			for b.Loop() {
				s += rank(rb, q[i&4095])
				i++
			}
			_ = s
		})
		b.Run("positions/"+c.name, func(b *testing.B) {
			i, s := 0, 0
			for b.Loop() {
				s += ps.Rank(q[i&4095])
				i++
			}
			_ = s
		})
	}
}

func BenchmarkRange(b *testing.B) {
	for _, c := range nulls {
		bm := bitmap(slots, c.p)
		rb := fromArrow(bm)
		ps := structural.NewPositionsBitmap(bm, 0, slots)
		q := make([]int, 4096)
		rng := rand.New(rand.NewPCG(3, 3))
		for i := range q {
			q[i] = rng.IntN(slots - 1000)
		}
		dst := make([]uint32, 0, 1024)
		b.Run("roaring/"+c.name, func(b *testing.B) {
			var it roaring.IntIterator
			i := 0
			for b.Loop() {
				lo := q[i&4095]
				_ = rank(rb, lo)
				dst = rangeOf(rb, &it, dst[:0], lo, lo+1000)
				i++
			}
		})
		b.Run("positions/"+c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				lo := q[i&4095]
				dst, _ = ps.AppendRange(dst[:0], lo, lo+1000)
				i++
			}
		})
	}
}
