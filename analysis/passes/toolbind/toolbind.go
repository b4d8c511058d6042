// Package toolbind resolves each literal tools.bind (tools.need)
// capability the way a run does: through the engine's own picker
// (engine/toolrule) over the built-in tools plus the workspace tools file
// a run of the prompt would load (forge-tools.json at or above the
// prompt's folder, or the configured tools file).
//
//   - tool-binding: the capability resolves to no tool (Absent, with the
//     closest candidates), to several tools about equally (Ambiguous), to
//     same-server twins (Duplicate), is blank, or resolves to a tool that
//     another alias already binds. The run fails at that tools.bind with
//     the same message.
//
// Literal (and constant-folded) aliases and capabilities are judged, and
// each evaluation of a binding whose values the evaluator knows (a loop
// over known capabilities, a helper's result). The workspace file is
// parsed, never executed.
package toolbind

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/literal"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/yuin/gopher-lua/ast"
)

// CodeBinding is the code of a capability the run cannot bind.
const CodeBinding = "tool-binding"

// Analyzer checks tool capabilities against the catalog.
var Analyzer = &analysis.Analyzer{
	Name: "toolbind",
	Doc:  "resolve tools.bind capabilities through the engine's picker over the built-in and workspace tool catalog",
	Codes: []*analysis.Code{
		{Name: CodeBinding, Severity: analysis.Error, Summary: "A tools.bind capability matches no tool, several tools about equally, or a tool another alias already binds; the run fails there."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

type bound struct {
	alias string
	call  *program.Call
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	var binds []*program.Call
	for _, c := range prog.H1.Calls {
		if c.Canonical() == "tools.bind" {
			binds = append(binds, c)
		}
	}
	if len(binds) == 0 {
		return nil, nil
	}
	cat := pass.Catalog()
	aliases := map[string]*program.Call{}
	ids := map[toolrule.ID]bound{}
	// judge resolves one binding as the run would, and reports whether
	// judging may go on (false: the tools file cannot be loaded).
	judge := func(c *program.Call, alias, need string) bool {
		if !toolrule.ValidAlias(alias) {
			return true // alias-syntax reports a bad alias; the run checks it first
		}
		if prev, dup := aliases[alias]; dup && !program.Exclusive(prev, c) {
			return true // duplicate-alias: the run stops there first
		}
		aliases[alias] = c
		span := prog.SpanOf(c, c.Arg(1))
		if cat.Err != nil {
			pass.Report(analysis.Diagnostic{Span: span, Code: CodeBinding,
				Message: fmt.Sprintf("tool alias %q: the workspace tools file cannot be loaded, so no run starts: %s", alias, cat.Err)})
			return false
		}
		d := cat.Picker.Resolve(need)
		if err := d.Err("tool", need); err != nil {
			msg := fmt.Sprintf("tool alias %q: %v", alias, err)
			if d.Outcome == toolrule.Absent {
				msg += closest(cat.Picker, need)
			}
			pass.Report(analysis.Diagnostic{Span: span, Code: CodeBinding, Message: msg})
			return true
		}
		id := d.IDs[0]
		if other, twice := ids[id]; twice && !program.Exclusive(other.call, c) {
			pass.Report(analysis.Diagnostic{Span: span, Code: CodeBinding,
				Message: fmt.Sprintf("tool aliases %q and %q both resolve to %s; bind it once and reuse the alias", other.alias, alias, id),
				Related: []analysis.RelatedInformation{{Span: prog.SpanOf(other.call, other.call.Arg(1)), Message: "the first binding of " + id.String()}}})
			return true
		}
		ids[id] = bound{alias, c}
		return true
	}
	for _, c := range binds {
		alias, okA := str(c.Arg(0))
		need, okN := str(c.Arg(1))
		if okA && okN {
			if !judge(c, alias, need) {
				return nil, nil
			}
			continue
		}
		if c.InFunc || len(c.Expr.Args) < 2 {
			continue
		}
		// A binding whose alias or capability is computed (a loop over
		// known capabilities, a helper): each evaluation the evaluator
		// knows is judged like a literal one.
		for _, f := range prog.Facts(prog.ChunkOf(c)).Views(c.Expr) {
			a, n := f.Arg(c.Expr, 0), f.Arg(c.Expr, 1)
			alias, okA := a.StrConst()
			need, okN := n.StrConst()
			if !okN || n.T != value.String {
				continue
			}
			if !okA || a.T != value.String {
				// The alias is not known, but a capability no tool
				// matches fails the call whatever it is.
				if cat.Err == nil {
					if d := cat.Picker.Resolve(need); d.Outcome == toolrule.Absent {
						pass.Report(analysis.Diagnostic{Span: prog.SpanOf(c, c.Arg(1)), Code: CodeBinding,
							Message: fmt.Sprintf("tools.bind: %v%s", d.Err("tool", need), closest(cat.Picker, need))})
					}
				}
				continue
			}
			if !judge(c, alias, need) {
				return nil, nil
			}
		}
	}
	return nil, nil
}

// str folds a constant string; a number is not one (tools.bind refuses
// it before resolving).
func str(e ast.Expr) (string, bool) {
	v, ok := literal.Value(e)
	if !ok || v.Type != "string" {
		return "", false
	}
	return v.Str, true
}

// closest explains an Absent decision: the tools that share a word with
// the capability, or the whole catalog when none does.
func closest(p *toolrule.Picker, need string) string {
	if cs := p.Closest(need, 3); len(cs) > 0 {
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = fmt.Sprintf("%s (%.2f)", c.ID, c.Score)
		}
		return "; closest: " + strings.Join(parts, ", ") + "; describe what the tool does in the words of its description"
	}
	es := p.Entries()
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.ID.String()
	}
	return "; the catalog has " + strings.Join(names, ", ")
}
