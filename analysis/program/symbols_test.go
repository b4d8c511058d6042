package program_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

const symSrc = `---
name: t
description: d
promptforge: 1
---

# T

` + "```lua" + `
local web = tools.bind("web", "web_search", "find pages")
tools.always(web)
models.default("fast", "chat")
` + "```" + `

## A

` + "```lua" + `
tools.add({"web"}, "search here")
tools.add_local("calc", "adds", { a = "number", b = {"number", "second"} }, function(x) return "" end)
local n = tools.calls.web + tools.calls["calc"]
local h = models.use("fast")
jump("## B")
` + "```" + `

## B

` + "```lua" + `
web("q")
execute("## Nowhere")
local s = "unterminated
` + "```" + `
`

// TestSymbols: declarations and references with their spans, also in a
// chunk that does not parse.
func TestSymbols(t *testing.T) {
	p := parse.Parse("t.md", []byte(symSrc))
	s := program.Of(p).Symbols()
	if program.Of(p).Symbols() != s {
		t.Error("Symbols is not memoised with the parse")
	}
	text := func(r *program.Ref) string { return string(p.File.Content[r.Span.Start:r.Span.End]) }
	var got []string
	for _, r := range s.Refs {
		sec := "H1"
		if r.Section != nil {
			sec = r.Section.Name
		}
		tgt := ""
		if r.Kind == program.RefSection {
			tgt = " -> nil"
			if r.Target != nil {
				tgt = " -> " + r.Target.Name
			}
		}
		got = append(got, sec+" "+r.Call+" "+r.Name+"="+text(r)+map[bool]string{true: " decl"}[r.Decl]+tgt)
	}
	want := []string{
		"H1 tools.bind web=web decl",
		"H1 tools.always web=web",
		"H1 models.default fast=fast decl",
		"A tools.add web=web",
		"A tools.add_local calc=calc decl",
		"A tools.calls web=web",
		"A tools.calls calc=calc",
		"A models.use fast=fast",
		"A jump ## B=## B -> B",
		"B execute ## Nowhere=## Nowhere -> nil",
		"B global web=web",
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("refs:\n%s\nwant:\n%s", g, w)
	}
	d := s.Tools["web"]
	if d == nil || d.Handle != "web" || d.Capability != "web_search" || d.Override != "find pages" || !d.Always ||
		len(d.AddedIn) != 1 || d.AddOver[d.AddedIn[0]] != "search here" || s.ToolByHandle("web") != d {
		t.Errorf("tool decl %+v", d)
	}
	if !s.IsModelHandle("h") || s.IsModelHandle("n") || s.ModelByHandle("h") != nil {
		t.Error("IsModelHandle: a models.use handle")
	}
	if m := s.Models["fast"]; m == nil || m.Capability != "chat" || m.Call != "models.default" {
		t.Errorf("model decl %+v", m)
	}
	if len(s.Locals) != 1 || s.Locals[0].Description != "adds" ||
		!reflect.DeepEqual(s.Locals[0].Params, []program.LocalParam{{Name: "a", Type: "number"}, {Name: "b", Type: "number", Description: "second"}}) ||
		string(p.File.Content[s.Locals[0].Handler.Start:s.Locals[0].Handler.End]) != "function" {
		t.Errorf("local tools %+v", s.Locals)
	}
	if len(s.Chunks) != 3 || len(s.Sections) != 2 {
		t.Errorf("%d chunks, %d sections", len(s.Chunks), len(s.Sections))
	}
	off := strings.Index(symSrc, `jump("## B")`) + 7
	if r := s.RefAt(off); r == nil || r.Call != "jump" {
		t.Errorf("RefAt = %+v", r)
	}
	if c := s.ChunkAt(off); c == nil || c.Section == nil || c.Section.Name != "A" || s.SectionAt(off) != c.Section {
		t.Errorf("ChunkAt = %+v", c)
	}
	if h := s.HeadingAt(strings.Index(symSrc, "## B\n")); h == nil || h.Name != "B" {
		t.Errorf("HeadingAt = %+v", h)
	}
}

// TestChunkTokensMatchLex: the memoised, shifted tokens of every chunk
// equal a fresh scan of its text at the chunk's place, after edits that
// move chunks and change one of them, with LF and CRLF line breaks.
func TestChunkTokensMatchLex(t *testing.T) {
	edits := []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.Replace(s, "# T\n", "# T\n\nMore prose\nhere.\n", 1) },
		func(s string) string { return strings.Replace(s, `jump("## B")`, `jump("## B")  jump("## A")`, 1) },
	}
	checked := 0
	for _, text := range []string{symSrc, src} {
		for _, edit := range edits {
			for _, variant := range []string{edit(text), strings.ReplaceAll(edit(text), "\n", "\r\n")} {
				p := parse.Parse("t.md", []byte(variant))
				for _, c := range program.Of(p).Symbols().Chunks {
					want := luatok.AppendLex(nil, c.Chunk.Source, c.Chunk.FirstLine, p.File.LineStart)
					if got := c.Tokens(); !reflect.DeepEqual(got, want) {
						t.Fatalf("chunk %s: memoised tokens differ from a fresh scan:\n%+v\n%+v", c.Chunk.Label, got, want)
					}
					if got := program.Tokens(c.Chunk, p.File); !reflect.DeepEqual(got, want) {
						t.Fatalf("chunk %s: Tokens differ from a fresh scan:\n%+v\n%+v", c.Chunk.Label, got, want)
					}
					checked++
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d chunks checked", checked)
	}
}
