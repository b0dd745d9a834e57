//go:build !linux

package bulk

// zeroPages zeroes b (MADV_DONTNEED zero-fills only on Linux).
func zeroPages(b []byte) { Clear(b) }
