package checker_test

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestEditsKeepNoProgram: what the passes memoise on the parser's chunks
// (chunk findings, analysis/internal/chunkmemo; per-chunk forms and
// facts) outlives the analysis that made it, since the parse cache keeps
// the chunks of earlier versions. None of it may point at an analysis:
// after a few edits, the Program, flow result and parse of every earlier
// version must be collectable (weak pointers to them go nil), while the
// parse cache still holds their chunks.
func TestEditsKeepNoProgram(t *testing.T) {
	edited := realisticEdits(t, 600)
	all := append(append([]*analysis.Analyzer{}, checker.Analyzers...), flow.Analyzer)
	var progs []weak.Pointer[program.Program]
	var flows []weak.Pointer[flow.Result]
	var prompts []weak.Pointer[parse.Prompt]
	for i := range 8 {
		p := parse.Parse("big.md", edited(i))
		_, res, err := analysis.RunResults(context.Background(), p, all, nil)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, weak.Make(res[program.Analyzer].(*program.Program)))
		flows = append(flows, weak.Make(res[flow.Analyzer].(*flow.Result)))
		prompts = append(prompts, weak.Make(p))
	}
	runtime.GC()
	runtime.GC()
	for i := range progs {
		if progs[i].Value() != nil || flows[i].Value() != nil || prompts[i].Value() != nil {
			t.Errorf("edit %d: its analysis is still reachable after the edits (program %v, flow %v, parse %v): something memoised on a chunk points at it",
				i, progs[i].Value() != nil, flows[i].Value() != nil, prompts[i].Value() != nil)
		}
	}
}
