package reader

import "sync/atomic"

// IOStats counts the read requests a File made of its io.ReaderAt and the
// bytes they asked for. Opening a file counts the footer, offset tables and
// metadata reads; every later read counts the page bytes it fetched.
type IOStats struct {
	Requests int64 // ReadAt calls
	Bytes    int64 // bytes requested
}

// Sub returns the requests and bytes of s not in t (s taken after t).
func (s IOStats) Sub(t IOStats) IOStats {
	return IOStats{Requests: s.Requests - t.Requests, Bytes: s.Bytes - t.Bytes}
}

type ioCounter struct {
	requests, bytes atomic.Int64
}

func (c *ioCounter) add(n uint64) {
	c.requests.Add(1)
	c.bytes.Add(int64(n))
}

// IOStats returns the requests and bytes read since Open (or the last
// ResetIOStats). Safe to call while reads run.
func (f *File) IOStats() IOStats {
	return IOStats{Requests: f.io.requests.Load(), Bytes: f.io.bytes.Load()}
}

// ResetIOStats sets the counters to zero.
func (f *File) ResetIOStats() {
	f.io.requests.Store(0)
	f.io.bytes.Store(0)
}
