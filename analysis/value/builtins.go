package value

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/luaast"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/yuin/gopher-lua/ast"
)

// readers are the host and library functions that never change a table
// passed to them and never run Lua code of the prompt, so a call keeps
// what the interpreter knows (locals' table shapes, globals, var).
func reader(name string) bool {
	switch name {
	case "log", "tostring", "tonumber", "type", "untrusted", "ipairs", "pairs", "next", "select", "unpack",
		"table.concat", "rawlen", "rawget", "rawequal", "execute", "fanout", "list_from_section", "jump", "error", "assert":
		return true
	}
	for _, p := range []string{"string.", "math.", "store.", "os.", "tools.", "models.use", "models.get", "models.bind", "models.default"} {
		if strings.HasPrefix(name, p) && name != "string.gsub" {
			return true
		}
	}
	return false
}

var (
	paramsOnce sync.Once
	paramsOf   map[string][]api.Param
)

// params returns the declared parameters of a host or library entry.
func params(name string) []api.Param {
	paramsOnce.Do(func() {
		paramsOf = map[string][]api.Param{}
		for _, e := range api.All() {
			if e.IsFunc() {
				paramsOf[e.Name] = e.Params()
			}
		}
	})
	return paramsOf[name]
}

// call interprets a call: the callee, the arguments (recorded for the
// rules), and the result of the functions it models. A call of a known
// Lua function is evaluated at its site (inline).
func (in *interp) call(e *ast.FuncCallExpr) Value {
	in.work++
	if e.Receiver != nil {
		recv := in.expr(e.Receiver)
		if recv.T != Any && recv.T&(String|Table|Other) == 0 {
			in.op(e.Receiver, "attempt to index a "+recv.T.String()+" value", e.Receiver)
		}
		if v, ok := in.method(e, recv); ok {
			return v
		}
		args, start := in.args(e, false, false, false)
		defer in.pop(start)
		if recv.Builtin == "Model" && e.Method == "infer" && len(args) > 1 {
			if rv, ok := args[1].Rules(); ok {
				if err := rules.ModelInferArgs(rv); err != nil {
					in.opCode(e.Args[1], "bad-argument", err.Error())
				}
			}
		}
		if recv.T == String && !stringMethods[e.Method] {
			// A string's methods are the string library's: any other
			// name is nil there.
			in.op(e, "attempt to call a nil value (method '"+e.Method+"')", nil)
		}
		if recv.T == String {
			if e.Method == "format" {
				in.formatOps(recv, args, e.Args, 2, openArgs(e.Args))
			}
			in.stdlibOps("string."+e.Method, append([]Value{recv}, args...), append([]ast.Expr{e.Receiver}, e.Args...), e, openArgs(e.Args))
			return fold("string."+e.Method, append([]Value{recv}, args...))
		}
		in.escape(e.Receiver, recv, false)
		in.forget()
		return Top
	}
	fn := in.expr(e.Func)
	if fn.T != Any && (fn.T&(Function|Table|Other) == 0 || failing(fn, Function|Other)) {
		in.op(e.Func, "attempt to call a "+fn.T.String()+" value", e.Func)
	}
	if in.canInline(fn) {
		args, start := in.args(e, true, false, false)
		defer in.pop(start)
		r := in.inline(e, fn, args)
		fi := in.info(fn.Fn)
		for i, a := range e.Args {
			if i >= len(fi.mutates) && fn.Fn.ParList.HasVargs || i < len(fi.mutates) && fi.mutates[i] {
				in.escape(a, args[i], false)
			}
		}
		return r
	}
	name := ""
	if fn.T == Function {
		name = fn.Builtin
	}
	args, start := in.args(e, reader(name), name == "table.insert", recorded(name))
	defer in.pop(start)
	for _, a := range args {
		if a.T == Function && a.Fn != nil {
			// A function handed to code the interpreter does not follow
			// (a tool handler, pcall, a callback) may be called with any
			// arguments.
			if in.escaped == nil {
				in.escaped = map[*ast.FunctionExpr]bool{}
			}
			in.escaped[a.Fn] = true
		}
	}
	if name != "" {
		for i, p := range params(name) {
			if i < len(e.Args) && p.Type == "string" && !p.Optional {
				in.varRead(e.Args[i], "pass nil to "+name)
			}
		}
	}
	if name == "string.format" && len(args) > 0 {
		in.formatOps(args[0], args[1:], e.Args[1:], 2, openArgs(e.Args))
	}
	in.stdlibOps(name, args, e.Args, e, openArgs(e.Args))
	// Control first: a chain or an arm starts from the var and the store
	// as they are before the call (store drops what the call may change).
	in.control(name, args)
	if v, ok := in.store(e, name, args); ok {
		return v
	}
	switch name {
	case "table.insert":
		in.tableInsert(e, args)
	case "table.remove", "table.sort", "setmetatable", "rawset":
		if len(e.Args) > 0 {
			in.escape(e.Args[0], in.expr(e.Args[0]), false)
		}
	}
	if name == "ipairs" || name == "pairs" {
		in.iterArg(e, name, args)
	}
	switch {
	case name == "":
		in.forget()
	case !reader(name) && name != "table.insert":
		in.forgetEffects()
	}
	if name == "fanout" {
		return fanoutResult(args)
	}
	return fold(name, args)
}

