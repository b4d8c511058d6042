package source

import (
	"path/filepath"
	"testing"
)

func TestInDir(t *testing.T) {
	root := filepath.FromSlash("/work/repo")
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/work/repo", true},
		{"/work/repo/a.md", true},
		{"/work/repo/..notes/a.md", true},
		{"/work/repo/notes/../a.md", true},
		{"/work/repo/../a.md", false},
		{"/work/repository/a.md", false},
		{"/work/a.md", false},
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
