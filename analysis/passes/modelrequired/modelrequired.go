package modelrequired

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// Code is the diagnostic code.
const Code = "model-required"

// Analyzer reports prose without a model.
var Analyzer = &analysis.Analyzer{
	Name:     "modelrequired",
	Doc:      "report prose that would be sent to a model when no model is bound",
	Codes:    []*analysis.Code{{Name: Code, Severity: analysis.Error, Summary: "Prose would be sent to a model, but no models.default (or section models.use) is bound, so the run fails."}},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	p := pass.Prompt
	// H1 prose: a models.default must run before the block.
	defaultBefore := func(block int) bool {
		for _, c := range prog.H1.Calls {
			if c.Canonical() == "models.default" && c.Chunk.Block < block {
				return true
			}
		}
		return false
	}
	for i, b := range p.H1Blocks {
		if b.Kind != parse.ProseBlock || strings.TrimSpace(b.Prose.Text) == "" || defaultBefore(i) {
			continue
		}
		pass.Reportf(firstLine(pass.File, b.Prose.Span), Code,
			"H1 prose is sent to a model, but no models.default is declared before it (model binding required for H1 `%s`); add models.default(...) in an H1 ```lua block above it, or move notes meant for humans below a --- line in the H1", p.Title)
	}
	hasDefault := defaultBefore(len(p.H1Blocks) + 1)
	if hasDefault {
		return nil, nil
	}
	reached := reachable(prog)
	for _, u := range prog.Sections {
		s := u.Section
		if !reached[s] {
			continue
		}
		first := -1
		for i, b := range s.Blocks {
			if b.Kind == parse.ProseBlock {
				first = i
				break
			}
		}
		if first < 0 {
			continue
		}
		if usesModel(u, first) {
			continue
		}
		for _, b := range s.Blocks {
			if b.Kind == parse.LuaBlock && endsSection(b.Chunk.AST) {
				break // later blocks never run
			}
			if b.Kind != parse.ProseBlock || strings.TrimSpace(b.Prose.Text) == "" {
				continue
			}
			pass.Reportf(firstLine(pass.File, b.Prose.Span), Code,
				"prose in section `%s` is sent to a model, but no model is bound (model binding required for section %s); add models.default(...) in the H1, or models.use(...) in a Lua block before this section's first prose", s.Name, s.Name)
		}
	}
	return nil, nil
}

// endsSection reports whether a chunk always ends its section at top
// level: a return, error(...), jump(...) or pcall(jump, ...) statement
// outside any condition (a recorded jump wins even under pcall).
func endsSection(stmts []ast.Stmt) bool {
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.ReturnStmt:
			return true
		case *ast.FuncCallStmt:
			if isEnd(st.Expr) {
				return true
			}
		case *ast.LocalAssignStmt:
			for _, e := range st.Exprs {
				if isEnd(e) {
					return true
				}
			}
		}
	}
	return false
}

func isEnd(e ast.Expr) bool {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return false
	}
	name, _ := program.Path(c.Func)
	switch name {
	case "jump", "error":
		return true
	case "pcall":
		if len(c.Args) > 0 {
			arg, _ := program.Path(c.Args[0])
			return arg == "jump"
		}
	}
	return false
}

// usesModel reports whether a models.use call runs before the first
// prose block (in the shared library or an earlier section chunk).
func usesModel(u *program.Unit, first int) bool {
	for _, c := range u.Calls {
		if c.Canonical() != "models.use" || c.Where == api.Handler {
			continue
		}
		if c.Chunk.Kind == program.SharedChunk || c.Chunk.Block < first {
			return true
		}
	}
	return false
}

func firstLine(f *source.File, s source.Span) source.Span {
	l := f.Line(s.Start)
	end := f.LineEnd(l)
	if end > s.End {
		end = s.End
	}
	return source.Span{Start: s.Start, End: end}
}

// reachable returns the sections that can run: top-level sections on the
// walk, sections named by a literal control-flow target, and on-walk
// sections after a reached sibling (fall-through).
func reachable(prog *program.Program) map[*parse.Section]bool {
	targeted := map[string]bool{}
	for _, c := range prog.Calls {
		switch c.Canonical() {
		case "jump", "execute", "fanout":
			if t, _, ok := prog.StringArg(c, 0); ok {
				targeted[normalizeTarget(t)] = true
			}
		}
	}
	out := map[*parse.Section]bool{}
	var visit func(ss []*parse.Section, top bool)
	visit = func(ss []*parse.Section, top bool) {
		falling := top
		for _, s := range ss {
			if targeted[s.Address()] {
				out[s] = true
				falling = true
			} else if falling && !s.OffWalk {
				out[s] = true
			}
			visit(s.Children, false)
		}
	}
	visit(prog.Prompt.Sections, true)
	return out
}

// normalizeTarget turns "  ##   Name " into "## Name" (docs/language.md#addressing-sections).
func normalizeTarget(t string) string {
	t = strings.TrimSpace(t)
	n := len(t) - len(strings.TrimLeft(t, "#"))
	return t[:n] + " " + strings.TrimSpace(t[n:])
}