// recorded reports whether the arguments of a call of name are kept in
// the facts: those of the functions whose rules the analyzers check.
func recorded(name string) bool {
	switch name {
	case "fanout", "models.bind", "models.default", "jump", "pcall", "list_from_section", "execute":
		return true
	}
	return rules.ArgTypes[name] != nil
}

// args evaluates a call's arguments onto the interpreter's stack and
// records them when rec; keep is true for a reader (see escape),
// keepFirst for a call that changes its first argument in a way
// tableInsert follows. pop(start) frees the stack.
func (in *interp) args(e *ast.FuncCallExpr, keep, keepFirst, rec bool) ([]Value, int) {
	start := len(in.stack)
	for i, a := range e.Args {
		v := in.escape(a, in.expr(a), keep || keepFirst && i == 0)
		in.stack = append(in.stack, v)
	}
	out := in.stack[start:len(in.stack):len(in.stack)]
	if in.record && rec {
		in.recordArgs(e, out)
		in.recordSite(e, out)
	}
	return out, start
}

// recordArgs adds one evaluation of call e's arguments to the facts.
func (in *interp) recordArgs(e *ast.FuncCallExpr, vals []Value) {
	if in.argAt == nil {
		in.argAt = map[*ast.FuncCallExpr]int32{}
	}
	i, ok := in.argAt[e]
	if !ok {
		i = int32(len(in.recs))
		in.argAt[e] = i
		in.recs = append(in.recs, callRec{call: e})
		if n := len(in.ctx); n > 0 {
			in.recs[i].owner = in.ctx[n-1].fn
		}
	}
	r := &in.recs[i].argRec
	exact := len(in.ctx) == 0 || in.ctx[len(in.ctx)-1].exact
	switch {
	case exact && !r.hasExact:
		r.exact, r.hasExact = clone(vals), true
		if r.exact == nil {
			r.exact = []Value{}
		}
		// One evaluation is its own view: each is made when a second
		// comes (most calls have one, and keep one copy).
		r.views = 1
	case exact:
		switch {
		case r.views == 1:
			r.each = [][]Value{clone(r.exact), clone(vals)}
			r.views = 2
			in.f.multi = true
		case r.views > 1 && len(r.each) < maxViews:
			r.each = append(r.each, clone(vals))
		default:
			r.each, r.views = nil, -1
		}
		r.exact = joinArgs(r.exact, vals)
	case !r.hasGeneric:
		r.generic, r.hasGeneric = clone(vals), true
	default:
		r.generic = joinArgs(r.generic, vals)
	}
}

func (in *interp) pop(start int) { in.stack = in.stack[:start] }

