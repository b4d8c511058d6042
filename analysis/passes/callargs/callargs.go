package callargs

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/internal/literal"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/yuin/gopher-lua/ast"
)

// Codes.
const (
	CodeArg       = "bad-argument"
	CodeUnwritten = "unwritten-store-path"
	CodeResult    = "bad-result"
)

// Analyzer checks literal call arguments with the engine's rules.
var Analyzer = &analysis.Analyzer{
	Name: "callargs",
	Doc:  "check literal arguments of log, fanout, store and var assignments with the engine's own rules; report store reads of paths nothing writes",
	Codes: []*analysis.Code{
		{Name: CodeArg, Severity: analysis.Error, Summary: "A literal argument breaks a rule the engine checks when the call runs (log message, fanout collection, store path, var value), so the run fails there."},
		{Name: CodeResult, Severity: analysis.Error, Summary: "A chunk returns a literal table or function, or sets reply to a value that is not a string, so the run fails when the chunk ends."},
		{Name: CodeUnwritten, Severity: analysis.Error, Summary: "store.read (or read_numbered, str_replace) of a literal path that no code of the prompt writes, and no input is declared, so the read fails (file not found)."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer, flow.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	fl := pass.ResultOf[flow.Analyzer].(*flow.Result)
	report := func(c *program.Call, e ast.Expr, code string, err error) {
		d := analysis.Diagnostic{Span: prog.SpanOf(c, e), Code: code, Message: err.Error()}
		if c.InFunc {
			d.Severity = analysis.Warning
			d.Message += " (when this function runs)"
		}
		pass.Report(d)
	}
	inputDeclared := pass.Prompt.Frontmatter != nil && pass.Prompt.Frontmatter.Input != nil
	for _, c := range prog.Calls {
		if c.Where == api.H1 && c.Canonical() != "log" && !strings.HasPrefix(c.Canonical(), "store.") {
			continue
		}
		switch name := c.Canonical(); name {
		case "log":
			if len(c.Expr.Args) != 1 {
				report(c, c.Expr, CodeArg, fmt.Errorf("log expects exactly one argument"))
				continue
			}
			v, ok := literal.Value(c.Arg(0))
			if !ok {
				continue
			}
			if v.Type != "string" {
				report(c, c.Arg(0), CodeArg, fmt.Errorf("log message must be a string, got %s", v.Type))
			} else if err := rules.LogMessage(v.Str); err != nil {
				report(c, c.Arg(0), CodeArg, err)
			}
		case "fanout":
			arg := c.Arg(1)
			if _, heading := arg.(*ast.StringExpr); heading {
				continue // the old list-heading form: the oldforms pass reports it
			}
			if id, isIdent := arg.(*ast.IdentExpr); isIdent {
				if e := onlyValue(prog, prog.ChunkOf(c), id.Value); e != nil {
					arg = e
				}
			}
			v, ok := literal.Value(arg)
			if !ok || arg == nil {
				continue
			}
			if err := rules.FanoutCollection(v); err != nil {
				report(c, c.Arg(1), CodeArg, err)
			} else if v.Len == 0 {
				report(c, c.Arg(1), CodeArg, rules.FanoutMembers(0))
			}
		case "store.glob":
			if p, ok := literal.String(c.Arg(0)); ok {
				if _, err := rules.CompileGlob(p); err != nil {
					report(c, c.Arg(0), CodeArg, err)
				}
			}
		default:
			if !strings.HasPrefix(name, "store.") {
				continue
			}
			p, ok := literal.String(c.Arg(0))
			if !ok {
				continue
			}
			if err := rules.StorePath(p); err != nil {
				report(c, c.Arg(0), CodeArg, err)
				continue
			}
			switch name {
			case "store.read", "store.read_numbered", "store.str_replace":
				if inputDeclared || fl.MayWrite(p) || c.InFunc || !fl.Straight[c.Expr] {
					continue
				}
				pass.Report(analysis.Diagnostic{Span: prog.SpanOf(c, c.Arg(0)), Code: CodeUnwritten,
					Message: fmt.Sprintf("file not found: %s: no store.write or store.append of this prompt can create it, and the store starts empty; write it first, guard the read with store.exists(%q), or declare the run's input", p, p)})
			}
		}
	}
	// Values assigned to var fields; chunk results and reply.
	for _, ch := range prog.Chunks {
		if len(ch.AST) == 0 {
			continue
		}
		results(pass, prog, ch)
		for _, b := range badVarValues(ch.Chunk) {
			pass.Reportf(prog.Span(ch, b.expr), CodeArg, "%s; store data (strings, numbers, booleans, tables) in var, and keep functions in globals or locals", b.msg)
		}
	}
	return nil, nil
}

// badVarValue is a literal value a chunk assigns to a var field that the
// engine rejects, with the rule's message.
type badVarValue struct {
	expr ast.Expr
	msg  string
}

// varMemo holds a chunk's bad var values; ast0 is the AST they were
// found in.
type varMemo struct {
	ast0 ast.Stmt
	bad  []badVarValue
}

type varMemoKey struct{}

// badVarValues returns the literal var-field values of chunk c the engine
// rejects, in source order. They depend on the chunk's AST alone, so they
// are memoised on the parser's chunk: after an edit only the chunks that
// changed are walked again.
func badVarValues(c *parse.Chunk) []badVarValue {
	if len(c.AST) == 0 {
		return nil
	}
	if m, ok := c.Memo(varMemoKey{}).(*varMemo); ok && m.ast0 == c.AST[0] {
		return m.bad
	}
	m := &varMemo{ast0: c.AST[0]}
	program.Inspect(c.AST, func(n any) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, l := range as.Lhs {
			if i >= len(as.Rhs) {
				break
			}
			path, ok := program.Path(l)
			if !ok || !strings.HasPrefix(path, "var.") {
				continue
			}
			v, ok := literal.Value(as.Rhs[i])
			if !ok {
				continue
			}
			if err := rules.VarValue(path, v); err != nil {
				m.bad = append(m.bad, badVarValue{as.Rhs[i], err.Error()})
			}
		}
		return true
	})
	c.SetMemo(varMemoKey{}, m)
	return m.bad
}

// results checks a chunk's top-level return value and, in sections, the
// literal values it assigns to the reply global, with the engine's rules.
func results(pass *analysis.Pass, prog *program.Program, ch *program.Chunk) {
	for _, st := range ch.AST {
		switch st := st.(type) {
		case *ast.ReturnStmt:
			if len(st.Exprs) > 0 {
				if v, ok := literal.Value(st.Exprs[0]); ok {
					if err := rules.ReturnValue(v); err != nil {
						pass.Reportf(prog.Span(ch, st.Exprs[0]), CodeResult, "%s", err)
					}
				}
			}
			return
		case *ast.AssignStmt:
			if ch.Kind != program.SectionChunk {
				continue
			}
			for i, l := range st.Lhs {
				if id, ok := l.(*ast.IdentExpr); ok && id.Value == "reply" && i < len(st.Rhs) {
					if v, ok := literal.Value(st.Rhs[i]); ok {
						if err := rules.ReplyValue(v); err != nil {
							pass.Reportf(prog.Span(ch, st.Rhs[i]), CodeResult, "%s (the run reads reply back when the chunk ends); assign a string, e.g. tostring(...)", err)
						}
					}
				}
			}
		}
	}
}

// onlyValue returns the expression a local of chunk c is declared with,
// when the declaration is at the chunk's top level, the local is read
// only by the use being checked (and by #), and never assigned again, so
// the use sees that value.
func onlyValue(prog *program.Program, c *program.Chunk, name string) ast.Expr {
	// Reads as the operand of # cannot change the value.
	lenReads := 0
	program.Inspect(c.AST, func(n any) bool {
		if u, ok := n.(*ast.UnaryLenOpExpr); ok {
			if id, ok := u.Expr.(*ast.IdentExpr); ok && id.Value == name {
				lenReads++
			}
		}
		return true
	})
	n := 0
	for _, l := range prog.Locals {
		if prog.ChunkOf(l) == c && l.Name == name {
			n++
			if l.Reads-lenReads != 1 || l.Param {
				return nil
			}
		}
	}
	if n != 1 {
		return nil
	}
	var decl ast.Expr
	for _, st := range c.AST {
		if la, ok := st.(*ast.LocalAssignStmt); ok {
			for i, nm := range la.Names {
				if nm == name && i < len(la.Exprs) && len(la.Names) == len(la.Exprs) {
					decl = la.Exprs[i]
				}
			}
		}
	}
	if decl == nil {
		return nil
	}
	reassigned := false
	program.Inspect(c.AST, func(n any) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for _, l := range as.Lhs {
				if id, ok := l.(*ast.IdentExpr); ok && id.Value == name {
					reassigned = true
				}
			}
		}
		return !reassigned
	})
	if reassigned {
		return nil
	}
	return decl
}
