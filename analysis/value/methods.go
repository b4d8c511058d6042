// Methods on Lua tables: `obj:name(...)` where obj's shape is known is a
// call of its field name with obj as the first argument, evaluated at
// the call like any known function; a method the shape lacks fails.

package value

import (
	"github.com/yuin/gopher-lua/ast"
)

// method evaluates the method call e on the receiver value recv when
// recv is a table of known shape, reporting whether it did.
func (in *interp) method(e *ast.FuncCallExpr, recv Value) (Value, bool) {
	if recv.T != Table || recv.Shape == nil || recv.Builtin != "" {
		return Value{}, false
	}
	m, ok := recv.Shape.Get(e.Method)
	if !ok {
		// A table of known shape has no metatable (see failing): the
		// method is nil, and the call fails.
		what := "method `" + e.Method + "`"
		if n := calleeName(e.Receiver); n != "" {
			what = "method `" + n + ":" + e.Method + "`"
		}
		if in.record {
			in.addOp(Op{Expr: e, Msg: "attempt to call a nil value", What: what, InFunc: in.inFunc > 0})
		}
		_, start := in.args(e, false, false, false)
		in.pop(start)
		in.forget()
		return Top, true
	}
	if !in.canInline(m) {
		return Value{}, false
	}
	args, start := in.args(e, true, false, false)
	defer in.pop(start)
	all := make([]Value, 0, len(args)+1)
	all = append(all, recv)
	all = append(all, args...)
	r := in.inline(e, m, all)
	fi := in.info(m.Fn)
	// all[i+1] is argument i; the body's parameter list starts with
	// self for a `function t:name()` body, or names self itself.
	shift := 0
	if fi.method {
		shift = 1
	}
	for i, a := range e.Args {
		p := i + 1 - shift
		if p >= len(fi.mutates) && m.Fn.ParList.HasVargs || p >= 0 && p < len(fi.mutates) && fi.mutates[p] {
			in.escape(a, args[i], false)
		}
	}
	if fi.mutSelf || !fi.method && len(fi.mutates) > 0 && fi.mutates[0] {
		in.escape(e.Receiver, recv, false)
	}
	return r, true
}

// defineMethod assigns the function fn of `function t:name()` (st) to
// the field name of t.
func (in *interp) defineMethod(st *ast.FuncDefStmt, fn Value) {
	key := &ast.StringExpr{Value: st.Name.Method}
	key.SetLine(st.Line())
	in.assign(&ast.AttrGetExpr{Object: st.Name.Receiver, Key: key}, fn)
}
