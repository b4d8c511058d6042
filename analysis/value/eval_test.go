package value

import (
	"strings"
	"testing"
)

// The whole-prompt evaluator: helper calls evaluated at their sites,
// loops over known collections unrolled, known branches taking one arm.
func TestEvaluator(t *testing.T) {
	for _, tc := range []struct {
		src, fn string
		arg     int
		want    string
	}{
		// A local helper's result.
		{`local function heading(name) return "## " .. name end log(heading("Draft"))`, "log", 0, `string = "## Draft"`},
		// Its upvalue, read when it runs.
		{`local prefix = "a" local function p(x) return prefix .. x end prefix = "b" log(p("c"))`, "log", 0, `string = "bc"`},
		// Two returns, the branch known from the argument.
		{`local function pick(strict) if strict then return "s" end return "l" end log(pick(false))`, "log", 0, `string = "l"`},
		{`local function pick(strict) if strict then return "s" end return "l" end log(pick(x))`, "log", 0, "string"},
		// A table field holding a function.
		{`local M = {} function M.path(n) return "out/" .. n .. ".md" end store.write(M.path("a"), "x")`, "store.write", 0, `string = "out/a.md"`},
		// A loop over a constant list, each iteration with its own value.
		{`local parts = {} for _, p in ipairs({"a", "b", "c"}) do table.insert(parts, p) end log(table.concat(parts, "-"))`, "log", 0, `string = "a-b-c"`},
		{`local n = 0 for k, v in pairs({x = 1, y = 2}) do n = n + v end log(n)`, "log", 0, "number = 3"},
		{`local s = "" for _, p in ipairs({"a", "b"}) do if p == "b" then break end s = s .. p end log(s)`, "log", 0, `string = "a"`},
		// Recursion is bounded.
		{`local function f(n) if n == 0 then return "z" end return f(n - 1) end log(f(50))`, "log", 0, "any"},
		// Known branches.
		{`local MODE = "strict" local m if MODE == "strict" then m = "s" else m = 1 end log(m)`, "log", 0, `string = "s"`},
		// A helper that changes a table passed to it.
		{`local function add(t, x) t.k = x end local o = {} add(o, 1) log(o)`, "log", 0, "table"},
		// A helper's table result keeps its shape at the call site.
		{`local function opts() return {"a", "b"} end local t = opts() log(#t)`, "log", 0, "number = 2"},
		{`local function row(n) local r = {name = n} r.size = 3 return r end local x = row("a") log(x.name .. x.size)`, "log", 0, `string = "a3"`},
		// A table the helper did not make is not fresh: neither the
		// result nor the argument keeps a shape the other may change.
		{`local function id(t) return t end local a = {1} local b = id(a) b[1] = nil log(#a)`, "log", 0, "number"},
		{`local function id(t) return t end local a = {1} local b = id(a) log(#b)`, "log", 0, "number = 1"},
		{`local function wrap(t) return {inner = t} end local a = {1} local w = wrap(a) w.inner[2] = 5 log(#a)`, "log", 0, "number"},
		{`CONFIG = {1, 2} local function get() return CONFIG end local c = get() c[3] = 1 log(#CONFIG)`, "log", 0, "number"},
	} {
		if got := lastCallArg(t, tc.src, tc.fn, tc.arg).String(); got != tc.want {
			t.Errorf("%s: arg %d of %s = %s, want %s", tc.src, tc.arg, tc.fn, got, tc.want)
		}
	}
}

// A helper whose body fails on the value a call passes reports at the
// operation, as certain (the call runs it).
func TestEvaluatorOps(t *testing.T) {
	f := Interpret(parseLua(t, `local function title(s) return "T: " .. s end log(title(nil))`))
	if len(f.Ops) != 1 || f.Ops[0].InFunc || !strings.Contains(f.Ops[0].Msg, "concatenate a nil") {
		t.Fatalf("ops = %+v, want one certain concatenate-nil", f.Ops)
	}
	f = Interpret(parseLua(t, `for _, m in ipairs({"ok", "one\ntwo"}) do local x = m .. nil end`))
	if len(f.Ops) != 1 {
		t.Fatalf("ops of an unrolled loop = %+v, want one (merged)", f.Ops)
	}
}

