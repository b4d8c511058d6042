package value

import (
	"strconv"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// Facts are what the interpreter learns from one chunk. They depend on
// the chunk's AST alone, so they are memoised on the parser's chunk
// (Of): an edit re-interprets only the chunks that changed.
type Facts struct {
	ast0 ast.Stmt
	// args are the argument values at each call (nil when the call was
	// never interpreted, as in a chunk with goto).
	args map[*ast.FuncCallExpr][]Value
	// Ops are the operations that fail whenever they run, in source
	// order.
	Ops []Op
	// VarReads are the reads of var.<key> whose value must not be nil at
	// that point (an operand, or an argument a rule checks), in source
	// order, with whether the chunk wrote the key before on every path.
	VarReads []VarRead
	// VarWrites are the var keys the chunk may write at top level
	// (outside functions), in first-write order.
	VarWrites []string
	// VarWhole is true when the chunk uses var as a whole in a way that
	// may write any key (passes it to a function that may change it,
	// indexes it with a computed key, replaces it), or its code was not
	// followed.
	VarWhole bool
}

// Op is an operation that fails whenever it runs: a `..`, arithmetic,
// `#`, index or call on a value of a type the operation refuses.
type Op struct {
	Expr ast.Expr
	// Msg is the engine's error text ("attempt to concatenate a nil
	// value"), and What names the operand ("local suffix").
	Msg, What string
	// InFunc is true inside a function body (it fails when the function
	// runs).
	InFunc bool
	// Code is the diagnostic code when it is not bad-operand (a method
	// argument the engine refuses: bad-argument).
	Code string
}

// VarRead is a read of var.<Key> that fails when the key is unset.
type VarRead struct {
	Key  string
	Expr ast.Expr
	// Use says what fails: "concatenate", "perform arithmetic on", ...
	Use string
	// Written is true when the chunk itself wrote the key before the
	// read on every path.
	Written bool
	InFunc  bool
	// Cond is true when the read runs only under a condition (an if
	// arm, a loop body, the right side of and/or).
	Cond bool
	// MayBefore is true when code of the chunk that may run before the
	// read (earlier, or later in an enclosing loop, or in a function
	// defined before it) may write the key, or var as a whole.
	MayBefore bool
}

// Args returns the values of a call's arguments, one per written
// argument (a trailing multi-value call or ... is Top), and ok false
// when the call was not interpreted.
func (f *Facts) Args(call *ast.FuncCallExpr) ([]Value, bool) {
	if f == nil {
		return nil, false
	}
	a, ok := f.args[call]
	return a, ok
}

// Arg returns argument i of a call: Top when unknown, nil when absent.
func (f *Facts) Arg(call *ast.FuncCallExpr, i int) Value {
	a, ok := f.Args(call)
	if !ok {
		return Top
	}
	if i < len(a) {
		return a[i]
	}
	if n := len(call.Args); n > 0 {
		switch call.Args[n-1].(type) {
		case *ast.FuncCallExpr, *ast.Comma3Expr:
			return Top
		}
	}
	return NilValue
}

type factsKey struct{}

// Of returns the facts of a parsed chunk (empty without an AST).
func Of(c *parse.Chunk) *Facts {
	if len(c.AST) == 0 {
		return &Facts{}
	}
	if f, ok := c.Memo(factsKey{}).(*Facts); ok && f.ast0 == c.AST[0] {
		return f
	}
	f := Interpret(c.AST)
	c.SetMemo(factsKey{}, f)
	return f
}

// Interpret runs the abstract interpreter over a chunk's statements.
func Interpret(stmts []ast.Stmt) *Facts {
	f := &Facts{}
	if len(stmts) > 0 {
		f.ast0 = stmts[0]
	}
	in := pool.Get().(*interp)
	defer in.release()
	in.f, in.record = f, true
	in.run(stmts)
	if in.bail {
		return &Facts{ast0: f.ast0, VarWhole: true}
	}
	return f
}

// pool keeps interpreters' stacks between chunks.
var pool = sync.Pool{New: func() any { return &interp{} }}

// release resets an interpreter and returns it to the pool.
func (in *interp) release() {
	*in = interp{scopes: in.scopes[:0], vals: in.vals[:0], names: in.names[:0], stack: in.stack[:0], globals: in.globals[:0], varSet: in.varSet[:0], mayVar: in.mayVar[:0]}
	pool.Put(in)
}

// At returns the abstract value that name (a local, a global, or a
// `var.<key>` path) has at chunk line `line` (1-based, relative to the
// chunk), for hover: the value a declaration on that line gives it, or
// the value its reads on that line see when they all agree. ok is false
// when nothing is known.
func At(stmts []ast.Stmt, line int, name string) (Value, bool) {
	in := &interp{f: &Facts{}, record: true, at: &probe{line: line, name: name}}
	in.run(stmts)
	pr := in.at
	if in.bail || !pr.found || pr.v.IsTop() {
		return Value{}, false
	}
	return pr.v, true
}

// probe collects the values of one name on one line (see At).
type probe struct {
	line  int
	name  string
	found bool
	decl  bool
	v     Value
	mixed bool
}

func (p *probe) see(line int, name string, v Value, decl bool) {
	if p == nil || line != p.line || name != p.name || p.mixed {
		return
	}
	switch {
	case decl && !p.decl:
		p.found, p.decl, p.v = true, true, v
	case decl == p.decl && p.found && !Equal(p.v, v):
		p.mixed, p.found = true, false
	case !p.found && (decl || !p.decl):
		p.found, p.decl, p.v = true, decl, v
	}
}

func (in *interp) run(stmts []ast.Stmt) {
	in.open()
	in.block(stmts)
	in.close()
}

// scan marks volatile the names a function body assigns, or whose table
// it may change: a local of that name may change whenever any function
// runs, so its reads are Top from the function's definition on (the
// function cannot run before it). Each body is scanned once.
func (in *interp) scan(fe *ast.FunctionExpr) {
	if in.scanned[fe] {
		return
	}
	if in.scanned == nil {
		in.scanned = map[*ast.FunctionExpr]bool{}
	}
	in.scanned[fe] = true
	mark := func(e ast.Expr) {
		if r := rootName(e); r != "" {
			if in.volatile == nil {
				in.volatile = map[string]bool{}
			}
			in.volatile[r] = true
		}
	}
	inspect(fe.Stmts, func(n any) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				mark(l)
			}
		case *ast.FuncCallExpr:
			if n.Receiver != nil {
				mark(n.Receiver)
			}
			for _, a := range n.Args {
				mark(a)
			}
		case *ast.FunctionExpr:
			in.scanned[n] = true
		}
		return true
	})
}

