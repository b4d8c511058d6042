package program

import "github.com/yuin/gopher-lua/ast"

// Inspect calls f for every statement and expression under stmts in
// source order (parents before children). If f returns false the node's
// children are skipped.
func Inspect(stmts []ast.Stmt, f func(node any) bool) {
	for _, s := range stmts {
		inspectStmt(s, f)
	}
}

func inspectStmt(s ast.Stmt, f func(any) bool) {
	if s == nil || !f(s) {
		return
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		inspectExprs(s.Lhs, f)
		inspectExprs(s.Rhs, f)
	case *ast.LocalAssignStmt:
		inspectExprs(s.Exprs, f)
	case *ast.FuncCallStmt:
		inspectExpr(s.Expr, f)
	case *ast.DoBlockStmt:
		Inspect(s.Stmts, f)
	case *ast.WhileStmt:
		inspectExpr(s.Condition, f)
		Inspect(s.Stmts, f)
	case *ast.RepeatStmt:
		Inspect(s.Stmts, f)
		inspectExpr(s.Condition, f)
	case *ast.IfStmt:
		inspectExpr(s.Condition, f)
		Inspect(s.Then, f)
		Inspect(s.Else, f)
	case *ast.NumberForStmt:
		inspectExpr(s.Init, f)
		inspectExpr(s.Limit, f)
		inspectExpr(s.Step, f)
		Inspect(s.Stmts, f)
	case *ast.GenericForStmt:
		inspectExprs(s.Exprs, f)
		Inspect(s.Stmts, f)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			inspectExpr(s.Name.Func, f)
			inspectExpr(s.Name.Receiver, f)
		}
		inspectExpr(s.Func, f)
	case *ast.ReturnStmt:
		inspectExprs(s.Exprs, f)
	}
}

func inspectExprs(es []ast.Expr, f func(any) bool) {
	for _, e := range es {
		inspectExpr(e, f)
	}
}

func inspectExpr(e ast.Expr, f func(any) bool) {
	if e == nil || !f(e) {
		return
	}
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		inspectExpr(e.Object, f)
		inspectExpr(e.Key, f)
	case *ast.TableExpr:
		for _, fl := range e.Fields {
			inspectExpr(fl.Key, f)
			inspectExpr(fl.Value, f)
		}
	case *ast.FuncCallExpr:
		inspectExpr(e.Func, f)
		inspectExpr(e.Receiver, f)
		inspectExprs(e.Args, f)
	case *ast.LogicalOpExpr:
		inspectExpr(e.Lhs, f)
		inspectExpr(e.Rhs, f)
	case *ast.RelationalOpExpr:
		inspectExpr(e.Lhs, f)
		inspectExpr(e.Rhs, f)
	case *ast.StringConcatOpExpr:
		inspectExpr(e.Lhs, f)
		inspectExpr(e.Rhs, f)
	case *ast.ArithmeticOpExpr:
		inspectExpr(e.Lhs, f)
		inspectExpr(e.Rhs, f)
	case *ast.UnaryMinusOpExpr:
		inspectExpr(e.Expr, f)
	case *ast.UnaryNotOpExpr:
		inspectExpr(e.Expr, f)
	case *ast.UnaryLenOpExpr:
		inspectExpr(e.Expr, f)
	case *ast.FunctionExpr:
		Inspect(e.Stmts, f)
	}
}

// Path returns the dotted path of a name expression: "x" for an
// identifier, "tools.add" for tools.add or tools["add"]. ok is false for
// anything else (calls, computed keys).
func Path(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.IdentExpr:
		return e.Value, true
	case *ast.AttrGetExpr:
		k, ok := e.Key.(*ast.StringExpr)
		if !ok {
			return "", false
		}
		p, ok := Path(e.Object)
		if !ok {
			return "", false
		}
		return p + "." + k.Value, true
	}
	return "", false
}

// Root returns the identifier a path expression starts with, or nil.
func Root(e ast.Expr) *ast.IdentExpr {
	for {
		switch x := e.(type) {
		case *ast.IdentExpr:
			return x
		case *ast.AttrGetExpr:
			e = x.Object
		default:
			return nil
		}
	}
}
