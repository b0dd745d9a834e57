//go:build !unix

package main

// syncFiles is a no-op where there is no sync(2).
func syncFiles() {}
