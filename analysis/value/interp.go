// The interpreter: what it learns from a chunk (Facts), and the entry
// points Of, Interpret and At.

package value

import (
	"cmp"
	"slices"
	"sync"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// Facts are what the interpreter learns from one chunk. They depend on
// the chunk's AST and its entry environment (the shared library's and
// earlier chunks' globals), so they are memoised on the parser's chunk
// (Of, OfIn): an edit re-interprets only the chunks that changed and
// the chunks whose entry changed.
type Facts struct {
	ast0 ast.Stmt
	// args are the argument values at each call (none for a call that
	// was never interpreted, as in a chunk with goto), sorted by the
	// call's address (see callRecs).
	args callRecs
	// escaped holds the functions passed to code the interpreter does
	// not follow (a handler, a callback): their calls may get any
	// arguments. Sorted by address (see fnSet).
	escaped fnSet
	// Exit is the environment the chunk leaves to the next chunk of its
	// VM (nil when unknown).
	Exit *Env
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
	// sites and results: see Sites and Results (sites.go).
	sites    []Site
	results  []Result
	sysReads []SysRead
	// varOut is the join of the var states where control may leave the
	// chunk (see VarOut); outKnown is set once one was recorded.
	varOut kv
	// touched holds the keys the chunk may assign (VarTouched); outAll
	// is set when var may change as a whole where control leaves.
	touched []string
	// storeOut is the join of the known store contents where control
	// may leave the chunk (see StoreOut); storeKnown is set once one was
	// recorded.
	storeOut kv
	// storeCall is the join of the known store contents where a chain
	// or an arm may start (see StoreAtCalls); storeCallKnown is set once
	// one was recorded.
	storeCall kv
	// self holds the facts themselves, the one view of a call evaluated
	// once (Views), so that asking for it allocates nothing.
	self [1]*Facts

	// The fields without pointers come last, so that a collection scans
	// the facts (every open document keeps a chunk's) only up to self.

	// work is what the evaluation spent, limit what it was allowed, and
	// limited is set when a bound of work cut it short (budget.go).
	work, limit int
	limited     bool
	// VarWhole is true when the chunk uses var as a whole in a way that
	// may write any key (passes it to a function that may change it,
	// indexes it with a computed key, replaces it), or its code was not
	// followed.
	VarWhole bool
	outKnown bool
	outAll   bool
	// storeKnown and storeCallKnown: see storeOut and storeCall.
	storeKnown     bool
	storeCallKnown bool
	// multi is set once some call was evaluated exactly more than once
	// (recordArgs): without it every call has one view, and Views
	// answers without looking the call up.
	multi bool
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
	// Inner is the failing expression itself when the operation is in
	// another chunk's function body (the shared library's) and Expr is
	// the call of this chunk that runs it; nil otherwise.
	Inner ast.Expr
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

// argRec is what the evaluations of one call saw: exact evaluates the
// call where its arguments are the actual ones (chunk level, or a
// function body evaluated at a call site), generic in a function body
// evaluated where it is defined (parameters unknown).
type argRec struct {
	owner          *ast.FunctionExpr
	exact, generic []Value
	// each holds the exact evaluations one by one once there are two
	// (up to maxViews; nil past it); views is 1 while there is one, 2
	// once each holds them, -1 past maxViews.
	each       [][]Value
	hasExact   bool
	hasGeneric bool
	views      int8
}

// maxViews bounds the evaluations of one call kept one by one.
const maxViews = 64

// callRec is one call's argRec.
type callRec struct {
	call *ast.FuncCallExpr
	argRec
}

// callRecs are a chunk's calls' records sorted by the call's address,
// one exact-size slice of values: every open document keeps its chunks'
// facts, and the garbage collector marks them in every collection,
// where a map of pointers to records cost it a table and an object per
// call (with most of the table's slots empty). An address stands for
// its call while the chunk's syntax tree lives, which the facts keep
// (Facts.ast0 and the calls themselves).
type callRecs []callRec

// get returns call's record, if any.
func (cs callRecs) get(call *ast.FuncCallExpr) (*argRec, bool) {
	a := uintptr(unsafe.Pointer(call))
	i, ok := slices.BinarySearchFunc(cs, a, func(c callRec, a uintptr) int { return cmp.Compare(uintptr(unsafe.Pointer(c.call)), a) })
	if !ok {
		return nil, false
	}
	return &cs[i].argRec, true
}

// fnSet is a set of function expressions sorted by address (see
// callRecs).
type fnSet []*ast.FunctionExpr

// has reports whether fn is in the set.
func (s fnSet) has(fn *ast.FunctionExpr) bool {
	if len(s) == 0 {
		return false
	}
	_, ok := slices.BinarySearchFunc(s, uintptr(unsafe.Pointer(fn)), func(f *ast.FunctionExpr, a uintptr) int { return cmp.Compare(uintptr(unsafe.Pointer(f)), a) })
	return ok
}

// keepCalls stores the calls' records and the escaped functions the
// interpretation collected in its facts, sorted by address.
func (in *interp) keepCalls() {
	if len(in.recs) > 0 {
		recs := slices.Clone(in.recs)
		slices.SortFunc(recs, func(a, b callRec) int {
			return cmp.Compare(uintptr(unsafe.Pointer(a.call)), uintptr(unsafe.Pointer(b.call)))
		})
		in.f.args = recs
	}
	if len(in.escaped) > 0 {
		fns := make(fnSet, 0, len(in.escaped))
		for fn := range in.escaped {
			fns = append(fns, fn)
		}
		slices.SortFunc(fns, func(a, b *ast.FunctionExpr) int {
			return cmp.Compare(uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b)))
		})
		in.f.escaped = fns
	}
}

