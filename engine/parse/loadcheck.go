package parse

import (
	"github.com/yuin/gopher-lua/ast"
)

// loadError finds the errors Lua reports when it loads a chunk but that a
// grammar alone does not catch: `break` outside a loop and `...` outside a
// vararg function. gopher-lua reports them from its bytecode compiler;
// checking them on the AST lets the parser validate a chunk fully without
// compiling it (compilation is deferred to first use, see Chunk.Compile).
// It returns the chunk line and message of the first one, or 0.
func loadError(stmts []ast.Stmt) (int, string) {
	w := &loadWalker{vararg: true} // a main chunk is a vararg function
	w.stmts(stmts)
	return w.line, w.msg
}

type loadWalker struct {
	loops  int
	vararg bool
	line   int
	msg    string
}

func (w *loadWalker) fail(line int, msg string) {
	if w.line == 0 {
		w.line, w.msg = max(line, 1), msg
	}
}

func (w *loadWalker) stmts(list []ast.Stmt) {
	for _, s := range list {
		if w.line != 0 {
			return
		}
		w.stmt(s)
	}
}

func (w *loadWalker) loop(body []ast.Stmt) {
	w.loops++
	w.stmts(body)
	w.loops--
}

func (w *loadWalker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		w.exprs(s.Lhs)
		w.exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		w.exprs(s.Exprs)
	case *ast.FuncCallStmt:
		w.expr(s.Expr)
	case *ast.DoBlockStmt:
		w.stmts(s.Stmts)
	case *ast.WhileStmt:
		w.expr(s.Condition)
		w.loop(s.Stmts)
	case *ast.RepeatStmt:
		w.loop(s.Stmts)
		w.expr(s.Condition)
	case *ast.IfStmt:
		w.expr(s.Condition)
		w.stmts(s.Then)
		w.stmts(s.Else)
	case *ast.NumberForStmt:
		w.expr(s.Init)
		w.expr(s.Limit)
		w.expr(s.Step)
		w.loop(s.Stmts)
	case *ast.GenericForStmt:
		w.exprs(s.Exprs)
		w.loop(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			w.expr(s.Name.Func)
			w.expr(s.Name.Receiver)
		}
		w.expr(s.Func)
	case *ast.ReturnStmt:
		w.exprs(s.Exprs)
	case *ast.BreakStmt:
		if w.loops == 0 {
			w.fail(s.Line(), "no loop to break")
		}
	}
}

func (w *loadWalker) exprs(list []ast.Expr) {
	for _, e := range list {
		w.expr(e)
	}
}

func (w *loadWalker) expr(e ast.Expr) {
	if e == nil || w.line != 0 {
		return
	}
	switch e := e.(type) {
	case *ast.Comma3Expr:
		if !w.vararg {
			w.fail(e.Line(), "cannot use '...' outside a vararg function")
		}
	case *ast.AttrGetExpr:
		w.expr(e.Object)
		w.expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			w.expr(f.Key)
			w.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		w.expr(e.Func)
		w.expr(e.Receiver)
		w.exprs(e.Args)
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
		// A function body starts a new loop and vararg context.
		saved := *w
		w.loops = 0
		w.vararg = e.ParList != nil && e.ParList.HasVargs
		w.stmts(e.Stmts)
		w.loops, w.vararg = saved.loops, saved.vararg
	}
}
