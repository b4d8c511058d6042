package modelopts

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/suggest"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/yuin/gopher-lua/ast"
)

// Code is the diagnostic code.
const Code = "model-opts"

// Analyzer checks models.bind/default arguments.
var Analyzer = &analysis.Analyzer{
	Name:     "modelopts",
	Doc:      "check models.bind/models.default arguments and opts keys and values",
	Codes:    []*analysis.Code{{Name: Code, Severity: analysis.Error, Summary: "models.bind/models.default has bad arguments or an unknown or mistyped opts key."}},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	var keys []string
	typeOf := map[string]string{}
	for _, o := range api.ModelOpts {
		keys = append(keys, o.Name)
		typeOf[o.Name] = o.Type
	}
	for _, c := range prog.Calls {
		name := c.Canonical()
		if name != "models.bind" && name != "models.default" {
			continue
		}
		label := c.Path
		args := c.Expr.Args
		if len(args) > 3 {
			pass.Reportf(c.Span, Code, "%s expects at most three arguments (alias, description, opts)", label)
			continue
		}
		if name == "models.default" && len(args) == 1 {
			continue // selects an already bound model
		}
		for i, what := range []string{"alias", "description"} {
			if i < len(args) {
				if t := program.LiteralType(args[i]); t != "" && t != "string" {
					pass.Reportf(prog.Span(c.Chunk, args[i]), Code, "%s expects alias, description, and optional opts table; the %s is a %s", label, what, t)
				}
			}
		}
		if len(args) < 3 {
			continue
		}
		tbl, ok := args[2].(*ast.TableExpr)
		if !ok {
			if t := program.LiteralType(args[2]); t != "" && t != "nil" {
				pass.Reportf(prog.Span(c.Chunk, args[2]), Code, "%s opts must be a table when provided, got a %s", label, t)
			}
			continue
		}
		for _, f := range tbl.Fields {
			k, ok := f.Key.(*ast.StringExpr)
			if !ok {
				if f.Key == nil {
					pass.Reportf(prog.Span(c.Chunk, f.Value), Code, "%s opts keys must be strings (write {thinking = false, ...})", label)
				}
				continue
			}
			typ, known := typeOf[k.Value]
			if !known {
				d := analysis.Diagnostic{Span: prog.Span(c.Chunk, k), Code: Code,
					Message: fmt.Sprintf("unknown %s opts key %q; accepted: %s", label, k.Value, strings.Join(keys, ", "))}
				if to := suggest.Closest(k.Value, keys); to != "" && prog.HasSpan(c.Chunk, k) && pass.File.Text(prog.Span(c.Chunk, k)) == k.Value {
					d.Message += fmt.Sprintf("; did you mean %s?", to)
					d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Rename to " + to,
						Edits: []analysis.TextEdit{{Span: prog.Span(c.Chunk, k), NewText: to}}}}
				}
				pass.Report(d)
				continue
			}
			if msg := checkValue(typ, f.Value); msg != "" {
				pass.Reportf(prog.Span(c.Chunk, f.Value), Code, "%s opts.%s %s", label, k.Value, msg)
			}
		}
	}
	return nil, nil
}

// checkValue judges a literal value against an api.ModelOpt type.
func checkValue(typ string, v ast.Expr) string {
	neg := false
	if u, ok := v.(*ast.UnaryMinusOpExpr); ok {
		if n, ok := u.Expr.(*ast.NumberExpr); ok {
			v, neg = n, true
		}
	}
	lt := program.LiteralType(v)
	if lt == "" {
		return "" // not a literal
	}
	switch typ {
	case "boolean":
		if lt != "boolean" {
			return "must be a boolean, got a " + lt
		}
	case "integer>0":
		n, ok := v.(*ast.NumberExpr)
		if !ok {
			return "must be an integer, got a " + lt
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			if i, err2 := strconv.ParseInt(n.Value, 0, 64); err2 == nil {
				f = float64(i)
			} else {
				return ""
			}
		}
		if neg {
			f = -f
		}
		if f != float64(int64(f)) {
			return "must be an integer"
		}
		if f <= 0 {
			return "must be greater than zero"
		}
	case "number[0,2]":
		n, ok := v.(*ast.NumberExpr)
		if !ok {
			return "must be a finite number from 0 to 2, got a " + lt
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return ""
		}
		if neg {
			f = -f
		}
		if f < 0 || f > 2 {
			return "must be a finite number from 0 to 2"
		}
	}
	return ""
}
