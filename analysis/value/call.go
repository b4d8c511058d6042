// Calls of known Lua functions: a call whose callee is a function the
// interpreter knows (a local, a shared-library global, a table field, an
// upvalue) is evaluated at the call site with the actual abstract
// arguments, within bounds (call depth, recursion, work), and yields
// its abstract result and its effects on globals, var and the store.

package value

import (
	"github.com/yuin/gopher-lua/ast"
)

// Upvals are the upvalues a closure captured: for each free name of its
// body, either the slot of the local it names where the closure was
// made (live: the slot is read when the closure is called, if it still
// holds that declaration), or a frozen value (the closure left the
// chunk or the call that made it).
type Upvals struct {
	// home is the first statement of the chunk that made the closure.
	home  ast.Stmt
	names []string
	slots []int32
	ids   []uint32
	// vals are the frozen values (nil while live).
	vals []Value
}

// frame is one inlined call.
type frame struct {
	fn *ast.FunctionExpr
	// locals is the first slot after the upvalue copies.
	locals int
	// cond is the condition depth at the call; early is set when a
	// return under a deeper condition may leave the body before its end
	// (what follows it in the body is not certain to run).
	cond  int
	early bool
}

// exits collects the states and values leaving a body through return
// (or a loop through break).
type exits struct {
	// depth is the slot count the saved states are cut to.
	depth int
	n     int
	st    state
	ret   Value
}

func (x *exits) add(in *interp, v Value) {
	st := in.save()
	st.vals = st.vals[:min(len(st.vals), x.depth)]
	if x.n == 0 {
		x.st, x.ret = st, v
	} else {
		x.st, x.ret = join(x.st, st), Join(x.ret, v)
	}
	x.n++
}

// Bounds of the evaluator.
const (
	// maxCallDepth is how deep calls are inlined.
	maxCallDepth = 8
	// maxRecursion is how many calls of one function may be inlined
	// inside each other (a recursive local function unrolls this deep).
	maxRecursion = 4
	// maxUnroll is how many iterations of a loop over a known
	// collection or range are evaluated one by one.
	maxUnroll = 64
	// maxWork is the statements and calls one chunk's evaluation may
	// spend on inlining and unrolling.
	maxWork = 20000
)

// fnInfo is what a function body's text says, computed once per body.
type fnInfo struct {
	// free are the names the body reads or writes that it does not
	// declare (upvalues or globals).
	free []string
	// mutates[i] is true when the body may change the table passed as
	// parameter i (a field store, a call that may change it, or a
	// second reference to it the call leaves behind: returned, stored
	// in a table, bound to another name).
	mutates []bool
	// method is true for a body defined with `function t:name()`: its
	// `self` is an implicit first parameter (free in its text); mutSelf
	// when it may change the table self holds.
	method, mutSelf bool
}

func (in *interp) info(fe *ast.FunctionExpr) *fnInfo {
	if fi, ok := in.fnInfo[fe]; ok {
		return fi
	}
	if in.fnInfo == nil {
		in.fnInfo = map[*ast.FunctionExpr]*fnInfo{}
	}
	sets := in.infoSets.take()
	in.infoSets = sets
	declared, seen, mut, used := sets.declared, sets.seen, sets.mut, sets.used
	defer func() { clear(used); sets.used = used[:0] }() // hold no name of this prompt
	for _, p := range fe.ParList.Names {
		declared[p] = true
	}
	markMut := func(e ast.Expr) {
		if r := rootName(e); r != "" {
			mut[r] = true
		}
	}
	// A table a name holds that the body returns, stores in a table or
	// binds to another name may be changed through that other reference
	// after the call: the caller's table counts as changed.
	markAlias := func(es ...ast.Expr) {
		for _, e := range es {
			if id, ok := e.(*ast.IdentExpr); ok {
				mut[id.Value] = true
			}
		}
	}
	inspect(fe.Stmts, func(n any) bool {
		switch n := n.(type) {
		case *ast.LocalAssignStmt:
			for _, name := range n.Names {
				declared[name] = true
			}
			markAlias(n.Exprs...)
		case *ast.NumberForStmt:
			declared[n.Name] = true
		case *ast.GenericForStmt:
			for _, name := range n.Names {
				declared[name] = true
			}
		case *ast.FunctionExpr:
			for _, p := range n.ParList.Names {
				declared[p] = true
			}
		case *ast.IdentExpr:
			if !seen[n.Value] {
				seen[n.Value] = true
				used = append(used, n.Value)
			}
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if _, ok := l.(*ast.AttrGetExpr); ok {
					markMut(l)
				}
			}
			markAlias(n.Rhs...)
		case *ast.ReturnStmt:
			markAlias(n.Exprs...)
		case *ast.TableExpr:
			for _, f := range n.Fields {
				markAlias(f.Value)
			}
		case *ast.FuncCallExpr:
			if n.Receiver != nil {
				markMut(n.Receiver)
			}
			if !reader(staticName(n.Func)) {
				for _, a := range n.Args {
					markMut(a)
				}
			}
		}
		return true
	})
	fi := &fnInfo{mutates: make([]bool, len(fe.ParList.Names))}
	for _, name := range used {
		if !declared[name] {
			fi.free = append(fi.free, name)
		}
	}
	for i, p := range fe.ParList.Names {
		fi.mutates[i] = mut[p]
	}
	fi.method = has(fi.free, "self")
	fi.mutSelf = fi.method && mut["self"]
	in.fnInfo[fe] = fi
	return fi
}

