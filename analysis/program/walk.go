package program

import (
	"sync"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/luaast"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/yuin/gopher-lua/ast"
)

// Inspect calls f for every statement and expression under stmts in
// source order (parents before children). If f returns false the node's
// children are skipped. It is the engine's walker (engine/luaast), so the
// analyzer and the parser share one traversal.
func Inspect(stmts []ast.Stmt, f func(node any) bool) {
	luaast.Inspect(stmts, f)
}

// Path returns the dotted path of a name expression: "x" for an
// identifier, "tools.add" for tools.add or tools["add"]. ok is false for
// anything else (calls, computed keys).
func Path(e ast.Expr) (string, bool) {
	if id, ok := e.(*ast.IdentExpr); ok {
		return id.Value, true
	}
	// Measure the path first, so that it is built in one allocation
	// (every call and global access of every chunk asks for one).
	n := 0
	for x := e; ; {
		switch y := x.(type) {
		case *ast.IdentExpr:
			n += len(y.Value)
		case *ast.AttrGetExpr:
			k, ok := y.Key.(*ast.StringExpr)
			if !ok {
				return "", false
			}
			n += 1 + len(k.Value)
			x = y.Object
			continue
		default:
			return "", false
		}
		break
	}
	// A path the API names (tools.add, models.use, ...) comes up in
	// every section: it is assembled on the stack and the API's own
	// string returned, so only other paths are allocated.
	var stack [48]byte
	if n > len(stack) {
		buf := make([]byte, n)
		assemble(buf, e)
		return unsafe.String(&buf[0], n), true
	}
	buf := stack[:n]
	assemble(buf, e)
	if s, ok := apiPaths()[string(buf)]; ok {
		return s, true
	}
	return string(buf), true
}

// apiPaths holds every API entry's name (Path's own strings for them).
var apiPaths = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, e := range api.All() {
		m[e.Name] = e.Name
	}
	return m
})

// assemble writes the dotted path of e into buf, whose length Path
// measured.
func assemble(buf []byte, e ast.Expr) {
	n := len(buf)
	for x := e; ; {
		switch y := x.(type) {
		case *ast.IdentExpr:
			copy(buf, y.Value)
			return
		case *ast.AttrGetExpr:
			k := y.Key.(*ast.StringExpr).Value
			n -= len(k)
			copy(buf[n:], k)
			n--
			buf[n] = '.'
			x = y.Object
		}
	}
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

// LiteralType returns the Lua type of a literal expression ("string",
// "number", "boolean", "nil", "table", "function"), or "" when the
// expression is not a literal and its type is unknown statically.
func LiteralType(e ast.Expr) string {
	switch e.(type) {
	case *ast.StringExpr:
		return "string"
	case *ast.NumberExpr:
		return "number"
	case *ast.TrueExpr, *ast.FalseExpr:
		return "boolean"
	case *ast.NilExpr:
		return "nil"
	case *ast.TableExpr:
		return "table"
	case *ast.FunctionExpr:
		return "function"
	}
	return ""
}

// AddAliases returns the string literals among a tools.add call's
// arguments: the first argument, or the positional elements of an array
// first argument (the runtime reads that array as a sequence).
func (c *Call) AddAliases() []*ast.StringExpr { return c.AppendAddAliases(nil) }

// AppendAddAliases appends what AddAliases returns to buf, so that a pass
// looking at every tools.add call can reuse one buffer.
func (c *Call) AppendAddAliases(buf []*ast.StringExpr) []*ast.StringExpr {
	switch a := c.Arg(0).(type) {
	case *ast.StringExpr:
		buf = append(buf, a)
	case *ast.TableExpr:
		for _, f := range a.Fields {
			if s, ok := f.Value.(*ast.StringExpr); ok && f.Key == nil {
				buf = append(buf, s)
			}
		}
	}
	return buf
}

// AppendAddAliases is c.AppendAddAliases, except that upstream's older
// tools.add("a", "b") (OldMultiAdd) gives every string argument, as the
// older engine read them.
func (p *Program) AppendAddAliases(c *Call, buf []*ast.StringExpr) []*ast.StringExpr {
	if !p.OldMultiAdd(c) {
		return c.AppendAddAliases(buf)
	}
	for _, a := range c.Expr.Args {
		if s, ok := a.(*ast.StringExpr); ok {
			buf = append(buf, s)
		}
	}
	return buf
}

// OldMultiAdd reports whether c is tools.add in upstream's older
// several-aliases form, tools.add("a", "b") (docs/migration.md): two or
// more arguments, each a string or a name, and either a third argument or
// a second that is a name or a declared tool alias (not a description
// override, which the current engine takes there). Analysis treats every
// argument as an alias, as the older engine did.
func (p *Program) OldMultiAdd(c *Call) bool {
	if !c.oldMultiAddShape() {
		return false
	}
	s, ok := c.Expr.Args[1].(*ast.StringExpr)
	if !ok || len(c.Expr.Args) > 2 {
		return true
	}
	p.boundOnce.Do(func() {
		p.boundTools = map[string]bool{}
		for _, b := range p.Calls {
			if b.Canonical() == "tools.bind" && b.Where == api.H1 {
				if a, ok := b.Arg(0).(*ast.StringExpr); ok {
					p.boundTools[a.Value] = true
				}
			}
		}
	})
	return p.boundTools[s.Value]
}

// oldMultiAddShape is OldMultiAdd without the declarations: an
// alias-shaped second string counts.
func (c *Call) oldMultiAddShape() bool {
	if c.Canonical() != "tools.add" || len(c.Expr.Args) < 2 {
		return false
	}
	for _, a := range c.Expr.Args {
		switch a.(type) {
		case *ast.StringExpr, *ast.IdentExpr:
		default:
			return false
		}
	}
	switch a := c.Expr.Args[1].(type) {
	case *ast.StringExpr:
		return len(c.Expr.Args) > 2 || toolrule.ValidAlias(a.Value)
	}
	return true
}