// tableInsert appends to a local table's known array part.
func (in *interp) tableInsert(e *ast.FuncCallExpr, args []Value) {
	if len(e.Args) == 0 {
		return
	}
	id, ok := e.Args[0].(*ast.IdentExpr)
	if !ok {
		a, isAttr := e.Args[0].(*ast.AttrGetExpr)
		switch r := rootName(e.Args[0]); {
		case !isAttr || r == "":
		case r == "var":
			if k, isStr := a.Key.(*ast.StringExpr); isStr {
				in.ownGlobals().del("var." + k.Value)
			}
		default:
			if in.insertField(a, args) {
				return
			}
			// A table in a field (report.items): what holds it changes,
			// which its shape does not follow.
			if i := in.lookup(r); i >= 0 {
				in.dropAliasesIn(in.vals[i].Shape)
				in.vals[i].Shape = nil
			} else if g, ok := in.globals.get(r); ok {
				in.dropAliasesIn(g.Shape)
				in.ownGlobals().del(r)
			}
		}
		return
	}
	i := in.lookup(id.Value)
	if i < 0 {
		if g, ok := in.globals.get(id.Value); ok {
			in.dropAliasesIn(g.Shape)
		}
		in.ownGlobals().del(id.Value)
		return
	}
	t := in.vals[i]
	if t.Shape == nil {
		return
	}
	in.dropAliases(t.Shape)
	if len(args) != 2 || args[1].T&Nil != 0 || len(t.Shape.Fields) > 0 {
		in.vals[i].Shape = nil
		return
	}
	s := &Shape{Fields: t.Shape.Fields, Array: append(append([]Value(nil), t.Shape.Array...), args[1])}
	in.vals[i].Shape = s
}

// fold returns the result of a known function on abstract arguments:
// the pure string functions on constants, and the result types of the
// host functions.
func fold(name string, a []Value) Value {
	arg := func(i int) Value {
		if i < len(a) {
			return a[i]
		}
		return NilValue
	}
	switch name {
	case "":
		return Top
	case "tostring":
		v := arg(0)
		if s, ok := v.StrConst(); ok {
			return Str(s)
		}
		switch {
		case v.T == Nil:
			return Str("nil")
		case v.T == Boolean && v.Const:
			return Str(fmt.Sprint(v.Bool))
		}
		return AString
	case "tonumber":
		if n, ok := arg(0).NumConst(); ok && len(a) == 1 {
			return Num(n)
		}
		return Value{T: Number | Nil}
	case "type":
		if t := arg(0).TypeName(); t != "" {
			return Str(t)
		}
		return AString
	case "string.len":
		if s, ok := arg(0).StrConst(); ok {
			return Num(float64(len(s)))
		}
		return ANumber
	case "string.upper", "string.lower":
		if s, ok := arg(0).StrConst(); ok {
			if name == "string.upper" {
				return Str(strings.ToUpper(s))
			}
			return Str(strings.ToLower(s))
		}
		return AString
	case "string.rep":
		s, ok1 := arg(0).StrConst()
		n, ok2 := arg(1).NumConst()
		if ok1 && ok2 && len(a) == 2 && n == math.Trunc(n) {
			if n <= 0 {
				return Str("")
			}
			if float64(len(s))*n <= maxConst {
				return Str(strings.Repeat(s, int(n)))
			}
		}
		return AString
	case "string.sub":
		return sub(a)
	case "string.format":
		return format(a)
	case "table.concat":
		return concat(a)
	case "untrusted", "store.read", "store.read_numbered", "string.char", "string.reverse", "string.gsub", "os.date":
		return AString
	case "store.exists":
		return ABoolean
	case "models.bind", "models.default", "models.use", "models.get":
		// A model handle (userdata): its methods are known by name.
		return Value{T: Other, Builtin: "Model"}
	case "store.glob", "list_from_section", "fanout":
		return ATable
	}
	if strings.HasPrefix(name, "math.") {
		return ANumber
	}
	return Top
}

