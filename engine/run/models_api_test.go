package run

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

var testCatalog = []gateway.Model{
	{ID: "fast-small", Description: "Fast small model for quick answers and simple chat", Context: 8192, Thinking: "never", ToolDialect: "openai"},
	{ID: "reasoning-large", Description: "Large reasoning model for careful analysis and coding", Context: 200000, Thinking: "always", ToolDialect: "openai"},
	{ID: "hybrid", Description: "Hybrid model with switchable thinking for agents and tools", Context: 32768, Thinking: "switchable", ToolDialect: "openai"},
}

func TestModelsAPI(t *testing.T) {
	cases := []apiCase{
		{name: "bind and fields", h1: `local m = models.bind("r", "reasoning model for careful analysis", {thinking = true, context = 100000, temperature = 0.2, max_tokens = 512})
return table.concat({m.name, m.model_id, m.description, m.context, tostring(m.thinking), m.temperature, m.max_tokens, m.dialect}, "|")`,
			want: "r|reasoning-large|reasoning model for careful analysis|200000|true|0.2|512|openai"},
		{name: "need synonym unset fields", h1: `local m = models.need("f", "fast small model for quick answers")
return m.model_id .. tostring(m.thinking) .. tostring(m.temperature) .. tostring(m.max_tokens)`, want: "fast-smallnilnilnil"},
		{name: "filter leaves nothing", h1: `models.bind("x", "fast small model", {context = 1000000})`, err: `Binding: model alias "x": no model matches capability "fast small model": no catalog model passes the opts filter`},
		{name: "filter thinking false drops always", h1: `return models.bind("x", "reasoning model for careful analysis and coding", {thinking = false}).model_id`, err: "Binding: "},
		{name: "absent", h1: `models.bind("x", "image generator")`, err: `Binding: model alias "x": no model matches capability "image generator"; no catalog model shares a word with it; the catalog has `},
		{name: "absent lists candidates", h1: `models.bind("x", "a model that paints pictures")`, err: `Binding: model alias "x": no model matches capability "a model that paints pictures"; candidates: `},
		{name: "duplicate alias survives pcall", h1: `models.bind("a", "fast small model")
pcall(models.bind, "a", "fast small model")`, err: `Binding: model alias "a" was declared more than once`},
		{name: "bad alias", h1: `models.bind("-a", "fast")`, err: `Lua: invalid model alias "-a"`},
		{name: "shape", h1: `models.bind("a")`, err: "Lua: models.bind expects alias, description, and optional opts table"},
		{name: "too many", h1: `models.bind("a", "b", {}, 4)`, err: "Lua: models.bind expects at most three arguments"},
		{name: "opts not table", h1: `models.bind("a", "fast", 3)`, err: "Lua: models.bind opts must be a table when provided"},
		{name: "opts unknown key", h1: `models.bind("a", "fast", {speed = 1})`, err: `Lua: unknown models.bind opts key "speed"`},
		{name: "opts key type", h1: `models.bind("a", "fast", {1})`, err: "Lua: models.bind opts keys must be strings"},
		{name: "opts context", h1: `models.bind("a", "fast", {context = 0})`, err: "Lua: models.bind opts.context must be greater than zero"},
		{name: "opts thinking", h1: `models.bind("a", "fast", {thinking = "yes"})`, err: "Lua: models.bind opts.thinking must be a boolean"},
		{name: "opts temperature", h1: `models.bind("a", "fast", {temperature = 3})`, err: "Lua: models.bind opts.temperature must be a finite number from 0 to 2"},
		{name: "default twice", h1: `models.default("a", "fast small model")
models.default("b", "reasoning model")`, err: "Lua: models.default may be called at most once per prompt"},
		{name: "default undeclared", h1: `models.default("a")`, err: `Lua: models.default alias "a" was not declared by models.bind`},
		{name: "bind in H2", body: "## S\n\n" + luaFence(`models.bind("a", "fast")`), err: "Lua: models.bind is only available during live H1 execution"},
		{name: "use in H1", h1: `models.use("a")`, err: "Lua: models.use is only available during H2 recording"},
		{name: "get absent in H1", h1: `return tostring(models.get)`, want: "nil"},
		{name: "prose without model", body: "## S\n\nHello.\n", err: "Binding: model binding required for section S"},
		{name: "sys.model and default", h1: `models.bind("r", "reasoning model for careful analysis")
models.default("r")`, body: "## S\n\n" + luaFence(`assert(not pcall(function() return sys.model end))`) + "Hello.\n\n" + luaFence(`return sys.model .. " " .. reply .. " " .. r.name`), want: "reasoning-large prose:reasoning-large r"},
		{name: "use selects prose model once", h1: `models.default("f", "fast small model for quick answers")
models.bind("r", "reasoning model for careful analysis")`, body: "## S\n\n" + luaFence(`models.use("r")
local ok, e = pcall(models.use, "r")
assert(e:find("at most once per section", 1, true))`) + "Hello.\n\n" + luaFence(`return reply`), want: "prose:reasoning-large"},
		{name: "late use changes infer only", h1: `models.default("f", "fast small model for quick answers")
models.bind("r", "reasoning model for careful analysis")`, body: "## S\n\nHello.\n\n" + luaFence(`models.use("r")
return reply .. " " .. models.infer("q") .. " " .. sys.model`), want: "prose:fast-small infer:reasoning-large fast-small"},
		{name: "use undeclared", h1: `models.default("f", "fast small model")`, body: "## S\n\n" + luaFence(`models.use("zz")`), err: `Lua: models.use alias "zz" was not declared by models.bind`},
		{name: "get and handle infer", h1: `models.default("f", "fast small model for quick answers")
models.bind("r", "reasoning model for careful analysis")`, body: "## S\n\n" + luaFence(`local h = models.get("r")
return h:infer("x") .. " " .. models.infer("y") .. " " .. r:infer("z")`), want: "infer:reasoning-large infer:fast-small infer:reasoning-large"},
		{name: "infer nil second arg", h1: `models.default("f", "fast small model")`, body: "## S\n\n" + luaFence(`return f:infer("x", nil)`), err: "Lua: model:infer(prompt) does not accept a second argument; per-call inference options are not supported"},
		{name: "infer second arg", h1: `models.default("f", "fast small model")`, body: "## S\n\n" + luaFence(`return f:infer("x", {temperature = 1})`), err: "Lua: model:infer(prompt) does not accept a second argument; per-call inference options are not supported"},
		{name: "infer without model", body: "## S\n\n" + luaFence(`return models.infer("x")`), err: "Binding: model binding required for section S"},
		{name: "infer pcall catches", body: "## S\n\n" + luaFence(`local ok = pcall(models.infer, "x")
return tostring(ok)`), want: "false"},
		{name: "infer in H1", h1: `models.default("f", "fast small model for quick answers")
return models.infer("hi")`, want: "infer:fast-small"},
		{name: "H1 prose uses default", h1: `models.default("f", "fast small model for quick answers")`, body: "Preamble prose.\n", want: "prose:fast-small"},
		{name: "infer tool calls", h1: `models.default("f", "fast small model for quick answers")`, body: "## S\n\n" + luaFence(`return models.infer("CALL")`), err: "Completion: model inference received tool calls but no tools were advertised"},
	}
	runAPICases(t, cases, func(h *harness) {
		h.srv.Catalog = testCatalog
		h.srv.Script = func(req *gateway.Request) gatewaytest.Reply {
			if gatewaytest.LastUserContent(req) == "CALL" {
				return gatewaytest.Calls("x", `{}`)
			}
			kind := "prose:"
			if len(req.Messages) == 1 && req.Messages[0].Content != "Hello." && req.Messages[0].Content != "Preamble prose." {
				kind = "infer:"
			}
			return gatewaytest.Text(kind + req.Model)
		}
	})
}

