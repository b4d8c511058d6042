// Package luaast walks and rewrites gopher-lua syntax trees. The parser
// uses it to validate chunks, the analyzer to inspect them, and the
// sandbox and the debugger to rewrite them before compiling (the concat
// guard, the line stops); mapStmt and mapExpr are the one traversal of
// the tree's shape that all of them share.
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
	if w := v.Visit(s); w != nil {
		fe, fb := children(w)
		mapStmt(s, fe, fb)
		w.Visit(nil)
	}
}

func walkExpr(v Visitor, e ast.Expr) {
	if e == nil {
		return
	}
	if w := v.Visit(e); w != nil {
		fe, fb := children(w)
		mapExpr(e, fe, fb)
		w.Visit(nil)
	}
}

// children are the mapStmt and mapExpr functions that walk each child
// with w and change nothing.
func children(w Visitor) (exprFunc, blockFunc) {
	return func(e ast.Expr) (ast.Expr, bool) { walkExpr(w, e); return e, false },
		func(b []ast.Stmt) ([]ast.Stmt, bool) { WalkStmts(w, b); return b, false }
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