// rootName is the identifier a name path starts with ("t" for t.a.b).
func rootName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.IdentExpr:
			return x.Value
		case *ast.AttrGetExpr:
			e = x.Object
		default:
			return ""
		}
	}
}

// interp is one interpretation: a scope stack of local slots, their
// values, and the known globals (and var.<key> paths) of the VM.
type interp struct {
	f        *Facts
	record   bool
	volatile map[string]bool
	inFunc   int
	cond     int
	loops    int
	scopes   []scope
	vals     []Value
	names    []string
	globals  kv
	// varSet holds the var keys written on every path so far (top
	// level), for VarRead.Written.
	varSet []string
	// mayVar holds the var keys any code interpreted so far may write;
	// mayAll is set by a use of var as a whole. They only grow, so a
	// loop's rounds carry its later writes to its earlier reads.
	mayVar []string
	mayAll bool
	// stack holds the arguments of the calls being evaluated.
	stack []Value
	// bail is set by goto or a label: the chunk's control flow is not
	// followed, so its facts are dropped.
	bail bool
	// scanned holds the function bodies whose assigned names are in
	// volatile.
	scanned map[*ast.FunctionExpr]bool
	// at, for hover, collects one name's values on one line.
	at *probe
}

type scope struct{ start int }

func (in *interp) open() { in.scopes = append(in.scopes, scope{start: len(in.vals)}) }

func (in *interp) close() {
	s := in.scopes[len(in.scopes)-1]
	in.scopes = in.scopes[:len(in.scopes)-1]
	in.vals, in.names = in.vals[:s.start], in.names[:s.start]
}

func (in *interp) declare(name string, v Value) {
	if in.volatile[name] {
		v = Top
	}
	in.vals = append(in.vals, v)
	in.names = append(in.names, name)
}

// lookup returns the slot of local name, or -1 (a global).
func (in *interp) lookup(name string) int {
	for i := len(in.names) - 1; i >= 0; i-- {
		if in.names[i] == name {
			return i
		}
	}
	return -1
}

