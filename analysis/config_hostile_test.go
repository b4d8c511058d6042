//go:build unix

package analysis

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
)

// A .forge-lsp.json that is a named pipe is refused at once (before: the
// read blocked forever).
func TestFindConfigPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, ConfigFileName), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := FindConfig(filepath.Join(dir, "p.md")); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, fsread.ErrNotRegular) {
			t.Errorf("FindConfig = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("FindConfig blocked on a named pipe")
	}
}
