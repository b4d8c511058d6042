package luaast

import (
	"sort"

	"github.com/yuin/gopher-lua/ast"
)

// LineFunc is the global a debugger defines to stop at a statement. It is
// not a valid Lua name, so no chunk can mention it.
const LineFunc = "(line)"

// StmtLines returns the chunk lines where a statement starts that
// InstrumentLines can stop before, sorted: the statements of the chunk's
// blocks and of the bodies of functions defined by a statement or passed
// directly as an argument or value.
func StmtLines(stmts []ast.Stmt) []int {
	seen := map[int]bool{}
	var walk func(ss []ast.Stmt)
	walk = func(ss []ast.Stmt) {
		for _, s := range ss {
			seen[s.Line()] = true
			for _, b := range bodies(s) {
				walk(b)
			}
		}
	}
	walk(stmts)
	out := make([]int, 0, len(seen))
	for l := range seen {
		out = append(out, l)
	}
	sort.Ints(out)
	return out
}

// bodies are the statement lists nested in s that StmtLines and
// InstrumentLines enter.
func bodies(s ast.Stmt) [][]ast.Stmt {
	switch s := s.(type) {
	case *ast.DoBlockStmt:
		return [][]ast.Stmt{s.Stmts}
	case *ast.WhileStmt:
		return [][]ast.Stmt{s.Stmts}
	case *ast.RepeatStmt:
		return [][]ast.Stmt{s.Stmts}
	case *ast.IfStmt:
		return [][]ast.Stmt{s.Then, s.Else}
	case *ast.NumberForStmt:
		return [][]ast.Stmt{s.Stmts}
	case *ast.GenericForStmt:
		return [][]ast.Stmt{s.Stmts}
	case *ast.FuncDefStmt:
		return [][]ast.Stmt{s.Func.Stmts}
	}
	var out [][]ast.Stmt
	for _, e := range directExprs(s) {
		if f, ok := e.(*ast.FunctionExpr); ok {
			out = append(out, f.Stmts)
		}
	}
	return out
}

// directExprs are the expressions of s whose function literals are
// entered: assigned values, returned values and call arguments.
func directExprs(s ast.Stmt) []ast.Expr {
	switch s := s.(type) {
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

// InstrumentLines returns stmts with a call LineFunc(line) before the
// first statement starting on each of lines (chunk lines, as StmtLines
// gives them). Nodes on the way are copied: stmts (shared with the
// analyzers) is never changed.
func InstrumentLines(stmts []ast.Stmt, lines map[int]bool) []ast.Stmt {
	done := map[int]bool{}
	return instrument(stmts, lines, done)
}

func instrument(ss []ast.Stmt, lines, done map[int]bool) []ast.Stmt {
	out := make([]ast.Stmt, 0, len(ss))
	for _, s := range ss {
		if l := s.Line(); lines[l] && !done[l] {
			done[l] = true
			out = append(out, lineCall(l))
		}
		out = append(out, instrumentStmt(s, lines, done))
	}
	return out
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

func instrumentFunc(f *ast.FunctionExpr, lines, done map[int]bool) *ast.FunctionExpr {
	n := *f
	n.Stmts = instrument(f.Stmts, lines, done)
	return &n
}

func instrumentExprs(es []ast.Expr, lines, done map[int]bool) []ast.Expr {
	out := make([]ast.Expr, len(es))
	for i, e := range es {
		if f, ok := e.(*ast.FunctionExpr); ok {
			out[i] = instrumentFunc(f, lines, done)
		} else {
			out[i] = e
		}
	}
	return out
}

func instrumentStmt(s ast.Stmt, lines, done map[int]bool) ast.Stmt {
	switch s := s.(type) {
	case *ast.DoBlockStmt:
		n := *s
		n.Stmts = instrument(s.Stmts, lines, done)
		return &n
	case *ast.WhileStmt:
		n := *s
		n.Stmts = instrument(s.Stmts, lines, done)
		return &n
	case *ast.RepeatStmt:
		n := *s
		n.Stmts = instrument(s.Stmts, lines, done)
		return &n
	case *ast.IfStmt:
		n := *s
		n.Then, n.Else = instrument(s.Then, lines, done), instrument(s.Else, lines, done)
		return &n
	case *ast.NumberForStmt:
		n := *s
		n.Stmts = instrument(s.Stmts, lines, done)
		return &n
	case *ast.GenericForStmt:
		n := *s
		n.Stmts = instrument(s.Stmts, lines, done)
		return &n
	case *ast.FuncDefStmt:
		n := *s
		n.Func = instrumentFunc(s.Func, lines, done)
		return &n
	case *ast.AssignStmt:
		n := *s
		n.Rhs = instrumentExprs(s.Rhs, lines, done)
		return &n
	case *ast.LocalAssignStmt:
		n := *s
		n.Exprs = instrumentExprs(s.Exprs, lines, done)
		return &n
	case *ast.ReturnStmt:
		n := *s
		n.Exprs = instrumentExprs(s.Exprs, lines, done)
		return &n
	case *ast.FuncCallStmt:
		if c, ok := s.Expr.(*ast.FuncCallExpr); ok {
			nc := *c
			nc.Args = instrumentExprs(c.Args, lines, done)
			n := *s
			n.Expr = &nc
			return &n
		}
	}
	return s
}
