package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

func TestRunKeepsATraceInTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	prompt := filepath.Join(dir, "p.md")
	text := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nlog(\"hi \" .. args)\nreturn args\n```\n"
	if err := os.WriteFile(prompt, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startServer(t, options{})
	c.root = dir
	c.initialize(nil)
	uri := "file://" + filepath.ToSlash(prompt)
	c.open(uri, text)
	var res runResult
	c.mustCall(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunSection,
		"arguments": []any{map[string]any{"uri": uri, "section": "## A", "input": "Ann"}}}, &res)
	if res.Result != "Ann" {
		t.Fatalf("result %q", res.Result)
	}
	runs := filepath.Join(dir, ".forge", "runs")
	traces, _ := filepath.Glob(filepath.Join(runs, "*-p.jsonl"))
	if len(traces) != 1 {
		t.Fatalf("traces: %v", traces)
	}
	data, _ := os.ReadFile(traces[0])
	for _, want := range []string{`"ev":"run.start"`, `"input":"Ann"`, `"ev":"log","ms":`, `"message":"hi Ann"`, `"ev":"run.end"`, `"reply":"Ann"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("trace lacks %s:\n%s", want, data)
		}
	}
	if ig, err := os.ReadFile(filepath.Join(runs, ".gitignore")); err != nil || !strings.Contains(string(ig), "*") {
		t.Errorf(".gitignore: %q %v", ig, err)
	}
}

func TestPruneRunTraces(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < runTracesKept+5; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("20260101T0000%02d.000000-p.jsonl", i)), []byte(runTraceHead+"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pruneRunTraces(r, runTracesKept)
	left, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(left) != runTracesKept || !strings.Contains(left[0], "000005.") {
		t.Fatalf("left %d, first %s", len(left), filepath.Base(left[0]))
	}
}

// Pruning deletes only traces the server wrote: a link with a trace's
// name, a file with another name and a file that is not a trace survive,
// and the file a link points at is untouched (before: every *.jsonl of
// the folder was removed, through links too).
func TestPruneRunTracesLeavesOthersAlone(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "20250101T000000.000000-v.jsonl")
	os.WriteFile(victim, []byte(runTraceHead+"}\n"), 0o600)
	os.Symlink(victim, filepath.Join(dir, "20250101T000000.000000-link.jsonl"))
	os.WriteFile(filepath.Join(dir, "20250101T000000.000001-x.jsonl"), []byte(`{"cassette":"forge-lsp"}`), 0o600)
	os.WriteFile(filepath.Join(dir, "cassette.jsonl"), []byte(runTraceHead+"}\n"), 0o600)
	for i := range 3 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("20260101T0000%02d.000000-p.jsonl", i)), []byte(runTraceHead+"}\n"), 0o600)
	}
	r, _ := os.OpenRoot(dir)
	defer r.Close()
	pruneRunTraces(r, 1)
	left, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var names []string
	for _, l := range left {
		names = append(names, filepath.Base(l))
	}
	want := "20250101T000000.000000-link.jsonl 20250101T000000.000001-x.jsonl 20260101T000002.000000-p.jsonl cassette.jsonl"
	if strings.Join(names, " ") != want {
		t.Errorf("left %v, want %s", names, want)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Error("the link's target was deleted")
	}
}

// A repository whose .forge/runs is a link gets no trace written through
// it, and nothing behind it is pruned.
func TestRunTraceRefusesLinkedFolder(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	for i := range runTracesKept + 2 {
		os.WriteFile(filepath.Join(outside, fmt.Sprintf("20250101T0000%02d.000000-v.jsonl", i)), []byte(runTraceHead+"}\n"), 0o600)
	}
	os.MkdirAll(filepath.Join(dir, ".forge"), 0o755)
	if err := os.Symlink(outside, filepath.Join(dir, ".forge", "runs")); err != nil {
		t.Skip(err)
	}
	prompt := filepath.Join(dir, "p.md")
	text := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nreturn args\n```\n"
	os.WriteFile(prompt, []byte(text), 0o600)
	c := startServer(t, options{})
	c.root = dir
	c.initialize(nil)
	uri := "file://" + filepath.ToSlash(prompt)
	c.open(uri, text)
	var res runResult
	c.mustCall(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunSection,
		"arguments": []any{map[string]any{"uri": uri, "section": "## A", "input": "Ann"}}}, &res)
	if res.Result != "Ann" {
		t.Fatalf("result %q", res.Result)
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != runTracesKept+2 {
		t.Errorf("the folder behind the link changed: %d entries", len(ents))
	}
}