// infoSets are the sets info fills for one function body, reused body
// after body (a body's sets are cleared before the next, and dropped
// when a large body left them large).
type infoSets struct {
	declared, seen, mut map[string]bool
	used                []string
}

// take returns empty sets: s's when it holds small ones.
func (s *infoSets) take() *infoSets {
	if s == nil || len(s.declared)+len(s.seen)+len(s.mut) > 256 {
		return &infoSets{declared: map[string]bool{}, seen: map[string]bool{}, mut: map[string]bool{}}
	}
	clear(s.declared)
	clear(s.seen)
	clear(s.mut)
	return s
}

// staticName is the host or library name a callee expression spells
// ("log", "string.format"), or "".
func staticName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.IdentExpr:
		return e.Value
	case *ast.AttrGetExpr:
		if k, ok := e.Key.(*ast.StringExpr); ok {
			if o, ok := e.Object.(*ast.IdentExpr); ok {
				return o.Value + "." + k.Value
			}
		}
	}
	return ""
}

// closure returns the value of function expression fe evaluated here:
// it captures the slots of the locals its free names refer to.
func (in *interp) closure(fe *ast.FunctionExpr) Value {
	fi := in.info(fe)
	up := &Upvals{home: in.f.ast0}
	for _, name := range fi.free {
		if i := in.lookup(name); i >= 0 {
			up.names = append(up.names, name)
			up.slots = append(up.slots, int32(i))
			up.ids = append(up.ids, in.ids[i])
		}
	}
	return Value{T: Function, Fn: fe, Up: up}
}

// upval returns the value of upvalue i of a closure called now.
func (in *interp) upval(u *Upvals, i int) Value {
	if u.vals != nil {
		return u.vals[i]
	}
	s := int(u.slots[i])
	if s < len(in.vals) && in.ids[s] == u.ids[i] && in.names[s] == u.names[i] {
		if in.volatile[u.names[i]] {
			return Top
		}
		return in.vals[s]
	}
	return Top
}

// freeze returns v with the closures in it (and in its table shape)
// holding their upvalues' current values, so that v can leave the
// chunk or the call that made it. depth bounds nested shapes.
func (in *interp) freeze(v Value, depth int) Value {
	switch {
	case v.T == Function && v.Fn != nil && (v.Up == nil || v.Up.vals == nil):
		if v.Up == nil {
			v.Up = &Upvals{}
		}
		u := &Upvals{home: v.Up.home, names: v.Up.names, vals: make([]Value, len(v.Up.names))}
		for i := range u.names {
			if depth > 3 {
				u.vals[i] = Top
			} else {
				u.vals[i] = in.freeze(in.upval(v.Up, i), depth+1)
			}
		}
		v.Up = u
	case v.T == Table && v.Shape != nil && depth <= 3:
		var s *Shape
		for i, f := range v.Shape.Fields {
			if fv := in.freeze(f.V, depth+1); !Equal(fv, f.V) {
				if s == nil {
					s = &Shape{Fields: append([]Field(nil), v.Shape.Fields...), Array: v.Shape.Array}
				}
				s.Fields[i].V = fv
			}
		}
		for i, a := range v.Shape.Array {
			if av := in.freeze(a, depth+1); !Equal(av, a) {
				if s == nil {
					s = &Shape{Fields: v.Shape.Fields, Array: append([]Value(nil), v.Shape.Array...)}
				} else if &s.Array[0] == &v.Shape.Array[0] {
					s.Array = append([]Value(nil), v.Shape.Array...)
				}
				s.Array[i] = av
			}
		}
		if s != nil {
			v.Shape = s
		}
	case v.T == Table && v.Shape != nil:
		v.Shape = nil
	}
	return v
}

