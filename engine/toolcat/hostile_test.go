//go:build unix

package toolcat

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// A forge-tools.json that is a named pipe is refused at once (before:
// the read blocked forever, and in the server it held the lock).
func TestWorkspaceConfigPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), toolrule.WorkspaceFile)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(p); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, fsread.ErrNotRegular) {
			t.Errorf("Read(pipe) = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Read blocked on a named pipe")
	}
}
