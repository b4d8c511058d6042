package run

import (
	"github.com/forge-lsp/forge-lsp/engine/rules"
	lua "github.com/yuin/gopher-lua"
)

// ruleValue describes a Lua value for the engine/rules checks.
func ruleValue(v lua.LValue) rules.Value {
	out := rules.Value{Type: typeName(v), Len: -1}
	switch x := v.(type) {
	case lua.LNumber:
		out.Num = float64(x)
	case lua.LString:
		out.Str = string(x)
	case *lua.LUserData:
		switch x.Value.(type) {
		case *toolHandle:
			out.Handle = "Tool"
		case *modelHandle:
			out.Handle = "Model"
		default:
			out.Handle = "other"
		}
	}
	return out
}

// checkArg checks argument i (1-based) of host function fn against its
// declaration (rules.ArgTypes), the one the checker reads too, and
// raises the declared error. A host function checks each argument this
// way before it uses it; TestHostArgsDeclared keeps them declared.
func checkArg(L *lua.LState, fn string, i int) { checkParam(L, fn, i, i) }

// checkParam checks parameter p (1-based) of fn, which is at stack index
// at (a method's parameters come after its receiver).
func checkParam(L *lua.LState, fn string, p, at int) {
	decl := rules.ArgTypes[fn]
	if p > len(decl) || decl[p-1] == nil {
		return
	}
	v := L.Get(at)
	err := rules.Arg(fn, p-1, ruleValue(v))
	if err == nil {
		if decl[p-1].Numeric && v.Type() == lua.LTString {
			L.CheckNumber(at) // Lua's own conversion and message
		}
		return
	}
	if ae, ok := err.(*rules.ArgError); ok && ae.Decl.Expected != "" {
		L.ArgError(at, ae.Detail())
	}
	L.RaiseError("%s", err.Error())
}

// checkArgs checks every declared argument of fn, in order (checkArg).
func checkArgs(L *lua.LState, fn string) {
	for i := range rules.ArgTypes[fn] {
		checkArg(L, fn, i+1)
	}
}

// stringArg checks argument i of fn and returns it as a string (a
// declared number converts, as Lua's string functions convert it).
func stringArg(L *lua.LState, fn string, i int) string {
	checkArg(L, fn, i)
	return L.ToString(i)
}
