// Package bulk copies large byte ranges so that the Go runtime can stop the
// copying goroutine while it works.
//
// A copy runs in the runtime's memmove, which the scheduler cannot preempt.
// Copying megabytes into freshly allocated memory (every page faulting on
// first touch) can take milliseconds; a garbage collection that needs to
// scan the copying goroutine's stack meanwhile keeps signalling it and
// spinning on another core until the copy returns. Measured on a 2-core
// machine, a fresh process reading an 8.5 MB column spent over 40% of its
// CPU that way. Append and Copy move at most Piece bytes per memmove and
// yield to the scheduler between pieces (and nothing more for copies
// under a piece); Clear zeroes the same way. Make allocates a large buffer
// that its caller fills whole without clearing it first.
package bulk

import (
	"runtime"
	"strings"
	"unsafe"
)

// Piece is the most one memmove moves: 64 fresh pages faulted in, tens of
// microseconds that a collection may wait (1 MiB pieces still stalled a
// fresh process's 200 MB write in one run of three).
const Piece = 1 << 18

// Append appends src to dst, a piece at a time.
func Append(dst, src []byte) []byte {
	if len(src) <= Piece {
		return append(dst, src...)
	}
	if need := len(dst) + len(src); cap(dst) < need {
		grown := make([]byte, len(dst), need)
		copy(grown, dst)
		dst = grown
	}
	for len(src) > 0 {
		k := min(len(src), Piece)
		dst = append(dst, src[:k]...)
		src = src[k:]
		if len(src) > 0 {
			runtime.Gosched()
		}
	}
	return dst
}

// Copy copies src into dst (as the builtin copy) a piece at a time and
// returns the number of bytes copied.
func Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	for at := 0; at < n; {
		k := min(n-at, Piece)
		copy(dst[at:at+k], src[at:at+k])
		at += k
		if at < n {
			runtime.Gosched()
		}
	}
	return n
}

// Counter yields every Piece bytes counted: for loops of many small
// copies into fresh memory.
type Counter struct{ n int }

// Add counts n bytes copied, yielding when a piece has passed.
func (c *Counter) Add(n int) {
	if c.n += n; c.n >= Piece {
		c.n = 0
		runtime.Gosched()
	}
}

// Clear zeroes b a piece at a time.
func Clear(b []byte) {
	for len(b) > Piece {
		clear(b[:Piece])
		b = b[Piece:]
		runtime.Gosched()
	}
	clear(b)
}

// Make returns a byte slice of length 0 and capacity at least n whose
// memory is not cleared: what it holds is whatever the heap held there
// before, so the caller must write every byte before reading it. A large
// make clears its memory on the allocating goroutine alone, before any
// parallel fill can start; buffers that are filled whole anyway (a page's
// gathered values, its encoded chunks) skip that pass.
func Make(n int) []byte {
	if n <= 0 {
		return nil
	}
	// strings.Builder grows its buffer without clearing it; its one
	// written byte makes the string share that buffer.
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0)
	s := b.String()
	return unsafe.Slice(unsafe.StringData(s), n)[:0]
}

// plain is an element type without pointers, which memory from Make may
// hold.
type plain interface {
	~bool | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Grow is slices.Grow for a large buffer that appends fill: s with room for
// at least n more elements. New memory is not cleared (as Make's), and the
// elements held move a piece at a time. slices.Grow clears the room it
// adds in one runtime call that cannot be stopped: on fresh memory every
// page faults inside it, and a garbage collection waiting to stop the
// goroutine spins on another core meanwhile (measured on a 2-core machine:
// a quarter of a string page's write).
func Grow[T plain](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	size := int(unsafe.Sizeof(*new(T)))
	c := max(len(s)+n, 2*cap(s))
	b := Make(c * size)
	t := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), c)[:len(s)]
	if len(s) > 0 {
		Copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t))), len(s)*size),
			unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*size))
	}
	return t
}

// FaultIn writes zeros over b, new memory for a table that will be probed
// at random (zero already), in pieces, when it spans a page or more. Fresh
// memory is otherwise faulted in by the first probe of each page, a read
// that maps the shared zero page, and copied again at the first insert,
// which interrupts the other cores to flush their TLBs (a float64 page's
// dictionary spent 14% of a fresh process's write there, two threads
// faulting at once contending for the page table's lock besides; a struct
// write's measuring scratch and sparse sets' distinct tables, of 4 to 128
// KiB, 4-6% of its CPU).
func FaultIn(b []byte) {
	if len(b) >= pageSize {
		Clear(b)
	}
}

// Table is make([]T, n) for a table probed at random (see FaultIn).
func Table[T plain](n int) []T {
	s := make([]T, n)
	if n > 0 {
		FaultIn(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n*int(unsafe.Sizeof(s[0]))))
	}
	return s
}

// Compact joins parts that were appended into regions of buf, part j from
// buf[starts[j]] (an append moves a part that outgrows its region
// elsewhere), and returns them back to back: moved down within buf, a
// piece at a time, into memory already written when every part lies at its
// region's start, else copied into a new buffer. One part is returned as
// it is.
func Compact(buf []byte, starts []int, parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	full := buf[:cap(buf)]
	inPlace, total := true, 0
	for j, p := range parts {
		inPlace = inPlace && (len(p) == 0 || starts[j] < len(full) && unsafe.SliceData(p) == &full[starts[j]])
		total += len(p)
	}
	out := full[:0]
	if !inPlace {
		out = Make(total)
	}
	for j, p := range parts {
		at := len(out)
		out = out[:at+len(p)]
		if !inPlace || at != starts[j] {
			Copy(out[at:], p)
		}
	}
	return out
}
