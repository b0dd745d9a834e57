package structural

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPositions: Contains, Rank and AppendRange agree with a plain mask,
// in both forms (bitmap and sorted), from bools and from Arrow bitmaps at
// any bit offset.
func TestPositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for i := 0; i < 200; i++ {
		n := rng.IntN(5000)
		switch {
		case i%20 == 0:
			n = rng.IntN(70)
		case i%25 == 1:
			n = 1<<17 + rng.IntN(1<<17) // several buckets of the sorted form
		case i%25 == 2:
			n = 1 << 17
		}
		p := []float64{0, 0.001, 0.02, 0.5, 0.97, 1}[i%6]
		m := mask(n, func(int) bool { return rng.Float64() < p })
		off := rng.IntN(16)
		bm := make([]byte, (n+off+7)/8+1)
		for k := range bm {
			bm[k] = byte(rng.Uint32()) // garbage outside the range
		}
		for k, v := range m {
			j := off + k
			bm[j/8] &^= 1 << (j % 8)
			if v {
				bm[j/8] |= 1 << (j % 8)
			}
		}
		for _, ps := range []*Positions{NewPositionsBools(m), NewPositionsBitmap(bm, off, n)} {
			checkPositions(t, ps, m, rng)
		}
	}
}

func checkPositions(t *testing.T, ps *Positions, m []bool, rng *rand.Rand) {
	t.Helper()
	n := len(m)
	rank := make([]int, n+1)
	for i, v := range m {
		rank[i+1] = rank[i]
		if v {
			rank[i+1]++
		}
	}
	if ps.Len() != n || ps.Count() != rank[n] {
		t.Fatalf("len %d count %d, want %d %d", ps.Len(), ps.Count(), n, rank[n])
	}
	for s := -1; s <= n+1; s++ {
		want := rank[max(0, min(s, n))]
		if got := ps.Rank(s); got != want {
			t.Fatalf("Rank(%d) = %d, want %d (n %d, sorted form %v)", s, got, want, n, ps.words == nil)
		}
		if got := ps.Contains(s); got != (s >= 0 && s < n && m[s]) {
			t.Fatalf("Contains(%d) = %v", s, got)
		}
	}
	for k := 0; k < 20; k++ {
		lo, hi := rng.IntN(n+2)-1, rng.IntN(n+2)-1
		got, first := ps.AppendRange([]uint32{99}, lo, hi)
		var want []uint32
		for s := max(0, lo); s < min(hi, n); s++ {
			if m[s] {
				want = append(want, uint32(s))
			}
		}
		if !slices.Equal(got[1:], want) || first != rank[max(0, min(lo, n))] {
			t.Fatalf("AppendRange(%d, %d) = %v at %d, want %v at %d", lo, hi, got[1:], first, want, rank[max(0, min(lo, n))])
		}
	}
}

// TestMaterializedMask: a leaf slot is materialized when it and every slot
// above it are valid.
func TestMaterializedMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for i := 0; i < 100; i++ {
		path := sparseTestPaths[i%len(sparseTestPaths)]
		lds := randomLayers(rng, path, rng.IntN(500))
		got := MaterializedMask(lds)
		// Walk each leaf slot's ancestors.
		parents := make([][]int, len(lds)) // parents[d][slot] = parent slot in layer d-1
		for d := 1; d < len(lds); d++ {
			up := lds[d-1]
			parents[d] = make([]int, lds[d].Len)
			for s := 0; s < up.Len; s++ {
				switch {
				case up.Offsets != nil:
					for c := up.Offsets[s]; c < up.Offsets[s+1]; c++ {
						parents[d][c] = s
					}
				case up.Dim > 0:
					for c := s * up.Dim; c < (s+1)*up.Dim; c++ {
						parents[d][c] = s
					}
				default:
					parents[d][s] = s
				}
			}
		}
		last := len(lds) - 1
		leafSlots := lds[last].Len
		if ld := lds[last]; ld.Offsets != nil {
			leafSlots = int(ld.Offsets[ld.Len])
		}
		if len(got) != leafSlots {
			t.Fatalf("case %d: %d leaf slots, want %d", i, len(got), leafSlots)
		}
		for s := range got {
			want := true
			slot := s
			for d := last; d >= 0; d-- {
				if v := lds[d].Valid; v != nil && !v[slot] {
					want = false
				}
				if d > 0 {
					slot = parents[d][slot]
				}
			}
			if got[s] != want {
				t.Fatalf("case %d: leaf slot %d materialized %v, want %v", i, s, got[s], want)
			}
		}
		if Materialized(lds).Count() != countTrue(got) {
			t.Fatalf("case %d: Materialized count differs", i)
		}
	}
}

