package reader

// CoalesceGap is the largest gap a read goes through (coalesceGap).
const CoalesceGap = coalesceGap

// SetDenseWindows turns the window reads of dense pages on or off and
// returns the previous setting (benchmarks compare both).
func (f *File) SetDenseWindows(on bool) bool {
	prev := !f.paths.noDenseWindows
	f.paths.noDenseWindows = !on
	return prev
}

// SetRawPages turns the straight-to-buffer read of raw page runs on or off
// and returns the previous setting.
func (f *File) SetRawPages(on bool) bool {
	prev := !f.paths.noRawPages
	f.paths.noRawPages = !on
	return prev
}

// RawPageRuns counts the page runs read straight into one buffer.
func RawPageRuns() int64 { return rawPageRuns.Load() }

// SetWholePageTake sets how takes read dense chunked pages (0: chosen by
// the number of windows, 1: whole pages, -1: windows) and returns the
// previous setting.
func (f *File) SetWholePageTake(v int) int {
	prev := f.paths.wholePageTake
	f.paths.wholePageTake = v
	return prev
}

// SetSparseJoin turns the joined decode of a take's windows of one sparse
// page on or off and returns the previous setting.
func (f *File) SetSparseJoin(on bool) bool {
	prev := !f.paths.noSparseJoin
	f.paths.noSparseJoin = !on
	return prev
}

// SparseUnjoined counts the reads of several windows of a sparse page
// that built one array per window.
func SparseUnjoined() int64 { return sparseUnjoined.Load() }

// SetFlatVariable turns the one-buffer read of flat string page runs on or
// off and returns the previous setting.
func (f *File) SetFlatVariable(on bool) bool {
	prev := !f.paths.noFlatVariable
	f.paths.noFlatVariable = !on
	return prev
}

// FlatVariableRuns counts the flat string page runs read into one buffer.
func FlatVariableRuns() int64 { return flatVariableRuns.Load() }

// SetSparsePages turns the straight-to-buffer read of sparse fixed-width
// page runs on or off and returns the previous setting.
func (f *File) SetSparsePages(on bool) bool {
	prev := !f.paths.noSparsePages
	f.paths.noSparsePages = !on
	return prev
}

// SparsePageRuns counts the sparse page runs read straight into one buffer.
func SparsePageRuns() int64 { return sparsePageRuns.Load() }
