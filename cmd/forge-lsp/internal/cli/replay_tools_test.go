package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies testdata/NAME into a fresh folder (so that a command
// that does run leaves its marker there, not in the repository).
func copyTree(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func runTestCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var o, e bytes.Buffer
	code := runTests(context.Background(), args, func(string) (string, bool) { return "", false }, &o, &e)
	return o.String(), e.String(), code
}

// A committed cassette whose model turn calls a workspace command: `test`
// (replay, offline), `test --list` and `check` run nothing; the failure
// names the tool and --live-tools; with --live-tools the command runs
// (before: `forge-lsp test .` ran the repository's shell command).
func TestReplayRunsNoRepositoryCommand(t *testing.T) {
	dir := copyTree(t, "replayruns")
	marker := filepath.Join(dir, "pwned.txt")
	ran := func() bool { _, err := os.Stat(marker); return err == nil }

	if _, errs, code := runCheck(t, dir); ran() {
		t.Fatalf("check ran the command (exit %d): %s", code, errs)
	}
	if _, _, _ = runTestCmd(t, "--list", dir); ran() {
		t.Fatal("test --list ran the command")
	}
	out, errs, code := runTestCmd(t, dir)
	if ran() {
		t.Fatal("test (replay) ran the workspace command")
	}
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{"tool word_count", "a replay runs no tools", "--live-tools"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, errs, code = runTestCmd(t, "--live-tools", dir)
	if !ran() || code != 0 {
		t.Errorf("--live-tools: ran=%v exit %d\n%s%s", ran(), code, out, errs)
	}
}
