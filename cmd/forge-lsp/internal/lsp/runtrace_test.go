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
	c := startServer(t, Options{})
	c.root = dir
	c.initialize(nil)
	uri := "file://" + filepath.ToSlash(prompt)
	c.open(uri, text)
	var res RunResult
	c.mustCall(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandRunSection,
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
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("20260101T0000%02d.000000-p.jsonl", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pruneRunTraces(dir, runTracesKept)
	left, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(left) != runTracesKept || !strings.Contains(left[0], "000005.") {
		t.Fatalf("left %d, first %s", len(left), filepath.Base(left[0]))
	}
}
