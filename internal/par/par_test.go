package par

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestPieces: pieces cover [0, n) in order, each at least least values
// long unless there is one, at most GOMAXPROCS of them.
func TestPieces(t *testing.T) {
	for _, tc := range []struct{ n, least int }{{0, 10}, {5, 10}, {10, 10}, {1000, 10}, {1 << 20, MinValues}, {7, 0}} {
		cuts := Pieces(tc.n, tc.least)
		k := len(cuts) - 1
		if cuts[0] != 0 || cuts[k] != tc.n || k < 1 || k > runtime.GOMAXPROCS(0) {
			t.Fatalf("n %d least %d: cuts %v", tc.n, tc.least, cuts)
		}
		for j := range k {
			if cuts[j+1] < cuts[j] || k > 1 && cuts[j+1]-cuts[j] < tc.least {
				t.Fatalf("n %d least %d: piece %d of cuts %v", tc.n, tc.least, j, cuts)
			}
		}
	}
}

// TestEach: every index runs once; the error of the lowest failing index
// (or piece) is returned whatever finishes first.
func TestEach(t *testing.T) {
	var ran [100]atomic.Int32
	err := Each(len(ran), func(i int) error {
		ran[i].Add(1)
		if i == 40 || i == 70 {
			return fmt.Errorf("index %d", i)
		}
		return nil
	})
	for i := range ran {
		if ran[i].Load() != 1 {
			t.Fatalf("index %d ran %d times", i, ran[i].Load())
		}
	}
	if err == nil || err.Error() != "index 40" {
		t.Fatalf("error %v, want index 40", err)
	}
	sentinel := errors.New("piece")
	cuts := []int{0, 3, 6, 9}
	err = EachPiece(cuts, func(j, lo, hi int) error {
		if j >= 1 {
			return fmt.Errorf("%d..%d: %w", lo, hi, sentinel)
		}
		return nil
	})
	if !errors.Is(err, sentinel) || err.Error() != "3..6: piece" {
		t.Fatalf("piece error %v", err)
	}
}
