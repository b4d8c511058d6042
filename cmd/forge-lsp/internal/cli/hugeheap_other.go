//go:build !linux

package cli

// hugeHeap does nothing here: transparent huge pages are Linux's.
func hugeHeap(n int64) {}
