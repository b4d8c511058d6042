package luaast

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

const linesSrc = `local function double(n)
  local r = n * 2
  return r
end
local t = 0
for i = 1, 2 do
  t = t + double(i)
end
call(function()
  t = t + 1
end)
if t > 0 then t = t + 100 end
return t`

func parseLua(t *testing.T, src string) []ast.Stmt {
	t.Helper()
	stmts, err := luaparse.Parse(strings.NewReader(src), "t")
	if err != nil {
		t.Fatal(err)
	}
	return stmts
}

func TestStmtLines(t *testing.T) {
	got := StmtLines(parseLua(t, linesSrc))
	want := []int{1, 2, 3, 5, 6, 7, 9, 10, 12, 13}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("StmtLines = %v, want %v", got, want)
	}
}

func TestInstrumentLines(t *testing.T) {
	stmts := parseLua(t, linesSrc)
	before := fmt.Sprintf("%#v", stmts)
	inst := InstrumentLines(stmts, map[int]bool{2: true, 7: true, 10: true, 12: true, 13: true})
	if after := fmt.Sprintf("%#v", stmts); after != before {
		t.Fatal("InstrumentLines changed its input")
	}
	proto, err := lua.Compile(inst, "t")
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	var hits []string
	L.SetGlobal(LineFunc, L.NewFunction(func(L *lua.LState) int {
		hits = append(hits, L.CheckNumber(1).String())
		return 0
	}))
	L.SetGlobal("call", L.NewFunction(func(L *lua.LState) int {
		L.Push(L.CheckFunction(1))
		L.Call(0, 0)
		return 0
	}))
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatal(err)
	}
	// The chunk computes what it computes without the calls.
	if got := L.Get(-1).String(); got != "107" {
		t.Errorf("result %s, want 107", got)
	}
	if got := strings.Join(hits, " "); got != "7 2 7 2 10 12 13" {
		t.Errorf("line calls %q", got)
	}
}

// Function literals that are not defined by a statement or passed
// directly as an argument or value are not entered; an instrumented
// chunk keeps them as they are.
func TestStmtLinesSkipsNestedLiterals(t *testing.T) {
	src := "local t = {f = function()\n  x()\nend}\ng(h(function()\n  y()\nend))\nwhile (function()\n  return false\nend)() do end"
	stmts := parseLua(t, src)
	if got, want := StmtLines(stmts), []int{1, 4, 7}; !reflect.DeepEqual(got, want) {
		t.Fatalf("StmtLines = %v, want %v", got, want)
	}
	inst := InstrumentLines(stmts, map[int]bool{1: true, 2: true, 5: true})
	if len(inst) != len(stmts)+2 || inst[2] != stmts[0] || inst[3] != stmts[1] || inst[4] != stmts[2] {
		t.Fatalf("InstrumentLines changed more than the line call before line 1: %d statements", len(inst))
	}
}

// A function defined in an instrumented chunk keeps calling the line
// function the chunk started with, after the global is gone or replaced.
func TestInstrumentedFunctionsOutliveTheGlobal(t *testing.T) {
	stmts := parseLua(t, "function later(n)\n  return n + 1\nend\nreturn 0")
	proto, err := lua.Compile(InstrumentLines(stmts, map[int]bool{2: true}), "t")
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	var hits []string
	L.SetGlobal(LineFunc, L.NewFunction(func(L *lua.LState) int {
		hits = append(hits, "first:"+L.CheckNumber(1).String())
		return 0
	}))
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 0, nil); err != nil {
		t.Fatal(err)
	}
	// The block has ended: the global is removed, then replaced by
	// another chunk's.
	L.SetGlobal(LineFunc, lua.LNil)
	if err := L.DoString("x = later(1)"); err != nil {
		t.Fatalf("a function of the block after the block: %v", err)
	}
	L.SetGlobal(LineFunc, L.NewFunction(func(L *lua.LState) int {
		hits = append(hits, "second:"+L.CheckNumber(1).String())
		return 0
	}))
	if err := L.DoString("x = x + later(1)"); err != nil {
		t.Fatal(err)
	}
	if got := L.GetGlobal("x").String(); got != "4" {
		t.Errorf("x = %s, want 4", got)
	}
	if got := strings.Join(hits, " "); got != "first:2 first:2" {
		t.Errorf("line calls %q, want the chunk's own function each time", got)
	}
}
