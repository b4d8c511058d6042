package program

import (
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// walker visits one chunk in source order, keeping lexical scopes and
// consuming tokens so that the k-th occurrence of a name on a line is
// matched to the k-th node visited. It records into a chunkModel, with
// spans relative to the chunk's base (the start of its first line).
type walker struct {
	m         *chunkModel
	c         *Chunk
	file      *source.File
	tokens    *luatok.Index
	base      int
	scratch   *scratch
	handlerOf map[*ast.FunctionExpr]*ast.FuncCallExpr
	locals    []*Local
	marks     []int
	// branch is the innermost if-arm being walked (nil at top level).
	branch   *branch
	fns      []*ast.FunctionExpr
	globalOf map[*ast.IdentExpr]*Global
}

// Scopes are a stack of locals with marks: lookups scan backwards, which
// is cheaper than a map per block for the handful of locals Lua code has.
func (w *walker) openScope() { w.marks = append(w.marks, len(w.locals)) }

func (w *walker) closeScope() {
	n := len(w.marks) - 1
	w.locals = w.locals[:w.marks[n]]
	w.marks = w.marks[:n]
}

func (w *walker) lookup(name string) *Local {
	for i := len(w.locals) - 1; i >= 0; i-- {
		if w.locals[i].Name == name {
			return w.locals[i]
		}
	}
	return nil
}

func (w *walker) declare(name string, span source.Span, param bool) {
	l := alloc(&w.scratch.locals)
	*l = Local{Name: name, span: span, Param: param}
	w.locals = append(w.locals, l)
	w.scratch.localList = append(w.scratch.localList, l)
}

// nameToken consumes an identifier token on line and returns its span
// (the line's span when not found).
func (w *walker) nameToken(line int, name string) source.Span {
	if t, ok := w.take(line, luatok.Name, name); ok {
		return t.Span
	}
	s := lineSpan(w.file, w.c.Chunk, line-w.c.FirstLine+1)
	return source.Span{Start: s.Start - w.base, End: s.End - w.base}
}

// take consumes the token of kind k and value v on file line (see
// luatok.Index.Take); the chunk's tokens count lines from its first.
func (w *walker) take(line int, k luatok.Kind, v string) (luatok.Token, bool) {
	return w.tokens.Take(line-w.c.FirstLine, k, v)
}

// fileLine converts a chunk-relative AST line to a file line.
func (w *walker) fileLine(n ast.PositionHolder) int { return w.c.FirstLine + n.Line() - 1 }

func (w *walker) where() (api.Where, *ast.FuncCallExpr) {
	for i := len(w.fns) - 1; i >= 0; i-- {
		if h := w.handlerOf[w.fns[i]]; h != nil {
			if w.c.Kind == H1Chunk {
				return api.H1, h
			}
			return api.Handler, h
		}
	}
	switch w.c.Kind {
	case H1Chunk:
		return api.H1, nil
	case SharedChunk:
		if len(w.fns) == 0 {
			return api.SharedLoad, nil
		}
	}
	return api.Section, nil
}

func isTerminator(w *walker, s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt, *ast.BreakStmt:
		return true
	case *ast.DoBlockStmt:
		return len(s.Stmts) > 0 && isTerminator(w, s.Stmts[len(s.Stmts)-1])
	case *ast.FuncCallStmt:
		call, ok := s.Expr.(*ast.FuncCallExpr)
		if !ok {
			return false
		}
		id, ok := call.Func.(*ast.IdentExpr)
		if !ok || w.lookup(id.Value) != nil {
			return false
		}
		if id.Value == "jump" {
			// Inside an add_local handler jump is not the control
			// function (the jump-in-handler finding covers the call), so
			// it does not end the enclosing block.
			return !w.inHandlerFn()
		}
		return id.Value == "error"
	}
	return false
}

// inHandlerFn reports whether an enclosing function runs as an add_local
// handler.
func (w *walker) inHandlerFn() bool {
	for i := len(w.fns) - 1; i >= 0; i-- {
		if w.handlerOf[w.fns[i]] != nil {
			return true
		}
	}
	return false
}

func (w *walker) block(stmts []ast.Stmt) {
	for i, s := range stmts {
		w.stmt(s)
		if i+1 < len(stmts) && isTerminator(w, s) {
			w.m.unreachable = append(w.m.unreachable, Unreachable{Stmt: stmts[i+1], After: s})
		}
	}
}

func (w *walker) scopedBlock(stmts []ast.Stmt) {
	w.openScope()
	w.block(stmts)
	w.closeScope()
}

