package bitmap

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// bitmap returns a random validity bitmap of n bits whose density of set
// bits is one of: all, none, or a mix with long all-valid stretches.
func bitmap(rng *rand.Rand, n int) []byte {
	bm := make([]byte, (n+7)/8)
	mode := rng.IntN(4)
	for i := range n {
		var set bool
		switch mode {
		case 0:
			set = true
		case 1:
			set = false
		case 2:
			set = rng.IntN(10) != 0
		default:
			set = (i/100)%2 == 0 || rng.IntN(3) == 0
		}
		if set {
			bm[i/8] |= 1 << (i % 8)
		}
	}
	return bm
}

func TestAgainstBitTests(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		total := rng.IntN(400)
		bm := bitmap(rng, total)
		off := rng.IntN(total + 1)
		n := rng.IntN(total - off + 1)
		wantFlags := make([]bool, n)
		wantNulls := 0
		for i := range wantFlags {
			wantFlags[i] = bm[(off+i)/8]>>((off+i)%8)&1 == 0
			if wantFlags[i] {
				wantNulls++
			}
		}

		gotFlags := make([]bool, n)
		for i := range gotFlags {
			gotFlags[i] = rng.IntN(2) == 0 // stale contents are overwritten
		}
		if k := Nulls(gotFlags, bm, off); k != wantNulls || !slices.Equal(gotFlags, wantFlags) {
			t.Fatalf("Nulls(off %d, n %d of %d): %d nulls, want %d; flags equal %v", off, n, total, k, wantNulls, slices.Equal(gotFlags, wantFlags))
		}

		valid := make([]bool, n)
		for i := range valid {
			valid[i] = rng.IntN(2) == 0
		}
		if k := Valid(valid, bm, off); k != wantNulls {
			t.Fatalf("Valid(off %d, n %d): %d nulls, want %d", off, n, k, wantNulls)
		}
		for i, v := range valid {
			if v == wantFlags[i] {
				t.Fatalf("Valid(off %d, n %d): slot %d valid %v, its bit says null %v", off, n, i, v, wantFlags[i])
			}
		}

		const code = 3
		levels := make([]uint16, n)
		for i := range levels {
			levels[i] = 7
		}
		if k := Levels(levels, bm, off, code); k != wantNulls {
			t.Fatalf("Levels(off %d, n %d): %d nulls, want %d", off, n, k, wantNulls)
		}
		for i, l := range levels {
			if want := map[bool]uint16{true: code, false: 0}[wantFlags[i]]; l != want {
				t.Fatalf("Levels(off %d, n %d): slot %d is %d, want %d", off, n, i, l, want)
			}
		}

		for _, width := range []int{1, 3, 4, 8} {
			vals := bytes.Repeat([]byte{0xAB}, n*width)
			want := bytes.Clone(vals)
			for i, null := range wantFlags {
				if null {
					clear(want[i*width : (i+1)*width])
				}
			}
			ClearNulls(vals, width, bm, off, n)
			if !bytes.Equal(vals, want) {
				t.Fatalf("ClearNulls(width %d, off %d, n %d) differs", width, off, n)
			}
		}
	}
}

func BenchmarkNulls(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 1 << 20
	bm := make([]byte, n/8+1)
	for i := range n {
		if rng.IntN(10) != 0 {
			bm[i/8] |= 1 << (i % 8)
		}
	}
	b.Run("flags", func(b *testing.B) {
		dst := make([]bool, n)
		b.SetBytes(n)
		for b.Loop() {
			Nulls(dst, bm, 1)
		}
	})
	b.Run("levels", func(b *testing.B) {
		dst := make([]uint16, n)
		b.SetBytes(n)
		for b.Loop() {
			Levels(dst, bm, 1, 1)
		}
	})
	b.Run("clear", func(b *testing.B) {
		dst := make([]byte, 4*n)
		b.SetBytes(n)
		for b.Loop() {
			ClearNulls(dst, 4, bm, 1, n)
		}
	})
}

// TestPack: packed flags are the bits one by one would set, for every
// length and pattern.
func TestPack(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	for range 2000 {
		n := rng.IntN(300)
		flags := make([]bool, n)
		want := make([]byte, (n+7)/8)
		wantSet := 0
		for i := range flags {
			if rng.IntN(3) != 0 {
				flags[i] = true
				want[i/8] |= 1 << (i % 8)
				wantSet++
			}
		}
		got := make([]byte, (n+7)/8)
		for i := range got {
			got[i] = 0xA5 // stale bits are overwritten
		}
		if set := Pack(got, flags); set != wantSet || !bytes.Equal(got, want) {
			t.Fatalf("n %d: % x (%d set), want % x (%d)", n, got, set, want, wantSet)
		}
	}
}

func TestFillTrue(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1000, 1 << 16} {
		flags := make([]bool, n)
		FillTrue(flags)
		if i := slices.Index(flags, false); i >= 0 {
			t.Fatalf("%d flags: flag %d left false", n, i)
		}
	}
}