func TestModelOptionsOnTheWire(t *testing.T) {
	h := newHarness(t)
	h.srv.Catalog = testCatalog
	h.srv.Script = func(*gateway.Request) gatewaytest.Reply { return gatewaytest.Text("ok") }
	_, err := h.run(prompt("", `models.default("h", "hybrid model for agents", {thinking = false, temperature = 0.5, max_tokens = 100})`, "## S\n\nHello.\n"))
	if err != nil {
		t.Fatal(err)
	}
	var chat string
	for _, e := range h.srv.Received() {
		if strings.HasSuffix(e.Path, "/chat/completions") {
			chat = string(e.Body)
		}
	}
	for _, want := range []string{`"model":"hybrid"`, `"temperature":0.5`, `"max_tokens":100`, `"chat_template_kwargs":{"enable_thinking":false}`} {
		if !strings.Contains(chat, want) {
			t.Fatalf("request %s lacks %s", chat, want)
		}
	}
	// The catalog came from GET /models, once.
	n := 0
	for _, e := range h.srv.Received() {
		if strings.HasSuffix(e.Path, "/models") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d catalog fetches", n)
	}
}

func TestGemmaDialectThroughLua(t *testing.T) {
	h := newHarness(t)
	h.srv.Catalog = []gateway.Model{{ID: "gemma-3", Description: "Small open model for tool use", Context: 8192, Thinking: "never", ToolDialect: "gemma3_tool_code"}}
	h.srv.Enqueue(gatewaytest.Text("```tool_code\ngrab(key=\"k\")\n```"), gatewaytest.Text("got it"))
	got, err := h.run(prompt("", `models.default("g", "small open model")`, "## S\n\n"+luaFence(`tools.add_local("grab", "Grab a value", {key = "string"}, function(a) return "v:" .. a.key end)`)+"Go.\n\n"+luaFence(`return reply .. " " .. g.dialect .. " " .. tools.calls.grab`)))
	if err != nil || got != "got it gemma3_tool_code 1" {
		t.Fatalf("%q %v", got, err)
	}
	if c := h.srv.ChatRequests()[1].Messages[3].Content; !strings.HasPrefix(c, "TOOL RESULT grab (call_tool_code_1):\nv:k") {
		t.Fatalf("result message %q", c)
	}
}
