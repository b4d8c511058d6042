package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestFindingsOutJSON: findings printed file by file make the same bytes
// as the whole list encoded at once (what check printed before it
// streamed), with none, one and several findings, HTML characters
// included.
func TestFindingsOutJSON(t *testing.T) {
	all := []Diagnostic{
		{Path: "a.md", Line: 1, Column: 2, Severity: "error", Code: "X1", Message: "use <b> & \"q\""},
		{Path: "a.md", Line: 3, Column: 1, Severity: "warning", Code: "X2", Message: "two", Fixes: []Fix{{Message: "fix it", Safe: true}}},
		{Path: "b.md", Line: 9, Column: 4, Severity: "info", Code: "X3", Message: "three"},
	}
	for n := 0; n <= len(all); n++ {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(append([]Diagnostic{}, all[:n]...)); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		o := &findingsOut{format: "json", w: &got}
		o.add(all[:min(n, 1)])
		o.add(nil)
		o.add(all[min(n, 1):n])
		o.close()
		if got.String() != want.String() {
			t.Fatalf("%d findings: streamed\n%s\nwant\n%s", n, got.String(), want.String())
		}
		if n == len(all) && (o.errs != 1 || o.warns != 1) {
			t.Fatalf("counted %d errors, %d warnings", o.errs, o.warns)
		}
	}
}

// TestPaceGC: a folder's check collects less often; a few files' check
// not at all until the heap reaches its floor (64 MiB, or 64 bytes per
// input byte), then at the pace it had before; GOGC in the environment
// always wins, and GOMEMLIMIT for a few files.
func TestPaceGC(t *testing.T) {
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}()
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	dir := t.TempDir()
	file := func(name string, size int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small, large := file("small.md", 100), file("large.md", 2<<20)
	percent := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	// ended waits for the floor's end after a collection.
	ended := func(what string) {
		t.Helper()
		runtime.GC()
		for deadline := time.Now().Add(10 * time.Second); limit() != math.MaxInt64 || percent() != 100; {
			if time.Now().After(deadline) {
				t.Fatalf("%s: after a collection GOGC %d, limit %d; want 100 and no limit", what, percent(), limit())
			}
			time.Sleep(time.Millisecond)
		}
	}
	for _, c := range []struct {
		name  string
		files []string
		limit int64
	}{
		{"one small file", []string{small}, 64 << 20},
		{"a few files", []string{small, large}, 64 * (2<<20 + 100)},
	} {
		paceGC(c.files)
		if p, l := percent(), limit(); p != -1 || l != c.limit {
			t.Fatalf("%s: GOGC %d, limit %d; want off until %d", c.name, p, l, c.limit)
		}
		ended(c.name)
	}
	folder := make([]string, folderFiles)
	for i := range folder {
		folder[i] = small
	}
	paceGC(folder)
	if p, l := percent(), limit(); p != 200 || l != math.MaxInt64 {
		t.Fatalf("a folder: GOGC %d, limit %d; want 200, no limit", p, l)
	}
	debug.SetGCPercent(100)
	t.Setenv("GOMEMLIMIT", "1GiB")
	paceGC([]string{small})
	if p, l := percent(), limit(); p != 100 || l != math.MaxInt64 {
		t.Fatalf("GOMEMLIMIT set, one file: GOGC %d, limit %d; want them untouched", p, l)
	}
	t.Setenv("GOGC", "100")
	paceGC(folder)
	if got := percent(); got != 100 {
		t.Fatalf("GOGC set: %d, want the environment's 100", got)
	}
}
