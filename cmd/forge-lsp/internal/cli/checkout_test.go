package cli

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"testing"
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

// TestPaceGC: a folder's check collects less often, a single file's at
// the default pace, and GOGC in the environment always wins.
func TestPaceGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	t.Setenv("GOGC", "")
	paceGC(1)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("one file: GOGC %d, want 100", got)
	}
	paceGC(folderFiles)
	if got := debug.SetGCPercent(100); got != 400 {
		t.Fatalf("a folder: GOGC %d, want 400", got)
	}
	t.Setenv("GOGC", "100")
	paceGC(2000)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set: %d, want the environment's 100", got)
	}
}
