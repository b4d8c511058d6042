package aliassyntax

import (
	"fmt"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/yuin/gopher-lua/ast"
)

// computedAlias checks an alias of call that is not a literal but whose
// value the evaluator knows (built by concatenation, held in a shared
// constant, returned by a helper, a loop variable, a var key an earlier
// section wrote): each evaluation of the call, at the call (facts: its
// chunk's, with the var values the walk brings), or, for a call in a
// helper's body (facts nil), at the chunk's call that certainly runs it.
func computedAlias(pass *analysis.Pass, prog *program.Program, fl *flow.Result, facts *value.Facts, call *program.Call) {
	what := aliasArg(call.Canonical())
	if what == "" || len(call.Expr.Args) == 0 {
		return
	}
	switch call.Expr.Args[0].(type) {
	case *ast.StringExpr, *ast.TableExpr:
		return // judged as literals
	}
	if call.InFunc {
		done := map[*ast.FuncCallExpr]bool{}
		for _, s := range fl.SitesOf(call) {
			alias, ok := s.Facts.Arg(call.Expr, 0).StrConst()
			if !ok || done[s.Site.Call] || s.Facts.Arg(call.Expr, 0).TypeName() != "string" || toolrule.ValidAlias(alias) {
				continue
			}
			done[s.Site.Call] = true
			who := s.Site.Name
			if who == "" {
				who = "the function called here"
			}
			pass.Report(analysis.Diagnostic{Span: prog.Span(s.Chunk, s.Site.Call), Code: Code,
				Message: fmt.Sprintf("%s (the %s in this call of %s)", toolrule.AliasError(what, alias), call.Canonical(), who),
				Related: []analysis.RelatedInformation{{Span: prog.SpanOf(call, call.Arg(0)), Message: "the alias, computed here"}}})
		}
		return
	}
	for _, f := range facts.Views(call.Expr) {
		v := f.Arg(call.Expr, 0)
		alias, ok := v.StrConst()
		if !ok || v.TypeName() != "string" || toolrule.ValidAlias(alias) {
			continue
		}
		pass.Reportf(prog.SpanOf(call, call.Arg(0)), Code, "%s (the alias %q is computed before the run)", toolrule.AliasError(what, alias), alias)
		break
	}
}
