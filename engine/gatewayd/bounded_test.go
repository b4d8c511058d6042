package gatewayd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFilesReadBounded: a gateway file may come from a repository, so its
// .env and includes are read like every repository file: a link to
// /dev/zero, a named pipe or an oversized file is refused with the path,
// at once, instead of filling memory or hanging the load.
func TestFilesReadBounded(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, []byte("A=b\n"+strings.Repeat("#", 2<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, target, include, want string
	}{
		{".env to /dev/zero", "/dev/zero", "", "gw.env is a device"},
		{".env a named pipe", fifo, "", "gw.env is a named pipe"},
		{".env too large", big, "", "more than the 1048576-byte limit for a gateway .env file"},
		{"include of /dev/zero", "/dev/zero", "inc.toml", "inc.toml is a device"},
		{"include of a named pipe", fifo, "inc.toml", "inc.toml is a named pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			text := minimal
			link := filepath.Join(dir, "gw.env")
			if tc.include != "" {
				text = "include = [\"" + tc.include + "\"]\n" + minimal
				link = filepath.Join(dir, tc.include)
			}
			p := write(t, dir, "gw.toml", text)
			if err := os.Symlink(tc.target, link); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := Load(p, envOf("GW_KEY", "k", "BACKEND_KEY", "b"))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the load hangs")
			}
		})
	}
}
