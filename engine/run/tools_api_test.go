package run

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/tools"
)

// apiCase runs one prompt against a gateway that answers "ok" to every
// request (or echoes the advertised tool names when echoTools is set).
type apiCase struct {
	name, h1, body string
	// want is the exact result; err is "<Kind>: <substring>".
	want, err string
}

func runAPICases(t *testing.T, cases []apiCase, setup func(h *harness)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Script = func(req *gateway.Request) gatewaytest.Reply {
				var names []string
				for _, tl := range req.Tools {
					names = append(names, tl.Function.Name)
				}
				return gatewaytest.Text("tools=" + strings.Join(names, ","))
			}
			if setup != nil {
				setup(h)
			}
			got, err := h.run(prompt("", c.h1, c.body))
			if c.err != "" {
				kind, sub, _ := strings.Cut(c.err, ": ")
				if err == nil {
					t.Fatalf("got %q, want error %s", got, c.err)
				}
				re := AsRunError(err)
				if re.Kind.String() != kind || !strings.Contains(re.Msg, sub) {
					t.Fatalf("error %s: %q, want %s", re.Kind, re.Msg, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func luaFence(s string) string { return "```lua\n" + s + "\n```\n\n" }

func TestToolsAPI(t *testing.T) {
	ws := `tools.bind("search", "web search capability")`
	orders := `tools.bind("orders", "look up an order by its number")`
	cases := []apiCase{
		{name: "need synonym", h1: defModel + "\n" + `tools.need("search", "web search capability")`, body: "## S\n\n" + luaFence(`tools.add("search")`) + "Go.\n", want: "tools=search"},
		{name: "research-person example", h1: defModel + "\n" + `tools.need("search", "Search the web and return a list of results (title, url, description).")
tools.need("fetch", "Fetch a web page and return its main content as markdown.")`, body: "## R\n\n" + luaFence(`tools.add({"search", "fetch"})
assert(fetch.wire_name == "web_fetch")`) + "Research.\n", want: "tools=search,fetch"},
		{name: "invalid alias", h1: `tools.bind("1x", "web search capability")`, err: `Lua: invalid tool alias "1x": expected [A-Za-z][A-Za-z0-9_-]{0,63}`},
		{name: "duplicate alias survives pcall", h1: ws + "\n" + `pcall(tools.bind, "search", "web search capability")`, err: `Binding: tool alias "search" was declared more than once`},
		{name: "absent", h1: `tools.bind("joke", "tell a joke")`, err: `Binding: tool alias "joke": no tool matches capability "tell a joke"`},
		{name: "selected twice", h1: ws + "\n" + `tools.bind("s2", "web search capability")`, err: `Binding: tool aliases "search" and "s2" both resolve to promptforge/web_search`},
		{name: "ambiguous", h1: `tools.bind("o", "look up a record")`, err: `Binding: tool alias "o": ambiguous tool capability "look up a record"`},
		{name: "bind shape", h1: `tools.bind("x")`, err: "Lua: tools.bind expects alias, capability description"},
		{name: "bind in H2", h1: defModel, body: "## S\n\n" + luaFence(ws), err: "Lua: tools.bind is only available during live H1 execution"},
		{name: "always in H2", h1: defModel, body: "## S\n\n" + luaFence(`tools.always("x")`), err: "Lua: tools.always is only available during live H1 execution"},
		{name: "add in H1", h1: `tools.add("x")`, err: "Lua: tools.add is only available during H2 recording"},
		{name: "add_local in H1", h1: `tools.add_local("x", "d", {}, function() end)`, err: "Lua: tools.add_local is only available in sections"},
		{name: "always undeclared", h1: `tools.always("search")`, err: `Lua: tools.always alias "search" was not declared by tools.bind`},
		{name: "always twice", h1: ws + "\ntools.always(\"search\")\ntools.always(\"search\")", err: `Lua: tools.always alias "search" was recorded more than once`},
		{name: "always scope all sections", h1: defModel + "\n" + ws + "\ntools.always(\"search\")", body: "## A\n\nGo.\n\n## B\n\n" + luaFence(`return reply`), want: "tools=search"},
		{name: "add atomic", h1: defModel + "\n" + ws + "\n" + orders, body: "## S\n\n" + luaFence(`local ok, e = pcall(tools.add, {"search", "nosuch", "orders"})
assert(not ok and e:find('tools.add alias "nosuch" was not declared by tools.bind', 1, true), e)`) + "Go.\n", want: "tools="},
		{name: "add forms and order", h1: defModel + "\n" + ws + "\n" + orders, body: "## S\n\n" + luaFence(`tools.add()
tools.add({})
tools.add({orders, "search"})
tools.add("orders", "again")`) + "Go.\n", want: "tools=orders,search"},
		{name: "add number", h1: defModel, body: "## S\n\n" + luaFence(`tools.add(3)`), err: "Lua: tools.add expects strings, Tool objects, or arrays of either, got number"},
		{name: "add override type", h1: defModel + "\n" + ws, body: "## S\n\n" + luaFence(`tools.add("search", 1)`), err: "Lua: tools.add override must be a string, got number"},
		{name: "add extra", h1: defModel + "\n" + ws, body: "## S\n\n" + luaFence(`tools.add("search", "o", "x")`), err: "Lua: tools.add takes one alias plus an optional override, got extra string"},
		{name: "add array override", h1: defModel + "\n" + ws, body: "## S\n\n" + luaFence(`tools.add({"search"}, "o")`), err: "Lua: tools.add array form takes no override"},
		{name: "add local alias", h1: defModel, body: "## S\n\n" + luaFence(`tools.add_local("g", "G", {}, function() return "" end)
tools.add("g")`), err: `Lua: tools.add alias "g" is a local tool`},
		{name: "local duplicates bound", h1: defModel + "\n" + ws, body: "## S\n\n" + luaFence(`tools.add_local("search", "S", {}, function() return "" end)`), err: `Lua: tools.add_local alias "search" duplicates a declared tool alias`},
		{name: "local twice", h1: defModel, body: "## S\n\n" + luaFence(`tools.add_local("g", "G", {}, function() return "" end)
tools.add_local("g", "G", {}, function() return "" end)`), err: `Lua: tools.add_local alias "g" is already registered`},
		{name: "local bad param", h1: defModel, body: "## S\n\n" + luaFence(`tools.add_local("g", "G", {n = 3}, function() return "" end)`), err: `Lua: tools.add_local param "n" must be a type string or a {type, description} array`},
		{name: "local bad type", h1: defModel, body: "## S\n\n" + luaFence(`tools.add_local("g", "G", {n = {"float", "x"}}, function() return "" end)`), err: `Lua: tools.add_local param "n" has unsupported type "float": expected "string", "integer", "number", or "boolean"`},
		{name: "local visible from next prose", h1: defModel, body: "## S\n\nFirst.\n\n" + luaFence(`var.first = reply
tools.add_local("g", "G", {}, function() return "" end)`) + "Second.\n\n" + luaFence(`return var.first .. " / " .. reply`), want: "tools= / tools=g"},
		{name: "local in other VM reusable", h1: defModel, body: "## A\n\n" + luaFence(`tools.add_local("g", "G", {}, function() return "" end)`) + "Go.\n\n## B\n\n" + luaFence(`tools.add_local("g", "G2", {}, function() return "" end)`) + "Go.\n", want: "tools=g"},
		{name: "frozen handle", h1: "local s = " + ws + "\n" + `s.name = "x"`, err: `Lua: Tool objects are frozen: cannot assign field "name"`},
	}
	runAPICases(t, cases, func(h *harness) {
		h.cfg.Tools.Extra = []tools.Tool{
			&echoTool{server: "kb", name: "lookup_order", desc: "Look up an order record by order number."},
			&echoTool{server: "kb", name: "lookup_customer", desc: "Look up a customer record by email address."},
		}
	})
}

func TestFrozenGlobalHandleFields(t *testing.T) {
	h := newHarness(t)
	got, err := h.run(prompt("", `tools.bind("search", "web search capability")`, "## S\n\n"+luaFence(`local ok, e = pcall(function() search.description = "x" end)
return search.wire_name .. "|" .. tostring(next(search.parameters)) .. "|" .. search.description .. "|" .. tostring(search.untrusted)`)))
	if err != nil || got != "web_search|nil|web search capability|false" {
		t.Fatalf("%q %v", got, err)
	}
}

func TestLocalHandlerRules(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(gatewaytest.Calls("g", `{"n":2,"s":"x","b":true}`), gatewaytest.Text("fine"))
	got, err := h.run(prompt("", defModel, "## S\n\n"+luaFence(`tools.add_local("g", "G", {n = "integer", s = {"string"}, b = "boolean"}, function(a)
  local ok, e = pcall(jump, "## S")
  var.j = tostring(ok) .. ":" .. tostring(string.find(e, "jump cannot be called in a tool handler", 1, true) ~= nil)
  return a.n * 2
end)`)+"Go.\n\n"+luaFence(`return reply .. " " .. var.j .. " " .. tostring(jump ~= nil)`)))
	if err != nil || got != "fine false:true true" {
		t.Fatalf("%q %v", got, err)
	}
	if c := h.srv.ChatRequests()[1].Messages[2].Content; c != "4" {
		t.Fatalf("handler result %q", c)
	}
	h = newHarness(t)
	h.srv.Enqueue(gatewaytest.Calls("g", `{}`))
	_, err = h.run(prompt("", defModel, "## S\n\n"+luaFence(`tools.add_local("g", "G", {}, function(a) return {} end)`)+"Go.\n"))
	wantErr(t, err, KindLua, `local tool "g" failed`, "cannot return a table as a result")
	// jump in a handler names jump and the handler's line.
	h = newHarness(t)
	h.srv.Enqueue(gatewaytest.Calls("g", `{}`))
	_, err = h.run(prompt("", defModel, "## S\n\n"+luaFence("tools.add_local(\"g\", \"G\", {}, function(a)\n  jump(\"## S\")\nend)")+"Go.\n"))
	wantErr(t, err, KindLua, `local tool "g" failed`, JumpInHandler)
	if re := AsRunError(err); re.Line == 0 {
		t.Errorf("jump in a handler: no line in %q", re.Msg)
	}
	// At the handler's line, with its chunk's label (the section's fence
	// opens on line 15 of prompt(), the handler is on its second line).
	h = newHarness(t)
	h.srv.Enqueue(gatewaytest.Calls("g", `{}`))
	_, err = h.run(prompt("", defModel, "## S\n\n"+luaFence("local x = 1\ntools.add_local(\"g\", \"G\", {}, function(a) return {} end)")+"Go.\n"))
	if re := AsRunError(err); re == nil || re.Line != 17 || !strings.Contains(re.Msg, "section `S` prologue:17: cannot return a table") {
		t.Errorf("handler table result: %v (line %d), want it at line 17 in section `S` prologue", err, re.Line)
	}
}

// TestBindingErrorLine: a binding error the run returns says which prompt
// line made it, also when Lua caught it (the typed error wins) or it came
// through pcall.
func TestBindingErrorLine(t *testing.T) {
	ws := `tools.bind("search", "web search capability")`
	m := `models.bind("a", "fast small model")`
	for _, c := range []struct {
		name, h1 string
		line     int
	}{
		// The H1 fence opens on line 9 of prompt(): its first line is 10.
		{"duplicate tool", ws + "\n" + ws, 11},
		{"duplicate tool through pcall", ws + "\n\n" + `pcall(tools.bind, "search", "web search capability")`, 12},
		{"duplicate tool caught", ws + "\n" + `local ok = pcall(function() tools.bind("search", "web search capability") end)`, 11},
		{"duplicate model", defModel + "\n" + m + "\n" + m, 12},
		{"duplicate model through pcall", defModel + "\n" + m + "\n" + `pcall(models.bind, "a", "fast small model")`, 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			_, err := h.run(prompt("", c.h1, "## S\n\nGo.\n"))
			re := AsRunError(err)
			if err == nil || re.Kind != KindBinding {
				t.Fatalf("got %v, want a binding error", err)
			}
			if re.Line != c.line {
				t.Errorf("%s: line %d, want %d", re.Msg, re.Line, c.line)
			}
		})
	}
}
