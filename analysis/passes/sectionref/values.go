package sectionref

import (
	"fmt"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// computedTargets resolves the section targets that are not literals but
// whose value the evaluator knows (a concatenation, a shared constant, a
// helper's result, a loop variable, a var key an earlier section wrote): each evaluation of the call is
// resolved from the section it runs in, and a target that resolves
// nowhere is reported at the call (or, for a call in a helper's body, at
// the section's call that runs it). Sections that run as fanout arms
// resolve against their arm's set and are left alone.
func computedTargets(pass *analysis.Pass, prog *program.Program, fl *flow.Result, callers map[*parse.Section][]*parse.Section) {
	takes := map[*api.Entry]bool{}
	for _, c := range prog.Calls {
		if c.Entry == nil || c.Where == api.H1 {
			continue
		}
		t, seen := takes[c.Entry]
		if !seen {
			t = c.Entry.TakesSection()
			takes[c.Entry] = t
		}
		if !t || len(c.Expr.Args) == 0 {
			continue
		}
		if _, lit := c.Expr.Args[0].(*ast.StringExpr); lit {
			continue // judged as a literal
		}
		if c.InFunc {
			done := map[*ast.FuncCallExpr]bool{}
			for _, s := range fl.SitesOf(c) {
				if done[s.Site.Call] || s.Chunk.Kind != program.SectionChunk {
					continue
				}
				target, ok := s.Facts.Arg(c.Expr, 0).StrConst()
				if !ok {
					continue
				}
				if err := resolveErr(pass.Prompt, fl, callers, s.Chunk.Section, target); err != nil {
					done[s.Site.Call] = true
					who := s.Site.Name
					if who == "" {
						who = "the function called here"
					}
					pass.Report(analysis.Diagnostic{Span: prog.Span(s.Chunk, s.Site.Call), Code: codeOf(err),
						Message: fmt.Sprintf("%s (the %s in this call of %s)", err, c.Canonical(), who),
						Related: []analysis.RelatedInformation{{Span: prog.SpanOf(c, c.Arg(0)), Message: "the target, computed here"}}})
				}
			}
			continue
		}
		ch := prog.ChunkOf(c)
		if ch.Kind != program.SectionChunk {
			continue
		}
		// The chunk's facts with the var values the walk brings: a
		// target an earlier section hands on in var is known too.
		for _, f := range fl.Facts(ch).Views(c.Expr) {
			target, ok := f.Arg(c.Expr, 0).StrConst()
			if !ok {
				continue
			}
			if err := resolveErr(pass.Prompt, fl, callers, ch.Section, target); err != nil {
				pass.Report(analysis.Diagnostic{Span: prog.SpanOf(c, c.Arg(0)), Code: codeOf(err), Message: fmt.Sprintf("%s (the target %q is computed before the run)", err, target)})
				break
			}
		}
	}
}

// targetErr is a target that does not resolve, with its code.
type targetErr struct {
	code string
	err  error
}

func (e *targetErr) Error() string { return e.err.Error() }

func codeOf(err error) string { return err.(*targetErr).code }

// resolveErr resolves target from section from as the engine does (a
// section that runs only as a fanout worker in its arms' visible sets),
// as the literal targets are resolved, or returns why it fails.
func resolveErr(p *parse.Prompt, fl *flow.Result, callers map[*parse.Section][]*parse.Section, from *parse.Section, target string) error {
	if from == nil {
		return nil
	}
	if _, _, err := parse.ParseTarget(target); err != nil {
		return &targetErr{CodeBadTarget, err}
	}
	_, err := parse.Resolve(p, from, target)
	if err != nil {
		for _, caller := range callers[from] {
			if _, ok := resolveInArm(p, caller, from, target); ok {
				err = nil
				break
			}
		}
	}
	if err == nil && len(callers[from]) > 0 && fl.May.Arm.Has(from) && !fl.May.Walked.Has(from) {
		var armErr error
		for _, caller := range callers[from] {
			if _, e := parse.ResolveIn(armVisible(p, caller, from), target); e == nil {
				return nil
			} else if armErr == nil {
				armErr = e
			}
		}
		return &targetErr{CodeUnknown, armErr}
	}
	if err != nil {
		return &targetErr{CodeUnknown, err}
	}
	return nil
}
