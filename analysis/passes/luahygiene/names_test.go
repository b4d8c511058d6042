package luahygiene

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// TestEngineNames checks the cached engine names against the api
// package, and that hasMember is true only where checkField reports
// nothing, for every engine global with each of its members, a missing
// member and deeper paths.
func TestEngineNames(t *testing.T) {
	infos := engineNames()
	sec, h1 := api.GlobalSet(api.SectionLike), api.GlobalSet(api.H1)
	if len(infos) == 0 {
		t.Fatal("no engine names")
	}
	for name, n := range infos {
		if n.sec != sec[name] || n.h1 != h1[name] || n.table != api.IsTable(name) {
			t.Errorf("%s: info %+v disagrees with the api package", name, *n)
		}
		paths := []string{name, name + ".nosuchmember", name + ".nosuchmember.x", name + "."}
		for _, m := range api.Members(name, api.Anywhere) {
			paths = append(paths, name+"."+m, name+"."+m+".deeper")
		}
		for _, path := range paths {
			file := source.NewFile("x.lua", []byte(path))
			g := &program.Global{Expr: &ast.IdentExpr{Value: name}, Path: path}
			reported := false
			pass := &analysis.Pass{File: file, Report: func(analysis.Diagnostic) { reported = true }}
			checkField(pass, g, source.Span{Start: 0, End: len(path)}, map[string][]string{})
			if n.hasMember(g) && reported {
				t.Errorf("%s: hasMember is true but checkField reports", path)
			}
			if !n.hasMember(g) && !reported {
				t.Errorf("%s: hasMember is false but checkField reports nothing (correct, but slow)", path)
			}
		}
	}
	// Unsure cases fall back to checkField.
	var none *nameInfo
	if none.hasMember(&program.Global{Expr: &ast.IdentExpr{Value: "x"}, Path: "x.y"}) {
		t.Error("nil info: hasMember is true")
	}
}
