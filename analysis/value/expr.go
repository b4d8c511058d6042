// Expressions: operators, names, indexing and table constructors, and the
// failing operations and var reads they record.

package value

import (
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/yuin/gopher-lua/ast"
)

// exprList evaluates expressions for n targets: a trailing call or ...
// fills the rest with Top; missing values are nil.
func (in *interp) exprList(es []ast.Expr, n int, dst []Value) []Value {
	out := values(dst, max(n, len(es)))
	in.exprsInto(es, out)
	return out[:max(n, 0)]
}

// exprsInto is exprList into out, of length max(n, len(es)): a caller
// that gives its own array keeps it on its stack (exprList's result
// would escape, the evaluator's functions calling each other).
func (in *interp) exprsInto(es []ast.Expr, out []Value) {
	in.fillValues(es, out, false)
}

// fillValues is exprsInto; toLocal binds each value to a new local
// (bind) instead of letting it escape.
func (in *interp) fillValues(es []ast.Expr, out []Value, toLocal bool) {
	for i, e := range es {
		if toLocal {
			out[i] = in.bind(e, in.expr(e))
		} else {
			out[i] = in.escape(e, in.expr(e), false)
		}
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
}

// values returns dst with length n when its capacity holds them (a
// caller's array on its stack: most statements assign one or two
// values), else a new slice.
func values(dst []Value, n int) []Value {
	if cap(dst) < n {
		return make([]Value, n)
	}
	return dst[:n]
}

// escape is called when value v of expression e flows somewhere a
// table can be changed through (a variable, a table field, a call that
// may change it): a local table that escapes loses its shape, as does
// the copy. keep leaves the shape (a reader that changes nothing).
func (in *interp) escape(e ast.Expr, v Value, keep bool) Value {
	if id, ok := e.(*ast.IdentExpr); ok && !keep && id.Value == "var" && in.lookup("var") < 0 {
		in.f.VarWhole, in.mayAll = true, true
	}
	if !keep && v.T&Table != 0 {
		in.escapeVar(e)
	}
	if v.T&Table == 0 || v.Shape == nil || keep {
		return v
	}
	in.dropAliasesIn(v.Shape)
	if id, ok := e.(*ast.IdentExpr); ok {
		if i := in.lookup(id.Value); i >= 0 {
			in.vals[i].Shape = nil
		} else {
			in.ownGlobals().del(id.Value)
		}
		v.Shape = nil
	} else if !fresh(e) {
		// A table read out of another (SPECS.lookup): the copy and the
		// field are one table, and a write through either changes both,
		// which shapes do not follow. Neither keeps its shape: the copy's
		// is dropped, and so is the shape of the table it was read from
		// (its root), as a write to a nested field drops it (assign).
		if r := rootName(e); r != "" && r != "var" {
			if i := in.lookup(r); i >= 0 {
				in.dropAliasesIn(in.vals[i].Shape)
				in.vals[i].Shape = nil
			} else if g, ok := in.globals.get(r); ok && g.Shape != nil {
				in.dropAliasesIn(g.Shape)
				in.ownGlobals().del(r)
			}
		}
		v.Shape = nil
	}
	return v
}

// fresh reports whether a table value of expression e is a table no
// other name refers to: a constructor, or the result of a call (a shape
// survives a call only when the function made the table: ret strips
// the shape of a table it returns from anywhere else, and a parameter a
// body returns or stores counts as changed by the call, see info).
func fresh(e ast.Expr) bool {
	switch e.(type) {
	case *ast.TableExpr, *ast.FuncCallExpr:
		return true
	}
	return false
}

func (in *interp) op(e ast.Expr, msg string, operand ast.Expr) {
	if !in.record {
		return
	}
	what := ""
	if operand != nil {
		what = describe(operand, in)
	}
	in.addOp(Op{Expr: e, Msg: msg, What: what, InFunc: in.inFunc > 0})
}

// opCode records a failing call argument with its code.
func (in *interp) opCode(e ast.Expr, code, msg string) {
	if in.record {
		in.addOp(Op{Expr: e, Msg: msg, InFunc: in.inFunc > 0, Code: code})
	}
}

// addOp records a failing operation once. Inside a function body of
// another chunk (the shared library's) evaluated at a call of this
// chunk, the operation is reported at that call, naming the function.
// An operation seen both where its function is defined and at a call
// that certainly runs it is reported as certain.
func (in *interp) addOp(op Op) {
	if in.site != nil {
		op.Inner, op.Expr = op.Expr, in.site
		where := "in a call of " + in.siteName
		if in.siteName == "" {
			where = "in the function called here"
		}
		if op.What != "" {
			op.What += ", " + where
		} else {
			op.What = where
		}
	}
	k := opKey{op.Expr, op.Msg, op.What}
	if i, ok := in.opAt[k]; ok {
		if !op.InFunc {
			in.f.Ops[i].InFunc = false
		}
		return
	}
	if in.opAt == nil {
		in.opAt = map[opKey]int{}
	}
	in.opAt[k] = len(in.f.Ops)
	in.f.Ops = append(in.f.Ops, op)
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
	if in.site != nil {
		return // a read in another chunk's function: judged there
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
		if in.record && in.site == nil {
			in.at.see(e.Line(), e.Value, v, false)
		}
		return v
	case *ast.AttrGetExpr:
		return in.index(e)
	case *ast.FuncCallExpr:
		v := in.call(e)
		if in.record && in.site == nil && in.at != nil {
			in.at.seeCall(e, v)
		}
		return v
	case *ast.FunctionExpr:
		in.function(e)
		return in.closure(e)
	case *ast.TableExpr:
		return in.table(e)
	case *ast.StringConcatOpExpr:
		l, r := in.expr(e.Lhs), in.expr(e.Rhs)
		in.operands(e.Lhs, l, e.Rhs, r, "concatenate")
		a, ok1 := l.StrConst()
		b, ok2 := r.StrConst()
		if ok1 && ok2 && len(a)+len(b) <= maxConst {
			return Str(a + b)
		}
		return AString
	case *ast.ArithmeticOpExpr:
		l, r := in.expr(e.Lhs), in.expr(e.Rhs)
		in.operands(e.Lhs, l, e.Rhs, r, "perform arithmetic on")
		a, ok1 := l.NumConst()
		b, ok2 := r.NumConst()
		if ok1 && ok2 {
			if n, ok := arith(e.Operator, a, b); ok {
				return Num(n)
			}
		}
		return ANumber
	case *ast.RelationalOpExpr:
		l, r := in.expr(e.Lhs), in.expr(e.Rhs)
		in.ordering(e, l, r)
		return compare(e.Operator, l, r)
	case *ast.LogicalOpExpr:
		l := in.expr(e.Lhs)
		truthy := l.T&(Nil|Boolean) == 0 || (l.T == Boolean && l.Const && l.Bool)
		falsy := l.T == Nil || (l.T == Boolean && l.Const && !l.Bool)
		if e.Operator == "or" && truthy || e.Operator == "and" && falsy {
			return l // the right side does not run
		}
		in.cond++
		r := in.expr(e.Rhs)
		in.cond--
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
		switch truth(in.expr(e.Expr)) {
		case 1:
			return Bool(false)
		case -1:
			return Bool(true)
		}
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
			if in.record && in.site == nil {
				in.at.see(e.Line(), "var."+k, v, false)
			}
			return v
		}
		if obj.Builtin == "sys" {
			in.recordSysRead(e, k)
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
		if key.T == Nil {
			return NilValue // no table holds a nil key
		}
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
				switch x := f.Value.(type) {
				case *ast.FuncCallExpr:
					// A last call expands to all its results, unless
					// it is a library function with exactly one.
					if x.Receiver != nil || !singleResult(staticName(x.Func)) || in.lookup(rootName(x.Func)) >= 0 {
						s = nil
					}
				case *ast.Comma3Expr:
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

// operands records the operands of `..` or arithmetic (verb: what Lua
// says it attempted) that fail for certain: a type that is neither string
// nor number, or a var key that is not set.
func (in *interp) operands(le ast.Expr, l Value, re ast.Expr, r Value, verb string) {
	for _, x := range [2]struct {
		v Value
		e ast.Expr
	}{{l, le}, {r, re}} {
		if failing(x.v, String|Number) {
			t := x.v.T.String()
			if x.v.T == Table && in.varPath(x.e) != "" {
				t = "userdata" // a table in var is a proxy
			}
			in.op(x.e, "attempt to "+verb+" a "+t+" value", x.e)
		} else if s, ok := x.v.StrConst(); ok && x.v.T == String && verb == "perform arithmetic on" && !luaNumber(s) {
			// A string takes part in arithmetic only when it converts.
			in.op(x.e, "attempt to perform arithmetic on a string value", x.e)
		}
	}
	in.varRead(le, verb)
	in.varRead(re, verb)
}

// truth is 1 when v is certainly true as a condition (neither nil nor
// false), -1 when certainly false, 0 when unknown.
func truth(v Value) int {
	switch {
	case v.T == Any || v.T == 0:
		return 0
	case v.T&(Nil|Boolean) == 0:
		return 1
	case v.T == Nil:
		return -1
	case v.T == Boolean && v.Const:
		if v.Bool {
			return 1
		}
		return -1
	}
	return 0
}

// compare folds a relational operator on known operands: constants of
// the same type, and == / ~= between values of different known types.
func compare(op string, a, b Value) Value {
	if a.T == Any || b.T == Any || !a.T.single() || !b.T.single() {
		return ABoolean
	}
	if a.T != b.T {
		switch op {
		case "==":
			return Bool(false)
		case "~=":
			return Bool(true)
		}
		return ABoolean
	}
	if a.T == Nil {
		switch op {
		case "==":
			return Bool(true)
		case "~=":
			return Bool(false)
		}
		return ABoolean
	}
	if !a.Const || !b.Const {
		return ABoolean
	}
	var c int
	switch a.T {
	case String:
		c = strings.Compare(a.Str, b.Str)
	case Number:
		switch {
		case a.Num < b.Num:
			c = -1
		case a.Num > b.Num:
			c = 1
		case a.Num != b.Num:
			return ABoolean // NaN
		}
	case Boolean:
		if op != "==" && op != "~=" {
			return ABoolean
		}
		if a.Bool != b.Bool {
			c = 1
		}
	default:
		return ABoolean
	}
	switch op {
	case "==":
		return Bool(c == 0)
	case "~=":
		return Bool(c != 0)
	case "<":
		return Bool(c < 0)
	case "<=":
		return Bool(c <= 0)
	case ">":
		return Bool(c > 0)
	case ">=":
		return Bool(c >= 0)
	}
	return ABoolean
}

// singleResult reports whether the library function name returns
// exactly one value.
func singleResult(name string) bool {
	switch name {
	case "tostring", "type", "string.rep", "string.format", "string.upper", "string.lower", "string.sub",
		"string.len", "string.reverse", "table.concat", "untrusted":
		return true
	}
	return false
}

// ordering records a <, <=, > or >= whose operands certainly cannot be
// ordered: Lua orders two numbers or two strings, nothing else without a
// metatable (a table of known shape has none).
func (in *interp) ordering(e *ast.RelationalOpExpr, l, r Value) {
	switch e.Operator {
	case "<", "<=", ">", ">=":
	default:
		return
	}
	lt, rt := certainType(l), certainType(r)
	if lt == "" || rt == "" || l.T == Table && l.Shape == nil || r.T == Table && r.Shape == nil {
		return
	}
	if lt == rt && (lt == "number" || lt == "string") {
		return
	}
	if e.Operator == ">" || e.Operator == ">=" {
		lt, rt = rt, lt // a > b runs as b < a
	}
	in.op(e, "attempt to compare "+lt+" with "+rt, nil)
}
