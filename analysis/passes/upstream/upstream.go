package upstream

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Code is the diagnostic code (documented in docs/codes.md).
const Code = "upstream-spelling"

// Analyzer reports tools.need and models.need.
var Analyzer = &analysis.Analyzer{
	Name:     "upstream",
	Doc:      "suggest tools.bind/models.bind for the upstream spellings tools.need/models.need",
	Codes:    []*analysis.Code{{Name: Code, Severity: analysis.Hint, Summary: "tools.need/models.need is the upstream spelling of tools.bind/models.bind."}},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	for _, c := range prog.Calls {
		if c.Path != "tools.need" && c.Path != "models.need" {
			continue
		}
		table := strings.TrimSuffix(c.Path, ".need")
		d := analysis.Diagnostic{Span: prog.NameSpan(c), Code: Code,
			Message: c.Path + " is the upstream spelling of " + table + ".bind; both work, bind is the Go engine's name"}
		if text := pass.File.Text(prog.NameSpan(c)); strings.HasSuffix(text, "need") {
			need := source.Span{Start: prog.NameSpan(c).End - 4, End: prog.NameSpan(c).End}
			d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Rename to " + table + ".bind",
				Edits: []analysis.TextEdit{{Span: need, NewText: "bind"}}, Safe: true}}
		}
		pass.Report(d)
	}
	return nil, nil
}
