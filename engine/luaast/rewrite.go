package luaast

import "github.com/yuin/gopher-lua/ast"

// A Rewriter returns a changed copy of a syntax tree without changing the
// tree: nodes on the way to a change are copied, everything else is
// shared (the parser's tree is shared with the analyzers). The concat
// guard and the debugger's line instrumentation are Rewriters.
type Rewriter struct {
	// Before, if set, is called for each statement the rewrite enters, in
	// source order and before the statement's children; the statements
	// it returns are inserted before it.
	Before func(s ast.Stmt) []ast.Stmt
	// Expr, if set, is called for each expression the rewrite reaches,
	// with the innermost statement holding it, before its children. If
	// it returns true its result replaces e and e's children are not
	// entered; otherwise they are.
	Expr func(s ast.Stmt, e ast.Expr) (ast.Expr, bool)
}

// Rewrite returns stmts rewritten by r. A function definition's name is
// not entered.
func (r *Rewriter) Rewrite(stmts []ast.Stmt) []ast.Stmt {
	out, _ := r.stmts(stmts)
	return out
}

func (r *Rewriter) stmts(ss []ast.Stmt) ([]ast.Stmt, bool) {
	var out []ast.Stmt
	for i, s := range ss {
		var pre []ast.Stmt
		if r.Before != nil {
			pre = r.Before(s)
		}
		n, ch := r.stmt(s)
		if (ch || len(pre) > 0) && out == nil {
			out = append(make([]ast.Stmt, 0, len(ss)+len(pre)), ss[:i]...)
		}
		if out != nil {
			out = append(append(out, pre...), n)
		}
	}
	if out == nil {
		return ss, false
	}
	return out, true
}

func (r *Rewriter) exprs(s ast.Stmt, es []ast.Expr) ([]ast.Expr, bool) {
	var out []ast.Expr
	for i, e := range es {
		n, ch := r.expr(s, e)
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

// stmt rewrites the children of s, copying s if one changed.
func (r *Rewriter) stmt(s ast.Stmt) (ast.Stmt, bool) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		l, c1 := r.exprs(s, s.Lhs)
		e, c2 := r.exprs(s, s.Rhs)
		if c1 || c2 {
			n := *s
			n.Lhs, n.Rhs = l, e
			return &n, true
		}
	case *ast.LocalAssignStmt:
		if e, ch := r.exprs(s, s.Exprs); ch {
			n := *s
			n.Exprs = e
			return &n, true
		}
	case *ast.ReturnStmt:
		if e, ch := r.exprs(s, s.Exprs); ch {
			n := *s
			n.Exprs = e
			return &n, true
		}
	case *ast.FuncCallStmt:
		if e, ch := r.expr(s, s.Expr); ch {
			n := *s
			n.Expr = e
			return &n, true
		}
	case *ast.FuncDefStmt:
		if f, ch := r.expr(s, s.Func); ch {
			if f, ok := f.(*ast.FunctionExpr); ok {
				n := *s
				n.Func = f
				return &n, true
			}
		}
	case *ast.DoBlockStmt:
		if b, ch := r.stmts(s.Stmts); ch {
			n := *s
			n.Stmts = b
			return &n, true
		}
	case *ast.WhileStmt:
		c, c1 := r.expr(s, s.Condition)
		b, c2 := r.stmts(s.Stmts)
		if c1 || c2 {
			n := *s
			n.Condition, n.Stmts = c, b
			return &n, true
		}
	case *ast.RepeatStmt:
		b, c1 := r.stmts(s.Stmts)
		c, c2 := r.expr(s, s.Condition)
		if c1 || c2 {
			n := *s
			n.Stmts, n.Condition = b, c
			return &n, true
		}
	case *ast.IfStmt:
		c, c1 := r.expr(s, s.Condition)
		t, c2 := r.stmts(s.Then)
		e, c3 := r.stmts(s.Else)
		if c1 || c2 || c3 {
			n := *s
			n.Condition, n.Then, n.Else = c, t, e
			return &n, true
		}
	case *ast.NumberForStmt:
		i, c1 := r.expr(s, s.Init)
		l, c2 := r.expr(s, s.Limit)
		st, c3 := r.expr(s, s.Step)
		b, c4 := r.stmts(s.Stmts)
		if c1 || c2 || c3 || c4 {
			n := *s
			n.Init, n.Limit, n.Step, n.Stmts = i, l, st, b
			return &n, true
		}
	case *ast.GenericForStmt:
		e, c1 := r.exprs(s, s.Exprs)
		b, c2 := r.stmts(s.Stmts)
		if c1 || c2 {
			n := *s
			n.Exprs, n.Stmts = e, b
			return &n, true
		}
	}
	return s, false
}

// expr rewrites e (the hook first, then its children), copying e if a
// child changed.
func (r *Rewriter) expr(s ast.Stmt, e ast.Expr) (ast.Expr, bool) {
	if e == nil {
		return nil, false
	}
	if r.Expr != nil {
		if n, done := r.Expr(s, e); done {
			return n, n != e
		}
	}
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		o, c1 := r.expr(s, e.Object)
		k, c2 := r.expr(s, e.Key)
		if c1 || c2 {
			n := *e
			n.Object, n.Key = o, k
			return &n, true
		}
	case *ast.TableExpr:
		var fields []*ast.Field
		for i, f := range e.Fields {
			k, c1 := r.expr(s, f.Key)
			v, c2 := r.expr(s, f.Value)
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
		f, c1 := r.expr(s, e.Func)
		o, c2 := r.expr(s, e.Receiver)
		a, c3 := r.exprs(s, e.Args)
		if c1 || c2 || c3 {
			n := *e
			n.Func, n.Receiver, n.Args = f, o, a
			return &n, true
		}
	case *ast.LogicalOpExpr:
		if l, rh, ch := r.pair(s, e.Lhs, e.Rhs); ch {
			n := *e
			n.Lhs, n.Rhs = l, rh
			return &n, true
		}
	case *ast.RelationalOpExpr:
		if l, rh, ch := r.pair(s, e.Lhs, e.Rhs); ch {
			n := *e
			n.Lhs, n.Rhs = l, rh
			return &n, true
		}
	case *ast.ArithmeticOpExpr:
		if l, rh, ch := r.pair(s, e.Lhs, e.Rhs); ch {
			n := *e
			n.Lhs, n.Rhs = l, rh
			return &n, true
		}
	case *ast.StringConcatOpExpr:
		if l, rh, ch := r.pair(s, e.Lhs, e.Rhs); ch {
			n := *e
			n.Lhs, n.Rhs = l, rh
			return &n, true
		}
	case *ast.UnaryMinusOpExpr:
		if x, ch := r.expr(s, e.Expr); ch {
			n := *e
			n.Expr = x
			return &n, true
		}
	case *ast.UnaryNotOpExpr:
		if x, ch := r.expr(s, e.Expr); ch {
			n := *e
			n.Expr = x
			return &n, true
		}
	case *ast.UnaryLenOpExpr:
		if x, ch := r.expr(s, e.Expr); ch {
			n := *e
			n.Expr = x
			return &n, true
		}
	case *ast.FunctionExpr:
		if b, ch := r.stmts(e.Stmts); ch {
			n := *e
			n.Stmts = b
			return &n, true
		}
	}
	return e, false
}

// pair rewrites the two operands of a binary expression.
func (r *Rewriter) pair(s ast.Stmt, l, rt ast.Expr) (ast.Expr, ast.Expr, bool) {
	l, c1 := r.expr(s, l)
	rt, c2 := r.expr(s, rt)
	return l, rt, c1 || c2
}
