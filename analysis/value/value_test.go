package value

import (
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

func parseLua(t *testing.T, src string) []ast.Stmt {
	t.Helper()
	stmts, err := luaparse.Parse(strings.NewReader(src), "t")
	if err != nil {
		t.Fatal(err)
	}
	return stmts
}

// lastCallArg returns the value of argument i of the last call named fn.
func lastCallArg(t *testing.T, src, fn string, i int) Value {
	t.Helper()
	stmts := parseLua(t, src)
	f := Interpret(stmts)
	var call *ast.FuncCallExpr
	inspect(stmts, func(n any) bool {
		if c, ok := n.(*ast.FuncCallExpr); ok && c.Func != nil {
			if p := pathOf(c.Func); p == fn {
				call = c
			}
		}
		return true
	})
	if call == nil {
		t.Fatalf("no call of %s in %q", fn, src)
	}
	return f.Arg(call, i)
}

func pathOf(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.IdentExpr:
		return e.Value
	case *ast.AttrGetExpr:
		if k, ok := e.Key.(*ast.StringExpr); ok {
			return pathOf(e.Object) + "." + k.Value
		}
	}
	return "?"
}

func TestArgValues(t *testing.T) {
	for _, tc := range []struct {
		src, fn string
		arg     int
		want    string
	}{
		{`local n = 0 store.read("log.txt", n, 3)`, "store.read", 1, "number = 0"},
		{`local m = string.rep("=", 3) log(m)`, "log", 0, `string = "==="`},
		{`local m = ("ab"):upper() log(m)`, "log", 0, `string = "AB"`},
		{`local a = "x" a = a .. "y" log(a)`, "log", 0, `string = "xy"`},
		{`local n = 2 + 3 * 2 log(n)`, "log", 0, "number = 8"},
		{`local t = {"a", "b"} table.insert(t, "c") log(table.concat(t, ","))`, "log", 0, `string = "a,b,c"`},
		{`local t = {"a"} log(#t)`, "log", 0, "number = 1"},
		{`local s = string.format("%s-%d", "a", 3) log(s)`, "log", 0, `string = "a-3"`},
		{`local s = string.sub("hello", 2, -2) log(s)`, "log", 0, `string = "ell"`},
		{`local o = {temperature = 5} models.default("m", "d", o)`, "models.default", 2, "table {temperature: number}"},
		{`local o = {temperature = 5} o.temperature = 1 x(o) models.default("m", "d", o)`, "models.default", 2, "table"},
		{`local s if c then s = "a" else s = "b" end log(s)`, "log", 0, "string"},
		{`local s = "a" if c then s = nil end log(s)`, "log", 0, "nil|string"},
		{`local s = "a" for i = 1, 3 do s = s .. "b" end log(s)`, "log", 0, `string = "abbb"`},
		{`local s = "a" for i = 1, n do s = s .. "b" end log(s)`, "log", 0, "string"},
		{`local s = "a" local function f() s = 1 end f() log(s)`, "log", 0, "any"},
		{`x = "g" log(x)`, "log", 0, `string = "g"`},
		{`x = "g" f() log(x)`, "log", 0, "any"},
		{`var.k = 3 log(var.k)`, "log", 0, "number = 3"},
		{`log(args)`, "log", 0, "string"},
		{`local t = {} t.a = 1 log(t)`, "log", 0, "table {a: number}"},
		{`local p = {title = "t"} untrusted(p)`, "untrusted", 0, "table {title: string}"},
	} {
		if got := lastCallArg(t, tc.src, tc.fn, tc.arg).String(); got != tc.want {
			t.Errorf("%s: arg %d of %s = %s, want %s", tc.src, tc.arg, tc.fn, got, tc.want)
		}
	}
}