// Views returns the facts of call as each of its evaluations saw them
// (a loop unrolled, each call site of the function that makes it), each
// a Facts whose Arg gives that evaluation's arguments; or f itself when
// the call has one evaluation, or its evaluations were not kept one by
// one, or it may also run with arguments the evaluator does not see.
// A rule that fails on one view fails when that evaluation runs. The
// slice is shared: callers must not modify it.
func (f *Facts) Views(call *ast.FuncCallExpr) []*Facts {
	var r *argRec
	ok := false
	if f.multi {
		r, ok = f.args.get(call)
	}
	if !ok || len(r.each) < 2 || r.hasGeneric && r.owner != nil && f.escaped.has(r.owner) {
		if f.self[0] == f {
			return f.self[:]
		}
		return []*Facts{f}
	}
	out := make([]*Facts, len(r.each))
	for i, a := range r.each {
		out[i] = &Facts{ast0: f.ast0, args: callRecs{{call: call, argRec: argRec{exact: a, hasExact: true}}}}
	}
	return out
}

func joinArgs(a, b []Value) []Value {
	if len(a) != len(b) {
		n := max(len(a), len(b))
		out := make([]Value, n)
		for i := range out {
			x, y := NilValue, NilValue
			if i < len(a) {
				x = a[i]
			}
			if i < len(b) {
				y = b[i]
			}
			out[i] = Join(x, y)
		}
		return out
	}
	for i := range a {
		a[i] = Join(a[i], b[i])
	}
	return a
}

// Args returns the values of a call's arguments, one per written
// argument (a trailing multi-value call or ... is Top), and ok false
// when the call was not interpreted. A call evaluated several times
// (in a loop unrolled, or in a function body at each of its call
// sites) gets the join of what each evaluation saw.
func (f *Facts) Args(call *ast.FuncCallExpr) ([]Value, bool) {
	if f == nil {
		return nil, false
	}
	r, ok := f.args.get(call)
	if !ok {
		return nil, false
	}
	switch {
	case r.hasExact && (r.owner == nil || !f.escaped.has(r.owner) || !r.hasGeneric):
		return r.exact, true
	case r.hasExact:
		return joinArgs(clone(r.exact), r.generic), true
	}
	return r.generic, true
}

// Arg returns argument i of a call: Top when unknown, nil when absent.
func (f *Facts) Arg(call *ast.FuncCallExpr, i int) Value { return f.CallArgs(call).At(i) }

// CallArgs are the argument values of one call, for a caller that reads
// several of them (Arg finds the call's record each time).
type CallArgs struct {
	call  *ast.FuncCallExpr
	vals  []Value
	known bool
}

// CallArgs returns the arguments of call (see Args).
func (f *Facts) CallArgs(call *ast.FuncCallExpr) CallArgs {
	a, ok := f.Args(call)
	return CallArgs{call, a, ok}
}

