package reader

// SetDenseWindows turns the window reads of dense pages on or off and
// returns the previous setting (benchmarks compare both).
func SetDenseWindows(on bool) bool {
	prev := denseWindows
	denseWindows = on
	return prev
}

// SetRawPages turns the straight-to-buffer read of raw page runs on or off
// and returns the previous setting.
func SetRawPages(on bool) bool {
	prev := rawPages
	rawPages = on
	return prev
}

// RawPageRuns counts the page runs read straight into one buffer.
func RawPageRuns() int64 { return rawPageRuns.Load() }

// SetWholePageTake sets how takes read dense chunked pages (0: chosen by
// the number of windows, 1: whole pages, -1: windows) and returns the
// previous setting.
func SetWholePageTake(v int) int {
	prev := wholePageTake
	wholePageTake = v
	return prev
}

// SetSparseJoin turns the joined decode of a take's windows of one sparse
// page on or off and returns the previous setting.
func SetSparseJoin(on bool) bool {
	prev := sparseJoin
	sparseJoin = on
	return prev
}

// SetFlatVariable turns the one-buffer read of flat string page runs on or
// off and returns the previous setting.
func SetFlatVariable(on bool) bool {
	prev := flatVariable
	flatVariable = on
	return prev
}

// FlatVariableRuns counts the flat string page runs read into one buffer.
func FlatVariableRuns() int64 { return flatVariableRuns.Load() }
