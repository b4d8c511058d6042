package run

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/api"
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
	// key is the key of an index (`a.b["k"]` has path a.b and key k).
	key string
	// args are the name paths of a call's arguments (nil entries for
	// arguments that are not plain name paths).
	args [][]string
}

// exprIndex lists a chunk's calls, `#` operands and the operands of
// arithmetic and concatenation (ariths, by operator).
type exprIndex struct {
	calls, lens, ariths, indexes []exprSite
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
				ix.indexes = append(ix.indexes, exprSite{first: x.Line(), last: x.LastLine(), path: namePath(x.Receiver), key: x.Method})
			} else {
				s.path = namePath(x.Func)
			}
			for _, a := range x.Args {
				s.args = append(s.args, namePath(a))
			}
			ix.calls = append(ix.calls, s)
		case *ast.AttrGetExpr:
			if k, ok := x.Key.(*ast.StringExpr); ok {
				ix.indexes = append(ix.indexes, exprSite{first: x.Line(), last: x.LastLine(), path: namePath(x.Object), key: k.Value})
			}
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

// maxUnwindLocals bounds the locals and upvalues unwinding records.
const maxUnwindLocals = 200

// unwinding records the locals and upvalues of the innermost Lua function
// on the stack when an error is raised (sandbox.Options.Unwinding), so
// that the message can name a local's value (`#t` on a nil local says
// so). Later locals of the same name shadow earlier ones, as in Lua.
// A VM that is cancelled or out of a quota records nothing: its error is
// the cancellation or the quota (mapLuaError), whose message names no
// local, and a debugger cancels a replaced run this way at every re-run.
func (vm *VM) unwinding(L *lua.LState, _ lua.LValue) {
	vm.failLocals = nil
	if vm.sb.Cancelled() || vm.ctx.Err() != nil || vm.sb.Quota() != nil || vm.r.budget.Quota() != nil {
		return
	}
	for level := 1; level < 16; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return
		}
		f, err := L.GetInfo("fS", dbg, lua.LNil)
		fn, isFn := f.(*lua.LFunction)
		if err != nil || !isFn || fn.IsG || dbg.What == "G" {
			continue
		}
		locals := map[string]lua.LValue{}
		p := fn.Proto
		if p == nil {
			return
		}
		for i, name := range p.DbgUpvalues {
			if i < len(fn.Upvalues) && i < maxUnwindLocals {
				locals[name] = fn.Upvalues[i].Value()
			}
		}
		// The active locals at the failing instruction, in register
		// order. gopher-lua's own LState.GetLocal misses a local declared
		// by the instruction just before (its LocalName compares StartPc
		// with < where Lua uses <=), so the names are found here and
		// GetLocal only reads the registers.
		pc, ok := framePC(dbg)
		if !ok {
			return
		}
		regno := 0
		for _, lv := range p.DbgLocals {
			if lv.StartPc > pc || regno >= maxUnwindLocals {
				break
			}
			if pc < lv.EndPc {
				regno++
				if _, v := L.GetLocal(dbg, regno); !strings.HasPrefix(lv.Name, "(") {
					locals[lv.Name] = v
				}
			}
		}
		vm.failLocals = locals
		return
	}
}

// framePC is the index of the instruction a stack level is at (gopher-lua
// keeps it in an unexported field of the frame, which reflect can read).
func framePC(dbg *lua.Debug) (int, bool) {
	fi, pci := framePCFields()
	if fi == nil || pci == nil {
		return 0, false
	}
	f := reflect.ValueOf(dbg).Elem().FieldByIndex(fi)
	if f.IsNil() {
		return 0, false
	}
	return int(f.Elem().FieldByIndex(pci).Int()) - 1, true
}

// framePCFields are the indexes of lua.Debug's frame and of the frame's
// Pc, found once (FieldByName walks the fields each call); nil when this
// gopher-lua has no such fields.
var framePCFields = sync.OnceValues(func() ([]int, []int) {
	f, ok := reflect.TypeFor[lua.Debug]().FieldByName("frame")
	if !ok || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
		return nil, nil
	}
	pc, ok := f.Type.Elem().FieldByName("Pc")
	if !ok || !pc.Type.ConvertibleTo(reflect.TypeFor[int64]()) {
		return nil, nil
	}
	switch pc.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
	default:
		return nil, nil
	}
	return f.Index, pc.Index
})

