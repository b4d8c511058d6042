// Package luaast walks gopher-lua syntax trees. The parser uses it to
// validate chunks and the analyzer to inspect them, so there is one
// traversal of the tree's shape.
package luaast

import "github.com/yuin/gopher-lua/ast"

// A Visitor's Visit is called for each node (an ast.Stmt or ast.Expr) in
// source order, parents before children. If it returns a non-nil visitor
// w, Walk visits the node's children with w and then calls w.Visit(nil),
// as go/ast.Walk does; a nil result skips the children.
type Visitor interface {
	Visit(node any) (w Visitor)
}

// WalkStmts walks every statement of a block.
func WalkStmts(v Visitor, stmts []ast.Stmt) {
	for _, s := range stmts {
		walkStmt(v, s)
	}
}

func walkStmt(v Visitor, s ast.Stmt) {
	if s == nil {
		return
	}
	w := v.Visit(s)
	if w == nil {
		return
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		walkExprs(w, s.Lhs)
		walkExprs(w, s.Rhs)
	case *ast.LocalAssignStmt:
		walkExprs(w, s.Exprs)
	case *ast.FuncCallStmt:
		walkExpr(w, s.Expr)
	case *ast.DoBlockStmt:
		WalkStmts(w, s.Stmts)
	case *ast.WhileStmt:
		walkExpr(w, s.Condition)
		WalkStmts(w, s.Stmts)
	case *ast.RepeatStmt:
		WalkStmts(w, s.Stmts)
		walkExpr(w, s.Condition)
	case *ast.IfStmt:
		walkExpr(w, s.Condition)
		WalkStmts(w, s.Then)
		WalkStmts(w, s.Else)
	case *ast.NumberForStmt:
		walkExpr(w, s.Init)
		walkExpr(w, s.Limit)
		walkExpr(w, s.Step)
		WalkStmts(w, s.Stmts)
	case *ast.GenericForStmt:
		walkExprs(w, s.Exprs)
		WalkStmts(w, s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			walkExpr(w, s.Name.Func)
			walkExpr(w, s.Name.Receiver)
		}
		walkExpr(w, s.Func)
	case *ast.ReturnStmt:
		walkExprs(w, s.Exprs)
	}
	w.Visit(nil)
}

func walkExprs(v Visitor, es []ast.Expr) {
	for _, e := range es {
		walkExpr(v, e)
	}
}

func walkExpr(v Visitor, e ast.Expr) {
	if e == nil {
		return
	}
	w := v.Visit(e)
	if w == nil {
		return
	}
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		walkExpr(w, e.Object)
		walkExpr(w, e.Key)
	case *ast.TableExpr:
		for _, fl := range e.Fields {
			walkExpr(w, fl.Key)
			walkExpr(w, fl.Value)
		}
	case *ast.FuncCallExpr:
		walkExpr(w, e.Func)
		walkExpr(w, e.Receiver)
		walkExprs(w, e.Args)
	case *ast.LogicalOpExpr:
		walkExpr(w, e.Lhs)
		walkExpr(w, e.Rhs)
	case *ast.RelationalOpExpr:
		walkExpr(w, e.Lhs)
		walkExpr(w, e.Rhs)
	case *ast.StringConcatOpExpr:
		walkExpr(w, e.Lhs)
		walkExpr(w, e.Rhs)
	case *ast.ArithmeticOpExpr:
		walkExpr(w, e.Lhs)
		walkExpr(w, e.Rhs)
	case *ast.UnaryMinusOpExpr:
		walkExpr(w, e.Expr)
	case *ast.UnaryNotOpExpr:
		walkExpr(w, e.Expr)
	case *ast.UnaryLenOpExpr:
		walkExpr(w, e.Expr)
	case *ast.FunctionExpr:
		WalkStmts(w, e.Stmts)
	}
	w.Visit(nil)
}

type inspector func(any) bool

func (f inspector) Visit(n any) Visitor {
	if n == nil || !f(n) {
		return nil
	}
	return f
}

// Inspect calls f for every statement and expression under stmts in
// source order (parents before children). If f returns false the node's
// children are skipped.
func Inspect(stmts []ast.Stmt, f func(node any) bool) {
	WalkStmts(inspector(f), stmts)
}
