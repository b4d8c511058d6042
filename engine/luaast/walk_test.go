package luaast

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

func TestInspectOrderAndSkip(t *testing.T) {
	stmts, err := parse.Parse(strings.NewReader("local f = function(a) return a + 1 end\nwhile x do g(y) end"), "t")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	Inspect(stmts, func(n any) bool {
		seen = append(seen, strings.TrimPrefix(fmt.Sprintf("%T", n), "*ast."))
		_, isFunc := n.(*ast.FunctionExpr)
		return !isFunc // skip function bodies
	})
	want := "LocalAssignStmt FunctionExpr WhileStmt IdentExpr FuncCallStmt FuncCallExpr IdentExpr IdentExpr"
	if got := strings.Join(seen, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

type depth struct {
	d   int
	max *int
}

func (v depth) Visit(n any) Visitor {
	if n == nil {
		return nil
	}
	if v.d > *v.max {
		*v.max = v.d
	}
	return depth{v.d + 1, v.max}
}

func TestWalkContext(t *testing.T) {
	stmts, _ := parse.Parse(strings.NewReader("if a then b = {c = function() return d end} end"), "t")
	m := 0
	WalkStmts(depth{0, &m}, stmts)
	// IfStmt > AssignStmt > TableExpr > FunctionExpr > ReturnStmt > IdentExpr
	if m != 5 {
		t.Fatalf("max depth %d, want 5", m)
	}
}
