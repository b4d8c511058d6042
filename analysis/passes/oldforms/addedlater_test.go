package oldforms

import (
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

// A description write is rewritten by --fix only when the chunk adds the
// tool afterwards anyway, with no read of the description between.
func TestAddedLater(t *testing.T) {
	for _, tc := range []struct {
		src  string
		safe bool
	}{
		{"search.description = 'd'\ntools.add(search, fetch)", true},
		{"search.description = 'd'\nlog('x')\ntools.add({fetch, search})", true},
		{"search.description = 'd'\ntools.add(fetch)", false},
		{"search.description = 'd'", false},
		{"tools.add(search)\nsearch.description = 'd'", false},
		{"search.description = 'd'\nlog(search.description)\ntools.add(search)", false},
		{"search.description = 'd'\nif x then tools.add(search) end", false},
	} {
		stmts, err := luaparse.Parse(strings.NewReader(tc.src), "t")
		if err != nil {
			t.Fatal(err)
		}
		var st ast.Stmt
		for _, s := range stmts {
			if a, ok := s.(*ast.AssignStmt); ok && len(a.Lhs) == 1 {
				if g, ok := a.Lhs[0].(*ast.AttrGetExpr); ok {
					if k, ok := g.Key.(*ast.StringExpr); ok && k.Value == "description" {
						st = s
					}
				}
			}
		}
		if got := addedLater(stmts, st, "search"); got != tc.safe {
			t.Errorf("%q: addedLater = %v, want %v", tc.src, got, tc.safe)
		}
	}
}
