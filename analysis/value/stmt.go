// Statements: blocks, assignments, branches, loops and function bodies.

package value

import (
	"math"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

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
	free := in.info(fe).free
	mark := func(e ast.Expr) {
		if r := rootName(e); r != "" && has(free, r) {
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
			if !reader(staticName(n.Func)) {
				for _, a := range n.Args {
					mark(a)
				}
			}
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

func (in *interp) block(stmts []ast.Stmt) {
	for _, st := range stmts {
		if in.dead {
			return
		}
		in.work++
		in.stmt(st)
	}
}

func (in *interp) stmt(st ast.Stmt) {
	switch st := st.(type) {
	case *ast.LocalAssignStmt:
		if in.localFunction(st) {
			return
		}
		var buf [2]Value
		vs := values(buf[:0], max(len(st.Names), len(st.Exprs)))
		in.fillValues(st.Exprs, vs, true)
		for i, name := range st.Names {
			in.declare(name, vs[i])
			if in.record {
				in.at.see(st.Line(), name, in.vals[len(in.vals)-1], true)
			}
		}
	case *ast.AssignStmt:
		// Evaluate the targets' objects and keys, then the values.
		var buf [2]Value
		vs := values(buf[:0], max(len(st.Lhs), len(st.Rhs)))
		in.assignValues(st, vs)
		for i, l := range st.Lhs {
			if i < len(st.Rhs) {
				if p := in.varPath(l); p != "" {
					in.varData(p, st.Rhs[i], vs[i])
				}
			}
			if id, ok := l.(*ast.IdentExpr); ok && id.Value == "reply" && i < len(st.Rhs) && in.lookup("reply") < 0 {
				in.recordResult(st.Rhs[i], vs[i], true)
			}
			in.assign(l, vs[i])
		}
	case *ast.FuncCallStmt:
		in.expr(st.Expr)
	case *ast.DoBlockStmt:
		in.open()
		in.block(st.Stmts)
		in.close()
	case *ast.IfStmt:
		// A known condition takes one arm.
		switch truth(in.expr(st.Condition)) {
		case 1:
			in.open()
			in.block(st.Then)
			in.close()
			return
		case -1:
			in.open()
			in.block(st.Else)
			in.close()
			return
		}
		entry := in.save()
		in.cond++
		in.open()
		in.block(st.Then)
		in.close()
		then, thenDead := in.save(), in.dead
		if len(st.Else) == 0 {
			// No else: the state after it is entry's, so the arms
			// join without a copy of it (one less save per if).
			in.cond--
			in.dead = false
			if thenDead {
				in.restore(entry)
			} else {
				in.restore(join(then, entry))
			}
			return
		}
		in.restore(entry)
		in.dead = false
		in.open()
		in.block(st.Else)
		in.close()
		in.cond--
		switch {
		case thenDead && in.dead:
		case thenDead:
		case in.dead:
			in.restore(then)
			in.dead = false
		default:
			in.restore(join(then, in.save()))
		}
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
		a, b, c := in.expr(st.Init), in.expr(st.Limit), Num(1)
		if st.Step != nil {
			c = in.expr(st.Step)
		}
		if first, step, n, ok := forRange(a, b, c); ok && in.unrollable(n) {
			in.unroll(n, func(k int) {
				if k < 0 {
					in.declare(st.Name, ANumber)
					return
				}
				in.declare(st.Name, Num(first+float64(k)*step))
			}, st.Stmts)
			return
		}
		in.loop(func() {
			in.open()
			in.declare(st.Name, ANumber)
			in.block(st.Stmts)
			in.close()
		})
	case *ast.GenericForStmt:
		if in.forIn(st) {
			return
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
		in.function(st.Func)
		fn := in.closure(st.Func)
		if st.Name != nil && st.Name.Func != nil && st.Name.Receiver == nil {
			in.assign(st.Name.Func, fn)
		} else if st.Name != nil && st.Name.Receiver != nil {
			in.defineMethod(st, fn)
		}
	case *ast.ReturnStmt:
		in.ret(st)
	case *ast.BreakStmt:
		if in.breaks != nil {
			in.breaks.add(in, Value{})
		}
		in.dead = true
	case *ast.GotoStmt, *ast.LabelStmt:
		in.bail = true
	}
}

// ret is a return statement: in a body evaluated at its call site, the
// call's result (a table made in the body keeps its shape); elsewhere
// the values escape.
func (in *interp) ret(st *ast.ReturnStmt) {
	if in.rets == nil || len(in.ctx) == 0 || !in.ctx[len(in.ctx)-1].exact {
		for i, e := range st.Exprs {
			v := in.expr(e)
			if i == 0 {
				in.recordResult(e, v, false)
			}
			in.escape(e, v, false)
		}
		if len(in.ctx) == 0 && in.inFunc == 0 {
			in.leaveEnd() // the chunk ends here
		}
		in.dead = true
		return
	}
	if fr := &in.frames[len(in.frames)-1]; in.cond > fr.cond {
		fr.early = true
	}
	v := Top // a bare return gives no value (see inline)
	for i, e := range st.Exprs {
		x := in.expr(e)
		keep := false
		switch e := e.(type) {
		case *ast.TableExpr:
			keep = true
		case *ast.IdentExpr:
			keep = in.lookup(e.Value) >= in.frames[len(in.frames)-1].locals
		}
		x = in.escape(e, x, keep)
		if i == 0 {
			v = in.freeze(x, 0)
		}
	}
	in.rets.add(in, v)
	in.dead = true
}

// forRange returns the first value, step and iteration count of a
// numeric for loop with known integer bounds.
func forRange(a, b, c Value) (first, step float64, n int, ok bool) {
	x, ok1 := a.NumConst()
	y, ok2 := b.NumConst()
	z, ok3 := c.NumConst()
	if !ok1 || !ok2 || !ok3 || z == 0 || x != math.Trunc(x) || y != math.Trunc(y) || z != math.Trunc(z) {
		return 0, 0, 0, false
	}
	k := math.Floor((y-x)/z) + 1
	if k < 0 {
		k = 0
	}
	if k > maxUnroll {
		return 0, 0, 0, false
	}
	return x, z, int(k), true
}

// unrollable reports whether a loop of n iterations is evaluated one
// iteration at a time.
func (in *interp) unrollable(n int) bool {
	return !in.bail && n <= maxUnroll && !in.over(n)
}

// unroll evaluates a loop body n times, bind declaring the loop's
// variables of iteration k; break and return end it.
func (in *interp) unroll(n int, bind func(k int), stmts []ast.Stmt) {
	saved := in.breaks
	brk := &exits{depth: len(in.vals)}
	in.breaks = brk
	in.cond++
	defer func() { in.breaks = saved; in.cond-- }()
	for k := 0; k < n; k++ {
		if in.over(0) {
			// Out of budget: the remaining iterations are summarised
			// (a fixed point, the loop variables unknown).
			in.breaks = saved
			in.loop(func() {
				in.open()
				bind(-1)
				in.block(stmts)
				in.close()
			})
			in.breaks = brk
			break
		}
		in.open()
		bind(k)
		in.block(stmts)
		in.close()
		if in.dead {
			// Every path left the loop (break) or the function
			// (return).
			if brk.n > 0 {
				in.restore(brk.st)
				in.dead = false
			}
			return
		}
	}
	if brk.n > 0 {
		in.restore(join(in.save(), brk.st))
	}
}

// forIn unrolls a generic for over ipairs or pairs of a known table
// shape, reporting whether it did; otherwise it evaluates the loop's
// expressions and leaves the loop to the caller.
func (in *interp) forIn(st *ast.GenericForStmt) bool {
	if handled, unrolled := in.forGmatch(st); handled {
		return unrolled
	}
	var members [][2]Value
	ok := false
	if c, isCall := st.Exprs[0].(*ast.FuncCallExpr); len(st.Exprs) == 1 && isCall && c.Receiver == nil && len(c.Args) == 1 {
		fn := in.expr(c.Func)
		if fn.T == Function && (fn.Builtin == "ipairs" || fn.Builtin == "pairs") {
			t := in.escape(c.Args[0], in.expr(c.Args[0]), true)
			in.iterArg(c, fn.Builtin, []Value{t})
			members, ok = iteration(fn.Builtin, t)
		} else {
			in.escape(c, in.call(c), true)
			return false
		}
	} else {
		for _, e := range st.Exprs {
			in.escape(e, in.expr(e), true)
		}
		return false
	}
	if !ok || !in.unrollable(len(members)) {
		return false
	}
	in.unroll(len(members), func(k int) {
		for i, name := range st.Names {
			v := NilValue
			switch {
			case k < 0:
				v = Top
			case i < 2:
				v = members[k][i]
			}
			in.declare(name, v)
		}
	}, st.Stmts)
	return true
}

// iteration lists the key and value of each iteration of ipairs or
// pairs over t, in the engine's order (the array part, then the fields
// in insertion order), when t's shape is known.
func iteration(how string, t Value) ([][2]Value, bool) {
	if t.T != Table || t.Shape == nil || t.Shape.Len() > maxUnroll {
		return nil, false
	}
	var out [][2]Value
	for i, v := range t.Shape.Array {
		if v.T == Nil {
			if how == "ipairs" {
				return out, true
			}
			continue
		}
		if v.T&Nil != 0 {
			return nil, false
		}
		out = append(out, [2]Value{Num(float64(i + 1)), v})
	}
	if how == "pairs" {
		for _, f := range t.Shape.Fields {
			out = append(out, [2]Value{Str(f.Key), f.V})
		}
	}
	return out, true
}

// loop runs a loop body to a fixed point (at most three rounds, then
// what still changes becomes Top), then once more recording, from the
// fixed point.
func (in *interp) loop(body func()) {
	in.cond++
	in.loops++
	savedBreaks := in.breaks
	brk := &exits{depth: len(in.vals)}
	in.breaks = brk
	defer func() {
		in.cond--
		in.loops--
		in.breaks = savedBreaks
		if brk.n > 0 && !in.dead {
			in.restore(join(in.save(), brk.st))
		}
	}()
	// run evaluates the body once; a body that always leaves (break,
	// return) leaves the state it started from for the next round.
	run := func() {
		st := in.save()
		body()
		if in.dead {
			in.dead = false
			in.restore(st)
		}
	}
	if in.loops > maxLoopDepth {
		// Deeper loops run once from a state where everything is
		// unknown, so nested loops cost linear, not exponential, time.
		top := in.save()
		for i := range top.vals {
			top.vals[i] = Top
		}
		top.globals, top.varSet = nil, nil
		in.restore(top)
		run()
		in.restore(join(top, in.save()))
		return
	}
	rec := in.record
	in.record = false
	entry := in.save()
	cur := entry
	for round := 0; ; round++ {
		in.restore(cur)
		run()
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
		run()
		in.restore(join(cur, in.save()))
	}
}

// maxLoopDepth is how deep loops are iterated to a fixed point.
const maxLoopDepth = 2

// function interprets a function body where it is defined: parameters,
// upvalues and globals are unknown there.
func (in *interp) function(fe *ast.FunctionExpr) {
	in.scan(fe)
	if !in.record || in.generic[fe] || in.site != nil {
		return
	}
	if in.generic == nil {
		in.generic = map[*ast.FunctionExpr]bool{}
	}
	in.generic[fe] = true
	savedRets, savedBreaks, savedDead := in.rets, in.breaks, in.dead
	in.rets, in.breaks, in.dead = nil, nil, false
	in.ctx = append(in.ctx, ctxEntry{fn: fe})
	defer func() {
		in.ctx = in.ctx[:len(in.ctx)-1]
		in.rets, in.breaks, in.dead = savedRets, savedBreaks, savedDead
	}()
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
		in.ownGlobals().set(l.Value, v)
	case *ast.AttrGetExpr:
		key := in.expr(l.Key)
		if id, ok := l.Object.(*ast.IdentExpr); ok {
			if i := in.lookup(id.Value); i >= 0 {
				t := in.vals[i]
				if t.Shape != nil {
					in.dropAliases(t.Shape)
					t.Shape = t.Shape.store(key, v)
					in.vals[i] = t
				}
				return
			}
			if g, ok := in.globals.get(id.Value); ok && id.Value != "var" && g.T == Table && g.Shape != nil {
				// A field of a known global table (a shared library's
				// module table gaining its functions).
				in.dropAliases(g.Shape)
				g.Shape = g.Shape.store(key, v)
				if g.Shape == nil {
					in.ownGlobals().del(id.Value)
				} else {
					in.ownGlobals().set(id.Value, g)
				}
				return
			}
			if id.Value == "var" {
				if k, ok := key.StrConst(); ok && key.T == String {
					if g, ok := in.globals.get("var." + k); ok {
						in.dropAliasesIn(g.Shape) // a proxy of the old table
					}
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
					in.ownGlobals().set("var."+k, v)
					return
				}
			}
			if id.Value == "var" {
				in.f.VarWhole, in.mayAll = true, true
			}
			in.ownGlobals().del(id.Value)
			in.dropVarPaths(id.Value)
			return
		}
		// A nested target (a.b.c = v): what it changes is unknown.
		in.expr(l.Object)
		if r := rootName(l.Object); r != "" {
			if i := in.lookup(r); i >= 0 {
				in.dropAliasesIn(in.vals[i].Shape)
				in.vals[i].Shape = nil
			} else {
				if g, ok := in.globals.get(r); ok {
					in.dropAliasesIn(g.Shape)
				}
				in.ownGlobals().del(r)
				if r == "var" {
					if a, ok := l.Object.(*ast.AttrGetExpr); ok {
						if k, ok := a.Key.(*ast.StringExpr); ok {
							if g, ok := in.globals.get("var." + k.Value); ok {
								in.dropAliasesIn(g.Shape)
							}
							in.ownGlobals().del("var." + k.Value)
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
	out := in.reuseGlobals()
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
