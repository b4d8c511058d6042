package fsread

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var small = Kind{Name: "widget", Max: 16, Hint: "trim it"}

func TestReadFileRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	os.WriteFile(p, []byte("hello"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p, link} {
		b, err := ReadFile(path, small)
		if err != nil || string(b) != "hello" {
			t.Errorf("ReadFile(%s) = %q, %v", path, b, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), small); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

// Hostile repository files: a link to a device, a named pipe, a
// directory, a file over the cap. Each is refused at once with the path,
// the kind and (for size) the cap in the message.
func TestReadFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("x", 17)), 0o644)
	cases := []struct {
		path string
		is   error
		want []string
	}{
		{fifo, ErrNotRegular, []string{fifo, "a named pipe", "widget"}},
		{zero, ErrNotRegular, []string{zero, "a device", "widget"}},
		{dir, ErrNotRegular, []string{"a directory"}},
		{big, ErrTooLarge, []string{big, "17 bytes", "16-byte limit for a widget", "trim it"}},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(c.path, small); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, c.is) {
				t.Errorf("%s: error %v, want %v", c.path, err, c.is)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q lacks %q", c.path, err, w)
				}
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: ReadFile blocked", c.path)
		}
	}
}

// A file that grows past the cap after Open is cut at the cap by Limit.
func TestLimitStopsGrowth(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	f, size, err := Open(p, small)
	if err != nil || size != 10 {
		t.Fatalf("Open: %d %v", size, err)
	}
	defer f.Close()
	os.WriteFile(p, []byte(strings.Repeat("y", 40)), 0o644) // same inode, grown
	_, err = io.ReadAll(Limit(p, f, small))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("grown file read through Limit: %v, want ErrTooLarge", err)
	}
}

// A stamp vouches for a regular file modified longer than RacyWindow
// ago, and changes with its size or time.
func TestStampOf(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := StampOf(p); ok {
		t.Error("a file written just now is vouched for")
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	st, ok := StampOf(p)
	if !ok || st.Size != 3 || !st.ModTime.Equal(old) {
		t.Fatalf("StampOf = %+v, %v; want size 3, time %v, ok", st, ok, old)
	}
	if _, ok := StampOf(filepath.Dir(p)); ok {
		t.Error("a folder is vouched for")
	}
	if _, ok := StampOf(p + ".missing"); ok {
		t.Error("a missing file is vouched for")
	}
}
