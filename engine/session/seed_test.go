//go:build unix

package session

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A seed folder from a repository: links and named pipes are skipped, a
// sparse file over the per-file cap and a folder over the total cap are
// refused with the cap in the message (before: read whole).
func TestSeedStoreBounds(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("ok"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Skip(err)
	}
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.md"))
	st, err := SeedStore(dir)
	if err != nil {
		t.Fatalf("SeedStore: %v", err)
	}
	if got, err := st.Read("a.md"); err != nil || got != "ok" {
		t.Errorf("a.md = %q, %v", got, err)
	}
	big := filepath.Join(dir, "big.md")
	f, _ := os.Create(big)
	f.Truncate(1 << 30)
	f.Close()
	_, err = SeedStore(dir)
	if err == nil || !strings.Contains(err.Error(), "limit for a store seed file") {
		t.Errorf("1 GB seed file: %v", err)
	}
	os.Remove(big)
	for i := range 5 {
		f, _ := os.Create(filepath.Join(dir, "f"+string(rune('0'+i))))
		f.Truncate(15 << 20)
		f.Close()
	}
	_, err = SeedStore(dir)
	if err == nil || !strings.Contains(err.Error(), "the limit for a seeded store") {
		t.Errorf("75 MB seed folder: %v", err)
	}
}