// canInline reports whether a call of fn is evaluated at its site.
func (in *interp) canInline(fn Value) bool {
	if fn.T != Function || fn.Fn == nil || in.bail || len(in.frames) >= maxCallDepth || in.over(0) {
		return false
	}
	n := 0
	for _, f := range in.frames {
		if f.fn == fn.Fn {
			n++
		}
	}
	return n < maxRecursion
}

// foreign reports whether fe is not a function of the chunk being
// interpreted (the shared library's, or an earlier chunk's).
func (in *interp) foreign(fn Value) bool {
	return fn.Up != nil && fn.Up.home != in.f.ast0
}

// inline evaluates a call of the known function fn with the argument
// values args at the call e, and returns its first result.
func (in *interp) inline(e *ast.FuncCallExpr, fn Value, args []Value) Value {
	fe := fn.Fn
	in.work += 4
	a := clone(args)
	lastMulti := false
	if n := len(e.Args); n > 0 {
		switch e.Args[n-1].(type) {
		case *ast.FuncCallExpr, *ast.Comma3Expr:
			lastMulti = true
		}
	}
	if in.site == nil && in.foreign(fn) {
		in.site, in.siteName = e, calleeName(e.Func)
		defer func() { in.site, in.siteName = nil, "" }()
	}
	defer in.enterOuter(e)()
	in.frames = append(in.frames, frame{fn: fe, cond: in.cond})
	savedBase, savedRets, savedBreaks, savedDead := in.base, in.rets, in.breaks, in.dead
	in.open()
	start := len(in.vals)
	// The upvalues become the frame's first slots.
	if fn.Up != nil {
		ups := make([]Value, len(fn.Up.names))
		for i := range ups {
			ups[i] = in.upval(fn.Up, i)
		}
		for i, name := range fn.Up.names {
			in.declareRaw(name, ups[i])
		}
	}
	in.base = start
	in.frames[len(in.frames)-1].locals = len(in.vals)
	in.ctx = append(in.ctx, ctxEntry{fn: fe, exact: true})
	names := fe.ParList.Names
	if in.info(fe).method {
		names = append([]string{"self"}, names...)
	}
	for i, p := range names {
		v := NilValue
		switch {
		case i < len(a):
			v = a[i]
		case lastMulti:
			v = Top
		}
		in.declareRaw(p, v)
	}
	rets := &exits{depth: start}
	in.rets, in.breaks, in.dead = rets, nil, false
	in.block(fe.Stmts)
	if !in.dead {
		// A body that ends without return gives no value. Lua adjusts
		// that to nil, but the engine's VM lets some operations (a
		// concatenation) take it, so it is not judged: unknown.
		rets.add(in, Top)
	}
	in.restore(rets.st)
	in.base = savedBase
	in.close()
	in.rets, in.breaks, in.dead = savedRets, savedBreaks, savedDead
	in.frames = in.frames[:len(in.frames)-1]
	in.ctx = in.ctx[:len(in.ctx)-1]
	return rets.ret
}

// calleeName names a callee for messages ("heading", "M.path").
func calleeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.IdentExpr:
		return e.Value
	case *ast.AttrGetExpr:
		if k, ok := e.Key.(*ast.StringExpr); ok {
			if o := calleeName(e.Object); o != "" {
				return o + "." + k.Value
			}
		}
	}
	return ""
}
