package addlocal

import (
	"fmt"
	"slices"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// Codes.
const (
	CodeInH1  = "add-local-in-h1"
	CodeShape = "add-local-shape"
)

// Analyzer checks tools.add_local calls.
var Analyzer = &analysis.Analyzer{
	Name: "addlocal",
	Doc:  "check tools.add_local placement (never in H1) and argument shape",
	Codes: []*analysis.Code{
		{Name: CodeInH1, Severity: analysis.Error, Summary: "tools.add_local is called in the H1 region, where local tools cannot be declared."},
		{Name: CodeShape, Severity: analysis.Error, Summary: "tools.add_local has the wrong arguments: params types, a handler that is not a function, or a wrong count."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

// paramTypes are the supported parameter types (docs/language.md#local-tools).
var paramTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	// A call in a function body is judged where chunks call it (its
	// findings depend on other chunks); the others are judged per chunk,
	// memoised on it (chunkmemo): they depend on the chunk, its kind and
	// its facts.
	for _, c := range prog.Calls {
		if c.InFunc && c.Canonical() == "tools.add_local" {
			judge(pass, prog, c)
		}
	}
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[chunkFP](ix, chunkKey)
	defer run.Done()
	for i, ch := range prog.Chunks {
		calls := prog.CallsIn(ch)
		if !slices.ContainsFunc(calls, func(c *program.Call) bool { return !c.InFunc && c.Canonical() == "tools.add_local" }) {
			continue
		}
		part := chunkmemo.Part[chunkFP]{Table: ix.Table(i), Chunks: ix.Chunks(i, i), File: pass.File, Region: ch.Span, FP: chunkFP{prog.Facts(ch), ch.Kind}}
		run.Report(pass, part, func() {
			for _, c := range calls {
				if !c.InFunc && c.Canonical() == "tools.add_local" {
					judge(pass, prog, c)
				}
			}
		})
	}
	return nil, nil
}

// chunkKey is the memo of a chunk's findings about its top-level calls.
var chunkKey = chunkmemo.NewKey("addlocal")

// chunkFP is what they depend on besides the chunk's text.
type chunkFP struct {
	facts *value.Facts
	kind  program.ChunkKind
}

// judge judges one tools.add_local call.
func judge(pass *analysis.Pass, prog *program.Program, c *program.Call) {
	if prog.ChunkOf(c).Kind == program.H1Chunk {
		where := "in the H1 region"
		if c.InFunc {
			where = "in a function defined in the H1 region"
		}
		pass.Reportf(prog.NameSpan(c), CodeInH1, "tools.add_local is called %s, but local tools are H2-only and the call fails there; declare local tools in a section (## heading)", where)
		return
	}
	shape(pass, prog, c)
}

func shape(pass *analysis.Pass, prog *program.Program, c *program.Call) {
	r := reporter{pass, prog, c, new(int)}
	args := c.Expr.Args
	if len(args) != 4 {
		if len(args) == 0 || !isMulti(args[len(args)-1]) {
			r.Reportf(prog.CallSpan(c), CodeShape, "tools.add_local takes 4 arguments (alias, description, params, handler), got %d", len(args))
			return
		}
	}
	if t := program.LiteralType(c.Arg(1)); t != "" && t != "string" {
		r.Reportf(prog.SpanOf(c, c.Arg(1)), CodeShape, "tools.add_local description must be a string, got a %s", t)
	}
	if p := c.Arg(2); p != nil {
		if tbl, ok := p.(*ast.TableExpr); ok {
			if !params(r, prog, c, tbl) {
				paramsValue(r, prog, c)
			}
		} else if t := program.LiteralType(p); t != "" {
			r.Reportf(prog.SpanOf(c, p), CodeShape, "tools.add_local params must be a table such as {name = \"string\"}, got a %s", t)
		} else {
			paramsValue(r, prog, c)
		}
	}
	if h := c.Arg(3); h != nil {
		if t := program.LiteralType(h); t != "" && t != "function" {
			r.Reportf(prog.SpanOf(c, h), CodeShape, "tools.add_local handler must be a function(args) returning a string, got a %s", t)
		}
	}
}

// params judges a params table written at the call, reporting whether
// it found a problem.
func params(r reporter, prog *program.Program, c *program.Call, tbl *ast.TableExpr) bool {
	start := *r.n
	for _, f := range tbl.Fields {
		name := "?"
		if k, ok := f.Key.(*ast.StringExpr); ok {
			name = k.Value
		} else if f.Key == nil {
			r.Reportf(prog.SpanOf(c, f.Value), CodeShape, "tools.add_local params maps names to types (name = \"string\"); this entry has no name")
			continue
		}
		switch v := f.Value.(type) {
		case *ast.StringExpr:
			if !paramTypes[v.Value] {
				r.Report(badType(prog, c, v, name))
			}
		case *ast.TableExpr:
			if len(v.Fields) == 0 || v.Fields[0].Key != nil {
				r.Reportf(prog.SpanOf(c, v), CodeShape, "tools.add_local param %q must be a type string or a {type, description} array", name)
				continue
			}
			if s, ok := v.Fields[0].Value.(*ast.StringExpr); ok {
				if !paramTypes[s.Value] {
					r.Report(badType(prog, c, s, name))
				}
			} else if t := program.LiteralType(v.Fields[0].Value); t != "" {
				r.Reportf(prog.SpanOf(c, v.Fields[0].Value), CodeShape, "tools.add_local param %q must be a type string or a {type, description} array", name)
			}
			if len(v.Fields) > 1 {
				if t := program.LiteralType(v.Fields[1].Value); t != "" && t != "string" {
					r.Reportf(prog.SpanOf(c, v.Fields[1].Value), CodeShape, "tools.add_local param %q description must be a string, got a %s", name, t)
				}
			}
		default:
			if t := program.LiteralType(v); t != "" {
				r.Reportf(prog.SpanOf(c, v), CodeShape, "tools.add_local param %q must be a type string or a {type, description} array, got a %s", name, t)
			}
		}
	}
	return *r.n > start
}

func badType(prog *program.Program, c *program.Call, s *ast.StringExpr, name string) analysis.Diagnostic {
	d := analysis.Diagnostic{Span: prog.SpanOf(c, s), Code: CodeShape,
		Message: fmt.Sprintf("tools.add_local param %q has unsupported type %q: expected \"string\", \"integer\", \"number\", or \"boolean\"", name, s.Value)}
	if fix, ok := typeFix[s.Value]; ok && prog.HasSpan(prog.ChunkOf(c), s) {
		span := prog.SpanOf(c, s)
		d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Use \"" + fix + "\"",
			Edits: []analysis.TextEdit{{Span: span, NewText: `"` + fix + `"`}}}}
	}
	return d
}

// typeFix maps common type names from other languages to the supported
// ones.
var typeFix = map[string]string{
	"str": "string", "text": "string", "int": "integer", "float": "number", "double": "number",
	"bool": "boolean", "String": "string", "Integer": "integer", "Number": "number", "Boolean": "boolean",
}

// isMulti reports whether e can expand to several values (a call or ...).
func isMulti(e ast.Expr) bool {
	switch e.(type) {
	case *ast.FuncCallExpr, *ast.Comma3Expr:
		return true
	}
	return false
}

// reporter reports the findings about one tools.add_local call: a
// finding on a line after the one the call starts on (an argument of a
// call written over several lines) names the call's start as related
// information, the line the engine reports the failure at.
type reporter struct {
	pass *analysis.Pass
	prog *program.Program
	c    *program.Call
	// n counts the findings reported.
	n *int
}

func (r reporter) Report(d analysis.Diagnostic) {
	call := r.prog.CallSpan(r.c)
	if f := r.pass.Prompt.File; f != nil && f.Line(d.Span.Start) != f.Line(call.Start) {
		d.Related = append(d.Related, analysis.RelatedInformation{Span: call, Message: "in this tools.add_local call, which fails when it runs"})
	}
	*r.n++
	r.pass.Report(d)
}

func (r reporter) Reportf(span source.Span, code, format string, args ...any) {
	r.Report(analysis.Diagnostic{Span: span, Code: code, Message: fmt.Sprintf(format, args...)})
}

// paramsValue judges a params table that is not written at the call (a
// local, a shared constant, a helper's result, a helper's parameter) by
// its value, with the engine's rules: in each evaluation of the call
// (a loop unrolled, each call of the helper it is in). A call in a
// helper's body that a chunk's call certainly runs is reported at that
// call, naming the helper's line.
func paramsValue(r reporter, prog *program.Program, c *program.Call) {
	judge := func(f *value.Facts) error {
		v := f.Arg(c.Expr, 2)
		if v.T == value.Table && v.Shape != nil {
			return paramsShape(v.Shape)
		}
		if rv, ok := v.Rules(); ok {
			return rules.Arg("tools.add_local", 2, rv)
		}
		return nil
	}
	if c.InFunc {
		for _, s := range prog.SitesOf(c) {
			if err := judge(s.Facts); err != nil {
				inner := prog.SpanOf(c, c.Arg(2))
				who := "the function called here"
				if s.Site.Name != "" {
					who = s.Site.Name
				}
				r.pass.Report(analysis.Diagnostic{Span: prog.Span(s.Chunk, s.Site.Call), Code: CodeShape,
					Message: fmt.Sprintf("%s (in this call of %s, at line %d)", err, who, r.pass.Prompt.File.Line(inner.Start)),
					Related: []analysis.RelatedInformation{{Span: inner, Message: "tools.add_local fails here with the arguments of this call"}}})
				return
			}
		}
		return
	}
	for _, f := range prog.Facts(prog.ChunkOf(c)).Views(c.Expr) {
		if err := judge(f); err != nil {
			r.Reportf(prog.SpanOf(c, c.Arg(2)), CodeShape, "%s", err)
			return
		}
	}
}

// paramsShape is the engine's check of a known params table
// (engine/run's schema of a local tool): its array members have number
// keys, and each field is a type string or a {type, description} array.
func paramsShape(sh *value.Shape) error {
	if len(sh.Array) > 0 {
		return rules.LocalParamName(rules.Value{Type: "number", Len: -1})
	}
	for _, f := range sh.Fields {
		v := f.V
		bad := func() error {
			return fmt.Errorf("tools.add_local param %q must be a type string or a {type, description} array", f.Key)
		}
		switch {
		case v.T == value.String && v.Const:
			if err := rules.LocalParamType(f.Key, v.Str); err != nil {
				return err
			}
		case v.T == value.Table && v.Shape != nil:
			a := v.Shape.Array
			if len(a) == 0 || len(a) > 2 {
				return bad()
			}
			if a[0].Excludes(value.String) || len(a) == 2 && a[1].Excludes(value.String|value.Nil) {
				return bad()
			}
			if a[0].T == value.String && a[0].Const {
				if err := rules.LocalParamType(f.Key, a[0].Str); err != nil {
					return err
				}
			}
		case v.Excludes(value.String | value.Table):
			return bad()
		}
	}
	return nil
}
