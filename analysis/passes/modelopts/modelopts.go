package modelopts

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/literal"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
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
		if err := rules.ModelArgCount(label, len(args)); err != nil {
			pass.Reportf(prog.CallSpan(c), Code, "%s (alias, description, opts)", err)
			continue
		}
		if name == "models.default" && len(args) == 1 {
			continue // selects an already bound model
		}
		for i, what := range []string{"alias", "description"} {
			if i < len(args) {
				if t := program.LiteralType(args[i]); t != "" {
					if err := rules.ModelArg(label, rules.Value{Type: t, Len: -1}); err != nil {
						pass.Reportf(prog.SpanOf(c, args[i]), Code, "%s; the %s is a %s", err, what, t)
					}
				}
			}
		}
		if len(args) < 3 {
			continue
		}
		// Each evaluation of the call (a loop unrolled, each call of the
		// helper it is in) is judged on its own; in a helper's body, each
		// evaluation a chunk's call certainly runs, reported there.
		views := prog.Facts(prog.ChunkOf(c)).Views(c.Expr)
		var sites []program.CallSite
		if c.InFunc {
			sites = prog.SitesOf(c)
			views = views[:0:0]
			for i := range sites {
				views = append(views, sites[i].Facts)
			}
		}
		// vp is the pass that reports what evaluation i finds.
		vp := func(i int) *analysis.Pass {
			if sites == nil {
				return pass
			}
			s := sites[i]
			p := *pass
			p.Report = func(d analysis.Diagnostic) {
				inner := d.Span
				d.Span = prog.Span(s.Chunk, s.Site.Call)
				d.Message += fmt.Sprintf(" (in this call of %s, at line %d)", s.Site.Name, pass.Prompt.File.Line(inner.Start))
				d.Related = append(d.Related, analysis.RelatedInformation{Span: inner, Message: c.Path + " fails here with the arguments of this call"})
				pass.Report(d)
			}
			return &p
		}
		opts := value.Top
		if len(views) > 0 {
			opts = views[0].Arg(c.Expr, 2)
		}
		tbl, ok := args[2].(*ast.TableExpr)
		if !ok {
			if opts.T == value.Table && opts.Shape != nil || len(views) > 1 {
				for i, f := range views {
					if o := f.Arg(c.Expr, 2); o.T == value.Table && o.Shape != nil && optsValue(vp(i), prog, c, label, keys, typeOf, o.Shape) {
						break
					}
				}
				continue
			}
			if t := program.LiteralType(args[2]); t != "" {
				if err := rules.ModelOptsTable(label, rules.Value{Type: t, Len: -1}); err != nil {
					pass.Reportf(prog.SpanOf(c, args[2]), Code, "%s, got a %s", err, t)
				}
			}
			continue
		}
		for _, f := range tbl.Fields {
			k, ok := f.Key.(*ast.StringExpr)
			if !ok {
				if f.Key == nil {
					// A positional field has a number key.
					if err := rules.ModelOptKey(label, rules.Value{Type: "number", Len: -1}); err != nil {
						pass.Reportf(prog.SpanOf(c, f.Value), Code, "%s (write {thinking = false, ...})", err)
					}
				}
				continue
			}
			if _, known := typeOf[k.Value]; !known {
				// The engine's rule names an unknown key whatever its value.
				err := rules.ModelOpt(label, k.Value, rules.Value{Type: "nil", Len: -1})
				d := analysis.Diagnostic{Span: prog.SpanOf(c, k), Code: Code,
					Message: fmt.Sprintf("%v; accepted: %s", err, strings.Join(keys, ", "))}
				if to := suggest.Closest(k.Value, keys); to != "" && prog.HasSpan(prog.ChunkOf(c), k) && pass.File.Text(prog.SpanOf(c, k)) == k.Value {
					d.Message += fmt.Sprintf("; did you mean %s?", to)
					d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Rename to " + to,
						Edits: []analysis.TextEdit{{Span: prog.SpanOf(c, k), NewText: to}}}}
				}
				pass.Report(d)
				continue
			}
			// The engine's own rule judges a literal value, or the value
			// of each evaluation.
			if v, ok := literal.Value(f.Value); ok {
				if err := rules.ModelOpt(label, k.Value, v); err != nil {
					pass.Reportf(prog.SpanOf(c, f.Value), Code, "%s", err)
				}
				continue
			}
			for i, vf := range views {
				o := vf.Arg(c.Expr, 2)
				if o.Shape == nil {
					continue
				}
				fv, _ := o.Shape.Get(k.Value)
				if v, ok := fv.Rules(); ok {
					if err := rules.ModelOpt(label, k.Value, v); err != nil {
						vp(i).Reportf(prog.SpanOf(c, f.Value), Code, "%s", err)
						break
					}
				}
			}
		}
	}
	return nil, nil
}

// optsValue checks an opts table that reaches the call through a local
// or a global (its known shape), reporting at the argument; it reports
// whether it found a problem.
func optsValue(pass *analysis.Pass, prog *program.Program, c *program.Call, label string, keys []string, typeOf map[string]string, sh *value.Shape) bool {
	at := prog.SpanOf(c, c.Arg(2))
	if len(sh.Array) > 0 {
		if err := rules.ModelOptKey(label, rules.Value{Type: "number", Len: -1}); err != nil {
			pass.Reportf(at, Code, "%s (write {thinking = false, ...})", err)
			return true
		}
	}
	found := false
	for _, f := range sh.Fields {
		k := f.Key
		if _, known := typeOf[k]; !known {
			err := rules.ModelOpt(label, k, rules.Value{Type: "nil", Len: -1})
			pass.Reportf(at, Code, "%v; accepted: %s", err, strings.Join(keys, ", "))
			found = true
			continue
		}
		if v, ok := f.V.Rules(); ok {
			if err := rules.ModelOpt(label, k, v); err != nil {
				pass.Reportf(at, Code, "%s", err)
				found = true
			}
		}
	}
	return found
}