// At returns argument i as Arg does: Top when unknown, nil when absent.
func (a CallArgs) At(i int) Value {
	if !a.known {
		return Top
	}
	if i < len(a.vals) {
		return a.vals[i]
	}
	if n := len(a.call.Args); n > 0 {
		switch a.call.Args[n-1].(type) {
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
	return OfInBudget(c, nil, nil)
}

// Interpret runs the abstract interpreter over a chunk's statements,
// starting from no known globals.
func Interpret(stmts []ast.Stmt) *Facts { return InterpretIn(stmts, nil) }

// InterpretIn runs the abstract interpreter over a chunk's statements,
// starting from the environment entry.
func InterpretIn(stmts []ast.Stmt, entry *Env) *Facts {
	return interpretLimit(stmts, entry, maxWork, nil)
}

// interpretLimit is InterpretIn spending at most limit work. owner is
// the prompt's budget: what an interpreter learned about function
// bodies is kept only between chunks of the same owner (nil: none).
func interpretLimit(stmts []ast.Stmt, entry *Env, limit int, owner *Budget) *Facts {
	f := &Facts{}
	if len(stmts) > 0 {
		f.ast0 = stmts[0]
	}
	in := pool.Get().(*interp)
	defer in.release()
	in.adopt(owner.prompt())
	in.f, in.record = f, true
	in.limit = max(limit, 0)
	if limit <= 0 {
		in.limit = -1 // nothing left: no inlining, no unrolling
	}
	in.enter(entry)
	in.open()
	in.block(stmts)
	if !in.dead {
		in.leaveEnd()
	}
	in.dead = false
	f.Exit = in.exit()
	if f.Exit == nil || f.Exit.volatile["var"] {
		f.varOut, f.outKnown = nil, false
	}
	if f.Exit == nil {
		f.storeOut, f.storeKnown = nil, false
		f.storeCall, f.storeCallKnown = nil, false
	}
	f.touched, f.outAll = clone(in.mayVar), f.outAll || in.mayAll
	in.keepCalls()
	in.close()
	f.work, f.limit, f.limited = in.work, limit, in.limited
	if in.bail {
		f = &Facts{ast0: f.ast0, VarWhole: true, work: in.work, limit: limit, limited: in.limited}
	}
	f.self[0] = f
	return f
}

// enter starts the interpretation from env.
func (in *interp) enter(env *Env) {
	if env == nil {
		return
	}
	in.globals = append(in.reuseGlobals(), env.globals...)
	in.envVolatile = env.volatile
	in.stableStore = env.stableStore
}

// pool keeps interpreters' stacks between chunks.
var pool = sync.Pool{New: func() any { return &interp{} }}

// release resets an interpreter and returns it to the pool. It keeps
// what it learned about function bodies (fnInfo, which depends on a
// body's text alone) for its owner, the prompt being analysed: the next
// chunk of that prompt usually calls the same shared-library helpers. A
// chunk of another owner starts with the cache cleared, the pool drops
// interpreters at garbage collection, and the cache is cleared past
// maxFnInfo bodies, so it holds one prompt's syntax trees, briefly.
func (in *interp) release() {
	fi, owner := in.fnInfo, in.fnOwner
	if len(fi) > maxFnInfo {
		fi, owner = nil, nil
	}
	clear(in.recs) // drop the values' references
	argAt, escaped := in.argAt, in.escaped
	if len(argAt) > maxPooledCalls {
		argAt = nil // clearing it would cost its whole table each time
	}
	if len(escaped) > maxPooledCalls {
		escaped = nil
	}
	clear(argAt)
	clear(escaped)
	*in = interp{scopes: in.scopes[:0], vals: in.vals[:0], names: in.names[:0], ids: in.ids[:0], stack: in.stack[:0], globals: in.reuseGlobals(), varSet: in.varSet[:0], mayVar: in.mayVar[:0], fnInfo: fi, fnOwner: owner, infoSets: in.infoSets,
		recs: in.recs[:0], argAt: argAt, escaped: escaped}
	pool.Put(in)
}

// adopt makes owner the prompt whose chunks the interpreter evaluates.
// What it learned about another prompt's function bodies is dropped:
// they are never called here, and keeping them would hold that prompt's
// syntax trees (a folder check's memory would grow with the files
// checked).
func (in *interp) adopt(owner *Budget) {
	if owner == nil || in.fnOwner != owner {
		clear(in.fnInfo)
		in.fnOwner = owner
	}
}

// maxPooledCalls bounds the calls a pooled interpreter's index of
// records keeps room for.
const maxPooledCalls = 1024

// maxFnInfo bounds the function bodies a pooled interpreter remembers.
const maxFnInfo = 4096

// At returns the abstract value that name (a local, a global, or a
// `var.<key>` path) has at chunk line `line` (1-based, relative to the
// chunk), for hover: the value a declaration on that line gives it, or
// the value its reads on that line see when they all agree. ok is false
// when nothing is known.
func At(stmts []ast.Stmt, line int, name string) (Value, bool) {
	return AtIn(stmts, nil, line, name)
}

// AtIn is At for a chunk that starts from the environment entry.
func AtIn(stmts []ast.Stmt, entry *Env, line int, name string) (Value, bool) {
	vs := EachAt(stmts, entry, line, name)
	if len(vs) != 1 {
		return Value{}, false
	}
	return vs[0], true
}

// EachAt returns the distinct values name has at chunk line line (see
// At) in each evaluation of the line: one per iteration of a loop
// unrolled, or per call of the function the line is in, up to
// maxEach. It returns nil when nothing is known (a value unknown in
// some evaluation, or more than maxEach).
func EachAt(stmts []ast.Stmt, entry *Env, line int, name string) []Value {
	return probeRun(stmts, entry, &probe{line: line, name: name})
}

// CallsAt returns the distinct results of the calls of callee (spelt as
// in the source: "f", "t.f" or "o:m") whose callee is on chunk line
// line, in each evaluation of the line, as EachAt does for a name: the
// value a helper's call hands back where it is made. Calls made as
// statements, whose results nothing uses, are not seen.
func CallsAt(stmts []ast.Stmt, entry *Env, line int, callee string) []Value {
	return probeRun(stmts, entry, &probe{line: line, name: callee, call: true})
}

// callSpelling returns how the source spells a call's callee ("f",
// "t.f", "o:m"; "" for another expression) and the line it is on.
func callSpelling(e *ast.FuncCallExpr) (string, int) {
	if e.Receiver != nil {
		if o := calleeName(e.Receiver); o != "" {
			return o + ":" + e.Method, e.Receiver.Line()
		}
		return "", 0
	}
	return calleeName(e.Func), e.Func.Line()
}

func probeRun(stmts []ast.Stmt, entry *Env, pr *probe) []Value {
	in := &interp{f: &Facts{}, record: true, at: pr}
	if len(stmts) > 0 {
		in.f.ast0 = stmts[0]
	}
	in.enter(entry)
	in.run(stmts)
	in.keepCalls()
	if in.bail || pr.mixed || len(pr.vs) == 0 {
		return nil
	}
	for _, v := range pr.vs {
		if v.IsTop() {
			return nil
		}
	}
	return pr.vs
}

// maxEach bounds the distinct values EachAt reports.
const maxEach = 8

// probe collects the values of one name on one line (see At): those a
// declaration there gives it or, when none, those its reads see; or,
// with call set, the results of the calls of the callee name there
// (CallsAt).
type probe struct {
	line  int
	name  string
	call  bool
	decl  bool
	vs    []Value
	mixed bool
}

func (p *probe) see(line int, name string, v Value, decl bool) {
	if p == nil || p.call || line != p.line || name != p.name || p.mixed {
		return
	}
	p.add(v, decl)
}

// seeCall records the result v of call e when the probe asks for it.
func (p *probe) seeCall(e *ast.FuncCallExpr, v Value) {
	if p == nil || !p.call || p.mixed {
		return
	}
	if name, line := callSpelling(e); line == p.line && name == p.name {
		p.add(v, false)
	}
}

func (p *probe) add(v Value, decl bool) {
	if decl && !p.decl {
		p.decl, p.vs = true, p.vs[:0]
	} else if !decl && p.decl {
		return
	}
	for _, x := range p.vs {
		if Equal(x, v) {
			return
		}
	}
	if len(p.vs) == maxEach || v.IsTop() {
		p.mixed = true
		return
	}
	p.vs = append(p.vs, v)
}
