//go:build unix

package main

import "syscall"

// syncFiles writes every dirty page back before a timed job starts.
func syncFiles() { syscall.Sync() }