func countTrue(m []bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// Benchmarks: the materialized set of 1M slots from an Arrow validity
// bitmap at 50%, 99% and 99.99% null, as Positions (bitmap with a rank index,
// or sorted positions when sparse) and as a plain sorted []uint32; rank of a
// slot; the members of a 1000-slot take window. RoaringBitmap is compared in
// structural/roaringbench (its own module, so that planar does not depend on
// it); FORMAT.md has the numbers.

const benchSlots = 1 << 20

var benchNulls = []struct {
	name string
	p    float64
}{{"null50", 0.5}, {"null99", 0.99}, {"null99.99", 0.9999}}

// BenchBitmap is an Arrow validity bitmap of n slots, each null with
// probability p.
func benchBitmap(n int, p float64) []byte {
	rng := rand.New(rand.NewPCG(1, 1))
	bm := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		if rng.Float64() >= p {
			bm[i/8] |= 1 << (i % 8)
		}
	}
	return bm
}

// sortedFromBitmap lists the set bits of an Arrow bitmap.
func sortedFromBitmap(bm []byte, n int) []uint32 {
	count := 0
	for _, b := range bm {
		count += bits.OnesCount8(b)
	}
	out := make([]uint32, 0, count)
	for i := 0; i < len(bm); i += 8 {
		var w uint64
		for k := 0; k < 8 && i+k < len(bm); k++ {
			w |= uint64(bm[i+k]) << (8 * k)
		}
		for w != 0 {
			out = append(out, uint32(i*8+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return out
}

func BenchmarkPositionsBuild(b *testing.B) {
	for _, c := range benchNulls {
		bm := benchBitmap(benchSlots, c.p)
		b.Run("positions/"+c.name, func(b *testing.B) {
			for b.Loop() {
				NewPositionsBitmap(bm, 0, benchSlots)
			}
		})
		b.Run("sorted/"+c.name, func(b *testing.B) {
			for b.Loop() {
				sortedFromBitmap(bm, benchSlots)
			}
		})
	}
}

func BenchmarkPositionsRank(b *testing.B) {
	for _, c := range benchNulls {
		bm := benchBitmap(benchSlots, c.p)
		ps := NewPositionsBitmap(bm, 0, benchSlots)
		sorted := sortedFromBitmap(bm, benchSlots)
		slots := make([]int, 4096)
		rng := rand.New(rand.NewPCG(2, 2))
		for i := range slots {
			slots[i] = rng.IntN(benchSlots)
		}
		b.Run("positions/"+c.name, func(b *testing.B) {
			i, s := 0, 0
			for b.Loop() {
				s += ps.Rank(slots[i&4095])
				i++
			}
			_ = s
		})
		b.Run("sorted/"+c.name, func(b *testing.B) {
			i, s := 0, 0
			for b.Loop() {
				r, _ := slices.BinarySearch(sorted, uint32(slots[i&4095]))
				s += r
				i++
			}
			_ = s
		})
	}
}

func BenchmarkPositionsRange(b *testing.B) {
	for _, c := range benchNulls {
		bm := benchBitmap(benchSlots, c.p)
		ps := NewPositionsBitmap(bm, 0, benchSlots)
		sorted := sortedFromBitmap(bm, benchSlots)
		starts := make([]int, 4096)
		rng := rand.New(rand.NewPCG(3, 3))
		for i := range starts {
			starts[i] = rng.IntN(benchSlots - 1000)
		}
		dst := make([]uint32, 0, 1024)
		b.Run("positions/"+c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				lo := starts[i&4095]
				dst, _ = ps.AppendRange(dst[:0], lo, lo+1000)
				i++
			}
		})
		b.Run("sorted/"+c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				lo := starts[i&4095]
				a, _ := slices.BinarySearch(sorted, uint32(lo))
				e, _ := slices.BinarySearch(sorted, uint32(lo+1000))
				dst = append(dst[:0], sorted[a:e]...)
				i++
			}
		})
	}
}
