// `var` across sections: what a chunk hands on to the sections that run
// after it (Facts.VarOut), and entry environments that start a chunk
// from the var values the walk brings (Env.WithVarValues).

package value

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"strings"
	"sync"

	"github.com/yuin/gopher-lua/ast"
)

// VarVal is the value of one var key.
type VarVal struct {
	Key string
	V   Value
}

// VarOut returns the values the var keys may hold when control leaves
// the chunk for another section: at its end, at a top-level return, at
// a jump, execute or fanout call (a chain or an arm starts from a copy
// of var there), and at each call the interpreter does not follow. It
// is the join over those points: a key listed holds its value at every
// one of them, a key not listed is unknown (Top). ok is false when
// nothing is known (the chunk's code was not followed).
func (f *Facts) VarOut() (vals []VarVal, ok bool) {
	if f == nil || !f.outKnown {
		return nil, false
	}
	for _, g := range f.varOut {
		vals = append(vals, VarVal{strings.TrimPrefix(g.name, "var."), g.v})
	}
	return vals, true
}

// VarTouched reports whether the chunk's code may assign var.<key>
// (or var as a whole), or its code was not followed. A key it does not
// touch holds, wherever control leaves the chunk, the value it had when
// the chunk started, also when VarOut does not list it (an unknown
// call dropped what the evaluator knew, but cannot change var when no
// function assigns it).
func (f *Facts) VarTouched(key string) bool {
	return f == nil || !f.outKnown || f.outAll || has(f.touched, key)
}

// VarEscaped reports whether the chunk's code may change var.<key>
// without assigning it: its table was read into a name or handed to
// code that may change it (a proxy of var's table), or the key was
// assigned.
func (f *Facts) VarEscaped(key string) bool {
	return f != nil && has(f.touched, key)
}

// leave records the var state at a point where control may leave the
// chunk for another section. In a body evaluated where it is defined
// (parameters unknown) it records nothing: such a body runs at a call
// the interpreter records (inlined, or an unknown call: var cannot
// change inside it unless some function assigns var, and then nothing
// is known), or from the engine between chunks (a handler), where var
// holds what a chunk left.
func (in *interp) leave() { in.leaveAt(true) }

// leaveEnd is leave at the chunk's end or top-level return, where no
// chain or arm starts.
func (in *interp) leaveEnd() { in.leaveAt(false) }

func (in *interp) leaveAt(call bool) {
	f := in.f
	if f == nil || !in.record {
		return
	}
	if n := len(in.ctx); n > 0 && !in.ctx[n-1].exact {
		return
	}
	in.leaveStore(&f.storeOut, &f.storeKnown)
	if call {
		in.leaveStore(&f.storeCall, &f.storeCallKnown)
	}
	var cur kv
	if !in.varFixed() {
		f.outAll = true
	} else {
		for _, g := range in.globals {
			if strings.HasPrefix(g.name, "var.") && g.v.T&Function == 0 {
				cur = append(cur, g)
			}
		}
	}
	if !f.outKnown {
		f.varOut, f.outKnown = clone(cur), true
		return
	}
	out := f.varOut[:0]
	for _, g := range f.varOut {
		if v, ok := cur.get(g.name); ok {
			out = append(out, gv{g.name, Join(g.v, v)})
		}
	}
	f.varOut = out
}

// control records a call of a host function that hands control, or a
// copy of var, to another section: jump, execute, fanout (also through
// pcall and xpcall). A jump at the chunk's top level ends the chunk: the
// code after it does not run (docs/language.md#section-blocks).
func (in *interp) control(name string, args []Value) {
	switch name {
	case "pcall", "xpcall":
		if len(args) == 0 || args[0].T != Function {
			return
		}
		name = args[0].Builtin
	}
	switch name {
	case "jump":
		in.leave()
		if len(in.ctx) == 0 && in.inFunc == 0 {
			in.dead = true
		}
	case "execute", "fanout":
		in.leave()
	}
}

// varData reports a value assigned to var.<path> that var cannot hold
// (docs/language.md#var), with the engine's message: a function or
// handle that is not a literal (literal ones are judged from the
// syntax), or the results of a fanout with members.
func (in *interp) varData(path string, rhs ast.Expr, v Value) {
	switch rhs.(type) {
	case *ast.FunctionExpr, nil:
		return
	}
	switch {
	case v.T == Function:
		in.opCode(rhs, "bad-argument", path+" must be JSON data, got function")
	case v.T == Other && (v.Builtin == "Model" || v.Builtin == "Tool"):
		in.opCode(rhs, "bad-argument", path+" must be JSON data, got userdata")
	case v.T == Table && v.Builtin == fanoutResults:
		in.opCode(rhs, "bad-argument", path+" must be JSON data, but "+path+"[1] is a fanout result (keep its text: r.text, or tostring(r))")
	}
}

// fanoutResults marks the table a fanout with at least one member
// returns: its members are fanout results, which var cannot hold.
const fanoutResults = "fanout results"

