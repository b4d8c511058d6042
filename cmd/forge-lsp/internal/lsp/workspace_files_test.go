//go:build unix

package lsp

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWorkspaceSkipsSpecialFiles: a named pipe or a link to a device named
// like a prompt is not opened by the workspace scan (opening the pipe
// blocked the scanning goroutine, and shutdown waited for it).
func TestWorkspaceSkipsSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	zero := filepath.Join(dir, "zero.md")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	s := newServer(options{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.checkFile(fifo)
		s.checkFile(zero)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("checking a named pipe blocked")
	}
}
