package bulk

import (
	"syscall"
	"unsafe"
)

// zeroPages zeroes b: its whole pages by returning them to the kernel, the
// bytes before and after them by clearing.
func zeroPages(b []byte) {
	page := uintptr(pageSize)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((p+page-1)&^(page-1) - p)
	hi := int((p+uintptr(len(b)))&^(page-1) - p)
	if hi <= lo {
		Clear(b)
		return
	}
	clear(b[:lo])
	clear(b[hi:])
	if syscall.Madvise(b[lo:hi], syscall.MADV_DONTNEED) != nil {
		Clear(b[lo:hi])
	}
}
