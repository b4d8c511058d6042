//go:build unix

package dap

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	godap "github.com/google/go-dap"
)

// A launch program or a breakpoint source that is a named pipe or a link
// to /dev/zero is refused with the reader's message (before: the read
// blocked the adapter or filled memory).
func TestHostileProgramAndSource(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe.md")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip(err)
	}
	zero := filepath.Join(dir, "zero.md")
	os.Symlink("/dev/zero", zero)
	c := start(t, Options{})
	c.call("initialize", map[string]any{"adapterID": "promptforge"})
	for _, p := range []string{pipe, zero} {
		msg := c.callErr("launch", map[string]any{"program": p})
		if !strings.Contains(msg, "not a regular file; only regular files are read as a prompt") {
			t.Errorf("launch %s: %q", p, msg)
		}
	}
	for _, p := range []string{pipe, zero} {
		resp := c.call("setBreakpoints", map[string]any{"source": map[string]any{"path": p}, "breakpoints": []map[string]any{{"line": 1}}})
		bps := resp.(*godap.SetBreakpointsResponse).Body.Breakpoints
		if len(bps) != 1 || bps[0].Verified || !strings.Contains(bps[0].Message, "not a regular file") {
			t.Errorf("setBreakpoints %s: %+v", p, bps)
		}
	}
}
