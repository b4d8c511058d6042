package source

import (
	"path/filepath"
	"testing"
)

func TestInDir(t *testing.T) {
	root := filepath.FromSlash("/srv/repo")
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/srv/repo", true},
		{"/srv/repo/a.md", true},
		{"/srv/repo/..notes/a.md", true},
		{"/srv/repo/notes/../a.md", true},
		{"/srv/repo/../a.md", false},
		{"/srv/repository/a.md", false},
		{"/srv/a.md", false},
		{"/", false},
	} {
		if got := InDir(root, filepath.FromSlash(c.path)); got != c.want {
			t.Errorf("InDir(%s, %s) = %v, want %v", root, c.path, got, c.want)
		}
	}
	// Relative names against ".": a document link's target.
	for rel, want := range map[string]bool{"notes/a.md": true, "..notes/a.md": true, "../a.md": false, "a/../../b": false} {
		if got := InDir(".", filepath.FromSlash(rel)); got != want {
			t.Errorf("InDir(., %s) = %v, want %v", rel, got, want)
		}
	}
}
