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

// A launch whose trace, cassettes or store folder lie outside the
// program's repository and the temporary folder is refused before anything
// is written (before: the trace was created wherever launch.json said,
// ~/.bashrc included). An editor's own trace in the temporary folder is
// fine; a link there that leads out is not.
func TestLaunchPathsStayInside(t *testing.T) {
	base := t.TempDir()
	tmp, outside, repo := filepath.Join(base, "tmp"), filepath.Join(base, "outside"), filepath.Join(base, "repo")
	for _, d := range []string{tmp, outside, filepath.Join(repo, ".git")} {
		os.MkdirAll(d, 0o755)
	}
	t.Setenv("TMPDIR", tmp)
	prog := filepath.Join(repo, "p.md")
	os.WriteFile(prog, []byte("---\npromptforge: 1\n---\n# P\n\n```lua\nreturn \"ok\"\n```\n"), 0o644)
	os.Symlink(outside, filepath.Join(repo, "link"))
	os.Symlink(outside, filepath.Join(tmp, "link"))
	c := start(t, Options{})
	c.call("initialize", map[string]any{"adapterID": "promptforge"})
	for _, tc := range []struct{ key, path, what string }{
		{"trace", filepath.Join(outside, "victim.txt"), "trace"},
		{"trace", filepath.Join(repo, "link", "victim.txt"), "trace"},
		{"trace", filepath.Join(tmp, "link", "victim.txt"), "trace"},
		{"record", filepath.Join(repo, "..", "outside", "c.jsonl"), "record cassette"},
		{"replay", filepath.Join(outside, "c.jsonl"), "replay cassette"},
		{"store", outside, "store folder"},
	} {
		msg := c.callErr("launch", map[string]any{"program": prog, tc.key: tc.path})
		if !strings.Contains(msg, tc.what) || !strings.Contains(msg, "outside") {
			t.Errorf("launch with %s %s: %q", tc.key, tc.path, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "victim.txt")); err == nil {
		t.Error("the refused launch wrote its trace outside the repository")
	}
	for _, ok := range []string{filepath.Join(repo, "run.jsonl"), filepath.Join(tmp, "session.jsonl")} {
		if err := (&LaunchArgs{Program: prog, Trace: ok}).pathsInside(); err != nil {
			t.Errorf("trace %s refused: %v", ok, err)
		}
	}
}

// A launch.json `gateway` other than the user's own URL is refused: the
// user's key would go to a server the repository chose (before: it did).
func TestLaunchGatewayIsTheUsers(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "PROMPTFORGE_GATEWAY_URL" {
			return "https://gw.example/v1", true
		}
		return "", false
	}
	if err := (&LaunchArgs{Gateway: "https://evil.example/v1"}).gatewayFromUser(env); err == nil || !strings.Contains(err.Error(), "may not choose where your gateway key is sent") {
		t.Errorf("a repository's gateway: %v", err)
	}
	if err := (&LaunchArgs{Gateway: "https://gw.example/v1/"}).gatewayFromUser(env); err != nil {
		t.Errorf("the user's own gateway: %v", err)
	}
	if err := (&LaunchArgs{}).gatewayFromUser(env); err != nil {
		t.Errorf("no gateway: %v", err)
	}
	none := func(string) (string, bool) { return "", false }
	if err := (&LaunchArgs{Gateway: "https://gw.example/v1"}).gatewayFromUser(none); err == nil {
		t.Error("a gateway with no user URL was accepted")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.md")
	os.WriteFile(prog, []byte("---\npromptforge: 1\n---\n# P\n"), 0o644)
	c := start(t, Options{Env: env})
	c.call("initialize", map[string]any{"adapterID": "promptforge"})
	if msg := c.callErr("launch", map[string]any{"program": prog, "gateway": "https://evil.example/v1"}); !strings.Contains(msg, "may not choose") {
		t.Errorf("launch with a repository gateway: %q", msg)
	}
}
