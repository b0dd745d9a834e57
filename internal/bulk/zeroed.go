package bulk

import "os"

// lazyZeroMin is the size from which Zeroed hands whole pages back to the
// kernel instead of clearing them.
const lazyZeroMin = 1 << 20

// Zeroed returns n zero bytes for a buffer that may stay mostly zero (the
// values of a page of nulls, a sparse column's values scattered to their
// rows). The Go runtime clears a large allocation before returning it
// whenever its memory was used before, a pass that writes (and faults in)
// every page however few its caller then writes; a buffer of lazyZeroMin
// bytes or more is instead taken uncleared (Make) and, on Linux, its whole
// pages are handed back to the kernel (madvise MADV_DONTNEED on the Go
// heap's private anonymous memory), which maps zero pages on their first
// touch: a 99%-null embedding column's 201 MB of values then cost the rows
// written. Elsewhere, and should the call fail, the buffer is cleared a
// piece at a time (Clear).
func Zeroed(n int) []byte {
	if n < lazyZeroMin {
		return make([]byte, n)
	}
	b := Make(n)[:n]
	zeroPages(b)
	return b
}

// ZeroedFor is Zeroed for a buffer into which writes runs of each bytes
// will be written: zeroed lazily only when they touch at most an eighth of
// its pages. A page written anyway is faulted in either way, and handing
// it back first (a system call, other cores' TLBs flushed) costs more than
// the runtime's clear: a half-null embedding column's values read 1.3-1.9×
// slower so.
func ZeroedFor(n, writes, each int) []byte {
	if writes*(each/pageSize+2) > n/pageSize/8 {
		return make([]byte, n)
	}
	return Zeroed(n)
}

var pageSize = os.Getpagesize()
