package parse

import (
	"github.com/forge-lsp/forge-lsp/engine/luaast"
	"github.com/yuin/gopher-lua/ast"
)

// loadError finds the errors Lua reports when it loads a chunk but that a
// grammar alone does not catch: `break` outside a loop and `...` outside a
// vararg function. gopher-lua reports them from its bytecode compiler;
// checking them on the AST lets the parser validate a chunk fully without
// compiling it (compilation is deferred to first use, see Chunk.Compile).
// It returns the chunk line and message of the first one, or 0.
func loadError(stmts []ast.Stmt) (int, string) {
	res := &loadResult{}
	luaast.WalkStmts(res.at(false, true), stmts) // a main chunk is vararg
	return res.line, res.msg
}

type loadResult struct {
	line int
	msg  string
	// ctx holds the four contexts a node can have, so that a visit
	// returns a pointer to one instead of boxing a context per node.
	ctx [4]loadCtx
}

// at returns the context inside a loop or not, in a vararg function or
// not.
func (r *loadResult) at(inLoop, vararg bool) *loadCtx {
	i := 0
	if inLoop {
		i |= 1
	}
	if vararg {
		i |= 2
	}
	c := &r.ctx[i]
	c.res, c.inLoop, c.vararg = r, inLoop, vararg
	return c
}

// loadCtx is the context of a node: inside a loop of the current
// function, and whether that function is vararg.
type loadCtx struct {
	res    *loadResult
	inLoop bool
	vararg bool
}

func (c *loadCtx) fail(line int, msg string) {
	if c.res.line == 0 {
		c.res.line, c.res.msg = max(line, 1), msg
	}
}

func (c *loadCtx) Visit(n any) luaast.Visitor {
	if n == nil || c.res.line != 0 {
		return nil
	}
	inLoop, vararg := c.inLoop, c.vararg
	switch n := n.(type) {
	case *ast.WhileStmt, *ast.RepeatStmt, *ast.NumberForStmt, *ast.GenericForStmt:
		inLoop = true
	case *ast.BreakStmt:
		if !inLoop {
			c.fail(n.Line(), "no loop to break")
		}
	case *ast.Comma3Expr:
		if !vararg {
			c.fail(n.Line(), "cannot use '...' outside a vararg function")
		}
	case *ast.FunctionExpr:
		// A function body starts a new loop and vararg context.
		inLoop = false
		vararg = n.ParList != nil && n.ParList.HasVargs
	}
	return c.res.at(inLoop, vararg)
}
