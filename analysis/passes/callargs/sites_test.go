package callargs_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/callargs"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// A host call in a helper's body (a local function, a shared-library
// function, a method of a table) that a section's call certainly runs is
// judged with that call's arguments and reported at that call; a call
// the helper makes only under a condition the evaluator cannot decide,
// or after a return it may take, is not. In memory, for the reason
// TestStoreWalkOrder gives.
func TestHelperSites(t *testing.T) {
	analysistest.RunSource(t, "sites.md", []byte(sitesPrompt), callargs.Analyzer)
}

const sitesPrompt = "---\nname: sites\ndescription: Rules judged at the helper's call site.\npromptforge: 1\n---\n\n# Sites\n\n" +
	"```lua shared\n" +
	"NOTES = \"notes\"\n" +
	"function note(msg)\n  log(\"note: \" .. msg)\nend\n" +
	"function save(name, body)\n  store.write(NOTES .. \"/\" .. name, body)\nend\n" +
	"function maybe(msg)\n  if args == \"x\" then log(msg) end\nend\n" +
	"function early(msg)\n  if args == \"y\" then return end\n  log(msg)\nend\n" +
	"function arm_tag() return \"arm \" .. sys.index end\n" +
	"```\n\n" +
	"## Main\n\n```lua\n" +
	"note(\"one\\ntwo\") -- want `log message must not contain control characters.*\\(in this call of note, at line 12\\)`\n" +
	"note(\"fine\")\n" +
	"save(\"a\\\\b.md\", \"x\") -- want `path contains a backslash.*\\(in this call of save, at line 15\\)`\n" +
	"save(\"ok.md\", \"x\")\n" +
	"maybe(\"one\\ntwo\")\n" +
	"early(\"one\\ntwo\")\n" +
	"local function shout(m)\n  log(string.upper(m))\nend\n" +
	"for _, w in ipairs({\"a\", \"b\\tc\"}) do\n  shout(w) -- want `log message must not contain.*\\(in this call of shout, at line 37\\)`\nend\n" +
	"local Report = {title = \"r\"}\n" +
	"function Report:emit(line)\n  log(self.title .. \": \" .. line)\nend\n" +
	"Report:emit(\"ok\")\n" +
	"Report:emit(string.rep(\"=\", 300)) -- want `log message is 303 characters.*\\(in this call of Report:emit, at line 44\\)`\n" +
	"local empty = {}\n" +
	"empty:render() -- want `bad-operand: attempt to call a nil value \\(method .empty:render.\\)`\n" +
	"local parts = {1, 2}\n" +
	"reply = #parts + 1 -- want \"bad-result: `reply` must be a string or nil, got number\"\n" +
	"```\n\n" +
	"## Tags\n\n```lua\nlocal tag = arm_tag() -- want `sys-out-of-context: unknown sys field 'index': sys.index exists only in fanout arms.*in this call of arm_tag fails`\n" +
	"local function model_name() return sys.model end\n" +
	"log(model_name()) -- want `unknown sys field 'model'.*in this call of model_name`\n" +
	"```\n\nSome prose.\n\n```lua\nlog(model_name())\nlocal parts = {1, 2}\nreturn parts -- want \"bad-result: cannot return a table as a result\"\n```\n"

// A helper called with a value an earlier section handed on in var is
// judged with that value at its call.
func TestHelperSitesFromVar(t *testing.T) {
	const src = "---\nname: sv\ndescription: Sites with var values.\npromptforge: 1\n---\n\n# SV\n\n" +
		"```lua shared\nfunction note(msg)\n  log(msg)\nend\nfunction save(path)\n  store.write(path, \"x\")\nend\n```\n\n---\nNotes.\n\n" +
		"## Setup\n\n```lua\nvar.banner = string.rep(\"=\", 300)\nvar.path = \"out\\\\win.md\"\nvar.ok = \"out/win.md\"\n```\n\n" +
		"## Go\n\n```lua\n" +
		"note(var.banner) -- want `log message is 300 characters.*in this call of note`\n" +
		"save(var.path) -- want `invalid path.*in this call of save`\n" +
		"save(var.ok)\n" +
		"return \"x\"\n```\n"
	analysistest.RunSource(t, "sv.md", []byte(src), callargs.Analyzer)
}

// An operation that fails in a shared helper's body is reported at the
// section's call, with the helper's line as related information (the
// engine's error names that line).
func TestHelperOpRelated(t *testing.T) {
	src := []byte("---\nname: r\ndescription: d\npromptforge: 1\n---\n\n# R\n\n" +
		"```lua shared\nSTEPS = {\"Intro\", \"Body\"}\nfunction heading(n)\n  return \"## \" .. STEPS[n]\nend\n```\n\n---\nNotes.\n\n" +
		"## Go\n\n```lua\nlog(heading(4))\nreturn \"x\"\n```\n")
	p := parse.Parse("r.md", src)
	diags, err := analysis.Run(t.Context(), p, []*analysis.Analyzer{callargs.Analyzer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diags {
		if d.Code != "bad-operand" {
			continue
		}
		if line := p.File.Line(d.Span.Start); line != 22 {
			t.Errorf("reported at line %d, want the call at 22", line)
		}
		if len(d.Related) != 1 || p.File.Line(d.Related[0].Span.Start) != 12 {
			t.Errorf("related %+v, want the helper's line 12", d.Related)
		}
		return
	}
	t.Fatalf("no bad-operand finding in %+v", diags)
}

// A var table read into a local is a proxy: a write through the local
// changes var, for this section and the ones after it; a local that
// only reads keeps what var holds.
func TestVarProxyWrites(t *testing.T) {
	const src = "---\nname: vp\ndescription: Var proxies.\npromptforge: 1\n---\n\n# VP\n\n---\nNotes.\n\n" +
		"## Setup\n\n```lua\nvar.cfg = {x = 1, list = {}}\nvar.ro = {name = \"n\"}\n```\n\n" +
		"## Change\n\n```lua\nlocal c = var.cfg\nc.y = \"two\"\ntable.insert(c.list, \"a\")\nlocal r = var.ro\nlog(r.name .. var.cfg.x)\n```\n\n" +
		"## Use\n\n```lua\nlog(var.cfg.y .. var.cfg.list[1])\nlog(var.ro.title .. \"!\") -- want `attempt to concatenate a nil value`\nreturn \"x\"\n```\n"
	analysistest.RunSource(t, "vp.md", []byte(src), callargs.Analyzer)
}