// sub is string.sub on constants (Lua 5.1's index rules).
func sub(a []Value) Value {
	if len(a) < 2 || len(a) > 3 {
		return AString
	}
	s, ok := a[0].StrConst()
	i, ok2 := a[1].NumConst()
	j := -1.0
	ok3 := true
	if len(a) == 3 {
		j, ok3 = a[2].NumConst()
	}
	if !ok || !ok2 || !ok3 || i != math.Trunc(i) || j != math.Trunc(j) {
		return AString
	}
	n := float64(len(s))
	if i < 0 {
		i = math.Max(n+i+1, 1)
	} else if i == 0 {
		i = 1
	}
	if j < 0 {
		j = n + j + 1
	} else if j > n {
		j = n
	}
	if i > j {
		return Str("")
	}
	return Str(s[int(i)-1 : int(j)])
}

// format is string.format for %s, %d and %% on constants.
func format(a []Value) Value {
	if len(a) == 0 {
		return AString
	}
	f, ok := a[0].StrConst()
	if !ok || a[0].T != String {
		return AString
	}
	var b strings.Builder
	k := 1
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		if i+1 >= len(f) {
			return AString
		}
		i++
		switch f[i] {
		case '%':
			b.WriteByte('%')
		case 's':
			if k >= len(a) {
				return AString
			}
			s, ok := a[k].StrConst()
			if !ok {
				return AString
			}
			b.WriteString(s)
			k++
		case 'd':
			if k >= len(a) {
				return AString
			}
			n, ok := a[k].NumConst()
			if !ok || n != math.Trunc(n) {
				return AString
			}
			fmt.Fprintf(&b, "%d", int64(n))
			k++
		default:
			return AString
		}
		if b.Len() > maxConst {
			return AString
		}
	}
	return Str(b.String())
}

// concat is table.concat of a known array of constants.
func concat(a []Value) Value {
	if len(a) == 0 || len(a) > 2 || a[0].T != Table || a[0].Shape == nil {
		return AString
	}
	sep := ""
	if len(a) == 2 {
		s, ok := a[1].StrConst()
		if !ok {
			return AString
		}
		sep = s
	}
	parts := make([]string, len(a[0].Shape.Array))
	n := 0
	for i, v := range a[0].Shape.Array {
		s, ok := v.StrConst()
		if !ok {
			return AString
		}
		parts[i] = s
		n += len(s) + len(sep)
	}
	if n > maxConst {
		return AString
	}
	return Str(strings.Join(parts, sep))
}

// arith folds a constant arithmetic operation.
func arith(op string, a, b float64) (float64, bool) {
	var r float64
	switch op {
	case "+":
		r = a + b
	case "-":
		r = a - b
	case "*":
		r = a * b
	case "/":
		r = a / b
	case "%":
		r = a - math.Floor(a/b)*b
	case "^":
		r = math.Pow(a, b)
	default:
		return 0, false
	}
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, false
	}
	return r, true
}

// inspect visits the nodes of statements (a local alias, so the
// interpreter's helpers read as one file).
func inspect(stmts []ast.Stmt, f func(any) bool) { luaast.Inspect(stmts, f) }

// storeKey is the known-globals entry of a store path's contents.
const storeKey = "store:"

