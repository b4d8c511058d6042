package gateway

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
)

// A 600 MB cassette is refused with its size and the cap before a byte of
// it is read (before: read whole, then split, peaking near twice its size).
// The file is sparse, so the test costs no disk or time.
func TestReplayRefusesHugeCassette(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(600 << 20); err != nil {
		t.Skip("no sparse files:", err)
	}
	f.Close()
	_, err = NewReplay(p)
	if err == nil || !errors.Is(err, fsread.ErrTooLarge) {
		t.Fatalf("NewReplay(600 MB) = %v, want a too-large error", err)
	}
	for _, want := range []string{"629145600 bytes", "67108864-byte limit for a cassette"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A cassette that is a named pipe or a link to a device fails at once.
func TestReplayRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	zero := filepath.Join(dir, "zero.jsonl")
	os.Symlink("/dev/zero", zero)
	for _, p := range []string{fifo, zero} {
		done := make(chan error, 1)
		go func() { _, err := NewReplay(p); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, fsread.ErrNotRegular) {
				t.Errorf("NewReplay(%s) = %v, want not-a-regular-file", p, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("NewReplay(%s) blocked", p)
		}
	}
}
