package writer

import (
	"math/rand/v2"
	"testing"
)

// TestValidCountsAndMaxLen checks the page description's counting loops
// against the plain definitions on random pages, odd and even lengths,
// with and without nulls and offsets.
func TestValidCountsAndMaxLen(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 40; n++ {
		for rep := 0; rep < 5; rep++ {
			nulls := make([]bool, n)
			offsets := make([]uint64, n+1)
			offsets[0] = uint64(rng.IntN(100))
			for i := range n {
				nulls[i] = rng.IntN(3) == 0
				offsets[i+1] = offsets[i] + uint64(rng.IntN(50))
			}
			wantLeaves, wantBytes, wantMax := 0, 0, 0
			for i := range n {
				l := int(offsets[i+1] - offsets[i])
				wantMax = max(wantMax, l)
				if !nulls[i] {
					wantLeaves++
					wantBytes += l
				}
			}
			if l, b := validCounts(nulls, offsets); l != wantLeaves || b != wantBytes {
				t.Fatalf("n=%d: validCounts = %d, %d; want %d, %d", n, l, b, wantLeaves, wantBytes)
			}
			if l, b := validCounts(nulls, nil); l != wantLeaves || b != 0 {
				t.Fatalf("n=%d, fixed width: validCounts = %d, %d; want %d, 0", n, l, b, wantLeaves)
			}
			if got := maxLen(offsets); got != wantMax {
				t.Fatalf("n=%d: maxLen = %d, want %d", n, got, wantMax)
			}
		}
	}
	if maxLen(nil) != 0 {
		t.Fatal("maxLen(nil) != 0")
	}
}
