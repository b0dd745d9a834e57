//go:build !unix

package main

import "os"

// mapFile reads the whole file (no mmap on this platform).
func mapFile(path string) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	return b, func() {}, err
}

func maxRSSKB() int64 { return 0 }

func cpuSeconds() float64 { return 0 }
