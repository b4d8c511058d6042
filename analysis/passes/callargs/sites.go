package callargs

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/yuin/gopher-lua/ast"
)

// sites judges call c (in a function body) once per chunk call that
// certainly runs it (flow.Result.SitesOf: with the walk's var values),
// with check, each distinct chunk call once; it reports whether any
// judgement found a failure.
func sites(fl *flow.Result, c *program.Call, check func(*program.CallSite) bool) bool {
	all := fl.SitesOf(c)
	if len(all) == 0 {
		return false
	}
	found := false
	done := map[*ast.FuncCallExpr]bool{}
	for i := range all {
		s := &all[i]
		if done[s.Site.Call] {
			continue
		}
		if s.Chunk.Kind == program.H1Chunk && c.Canonical() != "log" && !strings.HasPrefix(c.Canonical(), "store.") {
			continue
		}
		if check(s) {
			done[s.Site.Call] = true
			found = true
		}
	}
	return found
}

// atSite is the diagnostic of a failure of call c (argument e) in a
// function body, reported at the chunk's call s that runs it: an error
// there, naming the function and the line of the failing call, with the
// failing call as related information.
func atSite(pass *analysis.Pass, prog *program.Program, s *program.CallSite, c *program.Call, e ast.Expr, code string, err error) analysis.Diagnostic {
	inner := prog.SpanOf(c, e)
	line := pass.Prompt.File.Line(inner.Start)
	who := "the function called here"
	if s.Site.Name != "" {
		who = s.Site.Name
	}
	return analysis.Diagnostic{
		Span:    prog.Span(s.Chunk, s.Site.Call),
		Code:    code,
		Message: fmt.Sprintf("%s (in this call of %s, at line %d)", err, who, line),
		Related: []analysis.RelatedInformation{{Span: inner, Message: fmt.Sprintf("%s fails here with the arguments of this call", c.Canonical())}},
	}
}

// valueResults judges the values the chunk's top-level returns and reply
// assignments evaluate to (value.Facts.Results), except at the
// expressions done (literals, judged already): a result whose type the
// engine refuses fails the run when that code runs.
func valueResults(pass *analysis.Pass, prog *program.Program, ch *program.Chunk, done map[ast.Expr]bool) {
	judged := func(e ast.Expr) {
		if done == nil {
			done = map[ast.Expr]bool{}
		}
		done[e] = true
	}
	for _, r := range prog.Facts(ch).Results() {
		if done[r.Expr] || r.Reply && ch.Kind != program.SectionChunk {
			continue
		}
		v, ok := r.V.Rules()
		if !ok {
			continue
		}
		if r.Reply {
			if err := rules.ReplyValue(v); err != nil {
				judged(r.Expr)
				pass.Reportf(prog.Span(ch, r.Expr), CodeResult, "%s (the run reads reply back when the chunk ends); assign a string, e.g. tostring(...)", err)
			}
			continue
		}
		if err := rules.ReturnValue(v); err != nil {
			judged(r.Expr)
			pass.Reportf(prog.Span(ch, r.Expr), CodeResult, "%s", err)
		}
	}
}
