package program_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

const src = `---
name: t
description: d
promptforge: 1
---

# T

` + "```lua shared" + `
function helper() jump("## B") end
jump("## B")
` + "```" + `

` + "```lua" + `
local function setup()
  tools.add_local("x", "d", {}, function() return "" end)
end
setup()
tools.bind("s", "d")
` + "```" + `

## A

` + "```lua" + `
local function deep() jump("## B") end
local function handler(args)
  deep()
  return ""
end
tools.add_local("h", "d", {}, handler)
tools.add_local("i", "d", {}, function(a)
  local function inner() log(a) end
  inner()
  return ""
end)
jump("## B")
local x, y = tools.calls["k"], sys.now
` + "```" + `

## B

Prose.
`

func TestContexts(t *testing.T) {
	p := parse.Parse("t.md", []byte(src))
	if len(p.Errors) != 0 {
		t.Fatalf("parse errors: %v", p.Errors[0])
	}
	prog := program.Build(p)
	type want struct {
		path    string
		line    int
		where   api.Where
		handler bool
	}
	wants := []want{
		{"jump", 10, api.Section, false},    // shared, inside a function
		{"jump", 11, api.SharedLoad, false}, // shared top level
		{"tools.add_local", 16, api.H1, false},
		{"tools.bind", 19, api.H1, false},
		{"jump", 25, api.Handler, true}, // deep() is called by a named handler
		{"log", 32, api.Handler, true},  // nested function of an inline handler
		{"jump", 36, api.Section, false},
	}
	for _, w := range wants {
		found := false
		for _, c := range prog.Calls {
			if c.Path == w.path && p.File.Line(prog.NameSpan(c).Start) == w.line {
				found = true
				if c.Where != w.where || (prog.HandlerOf(c) != nil) != w.handler {
					t.Errorf("%s at line %d: where %v handler %v, want %v %v", w.path, w.line, c.Where, prog.HandlerOf(c) != nil, w.where, w.handler)
				}
				if c.Entry == nil {
					t.Errorf("%s at line %d: no API entry", w.path, w.line)
				}
			}
		}
		if !found {
			t.Errorf("no call %s at line %d", w.path, w.line)
		}
	}
}

func TestSpans(t *testing.T) {
	p := parse.Parse("t.md", []byte(src))
	prog := program.Build(p)
	for _, c := range prog.Calls {
		if c.Path == "" {
			continue
		}
		if got := p.File.Text(prog.NameSpan(c)); got != c.Path {
			t.Errorf("call name span covers %q, want %q", got, c.Path)
		}
		if got := p.File.Text(prog.CallSpan(c)); got[len(got)-1] != ')' {
			t.Errorf("call span %q does not end at the parenthesis", got)
		}
	}
	if len(prog.CallsKeys) != 1 || p.File.Text(prog.Span(prog.CallsKeys[0].Chunk, prog.CallsKeys[0].Key)) != `"k"` {
		t.Errorf("tools.calls keys: %+v", prog.CallsKeys)
	}
	var sawSys bool
	for _, g := range prog.Globals {
		if g.Path == "sys.now" {
			sawSys = p.File.Text(prog.PathSpan(g)) == "sys.now"
		}
	}
	if !sawSys {
		t.Error("sys.now path span not found")
	}
	unused := map[string]bool{}
	for _, l := range prog.Locals {
		if l.Reads == 0 && !l.Param {
			unused[l.Name] = true
			if p.File.Text(prog.LocalSpan(l)) != l.Name {
				t.Errorf("local %s span covers %q", l.Name, p.File.Text(prog.LocalSpan(l)))
			}
		}
	}
	if !unused["x"] || !unused["y"] || unused["deep"] || unused["handler"] || unused["setup"] {
		t.Errorf("unused locals %v", unused)
	}
}

func TestSyntaxErrorChunkIsSkipped(t *testing.T) {
	p := parse.Parse("t.md", []byte("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nlocal x = (\n```\n"))
	prog := program.Build(p)
	if len(prog.Calls) != 0 || len(prog.Sections) != 1 {
		t.Errorf("calls %d sections %d", len(prog.Calls), len(prog.Sections))
	}
}

// TestSharedASTGetsCopied: the parser memoises chunks by label and
// source, so `## A` and `### A` with the same code share AST nodes; the
// model must still keep one call (with its own span) per chunk.
func TestSharedASTGetsCopied(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\njump(\"### A\")\n```\n\n### A\n\n```lua\njump(\"### A\")\n```\n"
	p := parse.Parse("t.md", []byte(src))
	prog := program.Build(p)
	var lines []int
	for _, c := range prog.Calls {
		if c.Path == "jump" {
			lines = append(lines, p.File.Line(prog.NameSpan(c).Start))
			if prog.CallOf(c.Expr) != c {
				t.Error("CallOf does not find the call")
			}
		}
	}
	if len(lines) != 2 || lines[0] != 12 || lines[1] != 18 {
		t.Errorf("jump calls at lines %v, want [12 18]", lines)
	}
}

// TestReportsNothing runs the model builder through analysistest: it is a
// fact-only analyzer, so any diagnostic on real prompts is a failure.
func TestReportsNothing(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), program.Analyzer)
}
