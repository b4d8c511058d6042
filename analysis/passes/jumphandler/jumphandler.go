package jumphandler

import (
	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/rules"
)

// Code is the diagnostic code.
const Code = "jump-in-handler"

// Analyzer reports jump inside add_local handlers.
var Analyzer = &analysis.Analyzer{
	Name:     "jumphandler",
	Doc:      "report jump reachable inside a tools.add_local handler, where it raises",
	Codes:    []*analysis.Code{{Name: Code, Severity: analysis.Error, Summary: "jump is reachable inside a tools.add_local handler, where it is disabled."}},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	for _, g := range prog.Globals {
		if g.Write || g.Expr.Value != "jump" || g.Where != api.Handler {
			continue
		}
		d := analysis.Diagnostic{Span: prog.GlobalSpan(g), Code: Code,
			Message: "jump is reachable inside a tools.add_local handler, where the run raises (the tool call fails and ends the run): " + rules.JumpInHandler}
		if prog.HandlerOf(g) != nil {
			d.Related = []analysis.RelatedInformation{{Span: prog.NameSpan(prog.HandlerOf(g)), Message: "the local tool whose handler reaches this jump"}}
		}
		pass.Report(d)
	}
	return nil, nil
}
