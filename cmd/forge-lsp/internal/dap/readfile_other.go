//go:build !unix

package dap

import "os"

// openNoBlock opens path for reading (named pipes do not block an open
// here).
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
