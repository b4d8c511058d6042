package run

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/luaast"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

// This file rewords the interpreter's own messages for a call on a
// non-function, `#` on a value without a length and arithmetic on a
// non-number (docs/language.md#errors): gopher-lua names neither the
// value nor the expression, so the engine finds the expression on the
// failing line in the chunk's syntax tree, looks its value up in the VM
// that failed, and says which one it was, as the checker does.

// exprSite is an expression of interest on some lines of a chunk.
type exprSite struct {
	first, last int
	// path is the expression's name path (`store.list`, `var.count`,
	// `obj:m`), nil when it is not a plain name path.
	path []string
	// method marks a method call (the last element is the method).
	method bool
	// op is the operator for arithmetic and concatenation operands.
	op string
}

// exprIndex lists a chunk's calls, `#` operands and the operands of
// arithmetic and concatenation (ariths, by operator).
type exprIndex struct {
	calls, lens, ariths []exprSite
	// locals are the names the chunk declares as locals or parameters; a
	// path rooted at one cannot be looked up after the error.
	locals map[string]bool
}

type exprIndexKey struct{}

// exprsOf returns the chunk's expression index, built once per chunk text.
func exprsOf(c *parse.Chunk) *exprIndex {
	if v, ok := c.Memo(exprIndexKey{}).(*exprIndex); ok {
		return v
	}
	ix := &exprIndex{locals: map[string]bool{}}
	stmts, err := luaparse.Parse(strings.NewReader(c.Source), c.Name)
	if err != nil {
		return ix
	}
	luaast.Inspect(stmts, func(n any) bool {
		switch x := n.(type) {
		case *ast.FuncCallExpr:
			s := exprSite{first: x.Line(), last: x.LastLine()}
			if x.Receiver != nil {
				if p := namePath(x.Receiver); p != nil {
					s.path, s.method = append(p, x.Method), true
				}
			} else {
				s.path = namePath(x.Func)
			}
			ix.calls = append(ix.calls, s)
		case *ast.UnaryLenOpExpr:
			ix.lens = append(ix.lens, exprSite{first: x.Line(), last: x.LastLine(), path: namePath(x.Expr)})
		case *ast.ArithmeticOpExpr:
			for _, e := range []ast.Expr{x.Lhs, x.Rhs} {
				ix.ariths = append(ix.ariths, exprSite{first: x.Line(), last: x.LastLine(), path: namePath(e), op: x.Operator})
			}
		case *ast.StringConcatOpExpr:
			for _, e := range []ast.Expr{x.Lhs, x.Rhs} {
				ix.ariths = append(ix.ariths, exprSite{first: x.Line(), last: x.LastLine(), path: namePath(e), op: ".."})
			}
		case *ast.UnaryMinusOpExpr:
			ix.ariths = append(ix.ariths, exprSite{first: x.Line(), last: x.LastLine(), path: namePath(x.Expr), op: "-"})
		case *ast.LocalAssignStmt:
			for _, n := range x.Names {
				ix.locals[n] = true
			}
		case *ast.FunctionExpr:
			for _, n := range x.ParList.Names {
				ix.locals[n] = true
			}
		case *ast.NumberForStmt:
			ix.locals[x.Name] = true
		case *ast.GenericForStmt:
			for _, n := range x.Names {
				ix.locals[n] = true
			}
		}
		return true
	})
	c.SetMemo(exprIndexKey{}, ix)
	return ix
}

// namePath is the name path of e (`a`, `a.b.c`), or nil.
func namePath(e ast.Expr) []string {
	switch x := e.(type) {
	case *ast.IdentExpr:
		return []string{x.Value}
	case *ast.AttrGetExpr:
		k, ok := x.Key.(*ast.StringExpr)
		if !ok {
			return nil
		}
		if p := namePath(x.Object); p != nil {
			return append(p, k.Value)
		}
	}
	return nil
}

// at returns the sites whose lines hold line.
func at(sites []exprSite, line int) []exprSite {
	var out []exprSite
	for _, s := range sites {
		// gopher-lua sets no last line on most expressions.
		if s.first <= line && line <= max(s.first, s.last) {
			out = append(out, s)
		}
	}
	return out
}