func TestOps(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string // "" for none
	}{
		{`local suffix = nil log("a" .. args .. suffix)`, "attempt to concatenate a nil value (local suffix)"},
		{`local suffix log("a" .. suffix)`, "attempt to concatenate a nil value (local suffix)"},
		{`local t = {} log("a" .. t)`, "attempt to concatenate a table value (local t)"},
		{`local t = {} setmetatable(t, mt) log("a" .. t)`, ""},
		{`local n = nil local x = n + 1`, "attempt to perform arithmetic on a nil value (local n)"},
		{`local n = nil local x = #n`, "attempt to get length of a nil value (local n)"},
		{`local f = nil f()`, "attempt to call a nil value (local f)"},
		{`local t = {a = 1} local x = t.b .. "x"`, "attempt to concatenate a nil value (field b)"},
		{`local t = {} local k = nil local x = t[k] + 1`, "attempt to perform arithmetic on a nil value ()"},
		{`local t = {} local e = {} local x = t[e.a] + 1`, "attempt to perform arithmetic on a nil value ()"},
		{`local t = {} local x = t[args] + 1`, ""},
		{`local s if c then s = "a" end log("a" .. s)`, ""},
		{`local s = x or nil log("a" .. s)`, ""},
		{`local s = nil s = store.read("a") log("a" .. s)`, ""},
		{`function f(a) return "x" .. a end`, ""},
		{`local s = nil function f() return "x" .. s end`, ""},
		{`local t = {1} for i = 1, 3 do t = nil end local x = #t`, "attempt to get length of a nil value (local t)"},
		{`local t = {1} for i = 1, n do t = nil end local x = #t`, ""},
		// A table read out of another is the same table: a write through
		// the copy changes the original (and the other way round).
		{`SPECS = {lookup = {d = "x"}} local spec = SPECS.lookup spec.title = "t" log(SPECS.lookup.title .. "!")`, ""},
		{`local specs = {lookup = {d = "x"}} local spec = specs.lookup spec.title = "t" log(specs.lookup.title .. "!")`, ""},
		{`local specs = {lookup = {d = "x"}} local spec = specs.lookup specs.lookup.title = "t" log(spec.title .. "!")`, ""},
		{`SPECS = {lookup = {d = "x"}} log(SPECS.lookup.title .. "!")`, "attempt to concatenate a nil value (field title)"},
		// Under two names a table keeps its shape until either changes it.
		{`SPECS = {lookup = {d = "x"}} local spec = SPECS.lookup log(spec.title .. "!")`, "attempt to concatenate a nil value (field title)"},
		{`CONFIG = {width = 1} local cfg = CONFIG log(cfg.title .. "!")`, "attempt to concatenate a nil value (field title)"},
		{`CONFIG = {width = 1} local cfg = CONFIG local c2 = cfg log(c2.title .. "!")`, "attempt to concatenate a nil value (field title)"},
		{`CONFIG = {} local cfg = CONFIG CONFIG.t = "x" log(cfg.t .. "!")`, ""},
		{`CONFIG = {} local cfg = CONFIG cfg.t = "x" log(CONFIG.t .. "!")`, ""},
		{`CONFIG = {} local cfg = CONFIG local c2 = cfg c2.t = "x" log(CONFIG.t .. "!")`, ""},
		{`CONFIG = {} local cfg = CONFIG mystery() log(cfg.t .. "!")`, ""},
		{`CONFIG = {} local cfg = CONFIG setmetatable(CONFIG, mt) log(cfg.t .. "!")`, ""},
		{`CONFIG = {} local cfg = CONFIG if c then cfg.t = "x" end log(CONFIG.t .. "!")`, ""},
		{`CONFIG = {} local cfg = CONFIG for i = 1, n do cfg.t = "x" end log(CONFIG.t .. "!")`, ""},
		{`CONFIG = {a = {}} local a = CONFIG.a CONFIG.a.t = "x" log(a.t .. "!")`, ""},
		{`LIST = {} local l = LIST table.insert(LIST, "a") log(l[1] .. "!")`, ""},
		{`LIST = {} local l = LIST table.insert(l, "a") log(LIST[1] .. "!")`, ""},
		{`local t = {inner = {}} table.insert(t.inner, "b") log(t.inner[1] .. "!")`, ""},
		{`local t = {inner = {}, name = "n"} table.insert(t.inner, "b") log(t.inner[1] .. t.name .. t.owner)`, "attempt to concatenate a nil value (field owner)"},
		{`T = {inner = {}} local x = T.inner table.insert(T.inner, "b") log(x[1] .. "!")`, ""},
		{`local t = {inner = {}} local i = t.inner table.insert(i, "b") log(t.inner[1] .. "!")`, ""},
		{`local t = {x = {}} local function set(o) o.v = 1 end local x = t.x set(x) log(t.x.v .. "!")`, ""},
		// string.format's arguments, as gopher-lua converts them.
		{`COUNT = "three" log(string.format("%d items", COUNT))`, "bad argument #2 to format (number expected, got string) ()"},
		{`log(string.format("%s and %s", "a"))`, "bad argument #3 to format (no value) ()"},
		{`log(string.format("%5.1f", nil))`, "bad argument #2 to format (number expected, got nil) ()"},
		{`log(string.format("%q", {}))`, "bad argument #2 to format (string expected, got table) ()"},
		{`log(("%x"):format("ff"))`, "bad argument #2 to format (number expected, got string) ()"},
		{`log(string.format("%d %d%%", " 12 ", "0x1F"))`, ""},
		{`log(string.format("%d", "inf") .. string.format("%d", "1_000") .. string.format("%d", "0b1"))`, ""},
		{`log(string.format("%s %s", nil, {}))`, ""},
		{`log(string.format("%d %s", f()))`, ""},
		{`log(string.format("%d", args))`, ""},
		{`log(string.format(args, "x"))`, ""},
		// Standard library arguments (TestStdlibArgsMatchRuntime proves the table).
		{`LIMIT = "ten" log(string.rep("x", LIMIT))`, "bad argument #2 to rep (number expected, got string) ()"},
		{`log(string.upper())`, "bad argument #1 to upper (string expected, got nil) ()"},
		{`log(table.concat({"a", {}, "c"}))`, "invalid value (table) at index 2 in table for 'concat' ()"},
		{`log(("x"):rep("2"))`, "bad argument #2 to rep (number expected, got string) ()"},
		{`log(math.floor("3.5") .. string.rep(7, 2) .. table.concat({"a", 2}))`, ""},
		{`local t = {} table.remove(t) log(string.upper(f()))`, ""},
		{`log(string.rep("x", args))`, "bad argument #2 to rep (number expected, got string) ()"}, // run input is a string
		{`log(string.rep("x", tonumber(args)))`, ""},
		// Ordering, arithmetic on strings, a string's methods.
		{`COUNT = "5" local c = COUNT > 3`, "attempt to compare number with string ()"},
		{`local c = nil < 1`, "attempt to compare nil with number ()"},
		{`local c = {} <= {}`, "attempt to compare table with table ()"},
		{`local c = 3 < 7 local d = "a" < "b" local e = args > "a" local f = COUNT == 3`, ""},
		{`LIMIT = "ten" local x = LIMIT + 1`, "attempt to perform arithmetic on a string value (global LIMIT)"},
		{`local x = "5" + 1 local y = " 0x10 " * 2 local z = args + 1`, ""},
		{`log(("x"):foo())`, "attempt to call a nil value (method 'foo') ()"},
		{`log(("x"):upper() .. args:lower())`, ""},
	} {
		f := Interpret(parseLua(t, tc.src))
		got := ""
		if len(f.Ops) > 0 {
			got = f.Ops[0].Msg + " (" + f.Ops[0].What + ")"
		}
		if got != tc.want {
			t.Errorf("%s: op %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestVarFacts(t *testing.T) {
	f := Interpret(parseLua(t, `var.a = 1 log(var.b .. "x") if c then var.c = 2 end local s = "x" .. var.c .. var.a`))
	if got := strings.Join(f.VarWrites, ","); got != "a,c" {
		t.Errorf("VarWrites = %s, want a,c", got)
	}
	var reads []string
	for _, r := range f.VarReads {
		reads = append(reads, r.Key+":"+map[bool]string{true: "w", false: "-"}[r.Written])
	}
	if got := strings.Join(reads, " "); got != "b:- c:- a:w" {
		t.Errorf("VarReads = %s, want b:- c:- a:w", got)
	}
}

func TestAt(t *testing.T) {
	src := "local n = 2\nlocal opts = {temperature = n + 3}\nlog(opts)\nvar.k = \"x\" .. n\nlog(var.k)\nlocal u = store.read(\"a\")\nlog(u)\n"
	stmts := parseLua(t, src)
	for _, tc := range []struct {
		line int
		name string
		want string
	}{
		{1, "n", "number = 2"},
		{2, "opts", "table {temperature: number}"},
		{3, "opts", "table {temperature: number}"},
		{5, "var.k", `string = "x2"`},
		{7, "u", "string"},
		{7, "nope", ""},
	} {
		v, ok := At(stmts, tc.line, tc.name)
		got := ""
		if ok {
			got = v.String()
		}
		if got != tc.want {
			t.Errorf("At(%d, %s) = %q, want %q", tc.line, tc.name, got, tc.want)
		}
	}
}

// Deeply nested loops cost linear time (each level past maxLoopDepth
// runs once), and values changed inside them are unknown after.
func TestNestedLoopsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("local s = \"a\"\n")
	for i := 0; i < 40; i++ {
		b.WriteString("for i = 1, 2 do\n")
	}
	b.WriteString("s = s .. \"b\"\n")
	for i := 0; i < 40; i++ {
		b.WriteString("end\n")
	}
	b.WriteString("log(s)\n")
	if got := lastCallArg(t, b.String(), "log", 0).String(); got != "string" && got != "any" {
		t.Fatalf("s after the loops = %s, want string or any", got)
	}
}
