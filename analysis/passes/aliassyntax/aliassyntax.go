package aliassyntax

import (
	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
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
	Requires: []*analysis.Analyzer{program.Analyzer, flow.Analyzer},
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
	fl := pass.ResultOf[flow.Analyzer].(*flow.Result)
	// A computed alias in a function body is judged where chunks call
	// it; everything else about a chunk depends on its text and its
	// facts with the var values the walk brings (flow.Result.Facts), and
	// is memoised on them (chunkmemo).
	for _, call := range prog.Calls {
		if call.InFunc {
			computedAlias(pass, prog, fl, nil, call)
		}
	}
	keys := prog.CallsKeys
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[*value.Facts](ix, chunkKey)
	defer run.Done()
	for i, ch := range prog.Chunks {
		k := 0
		for k < len(keys) && keys[k].Chunk == ch {
			k++
		}
		ks := keys[:k]
		keys = keys[k:]
		calls := prog.CallsIn(ch)
		if len(calls) == 0 && len(ks) == 0 {
			continue
		}
		part := chunkmemo.Part[*value.Facts]{Table: ix.Table(i), Chunks: ix.Chunks(i, i), File: pass.File, Region: ch.Span, FP: fl.Facts(ch)}
		run.Report(pass, part, func() {
			judgeChunk(pass, prog, fl, ch, calls, ks)
		})
	}
	return nil, nil
}

// chunkKey is the memo of a chunk's findings.
var chunkKey = chunkmemo.NewKey("aliassyntax")

// judgeChunk checks the aliases of chunk ch: its calls' literal and
// computed (outside function bodies) aliases, and its tools.calls keys
// ks.
func judgeChunk(pass *analysis.Pass, prog *program.Program, fl *flow.Result, ch *program.Chunk, calls []*program.Call, ks []program.CallsKey) {
	check := func(c *program.Chunk, what string, e ast.Expr) {
		s, ok := e.(*ast.StringExpr)
		if !ok || toolrule.ValidAlias(s.Value) {
			return
		}
		pass.Reportf(prog.Span(c, s), Code, "%s", toolrule.AliasError(what, s.Value))
	}
	for _, call := range calls {
		what := aliasArg(call.Canonical())
		if what == "" || len(call.Expr.Args) == 0 {
			continue
		}
		arg := call.Expr.Args[0]
		if t, ok := arg.(*ast.TableExpr); ok && call.Canonical() == "tools.add" {
			for _, f := range t.Fields {
				if f.Key == nil {
					check(ch, what, f.Value)
				}
			}
			continue
		}
		check(ch, what, arg)
	}
	for _, k := range ks {
		check(k.Chunk, "tool", k.Key)
	}
	for _, call := range calls {
		if !call.InFunc {
			computedAlias(pass, prog, fl, fl.Facts(ch), call)
		}
	}
}
