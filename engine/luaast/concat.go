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
	out, _ := rwStmts(stmts)
	return out
}

func rwStmts(ss []ast.Stmt) ([]ast.Stmt, bool) {
	var out []ast.Stmt
	for i, s := range ss {
		n, ch := rwStmt(s)
		if ch && out == nil {
			out = append([]ast.Stmt(nil), ss...)
		}
		if out != nil {
			out[i] = n
		}
	}
	if out == nil {
		return ss, false
	}
	return out, true
}

func rwExprs(es []ast.Expr) ([]ast.Expr, bool) {
	var out []ast.Expr
	for i, e := range es {
		n, ch := rwExpr(e)
		if ch && out == nil {
			out = append([]ast.Expr(nil), es...)
		}
		if out != nil {
			out[i] = n
		}
	}
	if out == nil {
		return es, false
	}
	return out, true
}

func rwStmt(s ast.Stmt) (ast.Stmt, bool) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		l, c1 := rwExprs(s.Lhs)
		r, c2 := rwExprs(s.Rhs)
		if c1 || c2 {
			n := *s
			n.Lhs, n.Rhs = l, r
			return &n, true
		}
	case *ast.LocalAssignStmt:
		if e, ch := rwExprs(s.Exprs); ch {
			n := *s
			n.Exprs = e
			return &n, true
		}
	case *ast.FuncCallStmt:
		if e, ch := rwExpr(s.Expr); ch {
			n := *s
			n.Expr = e
			return &n, true
		}
	case *ast.DoBlockStmt:
		if b, ch := rwStmts(s.Stmts); ch {
			n := *s
			n.Stmts = b
			return &n, true
		}
	case *ast.WhileStmt:
		c, c1 := rwExpr(s.Condition)
		b, c2 := rwStmts(s.Stmts)
		if c1 || c2 {
			n := *s
			n.Condition, n.Stmts = c, b
			return &n, true
		}
	case *ast.RepeatStmt:
		c, c1 := rwExpr(s.Condition)
		b, c2 := rwStmts(s.Stmts)
		if c1 || c2 {
			n := *s
			n.Condition, n.Stmts = c, b
			return &n, true
		}
	case *ast.IfStmt:
		c, c1 := rwExpr(s.Condition)
		t, c2 := rwStmts(s.Then)
		e, c3 := rwStmts(s.Else)
		if c1 || c2 || c3 {
			n := *s
			n.Condition, n.Then, n.Else = c, t, e
			return &n, true
		}
	case *ast.NumberForStmt:
		i, c1 := rwExpr(s.Init)
		l, c2 := rwExpr(s.Limit)
		st, c3 := rwExpr(s.Step)
		b, c4 := rwStmts(s.Stmts)
		if c1 || c2 || c3 || c4 {
			n := *s
			n.Init, n.Limit, n.Step, n.Stmts = i, l, st, b
			return &n, true
		}
	case *ast.GenericForStmt:
		e, c1 := rwExprs(s.Exprs)
		b, c2 := rwStmts(s.Stmts)
		if c1 || c2 {
			n := *s
			n.Exprs, n.Stmts = e, b
			return &n, true
		}
	case *ast.FuncDefStmt:
		if f, ch := rwExpr(s.Func); ch {
			n := *s
			n.Func = f.(*ast.FunctionExpr)
			return &n, true
		}
	case *ast.ReturnStmt:
		if e, ch := rwExprs(s.Exprs); ch {
			n := *s
			n.Exprs = e
			return &n, true
		}
	}
	return s, false
}

func rwExpr(e ast.Expr) (ast.Expr, bool) {
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		// Flatten the right-leaning chain a .. (b .. c) into one call, as
		// the compiler flattens it into one instruction.
		var ops []ast.Expr
		var cur ast.Expr = e
		for {
			c, ok := cur.(*ast.StringConcatOpExpr)
			if !ok {
				break
			}
			ops = append(ops, c.Lhs)
			cur = c.Rhs
		}
		ops = append(ops, cur)
		ops, _ = rwExprs(ops)
		fn := &ast.IdentExpr{Value: ConcatFunc}
		fn.SetLine(e.Line())
		fn.SetLastLine(e.LastLine())
		call := &ast.FuncCallExpr{Func: fn, Args: ops, AdjustRet: true}
		call.SetLine(e.Line())
		call.SetLastLine(e.LastLine())
		return call, true
	case *ast.AttrGetExpr:
		o, c1 := rwExpr(e.Object)
		k, c2 := rwExpr(e.Key)
		if c1 || c2 {
			n := *e
			n.Object, n.Key = o, k
			return &n, true
		}
	case *ast.TableExpr:
		var fields []*ast.Field
		for i, f := range e.Fields {
			k, c1 := rwExpr(f.Key)
			v, c2 := rwExpr(f.Value)
			if (c1 || c2) && fields == nil {
				fields = append([]*ast.Field(nil), e.Fields...)
			}
			if c1 || c2 {
				fields[i] = &ast.Field{Key: k, Value: v}
			}
		}
		if fields != nil {
			n := *e
			n.Fields = fields
			return &n, true
		}
	case *ast.FuncCallExpr:
		f, c1 := rwExpr(e.Func)
		r, c2 := rwExpr(e.Receiver)
		a, c3 := rwExprs(e.Args)
		if c1 || c2 || c3 {
			n := *e
			n.Func, n.Receiver, n.Args = f, r, a
			return &n, true
		}
	case *ast.LogicalOpExpr:
		l, c1 := rwExpr(e.Lhs)
		r, c2 := rwExpr(e.Rhs)
		if c1 || c2 {
			n := *e
			n.Lhs, n.Rhs = l, r
			return &n, true
		}
	case *ast.RelationalOpExpr:
		l, c1 := rwExpr(e.Lhs)
		r, c2 := rwExpr(e.Rhs)
		if c1 || c2 {
			n := *e
			n.Lhs, n.Rhs = l, r
			return &n, true
		}
	case *ast.ArithmeticOpExpr:
		l, c1 := rwExpr(e.Lhs)
		r, c2 := rwExpr(e.Rhs)
		if c1 || c2 {
			n := *e
			n.Lhs, n.Rhs = l, r
			return &n, true
		}
	case *ast.UnaryMinusOpExpr:
		if x, ch := rwExpr(e.Expr); ch {
			n := *e
			n.Expr = x
			return &n, true
		}
	case *ast.UnaryNotOpExpr:
		if x, ch := rwExpr(e.Expr); ch {
			n := *e
			n.Expr = x
			return &n, true
		}
	case *ast.UnaryLenOpExpr:
		if x, ch := rwExpr(e.Expr); ch {
			n := *e
			n.Expr = x
			return &n, true
		}
	case *ast.FunctionExpr:
		if b, ch := rwStmts(e.Stmts); ch {
			n := *e
			n.Stmts = b
			return &n, true
		}
	}
	return e, false
}
