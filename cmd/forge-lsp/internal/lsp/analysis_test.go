package lsp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
)

// TestAnalysisCancelled: the server's analysis honours its context: a
// cancelled one returns ctx.Err() and leaves the snapshot not analysed (so
// a later request analyses it), a live one fills the same diagnostics as
// `forge-lsp check`.
func TestAnalysisCancelled(t *testing.T) {
	text := tinyPrompt + "\n```lua\nlocal unused = 1\n```\n"
	snap := newSnapshot("untitled:t.md", 1, []byte(text), 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ds, err := runAnalysis(ctx, snap); err != context.Canceled || ds != nil {
		t.Fatalf("runAnalysis with a cancelled context: %v, %v", ds, err)
	}
	s := newServer(options{})
	s.analyse(ctx, snap)
	if fs, ok := snap.findings.peek(); ok || fs != nil {
		t.Fatalf("a cancelled analysis marked the snapshot analysed: %v", fs)
	}
	s.analyse(context.Background(), snap)
	want := checker.Check(snap.prompt, nil)
	findings, ok := snap.findings.peek()
	if !ok || len(want) == 0 || len(findings) != len(want) || findings[0].Code != want[0].Code {
		t.Fatalf("findings %v, want %v", findings, want)
	}
	pd := toDiagnostics("untitled:t.md", snap.file, findings)
	if len(pd) != len(want) || pd[0].Code != want[0].Code || pd[0].Message != want[0].Message || pd[0].Severity != severityOf(want[0].Severity) {
		t.Errorf("protocol diagnostics %+v from %+v", pd, want)
	}
}

// TestAnalysisUsesConfiguredToolsFile: diagnostics resolve tool
// capabilities over the configured workspace tools file, as hover and a
// run do.
func TestAnalysisUsesConfiguredToolsFile(t *testing.T) {
	tf := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tf, []byte(`{"tools": [{"name": "word_count", "description": "Count the words in a text.",
  "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}, "trust": "trusted", "command": ["false"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	text := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# Title\n\n```lua\ntools.bind(\"wc\", \"count the words of a text\")\n```\n"
	for _, c := range []struct {
		env  string
		want bool
	}{{"", true}, {tf, false}} {
		cl := startServer(t, options{Getenv: func(k string) string {
			if k == envToolsFile {
				return c.env
			}
			return ""
		}})
		cl.initialize(nil)
		cl.open("untitled:t.md", text)
		p, _ := cl.diagnosticsFor("untitled:t.md", 1, 0)
		got := false
		for _, d := range p.Diagnostics {
			if d.Code == "tool-binding" {
				got = true
			}
		}
		if got != c.want {
			t.Errorf("toolsFile %q: tool-binding reported %v, want %v (%+v)", c.env, got, c.want, p.Diagnostics)
		}
	}
}
