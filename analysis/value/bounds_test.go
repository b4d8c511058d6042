package value

import (
	"strings"
	"testing"
)

// Loops over string.gmatch of a constant unroll with each match's
// captures; methods of known tables are evaluated with self; a local
// function's calls of itself are evaluated up to the recursion bound.
func TestEvaluatorBounds(t *testing.T) {
	for _, tc := range []struct {
		src, fn string
		arg     int
		want    string
	}{
		{`local s = "" for w in string.gmatch("a,b,c", "[^,]+") do s = s .. w .. ";" end log(s)`, "log", 0, `string = "a;b;c;"`},
		{`local CSV = "x y" local s = "" for w in CSV:gmatch("%a+") do s = s .. w end log(s)`, "log", 0, `string = "xy"`},
		{`local s = "" for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do s = s .. k .. v end log(s)`, "log", 0, `string = "a1b2"`},
		// Not a constant: the loop variable is unknown.
		{`local s = "" for w in string.gmatch(args, "%a+") do s = s .. w end log(s)`, "log", 0, "string"},
		// Too many matches: past the unrolling bound the loop widens.
		{`local n = 0 for w in string.gmatch(string.rep("a ", 100), "%a") do n = n + 1 end log(n)`, "log", 0, "number"},
		{`local R = {p = "x"} function R:f(a) return self.p .. a end log(R:f("y"))`, "log", 0, `string = "xy"`},
		{`local R = {p = "x", f = function(self, a) return self.p .. a end} log(R:f("z"))`, "log", 0, `string = "xz"`},
		// A method that changes self: the table is no longer known.
		{`local R = {n = 1} function R:bump() self.n = self.n + 1 end R:bump() log(R.n)`, "log", 0, "any"},
		{`local function level(n) if n <= 1 then return "#" end return "#" .. level(n - 1) end log(level(3) .. " T")`, "log", 0, `string = "### T"`},
		{`local function level(n) if n <= 1 then return "#" end return "#" .. level(n - 1) end log(level(9) .. " T")`, "log", 0, "string"},
	} {
		if got := lastCallArg(t, tc.src, tc.fn, tc.arg).String(); got != tc.want {
			t.Errorf("%s: arg %d of %s = %s, want %s", tc.src, tc.arg, tc.fn, got, tc.want)
		}
	}
}

// A method a table of known shape lacks fails at its call.
func TestMissingMethod(t *testing.T) {
	f := Interpret(parseLua(t, `local obj = {} obj:render()`))
	if len(f.Ops) != 1 || !strings.Contains(f.Ops[0].Msg, "call a nil value") || f.Ops[0].What != "method `obj:render`" {
		t.Fatalf("ops = %+v, want one call of a nil method", f.Ops)
	}
	for _, src := range []string{
		`local obj = {} function obj:render() end obj:render()`,
		`local obj = setmetatable({}, {__index = {render = function() end}}) obj:render()`,
		`local obj = {} obj.render = function() end obj:render()`,
	} {
		if f := Interpret(parseLua(t, src)); len(f.Ops) != 0 {
			t.Errorf("%s: ops = %+v, want none", src, f.Ops)
		}
	}
}

// Sites: the host calls a chunk's call of a helper certainly runs.
func TestSites(t *testing.T) {
	f := Interpret(parseLua(t, `
local function note(m) log(m) end
local function maybe(m) if args == "x" then log(m) end end
local function early(m) if args == "x" then return end log(m) end
note("a")
maybe("b")
early("c")
`))
	var got []string
	for _, s := range f.Sites() {
		v, _ := s.Args[0].StrConst()
		got = append(got, s.Name+":"+v)
	}
	if strings.Join(got, ",") != "note:a" {
		t.Fatalf("sites = %v, want [note:a]", got)
	}
}