// fanoutResult is what fanout returns for its arguments.
func fanoutResult(args []Value) Value {
	if len(args) > 1 && args[1].T == Table && args[1].Shape != nil && len(args[1].Shape.Array) > 0 && len(args[1].Shape.Fields) == 0 {
		return Value{T: Table, Builtin: fanoutResults}
	}
	return ATable
}

// WithVarValues returns env (nil: an empty environment) with the var
// keys of set holding their values and the keys of drop unknown: the
// environment a section's first chunk starts from, with what the walk
// brings into var. Equal inputs give the same pointer (interned on
// env), so a chunk's memo hits when an edit elsewhere leaves its entry
// as it was.
func (env *Env) WithVarValues(set []VarVal, drop []string) *Env {
	base := env
	if base == nil {
		base = emptyEnv
	}
	var out Env
	out.volatile = base.volatile
	for _, g := range base.globals {
		if k, ok := strings.CutPrefix(g.name, "var."); ok && (has(drop, k) || hasKey(set, k)) {
			continue
		}
		out.globals = append(out.globals, g)
	}
	for _, s := range set {
		out.globals = append(out.globals, gv{"var." + s.Key, s.V})
	}
	if len(out.globals) == len(base.globals) && sameGlobals(out.globals, base.globals) {
		return env
	}
	h := hashGlobals(out.globals)
	in := &base.builtOn().internState
	in.internMu.Lock()
	defer in.internMu.Unlock()
	if in.interned == nil {
		in.interned = map[uint64][]*Env{}
	}
	for _, e := range in.interned[h] {
		if sameGlobals(e.globals, out.globals) {
			return e
		}
	}
	if in.internN >= maxEntries {
		clear(in.interned)
		in.internN = 0
	}
	e := &Env{globals: out.globals, volatile: out.volatile}
	in.interned[h] = append(in.interned[h], e)
	in.internN++
	return e
}

// emptyEnv is the base of environments built on nothing.
var emptyEnv = &Env{}

// internState is an Env's table of the environments built on it.
type internState struct {
	internMu sync.Mutex
	interned map[uint64][]*Env
	internN  int
	// storeInterned holds the environments WithStoreValues builds.
	storeInterned map[uint64][]*Env
}

func hasKey(set []VarVal, k string) bool {
	for _, s := range set {
		if s.Key == k {
			return true
		}
	}
	return false
}

func sameGlobals(a, b kv) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || !Equal(a[i].v, b[i].v) {
			return false
		}
	}
	return true
}

func hashGlobals(g kv) uint64 {
	h := fnv.New64a()
	for _, x := range g {
		h.Write([]byte(x.name))
		h.Write([]byte{0})
		hashValue(h, x.v, 0)
	}
	return h.Sum64()
}

type hasher interface{ Write([]byte) (int, error) }

func hashValue(h hasher, v Value, depth int) {
	var b [10]byte
	b[0] = byte(v.T)
	if v.Const {
		b[1] = 1
	}
	if v.Bool {
		b[1] |= 2
	}
	binary.LittleEndian.PutUint64(b[2:], math.Float64bits(v.Num))
	h.Write(b[:])
	h.Write([]byte(v.Str))
	h.Write([]byte(v.Builtin))
	if v.Shape != nil && depth < 4 {
		for _, f := range v.Shape.Fields {
			h.Write([]byte(f.Key))
			hashValue(h, f.V, depth+1)
		}
		for _, a := range v.Shape.Array {
			hashValue(h, a, depth+1)
		}
	}
}

// varPath returns the path of an assignment target under the global
// var ("var.k", "var.k.f"), or "".
func (in *interp) varPath(e ast.Expr) string {
	a, ok := e.(*ast.AttrGetExpr)
	if !ok {
		return ""
	}
	k, ok := a.Key.(*ast.StringExpr)
	if !ok {
		return ""
	}
	switch o := a.Object.(type) {
	case *ast.IdentExpr:
		if o.Value == "var" && in.lookup("var") < 0 {
			return "var." + k.Value
		}
	case *ast.AttrGetExpr:
		if p := in.varPath(o); p != "" {
			return p + "." + k.Value
		}
	}
	return ""
}

// escapeVar forgets var.<k> when a table read from it (var.k, or a
// table inside it) flows where it may be changed: a local bound to
// it is the same var table (a proxy), so a change through the local
// changes var.k.
func (in *interp) escapeVar(e ast.Expr) {
	for {
		a, ok := e.(*ast.AttrGetExpr)
		if !ok {
			return
		}
		if id, ok := a.Object.(*ast.IdentExpr); ok {
			if k, ok := a.Key.(*ast.StringExpr); ok && id.Value == "var" && in.lookup("var") < 0 {
				in.ownGlobals().del("var." + k.Value)
				if !has(in.mayVar, k.Value) {
					in.mayVar = append(in.mayVar, k.Value)
				}
			}
			return
		}
		e = a.Object
	}
}

