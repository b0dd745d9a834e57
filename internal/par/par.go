// Package par splits work below a page across the cores: a loop over a
// page's values cut into pieces, or a list of independent jobs. Results
// never depend on how many cores ran them.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// MinValues is the fewest values a piece of a split loop handles by
// default: below it a goroutine costs more than it saves.
const MinValues = 1 << 16

// Pieces cuts [0, n) into up to GOMAXPROCS pieces of at least least values
// each (one piece when n is small): cuts[j], cuts[j+1] bound piece j.
func Pieces(n, least int) []int {
	k := max(1, min(runtime.GOMAXPROCS(0), n/max(least, 1)))
	cuts := make([]int, k+1)
	for j := range cuts {
		cuts[j] = j * n / k
	}
	return cuts
}

// EachPiece runs fn over the pieces of cuts, side by side when there are
// several, and returns the error of the first piece (in piece order) that
// failed.
func EachPiece(cuts []int, fn func(j, lo, hi int) error) error {
	k := len(cuts) - 1
	if k == 1 {
		return fn(0, cuts[0], cuts[1])
	}
	errs := make([]error, k)
	var wg sync.WaitGroup
	for j := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[j] = fn(j, cuts[j], cuts[j+1])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// InTurn is Each on the calling goroutine: fn(i) in order, stopping at the
// first error, which it returns (for work too small to share, or callers
// that choose).
func InTurn(n int, fn func(i int) error) error {
	for i := range n {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// Each runs fn(i) for i in [0, n) on up to GOMAXPROCS goroutines, each
// taking the next index when done with one, and returns the error of the
// lowest index that failed.
func Each(n int, fn func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		return InTurn(n, fn)
	}
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = fn(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
