package literal

import (
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

func expr(t *testing.T, src string) ast.Expr {
	t.Helper()
	stmts, err := luaparse.Parse(strings.NewReader("local x = "+src), "t")
	if err != nil {
		t.Fatal(err)
	}
	return stmts[0].(*ast.LocalAssignStmt).Exprs[0]
}

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		src, typ string
		ok       bool
		length   int
	}{
		{`"a" .. "b"`, "string", true, -1},
		{`-2`, "number", true, -1},
		{`{}`, "table", true, 0},
		{`{1, 2}`, "table", true, 2},
		{`{f()}`, "table", true, -1},
		{`function() end`, "function", true, -1},
		{`y`, "", false, 0},
		{`"a" .. y`, "string", false, -1},
	} {
		v, ok := Value(expr(t, tc.src))
		if ok != tc.ok || v.Type != tc.typ || (ok && v.Len != tc.length) {
			t.Errorf("%s: got %+v %v, want %s %v len %d", tc.src, v, ok, tc.typ, tc.ok, tc.length)
		}
	}
	if s, _ := String(expr(t, `"a/" .. 1`)); s != "a/1" {
		t.Errorf("String = %q", s)
	}
	if p := Prefix(expr(t, `"notes/" .. key .. ".md"`)); p != "notes/" {
		t.Errorf("Prefix = %q", p)
	}
}
