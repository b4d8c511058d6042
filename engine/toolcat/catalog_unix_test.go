//go:build unix

package toolcat

import (
	"github.com/forge-lsp/forge-lsp/engine/toolrule"

	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCatalogRefusesNamedPipe: a named pipe where the tools file should
// be is never opened (the read would block forever); the catalog says why
// and keeps the built-ins.
func TestCatalogRefusesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), toolrule.WorkspaceFile)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan *toolrule.Catalog, 1)
	go func() { done <- For(fifo) }()
	select {
	case c := <-done:
		if c.Err == nil || !strings.Contains(c.Err.Error(), "not a regular file") || len(c.Tools) != 2 {
			t.Errorf("catalog of a named pipe: err %v, %d tools", c.Err, len(c.Tools))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("For blocked on a named pipe")
	}
}
