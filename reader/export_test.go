package reader

// SetDenseWindows turns the window reads of dense pages on or off and
// returns the previous setting (benchmarks compare both).
func SetDenseWindows(on bool) bool {
	prev := denseWindows
	denseWindows = on
	return prev
}
