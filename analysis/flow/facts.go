package flow

import (
	"cmp"
	"slices"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// endFacts classifies a chunk's top-level ending as far as its AST
// alone tells: it returns the top-level pcall(jump, ...) calls, in order,
// each of which ends the chunk unless its error is caught (pcallCaught),
// and the ending when every one of them is caught.
func endFacts(stmts []ast.Stmt) (pcalls []*ast.FuncCallExpr, end End) {
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.ReturnStmt:
			if len(st.Exprs) == 0 {
				return pcalls, Continues
			}
			switch e := st.Exprs[0].(type) {
			case *ast.NilExpr:
				return pcalls, Continues
			case *ast.StringExpr, *ast.NumberExpr, *ast.TrueExpr, *ast.FalseExpr,
				*ast.StringConcatOpExpr, *ast.ArithmeticOpExpr, *ast.TableExpr, *ast.FunctionExpr:
				// Scalars end the section; a table or function fails the
				// run (a non-scalar return), which ends it too.
				return pcalls, Ends
			case *ast.IdentExpr:
				if e.Value == "args" { // the run input: always a string
					return pcalls, Ends
				}
				return pcalls, MayEnd
			case *ast.FuncCallExpr:
				if p, ok := program.Path(e.Func); ok && (p == "table.concat" || p == "tostring" || p == "string.format") {
					return pcalls, Ends
				}
				return pcalls, MayEnd
			default:
				return pcalls, MayEnd
			}
		case *ast.FuncCallStmt:
			if isEnd(st.Expr) {
				if !isPcallJump(st.Expr) {
					return pcalls, Ends
				}
				pcalls = append(pcalls, st.Expr.(*ast.FuncCallExpr))
			}
		case *ast.LocalAssignStmt:
			for _, e := range st.Exprs {
				if isEnd(e) {
					if !isPcallJump(e) {
						return pcalls, Ends
					}
					pcalls = append(pcalls, e.(*ast.FuncCallExpr))
				}
			}
		}
	}
	return pcalls, Continues
}

// chunkFacts are the facts of the chunk whose AST starts with ast0 that
// depend on its AST alone.
type chunkFacts struct {
	ast0 ast.Stmt
	// calls are the chunk's straight-line calls (see straight), sorted
	// by address (isStraight).
	calls []*ast.FuncCallExpr
	// pcalls and end are endFacts'.
	pcalls []*ast.FuncCallExpr
	end    End
	// deadLine is the chunk line of the first statement after one that
	// terminates the chunk, when dead is true.
	dead     bool
	deadLine int
}

type factsKey struct{}

// factsOf returns the facts of chunk c, which has an AST. They are
// memoised on the parser's chunk, so an edit re-walks only the chunks
// that changed; everything that depends on the chunk's place (spans,
// section targets) is computed from them on use.
func factsOf(c *parse.Chunk) *chunkFacts {
	if m, ok := c.Memo(factsKey{}).(*chunkFacts); ok && m.ast0 == c.AST[0] {
		return m
	}
	m := computeFacts(c)
	c.SetMemo(factsKey{}, m)
	return m
}

// computeFacts computes the facts of chunk c, which has an AST.
func computeFacts(c *parse.Chunk) *chunkFacts {
	m := &chunkFacts{ast0: c.AST[0]}
	out := map[*ast.FuncCallExpr]bool{}
	straight(c.AST, out)
	m.calls = make([]*ast.FuncCallExpr, 0, len(out))
	for call := range out {
		m.calls = append(m.calls, call)
	}
	slices.SortFunc(m.calls, byAddress)
	m.pcalls, m.end = endFacts(c.AST)
	for i, st := range c.AST {
		if i+1 < len(c.AST) && terminates(st) {
			m.dead, m.deadLine = true, c.AST[i+1].Line()
			break
		}
	}
	return m
}

// byAddress orders calls by their address, which does not change: Go's
// collector does not move objects.
func byAddress(a, b *ast.FuncCallExpr) int {
	return cmp.Compare(uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b)))
}

// isStraight reports whether call is one of the chunk's straight-line
// calls.
func (m *chunkFacts) isStraight(call *ast.FuncCallExpr) bool {
	_, ok := slices.BinarySearchFunc(m.calls, call, byAddress)
	return ok
}

// straight records the calls of a chunk that run whenever control reaches
// their top-level statement.
func straight(stmts []ast.Stmt, out map[*ast.FuncCallExpr]bool) {
	var expr func(e ast.Expr)
	expr = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.FuncCallExpr:
			out[e] = true
			if e.Receiver != nil {
				expr(e.Receiver)
			} else {
				expr(e.Func)
			}
			for _, a := range e.Args {
				expr(a)
			}
		case *ast.AttrGetExpr:
			expr(e.Object)
			expr(e.Key)
		case *ast.LogicalOpExpr:
			expr(e.Lhs) // the right side may not run
		case *ast.StringConcatOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.ArithmeticOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.RelationalOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.UnaryMinusOpExpr:
			expr(e.Expr)
		case *ast.UnaryNotOpExpr:
			expr(e.Expr)
		case *ast.UnaryLenOpExpr:
			expr(e.Expr)
		case *ast.TableExpr:
			for _, f := range e.Fields {
				if f.Key != nil {
					expr(f.Key)
				}
				expr(f.Value)
			}
		}
	}
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.FuncCallStmt:
			expr(st.Expr)
		case *ast.LocalAssignStmt:
			for _, e := range st.Exprs {
				expr(e)
			}
		case *ast.AssignStmt:
			for _, e := range st.Rhs {
				expr(e)
			}
		case *ast.ReturnStmt:
			for _, e := range st.Exprs {
				expr(e)
			}
			return
		case *ast.IfStmt:
			expr(st.Condition)
		case *ast.BreakStmt:
			return
		}
	}
}

// terminates reports whether a top-level statement always ends its chunk.
func terminates(st ast.Stmt) bool {
	switch st := st.(type) {
	case *ast.ReturnStmt, *ast.BreakStmt:
		return true
	case *ast.FuncCallStmt:
		return isEnd(st.Expr)
	}
	return false
}
