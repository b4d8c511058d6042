//go:build unix

package dap

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without waiting for a writer when
// it is a named pipe.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
