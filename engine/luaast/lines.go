package luaast

import (
	"sort"

	"github.com/yuin/gopher-lua/ast"
)

// LineFunc is the name of the function a debugger defines to stop at a
// statement. It is not a valid Lua name, so no chunk can mention it. The
// debugger sets it as a global while the chunk starts; the chunk's first
// statement copies it into a local of the same name, so the chunk's
// functions reach it as an upvalue: they stay valid (and stop where they
// should) however long they outlive the block, whatever the global holds
// by then.
const LineFunc = "(line)"

// StmtLines returns the chunk lines where a statement starts that
// InstrumentLines can stop before, sorted: the statements of the chunk's
// blocks and of the bodies of functions defined by a statement or passed
// directly as an argument or value.
func StmtLines(stmts []ast.Stmt) []int {
	seen := map[int]bool{}
	stops(func(s ast.Stmt) []ast.Stmt {
		seen[s.Line()] = true
		return nil
	}).Rewrite(stmts)
	out := make([]int, 0, len(seen))
	for l := range seen {
		out = append(out, l)
	}
	sort.Ints(out)
	return out
}

// InstrumentLines returns stmts with a call LineFunc(line) before the
// first statement starting on each of lines (chunk lines, as StmtLines
// gives them), after a first statement `local LineFunc = LineFunc` that
// binds the calls to the global's value when the chunk starts. Nodes on
// the way are copied: stmts (shared with the analyzers) is never changed.
func InstrumentLines(stmts []ast.Stmt, lines map[int]bool) []ast.Stmt {
	done := map[int]bool{}
	out := stops(func(s ast.Stmt) []ast.Stmt {
		l := s.Line()
		if !lines[l] || done[l] {
			return nil
		}
		done[l] = true
		return []ast.Stmt{lineCall(l)}
	}).Rewrite(stmts)
	return append([]ast.Stmt{bindLineFunc()}, out...)
}

// bindLineFunc is `local LineFunc = LineFunc`, on line 0 so that no
// statement line is taken by it.
func bindLineFunc() ast.Stmt {
	st := &ast.LocalAssignStmt{Names: []string{LineFunc}, Exprs: []ast.Expr{&ast.IdentExpr{Value: LineFunc}}}
	return st
}

// stops is the Rewriter that calls before for each statement a debugger
// can stop at: it enters the blocks of statements and the function
// literals of directExprs, and no other expression.
func stops(before func(ast.Stmt) []ast.Stmt) *Rewriter {
	return &Rewriter{Before: before, Expr: func(s ast.Stmt, e ast.Expr) (ast.Expr, bool) {
		if c, ok := s.(*ast.FuncCallStmt); ok && e == c.Expr {
			return nil, false // on to the call's arguments
		}
		if _, ok := e.(*ast.FunctionExpr); ok {
			for _, d := range directExprs(s) {
				if d == e {
					return nil, false
				}
			}
		}
		return e, true
	}}
}

// directExprs are the expressions of s whose function literals are
// entered: defined functions, assigned values, returned values and call
// arguments.
func directExprs(s ast.Stmt) []ast.Expr {
	switch s := s.(type) {
	case *ast.FuncDefStmt:
		return []ast.Expr{s.Func}
	case *ast.AssignStmt:
		return s.Rhs
	case *ast.LocalAssignStmt:
		return s.Exprs
	case *ast.ReturnStmt:
		return s.Exprs
	case *ast.FuncCallStmt:
		if c, ok := s.Expr.(*ast.FuncCallExpr); ok {
			return c.Args
		}
	}
	return nil
}

func lineCall(l int) ast.Stmt {
	fn := &ast.IdentExpr{Value: LineFunc}
	arg := &ast.NumberExpr{Value: itoa(l)}
	call := &ast.FuncCallExpr{Func: fn, Args: []ast.Expr{arg}}
	for _, n := range []interface {
		SetLine(int)
		SetLastLine(int)
	}{fn, arg, call} {
		n.SetLine(l)
		n.SetLastLine(l)
	}
	st := &ast.FuncCallStmt{Expr: call}
	st.SetLine(l)
	st.SetLastLine(l)
	return st
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
