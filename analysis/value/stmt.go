// Statements: blocks, assignments, branches, loops and function bodies.

package value

import (
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
