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

// Rewrite returns stmts rewritten by r.
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
	return mapExprs(es, func(e ast.Expr) (ast.Expr, bool) { return r.expr(s, e) })
}

// stmt rewrites the children of s.
func (r *Rewriter) stmt(s ast.Stmt) (ast.Stmt, bool) {
	return mapStmt(s, func(e ast.Expr) (ast.Expr, bool) { return r.expr(s, e) }, r.stmts)
}

// expr rewrites e: the hook first, then its children.
func (r *Rewriter) expr(s ast.Stmt, e ast.Expr) (ast.Expr, bool) {
	if e == nil {
		return nil, false
	}
	if r.Expr != nil {
		if n, done := r.Expr(s, e); done {
			return n, n != e
		}
	}
	return mapExpr(e, func(x ast.Expr) (ast.Expr, bool) { return r.expr(s, x) }, r.stmts)
}

// exprFunc and blockFunc map a node's child expression or block: the
// result, and whether it differs from the child.
type (
	exprFunc  func(ast.Expr) (ast.Expr, bool)
	blockFunc func([]ast.Stmt) ([]ast.Stmt, bool)
)

// mapStmt is the one traversal of a statement's shape: it calls fe on
// each expression (nil ones too) and fb on each block directly in s, in
// source order, and returns s, or a copy of s holding their results when
// one changed.
func mapStmt(s ast.Stmt, fe exprFunc, fb blockFunc) (ast.Stmt, bool) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		l, c1 := mapExprs(s.Lhs, fe)
		e, c2 := mapExprs(s.Rhs, fe)
		if c1 || c2 {
			n := *s
			n.Lhs, n.Rhs = l, e
			return &n, true
		}
	case *ast.LocalAssignStmt:
		if e, ch := mapExprs(s.Exprs, fe); ch {
			n := *s
			n.Exprs = e
			return &n, true
		}
	case *ast.ReturnStmt:
		if e, ch := mapExprs(s.Exprs, fe); ch {
			n := *s
			n.Exprs = e
			return &n, true
		}
	case *ast.FuncCallStmt:
		if e, ch := fe(s.Expr); ch {
			n := *s
			n.Expr = e
			return &n, true
		}
	case *ast.FuncDefStmt:
		var name *ast.FuncName
		if s.Name != nil {
			f, c1 := fe(s.Name.Func)
			o, c2 := fe(s.Name.Receiver)
			if c1 || c2 {
				name = &ast.FuncName{Func: f, Receiver: o, Method: s.Name.Method}
			}
		}
		f, ch := fe(s.Func)
		fn, ok := f.(*ast.FunctionExpr)
		if ch && ok || name != nil {
			n := *s
			if ch && ok {
				n.Func = fn
			}
			if name != nil {
				n.Name = name
			}
			return &n, true
		}
	case *ast.DoBlockStmt:
		if b, ch := fb(s.Stmts); ch {
			n := *s
			n.Stmts = b
			return &n, true
		}
	case *ast.WhileStmt:
		c, c1 := fe(s.Condition)
		b, c2 := fb(s.Stmts)
		if c1 || c2 {
			n := *s
			n.Condition, n.Stmts = c, b
			return &n, true
		}
	case *ast.RepeatStmt:
		b, c1 := fb(s.Stmts)
		c, c2 := fe(s.Condition)
		if c1 || c2 {
			n := *s
			n.Stmts, n.Condition = b, c
			return &n, true
		}
	case *ast.IfStmt:
		c, c1 := fe(s.Condition)
		t, c2 := fb(s.Then)
		e, c3 := fb(s.Else)
		if c1 || c2 || c3 {
			n := *s
			n.Condition, n.Then, n.Else = c, t, e
			return &n, true
		}
	case *ast.NumberForStmt:
		i, c1 := fe(s.Init)
		l, c2 := fe(s.Limit)
		st, c3 := fe(s.Step)
		b, c4 := fb(s.Stmts)
		if c1 || c2 || c3 || c4 {
			n := *s
			n.Init, n.Limit, n.Step, n.Stmts = i, l, st, b
			return &n, true
		}
	case *ast.GenericForStmt:
		e, c1 := mapExprs(s.Exprs, fe)
		b, c2 := fb(s.Stmts)
		if c1 || c2 {
			n := *s
			n.Exprs, n.Stmts = e, b
			return &n, true
		}
	}
	return s, false
}

// mapExpr is mapStmt for an expression's children.
func mapExpr(e ast.Expr, fe exprFunc, fb blockFunc) (ast.Expr, bool) {
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		o, c1 := fe(e.Object)
		k, c2 := fe(e.Key)
		if c1 || c2 {
			n := *e
			n.Object, n.Key = o, k
			return &n, true
		}
	case *ast.TableExpr:
		var fields []*ast.Field
		for i, f := range e.Fields {
			k, c1 := fe(f.Key)
			v, c2 := fe(f.Value)
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
		f, c1 := fe(e.Func)
		o, c2 := fe(e.Receiver)
		a, c3 := mapExprs(e.Args, fe)
		if c1 || c2 || c3 {
			n := *e
			n.Func, n.Receiver, n.Args = f, o, a
			return &n, true
		}
	case *ast.LogicalOpExpr:
		if l, r, ch := mapPair(e.Lhs, e.Rhs, fe); ch {
			n := *e
			n.Lhs, n.Rhs = l, r
			return &n, true
		}
	case *ast.RelationalOpExpr:
		if l, r, ch := mapPair(e.Lhs, e.Rhs, fe); ch {
			n := *e
			n.Lhs, n.Rhs = l, r
			return &n, true
		}
	case *ast.ArithmeticOpExpr:
		if l, r, ch := mapPair(e.Lhs, e.Rhs, fe); ch {
			n := *e
			n.Lhs, n.Rhs = l, r
			return &n, true
		}
	case *ast.StringConcatOpExpr:
		if l, r, ch := mapPair(e.Lhs, e.Rhs, fe); ch {
			n := *e
			n.Lhs, n.Rhs = l, r
			return &n, true
		}
	case *ast.UnaryMinusOpExpr:
		if x, ch := fe(e.Expr); ch {
			n := *e
			n.Expr = x
			return &n, true
		}
	case *ast.UnaryNotOpExpr:
		if x, ch := fe(e.Expr); ch {
			n := *e
			n.Expr = x
			return &n, true
		}
	case *ast.UnaryLenOpExpr:
		if x, ch := fe(e.Expr); ch {
			n := *e
			n.Expr = x
			return &n, true
		}
	case *ast.FunctionExpr:
		if b, ch := fb(e.Stmts); ch {
			n := *e
			n.Stmts = b
			return &n, true
		}
	}
	return e, false
}

// mapExprs maps each expression of a list, copying the list when one
// changed.
func mapExprs(es []ast.Expr, fe exprFunc) ([]ast.Expr, bool) {
	var out []ast.Expr
	for i, e := range es {
		n, ch := fe(e)
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

// mapPair maps the two operands of a binary expression.
func mapPair(l, r ast.Expr, fe exprFunc) (ast.Expr, ast.Expr, bool) {
	l, c1 := fe(l)
	r, c2 := fe(r)
	return l, r, c1 || c2
}
