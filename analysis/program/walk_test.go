package program_test

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

// TestPath pins the static paths of callee expressions: names and
// fields with constant string keys, at any depth; a computed key or any
// other expression has none.
func TestPath(t *testing.T) {
	for _, tc := range []struct {
		expr, path string
		ok         bool
	}{
		{"f", "f", true},
		{"tools.add", "tools.add", true},
		{"a.b.c.d", "a.b.c.d", true},
		{`a["b c"].d`, "a.b c.d", true},
		{"a[k].d", "", false},
		{"a[1]", "", false},
		{"(f()).x", "", false},
		{"f().x", "", false},
	} {
		stmts, err := luaparse.Parse(strings.NewReader("local _ = "+tc.expr), "t")
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		e := stmts[0].(*ast.LocalAssignStmt).Exprs[0]
		got, ok := program.Path(e)
		if got != tc.path || ok != tc.ok {
			t.Errorf("Path(%s) = %q, %v; want %q, %v", tc.expr, got, ok, tc.path, tc.ok)
		}
	}
}
