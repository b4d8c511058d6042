// Package value is the checker's abstract interpreter: it follows the
// values of a Lua chunk through locals, upvalues, globals, `var` fields,
// table constructors and field stores, `..`, arithmetic, `#` and the pure
// library functions, so that a rule of the engine (engine/rules) can
// judge an argument that is not a literal at the call site
// (docs/codes.md#bad-argument, docs/codes.md#bad-operand).
//
// An abstract value is a set of Lua types with, where known, a constant
// (string, number, boolean, nil), a table shape (known keys and array
// members, each an abstract value) or a function. Anything the
// interpreter cannot see (model output, the run input, a store read, a
// library result it does not model, a value a function may change) is
// Top, and Top never produces a finding: precision first.
package value

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/yuin/gopher-lua/ast"
)

// Type is a set of Lua types.
type Type uint8

// Lua types.
const (
	Nil Type = 1 << iota
	Boolean
	Number
	String
	Table
	Function
	// Other is userdata and thread.
	Other
	// Any is every type: nothing is known.
	Any = Nil | Boolean | Number | String | Table | Function | Other
)

var typeNames = []string{"nil", "boolean", "number", "string", "table", "function", "userdata"}

// String names the types ("string|nil").
func (t Type) String() string {
	if t == Any {
		return "any"
	}
	var parts []string
	for i, n := range typeNames {
		if t&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// single reports whether t is exactly one type.
func (t Type) single() bool { return t != 0 && t&(t-1) == 0 }

// Value is an abstract Lua value.
type Value struct {
	T Type
	// Const is true when the value is one known constant of its single
	// type: Str, Num or Bool holds it (nil is always constant).
	Const bool
	Str   string
	Num   float64
	Bool  bool
	// Shape is the known content of a table value (T == Table); nil when
	// the table may hold anything.
	Shape *Shape
	// Fn is a function value's expression, when it is one known Lua
	// function; Builtin names a known host or library function.
	Fn      *ast.FunctionExpr
	Builtin string
	// Up holds the upvalues a known Lua function captured (nil: none
	// known, or Fn is nil).
	Up *Upvals
}

// Shape is a table whose every member is known: the string keys in
// Fields (in insertion order) and the array part in Array.
type Shape struct {
	Fields []Field
	Array  []Value
}

// Field is one string key of a shape.
type Field struct {
	Key string
	V   Value
}

// Get returns the value of key k.
func (s *Shape) Get(k string) (Value, bool) {
	for i := range s.Fields {
		if s.Fields[i].Key == k {
			return s.Fields[i].V, true
		}
	}
	return Value{}, false
}

// Len is the shape's member count.
func (s *Shape) Len() int { return len(s.Fields) + len(s.Array) }

// Top is the unknown value.
var Top = Value{T: Any}

// Known values.
var (
	NilValue = Value{T: Nil, Const: true}
	AString  = Value{T: String}
	ANumber  = Value{T: Number}
	ABoolean = Value{T: Boolean}
	ATable   = Value{T: Table}
)

// Str returns the constant string s.
func Str(s string) Value { return Value{T: String, Const: true, Str: s} }

// Num returns the constant number n.
func Num(n float64) Value { return Value{T: Number, Const: true, Num: n} }

// Bool returns the constant boolean b.
func Bool(b bool) Value { return Value{T: Boolean, Const: true, Bool: b} }

// IsTop reports whether nothing is known about v.
func (v Value) IsTop() bool { return v.T == Any }

// Only reports whether v's types are all within t (and v is not Top).
func (v Value) Only(t Type) bool { return v.T != Any && v.T&^t == 0 }

// Excludes reports whether v is certainly none of the types t.
func (v Value) Excludes(t Type) bool { return v.T != Any && v.T&t == 0 }

// Rules returns v as the description engine/rules checks, when v has one
// known type; ok is false otherwise. A string or number carries its
// constant only when Const (rules that need the constant check Const
// through the second result of StrConst and NumConst).
func (v Value) Rules() (rules.Value, bool) {
	if !v.T.single() || v.T == Any {
		return rules.Value{}, false
	}
	rv := rules.Value{Type: v.TypeName(), Len: -1, Str: v.Str, Num: v.Num}
	if v.T == Table && v.Shape != nil {
		rv.Len = v.Shape.Len()
	}
	if v.T == Other && (v.Builtin == "Model" || v.Builtin == "Tool") {
		rv.Handle = v.Builtin
	}
	return rv, true
}

// TypeName is the Lua type name of a single-type value ("" otherwise).
func (v Value) TypeName() string {
	if !v.T.single() || v.T == Any {
		return ""
	}
	for i, n := range typeNames {
		if v.T == 1<<i {
			return n
		}
	}
	return ""
}

// StrConst returns v's constant text as Lua's tostring/.. sees it: a
// constant string, or a constant number.
func (v Value) StrConst() (string, bool) {
	if !v.Const {
		return "", false
	}
	switch v.T {
	case String:
		return v.Str, true
	case Number:
		return FormatNumber(v.Num), true
	}
	return "", false
}

// NumConst returns v's constant number (a numeric string converts, as
// Lua's arithmetic does).
func (v Value) NumConst() (float64, bool) {
	if !v.Const {
		return 0, false
	}
	switch v.T {
	case Number:
		return v.Num, true
	case String:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
		return f, err == nil
	}
	return 0, false
}

// FormatNumber formats n as Lua 5.1's tostring does (%.14g).
func FormatNumber(n float64) string {
	if n == math.Trunc(n) && math.Abs(n) < 1e15 {
		return strconv.FormatInt(int64(n), 10)
	}
	return strconv.FormatFloat(n, 'g', 14, 64)
}

// Join is the least value covering a and b.
func Join(a, b Value) Value {
	if Equal(a, b) {
		return a
	}
	out := Value{T: a.T | b.T}
	if out.T == Any {
		return Top
	}
	if a.T == Table && b.T == Table && a.Shape != nil && b.Shape != nil {
		out.Shape = joinShapes(a.Shape, b.Shape)
	}
	if a.T == Function && b.T == Function && a.Builtin != "" && a.Builtin == b.Builtin {
		out.Builtin = a.Builtin
	}
	if out.T == Nil {
		out.Const = true
	}
	return out
}

// joinShapes joins two shapes with the same keys and array length, or
// returns nil (unknown contents).
func joinShapes(a, b *Shape) *Shape {
	if len(a.Fields) != len(b.Fields) || len(a.Array) != len(b.Array) {
		return nil
	}
	out := &Shape{Fields: make([]Field, len(a.Fields)), Array: make([]Value, len(a.Array))}
	for i, f := range a.Fields {
		vb, ok := b.Get(f.Key)
		if !ok {
			return nil
		}
		out.Fields[i] = Field{f.Key, Join(f.V, vb)}
	}
	for i := range a.Array {
		out.Array[i] = Join(a.Array[i], b.Array[i])
	}
	return out
}

// Equal reports whether two abstract values are the same.
func Equal(a, b Value) bool {
	if a.T != b.T || a.Const != b.Const || a.Fn != b.Fn || a.Builtin != b.Builtin || a.Up != b.Up {
		return false
	}
	if a.Const && (a.Str != b.Str || a.Num != b.Num || a.Bool != b.Bool) {
		return false
	}
	if (a.Shape == nil) != (b.Shape == nil) {
		return false
	}
	if a.Shape == nil || a.Shape == b.Shape {
		return true
	}
	if len(a.Shape.Fields) != len(b.Shape.Fields) || len(a.Shape.Array) != len(b.Shape.Array) {
		return false
	}
	for _, f := range a.Shape.Fields {
		if vb, ok := b.Shape.Get(f.Key); !ok || !Equal(f.V, vb) {
			return false
		}
	}
	for i := range a.Shape.Array {
		if !Equal(a.Shape.Array[i], b.Shape.Array[i]) {
			return false
		}
	}
	return true
}

// String describes v for hover: `string = "abc"`, `table {a, b}`,
// `number = 3`, `string|nil`.
func (v Value) String() string {
	switch {
	case v.T == Any:
		return "any"
	case v.T == Nil:
		return "nil"
	case v.Const && v.T == String:
		s := v.Str
		if len(s) > 60 {
			s = s[:57] + "..."
		}
		return "string = " + strconv.Quote(s)
	case v.Const && v.T == Number:
		return "number = " + FormatNumber(v.Num)
	case v.Const && v.T == Boolean:
		return fmt.Sprintf("boolean = %v", v.Bool)
	case v.T == Table && v.Shape != nil:
		var keys []string
		if n := len(v.Shape.Array); n > 0 {
			keys = append(keys, fmt.Sprintf("[1..%d]", n))
		}
		fs := append([]Field(nil), v.Shape.Fields...)
		sort.Slice(fs, func(i, j int) bool { return fs[i].Key < fs[j].Key })
		for _, f := range fs {
			keys = append(keys, f.Key+": "+f.V.T.String())
		}
		return "table {" + strings.Join(keys, ", ") + "}"
	case v.T == Function && v.Builtin != "":
		return "function " + v.Builtin
	case v.T == Function && v.Fn != nil:
		return "function(" + strings.Join(v.Fn.ParList.Names, ", ") + ")"
	}
	return v.T.String()
}

// withField returns a copy of shape s with key k set to x (a nil x
// deletes it), or nil when x may or may not be nil.
func (s *Shape) withField(k string, x Value) *Shape {
	if x.T&Nil != 0 && x.T != Nil {
		return nil
	}
	out := &Shape{Fields: make([]Field, 0, len(s.Fields)+1), Array: s.Array}
	set := false
	for _, f := range s.Fields {
		if f.Key != k {
			out.Fields = append(out.Fields, f)
		} else if x.T != Nil {
			out.Fields = append(out.Fields, Field{k, x})
			set = true
		}
	}
	if !set && x.T != Nil {
		out.Fields = append(out.Fields, Field{k, x})
	}
	return out
}

// store returns a copy of shape s with t[key] = x, or nil when the
// result is not known: a string key sets a field, the number #t+1 of a
// table without fields appends to the array part (t[#t + 1] = x).
func (s *Shape) store(key, x Value) *Shape {
	if k, ok := key.StrConst(); ok && key.T == String {
		return s.withField(k, x)
	}
	if n, ok := key.NumConst(); ok && key.T == Number && len(s.Fields) == 0 && x.T&Nil == 0 && x.T != Any {
		switch {
		case n == float64(len(s.Array)+1):
			return &Shape{Array: append(append(make([]Value, 0, len(s.Array)+1), s.Array...), x)}
		case n >= 1 && n <= float64(len(s.Array)) && n == math.Trunc(n):
			a := append([]Value(nil), s.Array...)
			a[int(n)-1] = x
			return &Shape{Array: a}
		}
	}
	return nil
}