func (w *walker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		for _, l := range s.Lhs {
			w.target(l)
		}
		w.exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		spans := make([]source.Span, len(s.Names))
		for i, n := range s.Names {
			spans[i] = w.nameToken(w.fileLine(s), n)
		}
		if len(s.Names) == 1 && len(s.Exprs) == 1 {
			if _, ok := s.Exprs[0].(*ast.FunctionExpr); ok {
				// local function f: the name is visible in its own body.
				w.declare(s.Names[0], spans[0], false)
				w.expr(s.Exprs[0])
				return
			}
		}
		w.exprs(s.Exprs)
		for i, n := range s.Names {
			w.declare(n, spans[i], false)
		}
	case *ast.FuncCallStmt:
		w.expr(s.Expr)
	case *ast.DoBlockStmt:
		w.scopedBlock(s.Stmts)
	case *ast.WhileStmt:
		w.expr(s.Condition)
		w.scopedBlock(s.Stmts)
	case *ast.RepeatStmt:
		w.openScope()
		w.block(s.Stmts)
		w.expr(s.Condition)
		w.closeScope()
	case *ast.IfStmt:
		w.expr(s.Condition)
		outer := w.branch
		w.branch = &branch{parent: outer, ifs: s, arm: 0}
		w.scopedBlock(s.Then)
		w.branch = &branch{parent: outer, ifs: s, arm: 1}
		w.scopedBlock(s.Else)
		w.branch = outer
	case *ast.NumberForStmt:
		span := w.nameToken(w.fileLine(s), s.Name)
		w.expr(s.Init)
		w.expr(s.Limit)
		if s.Step != nil {
			w.expr(s.Step)
		}
		w.openScope()
		w.declare(s.Name, span, true)
		w.block(s.Stmts)
		w.closeScope()
	case *ast.GenericForStmt:
		spans := make([]source.Span, len(s.Names))
		for i, n := range s.Names {
			spans[i] = w.nameToken(w.fileLine(s), n)
		}
		w.exprs(s.Exprs)
		w.openScope()
		for i, n := range s.Names {
			w.declare(n, spans[i], true)
		}
		w.block(s.Stmts)
		w.closeScope()
	case *ast.FuncDefStmt:
		if s.Name == nil {
			return
		}
		if s.Name.Func != nil {
			w.target(s.Name.Func)
			w.function(s.Func, false)
		} else {
			w.expr(s.Name.Receiver)
			w.nameToken(w.fileLine(s), s.Name.Method)
			w.function(s.Func, true)
		}
	case *ast.ReturnStmt:
		w.exprs(s.Exprs)
	}
}

func (w *walker) exprs(es []ast.Expr) {
	for _, e := range es {
		w.expr(e)
	}
}

// target visits an assignment target.
func (w *walker) target(e ast.Expr) {
	switch e := e.(type) {
	case *ast.IdentExpr:
		span := w.nameToken(w.fileLine(e), e.Value)
		if w.lookup(e.Value) != nil {
			return // a write is not a read
		}
		where, h := w.where()
		g := alloc(&w.scratch.globals)
		*g = Global{Expr: e, Where: where, Write: true, span: span, Path: e.Value, pathSpan: span, InFunc: len(w.fns) > 0}
		w.scratch.globalList = append(w.scratch.globalList, g)
		w.scratch.globalHandler = append(w.scratch.globalHandler, h)
	case *ast.AttrGetExpr:
		w.expr(e)
		if root := Root(e); root != nil {
			if g := w.globalOf[root]; g != nil {
				g.FieldWrite = true
			}
		}
	default:
		w.expr(e)
	}
}

func (w *walker) function(f *ast.FunctionExpr, self bool) {
	w.fns = append(w.fns, f)
	w.m.fns = append(w.m.fns, f)
	w.m.handlers = append(w.m.handlers, w.handlerOf[f])
	w.openScope()
	if self {
		w.declare("self", noSpan, true)
	}
	if f.ParList != nil {
		line := w.fileLine(f)
		for _, n := range f.ParList.Names {
			w.declare(n, w.nameToken(line, n), true)
		}
	}
	w.block(f.Stmts)
	w.closeScope()
	w.fns = w.fns[:len(w.fns)-1]
}

// key visits a field key written as `.name`, `name =` or `["name"]` and
// returns its span.
func (w *walker) key(k ast.Expr) (source.Span, bool) {
	s, ok := k.(*ast.StringExpr)
	if !ok {
		return w.expr(k)
	}
	line := w.fileLine(s)
	if IsIdent(s.Value) {
		if t, ok := w.take(line, luatok.Name, s.Value); ok {
			w.setSpan(addr(s), t.Span)
			return t.Span, true
		}
	}
	return w.expr(s)
}

