package session

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A ToolsCache searches and reads the tools file once for a prompt's
// folder, and again only when the file's size or time changed, or it went.
func TestToolsCacheReadsOnChange(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "forge-tools.json")
	spec := func(names ...string) string {
		s := `{"tools": [`
		for i, n := range names {
			if i > 0 {
				s += ","
			}
			s += `{"name": "` + n + `", "description": "d", "parameters": {"type": "object"}, "trust": "trusted", "command": ["true"]}`
		}
		return s + `]}`
	}
	write := func(s string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	write(spec("one"), t0)
	var c ToolsCache
	names := func() []string {
		t.Helper()
		ts, err := c.load("", dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range ts {
			out = append(out, x.WireName())
		}
		return out
	}
	check := func(what string, reads int, want ...string) {
		t.Helper()
		got := names()
		if len(got) != len(want) || c.reads != reads {
			t.Fatalf("%s: tools %v after %d reads, want %v after %d", what, got, c.reads, want, reads)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: tools %v, want %v", what, got, want)
			}
		}
	}
	check("first load", 1, "one")
	check("unchanged", 1, "one")
	write(spec("two"), t0) // same size and time: taken as unchanged
	check("same size and time", 1, "one")
	write(spec("three"), t0)
	check("size changed", 2, "three")
	write(spec("fourx"), t0.Add(time.Second))
	check("time changed", 3, "fourx")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	check("removed", 4)
	check("still none", 4)
	// Another folder is another search.
	if _, err := c.load("", root); err != nil || c.reads != 5 {
		t.Fatalf("other folder: err %v, %d reads, want 5", err, c.reads)
	}
	// A configured file that does not parse is an error, not cached.
	bad := filepath.Join(root, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := c.load(bad, dir); err == nil {
			t.Fatal("a bad tools file loaded")
		}
	}
}

// A tools file modified just now is read again at every load: its stamp
// cannot tell two quick writes apart.
func TestToolsCacheRacyFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "forge-tools.json")
	spec := `{"tools": [{"name": "a", "description": "d", "parameters": {"type": "object"}, "trust": "trusted", "command": ["true"]}]}`
	if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	var c ToolsCache
	for i := 1; i <= 2; i++ {
		if ts, err := c.load("", dir); err != nil || len(ts) != 1 || c.reads != i {
			t.Fatalf("load %d: %d tools, err %v, %d reads", i, len(ts), err, c.reads)
		}
	}
}
