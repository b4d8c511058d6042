//go:build unix

package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// alive reports whether pid runs (a zombie waiting for its reaper does not
// count).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// A workspace command that times out takes its children with it, and a
// child left in the background by a command that finished is ended too
// (before: only the direct child was killed).
func TestWorkspaceToolKillsProcessGroup(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, toolrule.WorkspaceFile), `{"tools":[
	 {"name":"hang","description":"Leaves a child and hangs.","parameters":{"type":"object"},"trust":"trusted","timeout":"300ms","command":["sh","-c","sleep 60 & echo $! > hang.pid; sleep 60"]},
	 {"name":"leave","description":"Leaves a child and returns.","parameters":{"type":"object"},"trust":"trusted","command":["sh","-c","sleep 60 > /dev/null 2>&1 & echo $! > leave.pid; echo done"]}
	]}`, 0o644)
	ts, err := LoadWorkspaceTools(filepath.Join(root, toolrule.WorkspaceFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"hang", "leave"} {
		start := time.Now()
		_, err := ts[i].Call(context.Background(), "{}")
		var te *Error
		if name == "hang" && (!errors.As(err, &te) || te.Kind != ErrTransport || time.Since(start) > 5*time.Second) {
			t.Errorf("hang: %v after %v", err, time.Since(start))
		}
		if name == "leave" && err != nil {
			t.Errorf("leave: %v", err)
		}
		b, err := os.ReadFile(filepath.Join(root, name+".pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		deadline := time.Now().Add(2 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("%s: the command's child %d outlived the call", name, pid)
		}
	}
}