// lookup returns the value of path in the VM's globals, with ok false when
// it cannot be known (a local, or a lookup that fails).
func (vm *VM) lookup(ix *exprIndex, path []string) (v lua.LValue, ok bool) {
	if len(path) == 0 || ix.locals[path[0]] {
		return lua.LNil, false
	}
	L := vm.L
	top := L.GetTop()
	defer L.SetTop(top)
	fn := L.NewFunction(func(L *lua.LState) int {
		v := L.GetGlobal(path[0])
		for _, k := range path[1:] {
			switch v.(type) {
			case *lua.LTable, *lua.LUserData:
				v = L.GetField(v, k)
			default:
				L.RaiseError("not indexable")
			}
		}
		L.Push(v)
		return 1
	})
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		return lua.LNil, false
	}
	return L.Get(-1), true
}

func joinPath(path []string, method bool) string {
	if method && len(path) > 1 {
		return strings.Join(path[:len(path)-1], ".") + ":" + path[len(path)-1]
	}
	return strings.Join(path, ".")
}

// arithOp is the operator of each operation gopher-lua names.
func arithOp(op string) string {
	switch op {
	case "add":
		return "+"
	case "sub", "unm":
		return "-"
	case "mul":
		return "*"
	case "div":
		return "/"
	case "mod":
		return "%"
	case "pow":
		return "^"
	}
	return op
}

// arithOperands splits gopher-lua's "cannot perform <op> operation between
// <type> and <type>".
func arithOperands(msg string) (op, lt, rt string, ok bool) {
	rest, ok := strings.CutPrefix(msg, "cannot perform ")
	if !ok {
		return "", "", "", false
	}
	op, rest, ok1 := strings.Cut(rest, " operation between ")
	lt, rt, ok2 := strings.Cut(rest, " and ")
	return op, lt, rt, ok1 && ok2 && !strings.Contains(rt, " ")
}

// reword rewrites the interpreter message msg, raised at chunk line line
// of c ("<label>:<line>: " already stripped), into plain words, or
// returns it unchanged.
func (vm *VM) reword(msg string, c *parse.Chunk, line int) string {
	switch {
	case msg == "attempt to call a non-function object":
		return vm.rewordCall(c, line)
	case msg == "__len undefined":
		return vm.rewordLen(c, line)
	}
	if t, ok := strings.CutPrefix(msg, "attempt to concatenate a "); ok && strings.HasSuffix(t, " value") {
		if name := vm.operand(c, line, "..", strings.TrimSuffix(t, " value")); name != "" {
			return msg + " (`" + name + "`)"
		}
		return msg
	}
	if op, lt, rt, ok := arithOperands(msg); ok {
		return vm.rewordArith(c, line, op, lt, rt)
	}
	return msg
}

func (vm *VM) rewordCall(c *parse.Chunk, line int) string {
	ix := exprsOf(c)
	sites := at(ix.calls, line)
	for _, s := range sites {
		v, ok := vm.lookup(ix, s.path)
		if !ok || v.Type() == lua.LTFunction || vm.L.GetMetaField(v, "__call").Type() == lua.LTFunction {
			continue
		}
		name := joinPath(s.path, s.method)
		if len(s.path) == 1 {
			if v == lua.LNil {
				return fmt.Sprintf("attempt to call a nil value (global `%s`)", name)
			}
			return fmt.Sprintf("attempt to call a %s value (global `%s`)", typeName(v), name)
		}
		parent, _ := vm.lookup(ix, s.path[:len(s.path)-1])
		if t, isTable := parent.(*lua.LTable); isTable && v == lua.LNil {
			return fmt.Sprintf("%s has no member %q; members: %s", strings.Join(s.path[:len(s.path)-1], "."), s.path[len(s.path)-1], members(t))
		}
		return fmt.Sprintf("attempt to call a %s value (`%s`)", typeName(v), name)
	}
	if len(sites) == 1 && sites[0].path != nil {
		return fmt.Sprintf("attempt to call `%s`, which is not a function", joinPath(sites[0].path, sites[0].method))
	}
	return "attempt to call a value that is not a function"
}

// maxMembers is how many member names a message lists.
const maxMembers = 30

// members lists a table's string keys, sorted.
func members(t *lua.LTable) string {
	var names []string
	t.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok && !strings.HasPrefix(string(s), "__") {
			names = append(names, string(s))
		}
	})
	slices.Sort(names)
	if len(names) == 0 {
		return "none"
	}
	if len(names) > maxMembers {
		names = append(names[:maxMembers], "...")
	}
	return strings.Join(names, ", ")
}

