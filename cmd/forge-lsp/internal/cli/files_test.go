//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileFolder holds one good prompt next to files that used to hang or
// flood check: a named pipe, a link to /dev/zero, a dangling link and an
// oversized prompt.
func hostileFolder(t *testing.T) (dir, fifo string) {
	dir = t.TempDir()
	writeFile(t, filepath.Join(dir, "good.md"), warnPrompt)
	fifo = filepath.Join(dir, "x.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "missing.md"), filepath.Join(dir, "dangling.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "big.md"), warnPrompt+strings.Repeat("x", MaxFileBytes))
	return dir, fifo
}

// within fails the test instead of hanging when f blocks.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("blocked (before: reading a named pipe never returned)")
	}
}

func TestCheckSkipsWhatItCannotRead(t *testing.T) {
	dir, _ := hostileFolder(t)
	var out, errs string
	var code int
	within(t, func() { out, errs, code = runCheck(t, dir) })
	if code != 2 {
		t.Errorf("exit %d, want 2 (files skipped)", code)
	}
	for _, want := range []string{"x.md is a named pipe", "zero.md is a device", "dangling.md", "big.md is ", "more than the 4194304-byte limit"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	// The walk went on: the good prompt was checked.
	if !strings.Contains(out, "good.md") || !strings.Contains(errs, "1 file checked") {
		t.Errorf("good.md was not checked:\n%s\n%s", out, errs)
	}
}

func TestRunRefusesNamedPipe(t *testing.T) {
	_, fifo := hostileFolder(t)
	var code int
	var errs string
	within(t, func() { code, _, errs = runCLI(t, fifo) })
	if code != exitUsage || !strings.Contains(errs, "named pipe") {
		t.Fatalf("run on a named pipe: exit %d, %s", code, errs)
	}
}
