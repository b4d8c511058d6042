package luaast

import (
	"fmt"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

const concatSrc = `local t = {k = "a" .. "b"}
local function f(x) return x .. "!" end
local s = ""
repeat s = s .. "x" until #(s .. "") >= 2
if ("p" .. "q") == "pq" then s = s .. f(t.k .. ("c" .. "d")) end
return s`

func TestGuardConcat(t *testing.T) {
	stmts := parseLua(t, concatSrc)
	before := fmt.Sprintf("%#v", stmts)
	out := GuardConcat(stmts)
	if after := fmt.Sprintf("%#v", stmts); after != before {
		t.Fatal("GuardConcat changed its input")
	}
	Inspect(out, func(n any) bool {
		if _, ok := n.(*ast.StringConcatOpExpr); ok {
			t.Errorf("a concatenation is left on line %d", n.(ast.Expr).Line())
		}
		return true
	})
	proto, err := lua.Compile(out, "t")
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	calls := 0
	L.SetGlobal(ConcatFunc, L.NewFunction(func(L *lua.LState) int {
		calls++
		s := ""
		for i := 1; i <= L.GetTop(); i++ {
			s += L.CheckString(i)
		}
		L.Push(lua.LString(s))
		return 1
	}))
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatal(err)
	}
	if got := L.Get(-1).String(); got != "xxabcd!" {
		t.Errorf("result %q, want %q", got, "xxabcd!")
	}
	// "a".."b", 2x2 in the repeat, "p".."q", s..f(..), t.k..("c".."d") as
	// one flattened call, x.."!".
	if calls != 9 {
		t.Errorf("%d concat calls, want 9", calls)
	}
}