// store follows the store's contents within the chunk: writes of known
// text to a known path make the file's contents known until something
// that may change the store runs (any call the interpreter does not
// model, an execute chain, a fanout, an inference). A str_replace whose
// anchor occurs zero times or more than once in known contents, or a
// read whose line range ends before it starts, fails for certain.
func (in *interp) store(e *ast.FuncCallExpr, name string, a []Value) (Value, bool) {
	arg := func(i int) Value {
		if i < len(a) {
			return a[i]
		}
		return NilValue
	}
	switch name {
	case "execute", "fanout", "models.infer":
		in.dropStore()
		return Value{}, false
	case "store.write", "store.append", "store.delete", "store.read", "store.str_replace":
	default:
		return Value{}, false
	}
	p, ok := arg(0).StrConst()
	if !ok {
		if name != "store.read" {
			in.dropStore()
		}
		return Value{}, false
	}
	cur, known := in.globals.get(storeKey + p)
	text, isConst := cur.StrConst()
	isConst = known && isConst
	switch name {
	case "store.write":
		if d, ok := arg(1).StrConst(); ok && len(d) <= maxConst {
			in.ownGlobals().set(storeKey+p, Str(d))
		} else {
			in.ownGlobals().del(storeKey + p)
		}
	case "store.append":
		d, ok := arg(1).StrConst()
		if isConst && ok && len(text)+len(d) <= maxConst {
			in.ownGlobals().set(storeKey+p, Str(text+d))
		} else {
			in.ownGlobals().del(storeKey + p)
		}
	case "store.delete":
		in.ownGlobals().del(storeKey + p)
	case "store.read":
		if !isConst {
			return Value{}, false
		}
		if len(e.Args) == 1 {
			return Str(text), true
		}
		first, ok1 := arg(1).NumConst()
		last, ok2 := arg(2).NumConst()
		if ok1 && ok2 && len(e.Args) == 3 && int64(first) >= 1 && int64(first) <= int64(lineCount(text)) && int64(last) < int64(first) {
			in.op(e.Args[2], "invalid line range for "+p+": end must not be before start", nil)
		}
		return AString, true
	case "store.str_replace":
		old, ok := arg(1).StrConst()
		if !isConst || !ok || old == "" || len(e.Args) < 2 {
			in.ownGlobals().del(storeKey + p)
			return Value{}, false
		}
		// A replace that fails leaves the file as it was.
		switch n := strings.Count(text, old); n {
		case 0:
			in.op(e.Args[1], "anchor not found in "+p, nil)
		case 1:
			if nw, ok := arg(2).StrConst(); ok && len(text)+len(nw) <= maxConst {
				in.ownGlobals().set(storeKey+p, Str(strings.Replace(text, old, nw, 1)))
				return Value{}, false
			}
			in.ownGlobals().del(storeKey + p)
		default:
			in.op(e.Args[1], fmt.Sprintf("anchor occurs %d times in %s, expected exactly one", n, p), nil)
		}
	}
	return Value{}, false
}

// dropStore forgets every known store content.
func (in *interp) dropStore() {
	out := in.reuseGlobals()
	for _, g := range in.globals {
		if !strings.HasPrefix(g.name, storeKey) {
			out = append(out, g)
		}
	}
	in.globals = out
}

// lineCount is the number of lines of a store file's text
// (docs/language.md#line-ranges: a final newline adds none).
func lineCount(d string) int {
	if d == "" {
		return 0
	}
	n := strings.Count(d, "\n")
	if !strings.HasSuffix(d, "\n") {
		n++
	}
	return n
}

// stringMethods are the string library's functions, which a string's
// methods are (the VM's string table: TestStringMethodsMatchRuntime).
var stringMethods = map[string]bool{"byte": true, "char": true, "dump": true, "find": true, "format": true,
	"gfind": true, "gmatch": true, "gsub": true, "len": true, "lower": true, "match": true, "rep": true,
	"reverse": true, "sub": true, "upper": true}

// insertField is table.insert(t.f, x) on a table t (a local or a known
// global) whose field f holds a list of known shape: f's list gains x,
// in t's shape. It reports false when the shapes cannot follow (then t
// loses its shape).
func (in *interp) insertField(a *ast.AttrGetExpr, args []Value) bool {
	id, ok := a.Object.(*ast.IdentExpr)
	k, isStr := a.Key.(*ast.StringExpr)
	if !ok || !isStr || id.Value == "var" || len(args) != 2 || args[1].T&Nil != 0 || args[1].T == Any {
		return false
	}
	i := in.lookup(id.Value)
	var t Value
	if i >= 0 {
		t = in.vals[i]
	} else if g, ok := in.globals.get(id.Value); ok {
		t = g
	} else {
		return false
	}
	if t.T != Table || t.Shape == nil {
		return false
	}
	f, ok := t.Shape.Get(k.Value)
	if !ok || f.T != Table || f.Shape == nil || len(f.Shape.Fields) > 0 {
		return false
	}
	in.dropAliasesIn(t.Shape) // whoever else holds t or its list
	f.Shape = &Shape{Array: append(append([]Value(nil), f.Shape.Array...), args[1])}
	t.Shape = t.Shape.store(Str(k.Value), f)
	if t.Shape == nil {
		return false
	}
	if i >= 0 {
		in.vals[i] = t
	} else {
		in.ownGlobals().set(id.Value, t)
	}
	return true
}