// The environment a shared library leaves: constants, table shapes,
// closures with their upvalues, read by a later chunk.
func TestSharedEnv(t *testing.T) {
	shared := Interpret(parseLua(t, `
local SEP = "/"
ROOT = "out"
PATHS = {draft = "draft.md", items = {"a", "b"}}
function path(name) return ROOT .. SEP .. name end
local count = 0
function bump() count = count + 1 return count end
`))
	env := shared.Exit
	if env == nil {
		t.Fatal("no exit environment")
	}
	for _, tc := range []struct{ src, want string }{
		{`log(path(PATHS.draft))`, `string = "out/draft.md"`},
		{`log(#PATHS.items)`, "number = 2"},
		{`log(bump())`, "number"},
		{`ROOT = "x" log(path("a"))`, `string = "x/a"`},
	} {
		stmts := parseLua(t, tc.src)
		f := InterpretIn(stmts, env)
		var got string
		for _, r := range f.args {
			if pathOf(r.call.Func) == "log" && r.hasExact {
				got = r.exact[0].String()
			}
		}
		if got != tc.want {
			t.Errorf("%s: log arg = %s, want %s", tc.src, got, tc.want)
		}
	}
	// An operation in a shared function fails at the section's call.
	f := InterpretIn(parseLua(t, `local x = path(nil)`), env)
	if len(f.Ops) != 1 || !strings.Contains(f.Ops[0].What, "in a call of path") {
		t.Fatalf("ops = %+v, want one in a call of path", f.Ops)
	}
}

// Budgets: deep recursion and long loops widen instead of hanging.
func TestEvaluatorBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("local s = 0\n")
	for i := 0; i < 20; i++ {
		b.WriteString("for i = 1, 60 do\n")
	}
	b.WriteString("s = s + 1\n")
	for i := 0; i < 20; i++ {
		b.WriteString("end\n")
	}
	b.WriteString("log(s)\n")
	if got := lastCallArg(t, b.String(), "log", 0).String(); got != "number" && got != "any" {
		t.Fatalf("s after the loops = %s, want number or any", got)
	}
}

// Hover: a helper's result, and a loop variable per iteration.
func TestEachAt(t *testing.T) {
	src := "local function path(n)\n  return \"out/\" .. n\nend\nlocal p = path(\"a\")\nfor _, s in ipairs({\"x\", \"y\"}) do\n  log(s)\nend\nlog(path(args))\n"
	stmts := parseLua(t, src)
	for _, tc := range []struct {
		line int
		name string
		want string
	}{
		{4, "p", `string = "out/a"`},
		{6, "s", `string = "x" | string = "y"`},
		{2, "n", ""}, // called with "a" and with args: not one value
	} {
		var got []string
		for _, v := range EachAt(stmts, nil, tc.line, tc.name) {
			got = append(got, v.String())
		}
		if g := strings.Join(got, " | "); g != tc.want {
			t.Errorf("EachAt(%d, %s) = %q, want %q", tc.line, tc.name, g, tc.want)
		}
	}
}

// Hover on a call: what each call of a helper on a line hands back.
func TestCallsAt(t *testing.T) {
	src := "local function path(n)\n  return \"out/\" .. n\nend\nlocal M = {}\nfunction M.tag(x) return \"#\" .. x end\n" +
		"log(path(\"a\"))\nfor _, s in ipairs({\"x\", \"y\"}) do\n  log(M.tag(s))\nend\nlog(path(args))\npath(\"b\")\n"
	stmts := parseLua(t, src)
	for _, tc := range []struct {
		line   int
		callee string
		want   string
	}{
		{6, "path", `string = "out/a"`},
		{8, "M.tag", `string = "#x" | string = "#y"`},
		{10, "path", "string"}, // args: a string, not a constant
		{11, "path", `string = "out/b"`},
		{6, "log", ""}, // log returns nothing known
	} {
		var got []string
		for _, v := range CallsAt(stmts, nil, tc.line, tc.callee) {
			got = append(got, v.String())
		}
		if g := strings.Join(got, " | "); g != tc.want {
			t.Errorf("CallsAt(%d, %s) = %q, want %q", tc.line, tc.callee, g, tc.want)
		}
	}
}
