package value

import (
	"fmt"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// argKind is how gopher-lua checks one argument of a standard library
// function (auxlib.go): CheckString takes strings and numbers,
// CheckNumber numbers and strings that convert, CheckInt and OptInt
// numbers only, CheckTable tables; the Opt forms also take nil (or no
// argument).
type argKind uint8

const (
	argUnchecked argKind = iota
	argString
	argNumber
	argInt
	argOptInt
	argOptString
	argTable
	argOptNilTable // setmetatable's second: nil or a table (CheckTypes)
	argIntIfGiven  // table.remove's position: a number when there is one (an explicit nil fails)
)

// stdlibArgs are the checked parameters of the standard library
// functions prompts call, as gopher-lua's implementations check them
// (TestStdlibArgsMatchRuntime runs each against the VM). A function's
// later arguments (math.max's rest, string.char's) are not listed.
var stdlibArgs = map[string][]argKind{
	"string.byte":    {argString, argOptInt, argOptInt},
	"string.find":    {argString, argString},
	"string.gmatch":  {argString, argString},
	"string.gsub":    {argString, argString},
	"string.len":     {argString},
	"string.lower":   {argString},
	"string.match":   {argString, argString, argOptInt},
	"string.rep":     {argString, argInt},
	"string.reverse": {argString},
	"string.sub":     {argString, argInt, argOptInt},
	"string.upper":   {argString},
	"math.abs":       {argNumber},
	"math.ceil":      {argNumber},
	"math.floor":     {argNumber},
	"math.fmod":      {argNumber, argNumber},
	"math.max":       {argNumber},
	"math.min":       {argNumber},
	"math.pow":       {argNumber, argNumber},
	"math.sqrt":      {argNumber},
	"table.concat":   {argTable, argOptString, argOptInt, argOptInt},
	"table.insert":   {argTable},
	"table.remove":   {argTable, argIntIfGiven},
	"table.sort":     {argTable},
	"ipairs":         {argTable},
	"pairs":          {argTable},
	"unpack":         {argTable, argOptInt, argOptInt},
	"setmetatable":   {argUnchecked, argOptNilTable},
}

// stdlibOps records the arguments of a call of standard library
// function name that certainly fail its checks, in gopher-lua's words
// ("bad argument #2 to rep (number expected, got string)"). vals and
// exprs are the arguments (a method call's receiver first); open is set
// when the last may give any number of values, so a missing one is not
// certainly nil.
func (in *interp) stdlibOps(name string, vals []Value, exprs []ast.Expr, at ast.Expr, open bool) {
	kinds, ok := stdlibArgs[name]
	if !ok || !in.record {
		return
	}
	short := name[strings.LastIndexByte(name, '.')+1:]
	for i, k := range kinds {
		v := NilValue
		e := at
		if i < len(vals) {
			v = vals[i]
			if i < len(exprs) {
				e = exprs[i]
			}
		} else if open || k == argIntIfGiven {
			return
		}
		want := argFails(k, v)
		if want == "" {
			continue
		}
		got := certainType(v)
		if got == "" {
			continue
		}
		in.opCode(e, "bad-argument", fmt.Sprintf("bad argument #%d to %s (%s expected, got %s)", i+1, short, want, got))
		return // the first failing argument fails the call
	}
	if name == "table.concat" && len(vals) > 0 && vals[0].T == Table && vals[0].Shape != nil {
		for i, el := range vals[0].Shape.Array {
			if el.T != Any && el.T&(String|Number|Other) == 0 {
				if got := certainType(el); got != "" {
					in.opCode(at, "bad-argument", fmt.Sprintf("invalid value (%s) at index %d in table for 'concat'", got, i+1))
					return
				}
			}
		}
	}
}

// argFails returns the type kind k wants when v certainly fails it, or
// "". Host objects (Other) are never judged.
func argFails(k argKind, v Value) string {
	if v.T == Any || v.T&Other != 0 {
		return ""
	}
	switch k {
	case argString:
		if v.T&(String|Number) == 0 {
			return "string"
		}
	case argOptString:
		// OptString takes strings only (CheckString also numbers).
		if v.T&(String|Nil) == 0 {
			return "string"
		}
	case argNumber:
		if v.T&Number == 0 && !(v.T&String != 0 && numberLike(v)) {
			return "number"
		}
	case argInt, argIntIfGiven:
		if v.T&Number == 0 {
			return "number"
		}
	case argOptInt:
		if v.T&(Number|Nil) == 0 {
			return "number"
		}
	case argTable:
		if v.T&Table == 0 {
			return "table"
		}
	case argOptNilTable:
		if v.T&(Table|Nil) == 0 {
			return "nil or table"
		}
	}
	return ""
}
