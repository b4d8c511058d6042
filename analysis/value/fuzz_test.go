package value

import (
	"strings"
	"testing"

	luaparse "github.com/yuin/gopher-lua/parse"
)

// FuzzInterpret runs the abstract interpreter, and the hover probe, on
// any Lua that parses: it must never panic or hang.
func FuzzInterpret(f *testing.F) {
	for _, s := range []string{
		`local t = {} for i = 1, 3 do t[#t + 1] = i .. "" end log(table.concat(t, ","))`,
		`local s = nil if x then s = "a" elseif y then s = 1 else s = {} end log("a" .. s)`,
		`var.k = {a = {b = 1}} var.k.a.c = 2 local n = #var.k`,
		`local f = function(a) return a .. "x" end local g = f(1) repeat g = g .. g until #g > 9`,
		`store.write("a", "x x") store.str_replace("a", "x", "y") local r = store.read("a", 2, 1)`,
		`goto skip ::skip:: local z = nil .. 1`,
		`local m = models.use("w") m:infer("p", {}) while true do break end`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := luaparse.Parse(strings.NewReader(src), "fuzz")
		if err != nil {
			return
		}
		Interpret(stmts)
		for line := 1; line <= 3; line++ {
			At(stmts, line, "s")
		}
	})
}
