package lsp

import (
	"context"
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
	s := newServer(Options{})
	s.analyse(ctx, snap)
	if snap.analysed || snap.findings != nil {
		t.Fatalf("a cancelled analysis marked the snapshot analysed: %v", snap.findings)
	}
	s.ensureAnalysed(context.Background(), snap)
	want := checker.Check(snap.prompt, nil)
	if !snap.analysed || len(want) == 0 || len(snap.findings) != len(want) || snap.findings[0].Code != want[0].Code {
		t.Fatalf("findings %v, want %v", snap.findings, want)
	}
	pd := toDiagnostics("untitled:t.md", snap.file, snap.findings)
	if len(pd) != len(want) || pd[0].Code != want[0].Code || pd[0].Message != want[0].Message || pd[0].Severity != severityOf(want[0].Severity) {
		t.Errorf("protocol diagnostics %+v from %+v", pd, want)
	}
}