// lookup returns the value of path in the VM's globals (or, for a path
// rooted at a local, in the locals recorded when the error was raised),
// with ok false when it cannot be known (a local not recorded, or a lookup
// that fails).
func (vm *VM) lookup(ix *exprIndex, path []string) (v lua.LValue, ok bool) {
	if len(path) == 0 {
		return lua.LNil, false
	}
	root, isLocal := lua.LValue(nil), false
	if ix.locals[path[0]] {
		if root, isLocal = vm.failLocals[path[0]]; !isLocal {
			return lua.LNil, false
		}
	}
	L := vm.L
	top := L.GetTop()
	defer L.SetTop(top)
	fn := L.NewFunction(func(L *lua.LState) int {
		v := L.GetGlobal(path[0])
		if isLocal {
			v = root
		}
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
	if typ, key, ok := indexOperands(msg); ok {
		return vm.rewordIndex(c, line, typ, key)
	}
	if n, fn, want, got, ok := badArgument(msg); ok {
		return vm.rewordArgument(c, line, n, fn, want, got)
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
		if ix.locals[s.path[0]] {
			what := "local"
			if s.method {
				what = "method"
			} else if len(s.path) > 1 {
				what = "field"
			}
			return fmt.Sprintf("attempt to call a %s value (%s `%s`)", typeName(v), what, name)
		}
		if len(s.path) == 1 {
			if v == lua.LNil {
				return fmt.Sprintf("attempt to call a nil value (global `%s`)", name) + oldNote(s.path)
			}
			return fmt.Sprintf("attempt to call a %s value (global `%s`)", typeName(v), name)
		}
		parent, _ := vm.lookup(ix, s.path[:len(s.path)-1])
		if t, isTable := parent.(*lua.LTable); isTable && v == lua.LNil {
			if note := oldNote(s.path); note != "" {
				return fmt.Sprintf("attempt to call a nil value (`%s`)", name) + note
			}
			return fmt.Sprintf("%s has no member %q; members: %s", strings.Join(s.path[:len(s.path)-1], "."), s.path[len(s.path)-1], members(t))
		}
		return fmt.Sprintf("attempt to call a %s value (`%s`)", typeName(v), name) + oldNote(s.path)
	}
	if len(sites) == 1 && sites[0].path != nil {
		return fmt.Sprintf("attempt to call `%s`, which is not a function", joinPath(sites[0].path, sites[0].method))
	}
	return "attempt to call a value that is not a function"
}

// oldNote explains a name path upstream removed or renamed (`tasks`,
// `store.read_lines`, docs/migration.md): such names are nil at run time,
// as upstream has them, and a call or index of one fails with this note
// naming the replacement. It is "" for any other path.
func oldNote(path []string) string {
	if len(path) == 0 {
		return ""
	}
	for _, p := range []string{strings.Join(path, "."), path[0]} {
		if o, ok := api.LookupOld(p); ok && (o.Kind == api.OldGlobal || o.Kind == api.OldMember) {
			return ": " + api.OldMessage(o)
		}
	}
	return ""
}

// indexOperands splits gopher-lua's "attempt to index a non-table
// object(<type>) with key '<key>'".
func indexOperands(msg string) (typ, key string, ok bool) {
	rest, ok := strings.CutPrefix(msg, "attempt to index a non-table object(")
	if !ok {
		return "", "", false
	}
	typ, rest, ok = strings.Cut(rest, ") with key '")
	if !ok || !strings.HasSuffix(rest, "'") {
		return "", "", false
	}
	return typ, strings.TrimSuffix(rest, "'"), true
}

// rewordIndex names the expression that was indexed and its value's type:
// "attempt to index a nil value (`doc.meta`) with key 'segments'".
func (vm *VM) rewordIndex(c *parse.Chunk, line int, typ, key string) string {
	ix := exprsOf(c)
	sites := at(ix.indexes, line)
	for _, s := range sites {
		if s.key != key || s.path == nil {
			continue
		}
		if v, ok := vm.lookup(ix, s.path); ok && v.Type().String() == typ {
			return fmt.Sprintf("attempt to index a %s value (`%s`) with key %q", typ, joinPath(s.path, false), key) + oldNote(s.path)
		}
	}
	var named []exprSite
	for _, s := range sites {
		if s.key == key && s.path != nil {
			named = append(named, s)
		}
	}
	if len(named) == 1 && !ix.locals[named[0].path[0]] {
		return fmt.Sprintf("attempt to index a %s value (`%s`) with key %q", typ, joinPath(named[0].path, false), key) + oldNote(named[0].path)
	}
	return fmt.Sprintf("attempt to index a %s value with key %q", typ, key)
}

// badArgument splits gopher-lua's "bad argument #<n> to <fn> (<want>
// expected, got <got>)".
func badArgument(msg string) (n int, fn, want, got string, ok bool) {
	rest, ok := strings.CutPrefix(msg, "bad argument #")
	if !ok {
		return 0, "", "", "", false
	}
	num, rest, ok1 := strings.Cut(rest, " to ")
	fn, rest, ok2 := strings.Cut(rest, " (")
	want, got, ok3 := strings.Cut(strings.TrimSuffix(rest, ")"), " expected, got ")
	n, err := strconv.Atoi(num)
	if !ok1 || !ok2 || !ok3 || err != nil || !strings.HasSuffix(rest, ")") || strings.ContainsAny(got, " ()") {
		return 0, "", "", "", false
	}
	return n, fn, want, got, true
}

// rewordArgument names the function and the argument expression of a bad
// argument: "bad argument #1 to `ipairs` (table expected, got nil from
// `items`)" instead of "bad argument #1 to (anonymous) (...)".
func (vm *VM) rewordArgument(c *parse.Chunk, line, n int, fn, want, got string) string {
	ix := exprsOf(c)
	sites := at(ix.calls, line)
	name := func(s exprSite) string {
		if s.path == nil {
			return fn
		}
		return "`" + joinPath(s.path, s.method) + "`"
	}
	for _, s := range sites {
		i := n - 1
		if s.method {
			i-- // argument #1 is the receiver
		}
		if i < 0 || i >= len(s.args) || s.args[i] == nil {
			continue
		}
		if fn != "(anonymous)" && s.path != nil && s.path[len(s.path)-1] != strings.Trim(fn, "'") {
			continue
		}
		if v, ok := vm.lookup(ix, s.args[i]); ok && v.Type().String() == got {
			return fmt.Sprintf("bad argument #%d to %s (%s expected, got %s from `%s`)", n, name(s), want, got, joinPath(s.args[i], false)) + oldNote(s.args[i])
		}
	}
	var named []exprSite
	for _, s := range sites {
		if s.path != nil && len(s.args) >= n {
			named = append(named, s)
		}
	}
	if fn == "(anonymous)" && len(named) == 1 {
		return fmt.Sprintf("bad argument #%d to %s (%s expected, got %s)", n, name(named[0]), want, got)
	}
	return fmt.Sprintf("bad argument #%d to %s (%s expected, got %s)", n, fn, want, got)
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