func (vm *VM) rewordLen(c *parse.Chunk, line int) string {
	ix := exprsOf(c)
	sites := at(ix.lens, line)
	for _, s := range sites {
		v, ok := vm.lookup(ix, s.path)
		if !ok {
			continue
		}
		switch v.(type) {
		case lua.LString, *lua.LTable:
			continue
		}
		if vm.L.GetMetaField(v, "__len").Type() == lua.LTFunction {
			continue
		}
		return fmt.Sprintf("attempt to get the length of a %s value (`%s`)", typeName(v), joinPath(s.path, false))
	}
	if len(sites) == 1 && sites[0].path != nil {
		return fmt.Sprintf("attempt to get the length of `%s`, which is neither a string nor a table", joinPath(sites[0].path, false))
	}
	return "attempt to get the length of a value that is neither a string nor a table"
}

func (vm *VM) rewordArith(c *parse.Chunk, line int, op, lt, rt string) string {
	sym := arithOp(op)
	bad := lt
	if lt == "number" || lt == "string" {
		bad = rt
	}
	if name := vm.operand(c, line, sym, bad); name != "" {
		return fmt.Sprintf("attempt to perform arithmetic (%s) on a %s value (`%s`)", sym, bad, name)
	}
	return fmt.Sprintf("attempt to perform arithmetic (%s) on a %s value", sym, bad)
}

// operand names the first operand of an op expression on line whose value
// has type typ, or "".
func (vm *VM) operand(c *parse.Chunk, line int, op, typ string) string {
	ix := exprsOf(c)
	for _, s := range at(ix.ariths, line) {
		if s.op != op {
			continue
		}
		if v, ok := vm.lookup(ix, s.path); ok && v.Type().String() == typ {
			return joinPath(s.path, false)
		}
	}
	return ""
}

// rewordMessage rewords the interpreter message behind the first
// "<label>:<n>: " marker of chunk c in msg, n being a chunk line.
func (vm *VM) rewordMessage(msg string, c *parse.Chunk) string {
	if c == nil {
		return msg
	}
	i := markerAt(msg, c.Name)
	if i < 0 {
		return msg
	}
	rest := msg[i+len(c.Name)+1:]
	j := strings.IndexByte(rest, ':')
	n, err := strconv.Atoi(rest[:j])
	if err != nil || !strings.HasPrefix(rest[j:], ": ") {
		return msg
	}
	body := rest[j+2:]
	if w := vm.reword(body, c, n); w != body {
		return msg[:len(msg)-len(body)] + w
	}
	return msg
}

type returnLineKey struct{}

// returnLine is the file line of chunk c's return statement when it has
// exactly one outside nested functions, else 0.
func returnLine(c *parse.Chunk) int {
	if v, ok := c.Memo(returnLineKey{}).(int); ok {
		if v == 0 {
			return 0
		}
		return c.FirstLine + v - 1
	}
	line := 0
	if stmts, err := luaparse.Parse(strings.NewReader(c.Source), c.Name); err == nil {
		n := 0
		luaast.Inspect(stmts, func(node any) bool {
			switch x := node.(type) {
			case *ast.FunctionExpr:
				return false
			case *ast.ReturnStmt:
				n++
				line = x.Line()
			}
			return true
		})
		if n != 1 {
			line = 0
		}
	}
	c.SetMemo(returnLineKey{}, line)
	if line == 0 {
		return 0
	}
	return c.FirstLine + line - 1
}

type varAssignKey struct{}

// varAssignLine is the file line of chunk c's first assignment to the
// global `var` (`var = ...`), or 0.
func varAssignLine(c *parse.Chunk) int {
	line, ok := c.Memo(varAssignKey{}).(int)
	if !ok {
		if stmts, err := luaparse.Parse(strings.NewReader(c.Source), c.Name); err == nil {
			luaast.Inspect(stmts, func(node any) bool {
				if a, isAssign := node.(*ast.AssignStmt); isAssign && line == 0 {
					for _, lhs := range a.Lhs {
						if id, isIdent := lhs.(*ast.IdentExpr); isIdent && id.Value == "var" {
							line = a.Line()
						}
					}
				}
				return line == 0
			})
		}
		c.SetMemo(varAssignKey{}, line)
	}
	if line == 0 {
		return 0
	}
	return c.FirstLine + line - 1
}
