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
//
// The timeout is wall-clock time, so on a busy machine it can fire before
// the shell has started its child and written hang.pid; the test then tries
// again with a longer timeout instead of depending on the scheduler. Every
// wait is for an event (the pid file, the child's end) with a generous
// deadline only as the failure bound.
func TestWorkspaceToolKillsProcessGroup(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, toolrule.WorkspaceFile)
	for _, timeout := range []string{"300ms", "1s", "4s", "15s"} {
		writeFile(t, file, `{"tools":[
		 {"name":"hang","description":"Leaves a child and hangs.","parameters":{"type":"object"},"trust":"trusted","timeout":"`+timeout+`","command":["sh","-c","sleep 60 & echo $! > hang.pid; sleep 60"]}
		]}`, 0o644)
		ts, err := LoadWorkspaceTools(file)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = ts[0].Call(context.Background(), "{}")
		var te *Error
		if !errors.As(err, &te) || te.Kind != ErrTransport || !strings.Contains(te.Msg, "timed out after "+timeout) {
			t.Fatalf("hang (timeout %s): %v after %v", timeout, err, time.Since(start))
		}
		if _, err := os.Stat(filepath.Join(root, "hang.pid")); err == nil {
			waitGone(t, root, "hang")
			break
		} else if timeout == "15s" {
			t.Fatalf("the shell never wrote hang.pid within a 15s timeout: %v", err)
		}
		t.Logf("timeout %s fired before the shell wrote hang.pid; trying a longer one", timeout)
	}

	writeFile(t, file, `{"tools":[
	 {"name":"leave","description":"Leaves a child and returns.","parameters":{"type":"object"},"trust":"trusted","command":["sh","-c","sleep 60 > /dev/null 2>&1 & echo $! > leave.pid; echo done"]}
	]}`, 0o644)
	ts, err := LoadWorkspaceTools(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts[0].Call(context.Background(), "{}"); err != nil {
		t.Fatalf("leave: %v", err)
	}
	waitGone(t, root, "leave")
}

// waitGone reads the pid the command wrote to name.pid and waits for that
// process to end (the kill is sent before Call returns; the kernel may take
// a while to deliver it on a loaded machine).
func waitGone(t *testing.T, root, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s.pid: %v", name, err)
	}
	for deadline := time.Now().Add(30 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("%s: the command's child %d outlived the call", name, pid)
	}
}