// expr visits an expression in read context and returns its span when
// known. Only the spans analyzers ask for (string literals, functions,
// calls) are kept in the program's map; the rest are returned so that
// parents can compose them without map traffic.
func (w *walker) expr(e ast.Expr) (source.Span, bool) {
	switch e := e.(type) {
	case nil:
	case *ast.IdentExpr:
		span := w.nameToken(w.fileLine(e), e.Value)
		if l := w.lookup(e.Value); l != nil {
			l.Reads++
			return span, true
		}
		where, h := w.where()
		g := alloc(&w.scratch.globals)
		*g = Global{Expr: e, Where: where, span: span, Path: e.Value, pathSpan: span, InFunc: len(w.fns) > 0}
		w.scratch.globalList = append(w.scratch.globalList, g)
		w.scratch.globalHandler = append(w.scratch.globalHandler, h)
		w.globalOf[e] = g
		return span, true
	case *ast.StringExpr:
		if t, ok := w.take(w.fileLine(e), luatok.String, e.Value); ok {
			w.setSpan(addr(e), t.Span)
			return t.Span, true
		}
	case *ast.AttrGetExpr:
		os, ok1 := w.expr(e.Object)
		ks, ok2 := w.key(e.Key)
		if k, ok := e.Key.(*ast.StringExpr); ok && isToolsCalls(e.Object) {
			w.m.callsKeys = append(w.m.callsKeys, k)
		}
		if ok1 && ok2 && ks.End >= os.Start {
			span := source.Span{Start: os.Start, End: ks.End}
			// Only global roots need the dotted path; building it for
			// every local table access would cost an allocation each.
			if root := Root(e); root != nil {
				if g := w.globalOf[root]; g != nil {
					if path, ok := Path(e); ok && len(path) > len(g.Path) {
						g.Path, g.pathSpan = path, span
					}
				}
			}
			return span, true
		}
	case *ast.TableExpr:
		for _, f := range e.Fields {
			if f.Key != nil {
				w.key(f.Key)
			}
			w.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		return w.call(e), true
	case *ast.LogicalOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.StringConcatOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		w.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		w.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		w.expr(e.Expr)
	case *ast.FunctionExpr:
		var span source.Span
		ok := false
		if t, found := w.take(w.fileLine(e), luatok.Name, "function"); found {
			w.setSpan(addr(e), t.Span)
			span, ok = t.Span, true
		}
		w.function(e, false)
		return span, ok
	}
	return source.Span{}, false
}

// isToolsCalls reports whether e is the expression tools.calls.
func isToolsCalls(e ast.Expr) bool {
	a, ok := e.(*ast.AttrGetExpr)
	if !ok {
		return false
	}
	k, ok := a.Key.(*ast.StringExpr)
	if !ok || k.Value != "calls" {
		return false
	}
	id, ok := a.Object.(*ast.IdentExpr)
	return ok && id.Value == "tools"
}

func (w *walker) call(e *ast.FuncCallExpr) source.Span {
	where, handler := w.where()
	c := alloc(&w.scratch.calls)
	*c = Call{Expr: e, Where: where, InFunc: len(w.fns) > 0, branch: w.branch}
	w.scratch.callList = append(w.scratch.callList, c)
	w.scratch.callHandler = append(w.scratch.callHandler, handler)
	idx := int32(len(w.scratch.callList) - 1)
	if e.Receiver != nil {
		rs, ok := w.expr(e.Receiver)
		c.nameSpan = w.nameToken(w.fileLine(e), e.Method)
		if ok && rs.Start < c.nameSpan.Start {
			c.nameSpan.Start = rs.Start
		}
	} else {
		fs, ok := w.expr(e.Func)
		if !ok {
			fs = lineSpan(w.file, w.c.Chunk, e.Line())
			fs.Start, fs.End = fs.Start-w.base, fs.End-w.base
		}
		c.nameSpan = fs
		if path, ok := Path(e.Func); ok {
			if isAddLocalRoot(path, e) {
				w.m.roots = append(w.m.roots, idx)
			}
			if root := Root(e.Func); root != nil && w.lookup(root.Value) == nil {
				c.Path = path
				if ent, ok := api.Lookup(path); ok && ent.IsFunc() {
					c.Entry = ent
				} else if ent, ok := api.RenamedTo(path); ok {
					// An old name (models.always): analysed as its
					// replacement, reported once by the oldforms pass.
					c.Entry = ent
				}
			}
		}
	}
	w.exprs(e.Args)
	c.span = c.nameSpan
	if end, ok := w.tokens.CallEnd(c.nameSpan.End); ok {
		c.span.End = end
	}
	w.setSpan(addr(e), c.span)
	return c.span
}

// setSpan records the span of the node at address a.
func (w *walker) setSpan(a uintptr, s source.Span) {
	w.scratch.spans = append(w.scratch.spans, nodeSpan{a, int32(s.Start), int32(s.End)})
}
