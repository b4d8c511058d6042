package aliassyntax

import (
	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/yuin/gopher-lua/ast"
)

// Code is the diagnostic code.
const Code = "alias-syntax"

// Analyzer checks literal aliases.
var Analyzer = &analysis.Analyzer{
	Name:     "aliassyntax",
	Doc:      "check literal tool and model aliases against the engine's alias grammar",
	Codes:    []*analysis.Code{{Name: Code, Severity: analysis.Error, Summary: "A literal tool or model alias does not match [A-Za-z][A-Za-z0-9_-]{0,63}."}},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

// aliasArg returns the kind of alias an API entry's first argument is
// ("tool" or "model"), or "" when it is none.
func aliasArg(entry string) string {
	switch entry {
	case "tools.bind", "tools.always", "tools.add", "tools.add_local":
		return "tool"
	case "models.bind", "models.default", "models.use", "models.get":
		return "model"
	}
	return ""
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	check := func(c *program.Chunk, what string, e ast.Expr) {
		s, ok := e.(*ast.StringExpr)
		if !ok || toolrule.ValidAlias(s.Value) {
			return
		}
		pass.Reportf(prog.Span(c, s), Code, "%s", toolrule.AliasError(what, s.Value))
	}
	for _, call := range prog.Calls {
		what := aliasArg(call.Canonical())
		if what == "" || len(call.Expr.Args) == 0 {
			continue
		}
		arg := call.Expr.Args[0]
		if t, ok := arg.(*ast.TableExpr); ok && call.Canonical() == "tools.add" {
			for _, f := range t.Fields {
				if f.Key == nil {
					check(prog.ChunkOf(call), what, f.Value)
				}
			}
			continue
		}
		check(prog.ChunkOf(call), what, arg)
	}
	for _, k := range prog.CallsKeys {
		check(k.Chunk, "tool", k.Key)
	}
	computedAliases(pass, prog)
	return nil, nil
}