// state is a snapshot for branches and loops.
type state struct {
	vals    []Value
	globals kv
	varSet  []string
}

// kv is a small map of known globals (and var.<key> paths): a chunk
// knows few at a time, and a slice copies cheaply at every branch.
type kv []gv

type gv struct {
	name string
	v    Value
}

func (m kv) get(name string) (Value, bool) {
	for i := range m {
		if m[i].name == name {
			return m[i].v, true
		}
	}
	return Value{}, false
}

func (m *kv) set(name string, v Value) {
	for i := range *m {
		if (*m)[i].name == name {
			(*m)[i].v = v
			return
		}
	}
	*m = append(*m, gv{name, v})
}

func (m *kv) del(name string) {
	for i := range *m {
		if (*m)[i].name == name {
			*m = append((*m)[:i], (*m)[i+1:]...)
			return
		}
	}
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func clone[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append([]T(nil), s...)
}

func (in *interp) save() state {
	return state{vals: clone(in.vals), globals: clone(in.globals), varSet: clone(in.varSet)}
}

func (in *interp) restore(st state) {
	in.vals = append(in.vals[:0], st.vals...)
	in.names = in.names[:len(st.vals)]
	in.globals = append(in.globals[:0], st.globals...)
	in.varSet = append(in.varSet[:0], st.varSet...)
}

// join merges two states of the same scope depth.
func join(a, b state) state {
	out := state{vals: make([]Value, len(a.vals))}
	for i := range a.vals {
		out.vals[i] = Join(a.vals[i], b.vals[i])
	}
	for _, g := range a.globals {
		if vb, ok := b.globals.get(g.name); ok {
			out.globals = append(out.globals, gv{g.name, Join(g.v, vb)})
		}
	}
	for _, k := range a.varSet {
		if has(b.varSet, k) {
			out.varSet = append(out.varSet, k)
		}
	}
	return out
}

func sameState(a, b state) bool {
	if len(a.vals) != len(b.vals) || len(a.globals) != len(b.globals) {
		return false
	}
	for i := range a.vals {
		if !Equal(a.vals[i], b.vals[i]) {
			return false
		}
	}
	for _, g := range a.globals {
		if vb, ok := b.globals.get(g.name); !ok || !Equal(g.v, vb) {
			return false
		}
	}
	return true
}

// forget drops what any function call may change: globals and var.
func (in *interp) forget() {
	in.globals = in.globals[:0]
}

func (in *interp) block(stmts []ast.Stmt) {
	for _, st := range stmts {
		in.stmt(st)
	}
}

func (in *interp) stmt(st ast.Stmt) {
	switch st := st.(type) {
	case *ast.LocalAssignStmt:
		vs := in.exprList(st.Exprs, len(st.Names))
		for i, name := range st.Names {
			in.declare(name, vs[i])
			if in.record {
				in.at.see(st.Line(), name, in.vals[len(in.vals)-1], true)
			}
		}
	case *ast.AssignStmt:
		// Evaluate the targets' objects and keys, then the values.
		vs := in.exprList(st.Rhs, len(st.Lhs))
		for i, l := range st.Lhs {
			in.assign(l, vs[i])
		}
	case *ast.FuncCallStmt:
		in.expr(st.Expr)
	case *ast.DoBlockStmt:
		in.open()
		in.block(st.Stmts)
		in.close()
	case *ast.IfStmt:
		in.expr(st.Condition)
		entry := in.save()
		in.cond++
		in.open()
		in.block(st.Then)
		in.close()
		then := in.save()
		in.restore(entry)
		in.open()
		in.block(st.Else)
		in.close()
		in.cond--
		in.restore(join(then, in.save()))
	case *ast.WhileStmt:
		in.loop(func() {
			in.expr(st.Condition)
			in.open()
			in.block(st.Stmts)
			in.close()
		})
	case *ast.RepeatStmt:
		in.loop(func() {
			in.open()
			in.block(st.Stmts)
			in.expr(st.Condition)
			in.close()
		})
	case *ast.NumberForStmt:
		in.expr(st.Init)
		in.expr(st.Limit)
		if st.Step != nil {
			in.expr(st.Step)
		}
		in.loop(func() {
			in.open()
			in.declare(st.Name, ANumber)
			in.block(st.Stmts)
			in.close()
		})
	case *ast.GenericForStmt:
		for _, e := range st.Exprs {
			in.escape(e, in.expr(e), true)
		}
		in.loop(func() {
			in.open()
			for _, n := range st.Names {
				in.declare(n, Top)
			}
			in.block(st.Stmts)
			in.close()
		})
	case *ast.FuncDefStmt:
		fn := Value{T: Function, Fn: st.Func}
		in.function(st.Func)
		if st.Name != nil && st.Name.Func != nil && st.Name.Receiver == nil {
			in.assign(st.Name.Func, fn)
		}
	case *ast.ReturnStmt:
		for _, e := range st.Exprs {
			in.escape(e, in.expr(e), false)
		}
	case *ast.GotoStmt, *ast.LabelStmt:
		in.bail = true
	}
}

// loop runs a loop body to a fixed point (at most three rounds, then
// what still changes becomes Top), then once more recording, from the
// fixed point.
func (in *interp) loop(body func()) {
	in.cond++
	in.loops++
	defer func() { in.cond--; in.loops-- }()
	if in.loops > maxLoopDepth {
		// Deeper loops run once from a state where everything is
		// unknown, so nested loops cost linear, not exponential, time.
		top := in.save()
		for i := range top.vals {
			top.vals[i] = Top
		}
		top.globals, top.varSet = nil, nil
		in.restore(top)
		body()
		in.restore(join(top, in.save()))
		return
	}
	rec := in.record
	in.record = false
	entry := in.save()
	cur := entry
	for round := 0; ; round++ {
		in.restore(cur)
		body()
		next := join(cur, in.save())
		if sameState(next, cur) {
			break
		}
		if round == 2 {
			cur = widen(entry, next)
			break
		}
		cur = next
	}
	in.restore(cur)
	in.record = rec
	if rec {
		body()
		in.restore(join(cur, in.save()))
	}
}

// maxLoopDepth is how deep loops are iterated to a fixed point.
const maxLoopDepth = 2

// widen makes Top every slot and global of b that differs from a.
func widen(a, b state) state {
	out := state{vals: clone(b.vals), varSet: clone(b.varSet)}
	for i := range out.vals {
		if !Equal(a.vals[i], out.vals[i]) {
			out.vals[i] = Top
		}
	}
	for _, g := range b.globals {
		if va, ok := a.globals.get(g.name); ok && Equal(va, g.v) {
			out.globals = append(out.globals, g)
		}
	}
	return out
}

// function interprets a function body where it is defined: parameters,
// upvalues and globals are unknown there.
func (in *interp) function(fe *ast.FunctionExpr) {
	in.scan(fe)
	if !in.record {
		return
	}
	saved := in.save()
	savedNames := append([]string(nil), in.names...)
	// Upvalues are Top inside the body: it may run after they change.
	for i := range in.vals {
		in.vals[i] = Top
	}
	in.globals = nil
	in.varSet = nil
	in.inFunc++
	in.open()
	for _, p := range fe.ParList.Names {
		in.declare(p, Top)
	}
	in.block(fe.Stmts)
	in.close()
	in.inFunc--
	in.restore(saved)
	in.names = append(in.names[:0], savedNames...)
}

// assign stores v into target l.
func (in *interp) assign(l ast.Expr, v Value) {
	switch l := l.(type) {
	case *ast.IdentExpr:
		if i := in.lookup(l.Value); i >= 0 {
			if in.volatile[l.Value] {
				v = Top
			}
			in.vals[i] = v
			return
		}
		if l.Value == "var" {
			in.f.VarWhole, in.mayAll = true, true
		}
		in.globals.set(l.Value, v)
	case *ast.AttrGetExpr:
		key := in.expr(l.Key)
		if id, ok := l.Object.(*ast.IdentExpr); ok {
			if i := in.lookup(id.Value); i >= 0 {
				t := in.vals[i]
				if t.Shape != nil {
					if k, ok := key.StrConst(); ok && key.T == String {
						t.Shape = t.Shape.withField(k, v)
					} else {
						t.Shape = nil
					}
					in.vals[i] = t
				}
				return
			}
			if id.Value == "var" {
				if k, ok := key.StrConst(); ok && key.T == String {
					if !has(in.mayVar, k) {
						in.mayVar = append(in.mayVar, k)
					}
					if in.inFunc == 0 {
						if in.record {
							in.f.VarWrites = appendOnce(in.f.VarWrites, k)
						}
						if v.T != Any && v.T&Nil == 0 && !has(in.varSet, k) {
							in.varSet = append(in.varSet, k)
						}
					}
					in.globals.set("var."+k, v)
					return
				}
			}
			if id.Value == "var" {
				in.f.VarWhole, in.mayAll = true, true
			}
			in.globals.del(id.Value)
			in.dropVarPaths(id.Value)
			return
		}
		// A nested target (a.b.c = v): what it changes is unknown.
		in.expr(l.Object)
		if r := rootName(l.Object); r != "" {
			if i := in.lookup(r); i >= 0 {
				in.vals[i].Shape = nil
			} else {
				in.globals.del(r)
				if r == "var" {
					if a, ok := l.Object.(*ast.AttrGetExpr); ok {
						if k, ok := a.Key.(*ast.StringExpr); ok {
							in.globals.del("var." + k.Value)
							if !has(in.mayVar, k.Value) {
								in.mayVar = append(in.mayVar, k.Value)
							}
						}
					}
				}
			}
		}
	default:
		in.expr(l)
	}
}

func (in *interp) dropVarPaths(root string) {
	if root != "var" {
		return
	}
	out := in.globals[:0]
	for _, g := range in.globals {
		if !strings.HasPrefix(g.name, "var.") {
			out = append(out, g)
		}
	}
	in.globals = out
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// exprList evaluates expressions for n targets: a trailing call or ...
// fills the rest with Top; missing values are nil.
func (in *interp) exprList(es []ast.Expr, n int) []Value {
	out := make([]Value, max(n, len(es)))
	for i, e := range es {
		out[i] = in.escape(e, in.expr(e), false)
	}
	for i := len(es); i < len(out); i++ {
		out[i] = NilValue
		if len(es) > 0 {
			switch es[len(es)-1].(type) {
			case *ast.FuncCallExpr, *ast.Comma3Expr:
				out[i] = Top
			}
		}
	}
	return out[:max(n, 0)]
}

// escape is called when value v of expression e flows somewhere a
// table can be changed through (a variable, a table field, a call that
// may change it): a local table that escapes loses its shape, as does
// the copy. keep leaves the shape (a reader that changes nothing).
func (in *interp) escape(e ast.Expr, v Value, keep bool) Value {
	if id, ok := e.(*ast.IdentExpr); ok && !keep && id.Value == "var" && in.lookup("var") < 0 {
		in.f.VarWhole, in.mayAll = true, true
	}
	if v.T&Table == 0 || v.Shape == nil || keep {
		return v
	}
	if id, ok := e.(*ast.IdentExpr); ok {
		if i := in.lookup(id.Value); i >= 0 {
			in.vals[i].Shape = nil
		} else {
			in.globals.del(id.Value)
		}
		v.Shape = nil
	} else if _, ok := e.(*ast.TableExpr); !ok {
		v.Shape = nil
	}
	return v
}

func (in *interp) op(e ast.Expr, msg string, operand ast.Expr) {
	if !in.record {
		return
	}
	what := ""
	if operand != nil {
		what = describe(operand, in)
	}
	in.f.Ops = append(in.f.Ops, Op{Expr: e, Msg: msg, What: what, InFunc: in.inFunc > 0})
}

// opCode records a failing call argument with its code.
func (in *interp) opCode(e ast.Expr, code, msg string) {
	if in.record {
		in.f.Ops = append(in.f.Ops, Op{Expr: e, Msg: msg, InFunc: in.inFunc > 0, Code: code})
	}
}

// describe names an operand as gopher-lua's errors do.
func describe(e ast.Expr, in *interp) string {
	switch e := e.(type) {
	case *ast.IdentExpr:
		if in.lookup(e.Value) >= 0 {
			return "local " + e.Value
		}
		return "global " + e.Value
	case *ast.AttrGetExpr:
		if k, ok := e.Key.(*ast.StringExpr); ok {
			return "field " + k.Value
		}
	}
	return ""
}

// failing reports whether v certainly fails an operation that accepts
// the types ok: v is known and none of its types is accepted. A table
// fails only when its shape is known (a literal table has no
// metatable; one that escaped may have gained one).
func failing(v Value, ok Type) bool {
	if v.T == Any || v.T&ok != 0 || v.T&Other != 0 {
		return false
	}
	if v.T&Table != 0 && v.Shape == nil {
		return false
	}
	return true
}

// varRead records a read of var.<key> whose nil value would fail use.
func (in *interp) varRead(e ast.Expr, use string) {
	if !in.record {
		return
	}
	a, ok := e.(*ast.AttrGetExpr)
	if !ok {
		return
	}
	id, ok := a.Object.(*ast.IdentExpr)
	if !ok || id.Value != "var" || in.lookup("var") >= 0 {
		return
	}
	k, ok := a.Key.(*ast.StringExpr)
	if !ok {
		return
	}
	in.f.VarReads = append(in.f.VarReads, VarRead{Key: k.Value, Expr: e, Use: use, Written: in.inFunc == 0 && has(in.varSet, k.Value), InFunc: in.inFunc > 0, Cond: in.cond > 0,
		MayBefore: in.mayAll || has(in.mayVar, k.Value)})
}

func (in *interp) expr(e ast.Expr) Value {
	switch e := e.(type) {
	case *ast.NilExpr:
		return NilValue
	case *ast.TrueExpr:
		return Bool(true)
	case *ast.FalseExpr:
		return Bool(false)
	case *ast.NumberExpr:
		if f, ok := parseNumber(e.Value); ok {
			return Num(f)
		}
		return ANumber
	case *ast.StringExpr:
		return Str(e.Value)
	case *ast.Comma3Expr:
		return Top
	case *ast.IdentExpr:
		v := in.ident(e)
		if in.record {
			in.at.see(e.Line(), e.Value, v, false)
		}
		return v
	case *ast.AttrGetExpr:
		return in.index(e)
	case *ast.FuncCallExpr:
		return in.call(e)
	case *ast.FunctionExpr:
		in.function(e)
		return Value{T: Function, Fn: e}
	case *ast.TableExpr:
		return in.table(e)
	case *ast.StringConcatOpExpr:
		l, r := in.expr(e.Lhs), in.expr(e.Rhs)
		for _, x := range []struct {
			v Value
			e ast.Expr
		}{{l, e.Lhs}, {r, e.Rhs}} {
			if failing(x.v, String|Number) {
				in.op(x.e, "attempt to concatenate a "+x.v.T.String()+" value", x.e)
			}
		}
		in.varRead(e.Lhs, "concatenate")
		in.varRead(e.Rhs, "concatenate")
		a, ok1 := l.StrConst()
		b, ok2 := r.StrConst()
		if ok1 && ok2 && len(a)+len(b) <= maxConst {
			return Str(a + b)
		}
		return AString
	case *ast.ArithmeticOpExpr:
		l, r := in.expr(e.Lhs), in.expr(e.Rhs)
		for _, x := range []struct {
			v Value
			e ast.Expr
		}{{l, e.Lhs}, {r, e.Rhs}} {
			if failing(x.v, String|Number) {
				in.op(x.e, "attempt to perform arithmetic on a "+x.v.T.String()+" value", x.e)
			}
		}
		in.varRead(e.Lhs, "perform arithmetic on")
		in.varRead(e.Rhs, "perform arithmetic on")
		a, ok1 := l.NumConst()
		b, ok2 := r.NumConst()
		if ok1 && ok2 {
			if n, ok := arith(e.Operator, a, b); ok {
				return Num(n)
			}
		}
		return ANumber
	case *ast.RelationalOpExpr:
		in.expr(e.Lhs)
		in.expr(e.Rhs)
		return ABoolean
	case *ast.LogicalOpExpr:
		l := in.expr(e.Lhs)
		in.cond++
		r := in.expr(e.Rhs)
		in.cond--
		truthy := l.T&(Nil|Boolean) == 0 || (l.T == Boolean && l.Const && l.Bool)
		falsy := l.T == Nil || (l.T == Boolean && l.Const && !l.Bool)
		if e.Operator == "or" {
			switch {
			case truthy:
				return l
			case falsy:
				return r
			}
			t := l
			t.T &^= Nil
			if t.T == Boolean {
				t = ABoolean
			}
			return Join(t, r)
		}
		switch {
		case truthy:
			return r
		case falsy:
			return l
		}
		return Join(Value{T: l.T & (Nil | Boolean)}, r)
	case *ast.UnaryMinusOpExpr:
		v := in.expr(e.Expr)
		if failing(v, String|Number) {
			in.op(e.Expr, "attempt to perform arithmetic on a "+v.T.String()+" value", e.Expr)
		}
		if n, ok := v.NumConst(); ok {
			return Num(-n)
		}
		return ANumber
	case *ast.UnaryNotOpExpr:
		in.expr(e.Expr)
		return ABoolean
	case *ast.UnaryLenOpExpr:
		v := in.expr(e.Expr)
		if failing(v, String|Table) || (v.T != Any && v.T&(String|Table) == 0 && v.T&Other == 0) {
			in.op(e.Expr, "attempt to get length of a "+v.T.String()+" value", e.Expr)
		}
		in.varRead(e.Expr, "get length of")
		switch {
		case v.T == String && v.Const:
			return Num(float64(len(v.Str)))
		case v.T == Table && v.Shape != nil:
			return Num(float64(len(v.Shape.Array)))
		}
		return ANumber
	}
	return Top
}

// maxConst bounds a folded string, so that folding never costs much.
const maxConst = 1 << 16

func parseNumber(s string) (float64, bool) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		i, err := strconv.ParseInt(s[2:], 16, 64)
		return float64(i), err == nil
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func (in *interp) ident(e *ast.IdentExpr) Value {
	if i := in.lookup(e.Value); i >= 0 {
		if in.volatile[e.Value] {
			return Top
		}
		return in.vals[i]
	}
	if v, ok := in.globals.get(e.Value); ok {
		return v
	}
	switch e.Value {
	case "args":
		return AString
	case "var", "sys":
		return Value{T: Table, Builtin: e.Value}
	}
	if ent, ok := api.Lookup(e.Value); ok && !strings.Contains(ent.Name, ".") {
		switch ent.Kind {
		case api.Func:
			return Value{T: Function, Builtin: ent.Name}
		case api.Table:
			return Value{T: Table, Builtin: ent.Name}
		}
	}
	return Top
}

func (in *interp) index(e *ast.AttrGetExpr) Value {
	obj := in.expr(e.Object)
	key := in.expr(e.Key)
	if obj.T != Any && obj.T&(String|Table|Other) == 0 {
		in.op(e.Object, "attempt to index a "+obj.T.String()+" value", e.Object)
		return Top
	}
	k, isStr := key.StrConst()
	isStr = isStr && key.T == String
	if obj.Builtin != "" && obj.T == Table && isStr {
		if obj.Builtin == "var" {
			v, ok := in.globals.get("var." + k)
			if !ok {
				v = Top
			}
			if in.record {
				in.at.see(e.Line(), "var."+k, v, false)
			}
			return v
		}
		name := obj.Builtin + "." + k
		if ent, ok := api.Lookup(name); ok {
			switch ent.Kind {
			case api.Func:
				return Value{T: Function, Builtin: ent.Name}
			case api.Table:
				return Value{T: Table, Builtin: ent.Name}
			}
		}
		return Top
	}
	if obj.T == Table && obj.Shape != nil {
		if isStr {
			if v, ok := obj.Shape.Get(k); ok {
				return v
			}
			return NilValue
		}
		if n, ok := key.NumConst(); ok && key.T == Number && len(obj.Shape.Fields) == 0 {
			if n >= 1 && n <= float64(len(obj.Shape.Array)) && n == float64(int(n)) {
				return obj.Shape.Array[int(n)-1]
			}
			if n == float64(int(n)) {
				return NilValue
			}
		}
	}
	return Top
}

func (in *interp) table(e *ast.TableExpr) Value {
	s := &Shape{}
	for i, f := range e.Fields {
		if f.Key == nil {
			v := in.escape(f.Value, in.expr(f.Value), false)
			if i == len(e.Fields)-1 {
				switch f.Value.(type) {
				case *ast.FuncCallExpr, *ast.Comma3Expr:
					s = nil
				}
			}
			if s != nil {
				s.Array = append(s.Array, v)
			}
			continue
		}
		k := in.expr(f.Key)
		v := in.escape(f.Value, in.expr(f.Value), false)
		if s == nil {
			continue
		}
		if ks, ok := k.StrConst(); ok && k.T == String {
			if v.T == Nil {
				continue
			}
			if v.T&Nil != 0 {
				s = nil
				continue
			}
			if _, dup := s.Get(ks); dup {
				s = s.withField(ks, v)
			} else {
				s.Fields = append(s.Fields, Field{ks, v})
			}
		} else {
			s = nil
		}
	}
	return Value{T: Table, Shape: s}
}
