package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A prompt that writes .git/hooks and .git/config into its store: the
// dump refuses those, refuses a non-empty folder without --force, writes
// every other file it can in sorted order, and lists each failure
// (before: .git/config was written, and a file in the way aborted the
// rest of the dump in map order).
func TestStoreDumpHostile(t *testing.T) {
	p := filepath.Join("testdata", "hostile", "storedump.md")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b", "blocked"), "a file where the dump wants a folder")
	code, _, errs := runCLI(t, p, "--store-dump", dir)
	if code != 1 || !strings.Contains(errs, "is not empty (it holds b)") || !strings.Contains(errs, "--force") {
		t.Fatalf("non-empty folder: exit %d %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
		t.Fatal("wrote into a non-empty folder without --force")
	}
	code, _, errs = runCLI(t, p, "--store-dump", dir, "--force")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (files not written)\n%s", code, errs)
	}
	for _, bad := range []string{".git", "sub/.GIT"} {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(bad))); err == nil {
			t.Errorf("%s was created", bad)
		}
	}
	for _, good := range []string{"a.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(dir, good)); err != nil {
			t.Errorf("%s not written: %v", good, err)
		}
	}
	// Every failure is listed, in path order.
	want := []string{
		filepath.Join(dir, ".git", "config") + ": refusing to write into a .git folder",
		filepath.Join(dir, ".git", "hooks", "pre-commit") + ": refusing to write into a .git folder",
		filepath.Join(dir, "b", "blocked", "x.txt") + ": b/blocked exists and is not a directory",
		filepath.Join(dir, "sub", ".GIT", "config") + ": refusing to write into a .git folder",
	}
	if !strings.Contains(errs, "4 of 6 file(s) not written") {
		t.Errorf("no count in %q", errs)
	}
	at := 0
	for _, w := range want {
		i := strings.Index(errs[at:], w)
		if i < 0 {
			t.Fatalf("stderr lacks %q (in order):\n%s", w, errs)
		}
		at += i + len(w)
	}
}

// check reports a test file whose cassette leaves the repository
// (before: accepted, and --record wrote there).
func TestCheckReportsEscapingTestPaths(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	writeFile(t, filepath.Join(repo, "p.md"), warnPrompt)
	writeFile(t, filepath.Join(repo, "p.test.yaml"), "cases:\n  - name: a\n    cassette: ../victim/important.txt\n    expect: {output: {contains: x}}\n")
	out, errs, code := runCheck(t, repo)
	if code == 0 || !strings.Contains(out+errs, "p.test.yaml:3:15: error: cassette") || !strings.Contains(out+errs, "outside "+filepath.ToSlash(repo)) || !strings.Contains(out+errs, "[test-path]") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}
