package value

import (
	"testing"

	"github.com/yuin/gopher-lua/ast"
)

// TestFnInfoKeptPerPrompt: what an interpreter learned about function
// bodies serves the next chunk of the same prompt and is dropped for
// another prompt, whose chunks never call those bodies (kept, they held
// every checked prompt's syntax trees: a 2,000-prompt folder check took
// 1.35x the memory of a 200-prompt one).
func TestFnInfoKeptPerPrompt(t *testing.T) {
	a, b := NewBudget(), NewBudget()
	fe := &ast.FunctionExpr{}
	in := &interp{}
	in.adopt(a)
	in.fnInfo = map[*ast.FunctionExpr]*fnInfo{fe: {}}
	in.adopt(a)
	if len(in.fnInfo) != 1 {
		t.Fatal("the same prompt's next chunk lost what was learned")
	}
	in.adopt(b)
	if len(in.fnInfo) != 0 {
		t.Fatal("another prompt's chunk kept the first prompt's bodies")
	}
	in.fnInfo[fe] = &fnInfo{}
	in.adopt(nil)
	if len(in.fnInfo) != 0 {
		t.Fatal("a chunk without a prompt kept bodies")
	}
}

// A budget for evaluating a prompt's chunks ahead (Budget.Ahead) is the
// prompt's for what interpreters keep, but limits each chunk to its own
// bound and spends nothing, as a nil budget does: the evaluation in
// order takes those facts where they fit (Take).
func TestAheadBudget(t *testing.T) {
	b := NewBudget()
	a := b.Ahead()
	if a.prompt() != b || b.prompt() != b {
		t.Fatal("an ahead budget is not its prompt's")
	}
	if a.limit() != maxWork || a.Left() != MaxPromptWork {
		t.Fatalf("ahead: limit %d, left %d", a.limit(), a.Left())
	}
	stmts := []ast.Stmt{&ast.LocalAssignStmt{Names: []string{"x"}, Exprs: []ast.Expr{&ast.NumberExpr{Value: "1"}}}}
	f := interpretLimit(stmts, nil, a.limit(), a)
	a.spend(f)
	if b.Left() != MaxPromptWork {
		t.Fatalf("an evaluation ahead spent the prompt's budget: %d left", b.Left())
	}
	b.left = 0
	if b.Take(f) && f.Work() > 0 {
		t.Fatal("Take accepted facts past an exhausted budget")
	}
}
