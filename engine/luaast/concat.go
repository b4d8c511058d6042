package luaast

import "github.com/yuin/gopher-lua/ast"

// ConcatFunc is the global the sandbox defines to carry out `..`. It is
// not a valid Lua name, so no chunk can mention it.
const ConcatFunc = "(concat)"

// GuardConcat returns stmts with every concatenation `a .. b .. c` turned
// into the call ConcatFunc(a, b, c), for compiling. gopher-lua's `..`
// allocates the whole result at once, before any budget can look at its
// size, and is not charged for the bytes it copies; the sandbox's
// function checks the size first and charges the copy. Nodes on the way
// to a concatenation are copied: stmts (shared with the analyzers) is
// never changed.
func GuardConcat(stmts []ast.Stmt) []ast.Stmt {
	return (&Rewriter{Expr: concatCall}).Rewrite(stmts)
}

// concatCall turns the chain a .. (b .. c) into one call ConcatFunc(a, b,
// c), as the compiler flattens it into one instruction; the operands are
// rewritten too.
func concatCall(s ast.Stmt, e ast.Expr) (ast.Expr, bool) {
	c, ok := e.(*ast.StringConcatOpExpr)
	if !ok {
		return nil, false
	}
	var ops []ast.Expr
	var cur ast.Expr = c
	for {
		c, ok := cur.(*ast.StringConcatOpExpr)
		if !ok {
			break
		}
		ops = append(ops, c.Lhs)
		cur = c.Rhs
	}
	ops, _ = (&Rewriter{Expr: concatCall}).exprs(s, append(ops, cur))
	fn := &ast.IdentExpr{Value: ConcatFunc}
	fn.SetLine(e.Line())
	fn.SetLastLine(e.LastLine())
	call := &ast.FuncCallExpr{Func: fn, Args: ops, AdjustRet: true}
	call.SetLine(e.Line())
	call.SetLastLine(e.LastLine())
	return call, true
}