// iterArg reports the collection argument of ipairs or pairs that is
// certainly not a table (nil from a var key no code set, a constant),
// as the engine words it.
func (in *interp) iterArg(e *ast.FuncCallExpr, name string, args []Value) {
	if len(e.Args) == 0 || len(args) == 0 {
		return
	}
	v := args[0]
	if !failing(v, Table) {
		return
	}
	from := ""
	if p := in.varPath(e.Args[0]); p != "" {
		from = " from `" + p + "`"
	} else if id, ok := e.Args[0].(*ast.IdentExpr); ok {
		from = " from `" + id.Value + "`"
	}
	in.opCode(e.Args[0], "bad-argument", "bad argument #1 to `"+name+"` (table expected, got "+v.T.String()+from+")")
}

// assignValues evaluates an assignment's values into out, of length
// max(len(st.Lhs), len(st.Rhs)) (see exprsInto). A
// value assigned to a var path does not escape: var stores a copy
// (docs/language.md#var), so the table assigned and the copy keep
// their shapes.
func (in *interp) assignValues(st *ast.AssignStmt, out []Value) {
	n := len(st.Lhs)
	for i, e := range st.Rhs {
		keep := i < n && in.varPath(st.Lhs[i]) != ""
		out[i] = in.escape(e, in.expr(e), keep)
	}
	for i := len(st.Rhs); i < len(out); i++ {
		out[i] = NilValue
		if len(st.Rhs) > 0 {
			switch st.Rhs[len(st.Rhs)-1].(type) {
			case *ast.FuncCallExpr, *ast.Comma3Expr:
				out[i] = Top
			}
		}
	}
}

// varFixed reports whether only the chunk's own assignments can change
// var: no function of the VM assigns a var field (a call the evaluator
// does not follow runs Lua code of the VM, or none), and var has not
// been handed whole to code that may change it.
func (in *interp) varFixed() bool {
	return !in.mayAll && !in.volatile["var"] && !in.envVolatile["var"]
}

// leaveStore records the known store contents at a point where control
// may leave the chunk for another section (see leave).
func (in *interp) leaveStore(acc *kv, known *bool) {
	var cur kv
	for _, g := range in.globals {
		if strings.HasPrefix(g.name, storeKey) {
			cur = append(cur, g)
		}
	}
	if !*known {
		*acc, *known = clone(cur), true
		return
	}
	out := (*acc)[:0]
	for _, g := range *acc {
		if v, ok := cur.get(g.name); ok && Equal(g.v, v) {
			out = append(out, g)
		}
	}
	*acc = out
}

// StoreOut returns the store paths whose contents are known wherever
// control may leave the chunk for another section (see VarOut), each
// with its text; a path not listed is unknown. ok is false when nothing
// is known (the chunk's code was not followed).
func (f *Facts) StoreOut() (vals []VarVal, ok bool) {
	if f == nil || !f.storeKnown {
		return nil, false
	}
	return storeVals(f.storeOut), true
}

// StoreAtCalls is StoreOut at the points where a chain or an arm may
// start: execute and fanout calls (also through pcall), and the calls
// the evaluator does not follow. ok is false when there is none, or
// nothing is known.
func (f *Facts) StoreAtCalls() (vals []VarVal, ok bool) {
	if f == nil || !f.storeCallKnown {
		return nil, false
	}
	return storeVals(f.storeCall), true
}

func storeVals(g kv) []VarVal {
	vals := make([]VarVal, 0, len(g))
	for _, x := range g {
		vals = append(vals, VarVal{strings.TrimPrefix(x.name, storeKey), x.v})
	}
	return vals
}

// WithStoreValues returns env (nil: an empty environment) with the
// store paths of set holding their known contents, and store contents
// kept from chunk to chunk (a chunk evaluated from it leaves its store
// contents to the next chunk of its VM): the environment a section
// starts from when no code can change the store while prose runs. Equal
// inputs give the same pointer (interned on env).
func (env *Env) WithStoreValues(set []VarVal) *Env {
	base := env
	if base == nil {
		base = emptyEnv
	}
	var out kv
	for _, g := range base.globals {
		if !strings.HasPrefix(g.name, storeKey) {
			out = append(out, g)
		}
	}
	for _, s := range set {
		out = append(out, gv{storeKey + s.Key, s.V})
	}
	if base.stableStore && sameGlobals(out, base.globals) {
		return base
	}
	h := hashGlobals(out) ^ 0x5bd1e995
	in := &base.builtOn().internState
	in.internMu.Lock()
	defer in.internMu.Unlock()
	if in.storeInterned == nil {
		in.storeInterned = map[uint64][]*Env{}
	}
	for _, e := range in.storeInterned[h] {
		if sameGlobals(e.globals, out) {
			return e
		}
	}
	if len(in.storeInterned) >= maxEntries {
		clear(in.storeInterned)
	}
	e := &Env{globals: out, volatile: base.volatile, stableStore: true}
	in.storeInterned[h] = append(in.storeInterned[h], e)
	return e
}
