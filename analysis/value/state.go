// The interpreter's state: scopes of local slots, known globals and var
// paths, and how states are saved, joined and widened at branches and loops.

package value

import (
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

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
	// aliased lists the table shapes held under two names (alias.go).
	aliased []*Shape
	// sharedGlobals is set while globals' array is also a saved state's
	// (save and restore share it, copy on write): ownGlobals copies it
	// before a change, reuseGlobals starts a new one.
	sharedGlobals bool
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
	// recs are the calls' arguments recorded so far (recordArgs), argAt
	// their indices by call, and escaped the functions passed to code
	// the interpreter does not follow: the interpreter's own, kept with
	// it in the pool; keepCalls copies them into the facts.
	recs    []callRec
	argAt   map[*ast.FuncCallExpr]int32
	escaped map[*ast.FunctionExpr]bool

	// The whole-prompt evaluator (call.go, env.go): ids are the
	// declaration ids of the slots in vals (a closure's upvalue names
	// the slot and id it captured); base is the first slot an inlined
	// function body sees (its frame); frames are the calls being
	// inlined; dead is set when control cannot reach the next statement
	// (after return or break); rets and breaks collect the states that
	// leave a function body or a loop that way.
	ids    []uint32
	nextID uint32
	base   int
	frames []frame
	dead   bool
	rets   *exits
	breaks *exits
	// work counts the statements and calls evaluated; past maxWork the
	// interpreter stops inlining calls and unrolling loops (it
	// summarises them as before, which is sound but knows less).
	work int
	// envVolatile holds the names the entry environment's functions may
	// change (from the shared library or an earlier chunk of the VM).
	envVolatile map[string]bool
	// fnInfo caches what the interpreter learns about a function body
	// (its free names, the parameters it may change).
	fnInfo map[*ast.FunctionExpr]*fnInfo
	// fnOwner is the budget of the prompt fnInfo was learned on.
	fnOwner *Budget
	// infoSets is info's scratch, kept with the pooled interpreter.
	infoSets *infoSets
	// site is the call of the chunk itself through which a function
	// body of another chunk is being evaluated (nil when none).
	site *ast.FuncCallExpr
	// siteName names that call's function, for messages.
	siteName string
	// ctx holds the function bodies being evaluated, innermost last:
	// exact for a call inlined at its site, not exact for a body
	// evaluated where it is defined.
	ctx []ctxEntry
	// generic holds the bodies already evaluated where defined.
	generic map[*ast.FunctionExpr]bool
	// opAt indexes Ops by expression and message, to merge repeats.
	opAt map[opKey]int
	// outer is the chunk's top-level call being evaluated (sites.go).
	outer outerCall
	// limit is the work this chunk may spend (0: maxWork); limited is
	// set once a bound of work stopped an inlining or unrolling
	// (budget.go).
	limit   int
	limited bool
	// stableStore is set when the entry environment keeps store
	// contents between chunks (Env.WithStoreValues): no code may change
	// the store while prose runs, so what a chunk leaves in it is what
	// the next chunk finds.
	stableStore bool
}

type ctxEntry struct {
	fn    *ast.FunctionExpr
	exact bool
}

type opKey struct {
	e        ast.Expr
	msg, who string
}

type scope struct{ start int }

func (in *interp) open() { in.scopes = append(in.scopes, scope{start: len(in.vals)}) }

func (in *interp) close() {
	s := in.scopes[len(in.scopes)-1]
	in.scopes = in.scopes[:len(in.scopes)-1]
	in.vals, in.names, in.ids = in.vals[:s.start], in.names[:s.start], in.ids[:s.start]
}

func (in *interp) declare(name string, v Value) {
	if in.volatile[name] {
		v = Top
	}
	in.declareRaw(name, v)
}

// declareRaw declares a local slot without the volatile rule (a
// parameter or upvalue copy of an inlined call).
func (in *interp) declareRaw(name string, v Value) {
	in.nextID++
	in.vals = append(in.vals, v)
	in.names = append(in.names, name)
	in.ids = append(in.ids, in.nextID)
}

// lookup returns the slot of local name, or -1 (a global). Inside an
// inlined call it sees only the call's frame.
func (in *interp) lookup(name string) int {
	for i := len(in.names) - 1; i >= in.base; i-- {
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

// save returns the current state. Its globals share in.globals' array
// (each if and loop saves, most change no global), capped so that an
// append to either copies, and in.globals is copied before a change in
// place (ownGlobals, reuseGlobals).
func (in *interp) save() state {
	in.sharedGlobals = in.sharedGlobals || len(in.globals) > 0
	return state{vals: clone(in.vals), globals: in.globals[:len(in.globals):len(in.globals)], varSet: clone(in.varSet)}
}

// ownGlobals returns in.globals to change in place, copying it first
// when a saved state shares its array.
func (in *interp) ownGlobals() *kv {
	if in.sharedGlobals {
		in.globals = clone(in.globals)
		in.sharedGlobals = false
	}
	return &in.globals
}

// reuseGlobals returns an empty kv to build in.globals' next value in,
// filtering in.globals as it goes: in.globals' own array unless a saved
// state shares it. The caller assigns the result to in.globals.
func (in *interp) reuseGlobals() kv {
	if in.sharedGlobals {
		in.sharedGlobals = false
		return nil
	}
	return in.globals[:0]
}

func (in *interp) restore(st state) {
	in.vals = append(in.vals[:0], st.vals...)
	in.names = in.names[:len(st.vals)]
	for len(in.ids) < len(st.vals) {
		in.ids = append(in.ids, 0)
	}
	in.ids = in.ids[:len(st.vals)]
	in.globals = st.globals[:len(st.globals):len(st.globals)]
	in.sharedGlobals = len(in.globals) > 0
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

// forget drops what a call of an unknown function may change: globals
// and var.
func (in *interp) forget() {
	in.dropGlobalAliases()
	in.leave()
	out := in.reuseGlobals()
	if in.varFixed() {
		for _, g := range in.globals {
			if strings.HasPrefix(g.name, "var.") {
				out = append(out, g)
			}
		}
	}
	in.globals = out
}

// forgetEffects drops what a host function that runs no code of this
// VM's chunks, but may run a local tool handler or another VM, may
// change: var, the store, and the globals a known function body
// assigns.
func (in *interp) forgetEffects() {
	in.dropGlobalAliases()
	in.leave()
	out := in.reuseGlobals()
	for _, g := range in.globals {
		if strings.HasPrefix(g.name, "var.") && !in.varFixed() || strings.HasPrefix(g.name, storeKey) || in.volatile[g.name] || in.envVolatile[g.name] {
			continue
		}
		out = append(out, g)
	}
	in.globals = out
}

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
