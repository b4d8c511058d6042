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
	}
	return out
}
