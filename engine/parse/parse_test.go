package parse

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

type want struct {
	line int
	code string
	sub  string
}

type tcase struct {
	name   string
	prompt []byte
	wants  []want
}

func loadCases(t testing.TB) []tcase {
	files, err := filepath.Glob("../../testdata/parse/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	var out []tcase
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := tcase{name: strings.TrimSuffix(filepath.Base(f), ".txtar")}
		for _, af := range ar.Files {
			switch af.Name {
			case "prompt.md":
				c.prompt = af.Data
			case "want":
				for _, l := range strings.Split(strings.TrimSpace(string(af.Data)), "\n") {
					if l == "" {
						continue
					}
					parts := strings.SplitN(l, " ", 3)
					n, err := strconv.Atoi(parts[0])
					if err != nil || len(parts) < 2 {
						t.Fatalf("%s: bad want line %q", f, l)
					}
					w := want{line: n, code: parts[1]}
					if len(parts) == 3 {
						w.sub = parts[2]
					}
					c.wants = append(c.wants, w)
				}
			}
		}
		out = append(out, c)
	}
	return out
}

func errLines(p *Prompt) []string {
	var got []string
	for _, e := range p.Errors {
		l, _ := p.File.Position(e.Span.Start)
		got = append(got, fmt.Sprintf("%d %s", l, e.Code))
	}
	sort.Strings(got)
	return got
}

// TestCases checks every testdata case: the expected codes at the
// expected lines, no others, and message fragments.
func TestCases(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			p := Parse("prompt.md", c.prompt)
			checkInvariants(t, p)
			var wantKeys []string
			for _, w := range c.wants {
				wantKeys = append(wantKeys, fmt.Sprintf("%d %s", w.line, w.code))
			}
			sort.Strings(wantKeys)
			got := errLines(p)
			if strings.Join(got, ",") != strings.Join(wantKeys, ",") {
				for _, e := range p.Errors {
					l, _ := p.File.Position(e.Span.Start)
					t.Logf("got %d %s: %s", l, e.Code, e.Message)
				}
				t.Fatalf("errors = %v, want %v", got, wantKeys)
			}
			for _, w := range c.wants {
				found := false
				for _, e := range p.Errors {
					l, _ := p.File.Position(e.Span.Start)
					if l == w.line && e.Code == w.code && strings.Contains(e.Message, w.sub) {
						found = true
					}
				}
				if !found {
					t.Errorf("no %s error at line %d containing %q", w.code, w.line, w.sub)
				}
			}
			// CRLF and BOM variants report the same codes at the same lines.
			crlf := []byte(strings.ReplaceAll(string(c.prompt), "\n", "\r\n"))
			bom := append([]byte("\uFEFF"), c.prompt...)
			for name, v := range map[string][]byte{"crlf": crlf, "bom": bom, "bom+crlf": append([]byte("\uFEFF"), crlf...)} {
				pv := Parse("prompt.md", v)
				checkInvariants(t, pv)
				if g := errLines(pv); strings.Join(g, ",") != strings.Join(got, ",") {
					t.Errorf("%s variant: errors = %v, want %v", name, g, got)
				}
			}
		})
	}
}

// checkInvariants asserts what must hold for every input: spans inside the
// file, every error with a code and a message.
func checkInvariants(t testing.TB, p *Prompt) {
	t.Helper()
	n := len(p.File.Content)
	in := func(what string, a, b int) {
		if a < 0 || b < a || b > n {
			t.Fatalf("%s span [%d,%d) outside file of %d bytes", what, a, b, n)
		}
	}
	for _, e := range p.Errors {
		in("error "+e.Code, e.Span.Start, e.Span.End)
		if e.Message == "" {
			t.Fatalf("error without message")
		}
		switch e.Code {
		case CodeFrontmatter, CodeStructure, CodeFence, CodeList, CodeLuaSyntax:
		default:
			t.Fatalf("unknown code %q", e.Code)
		}
	}
	if p.H1 != nil {
		in("h1", p.H1.Span.Start, p.H1.Span.End)
	}
	blocks := func(bs []*Block) {
		for _, b := range bs {
			sp := b.Span()
			in("block", sp.Start, sp.End)
			if b.Kind == LuaBlock {
				in("chunk source", b.Chunk.SourceSpan.Start, b.Chunk.SourceSpan.End)
			}
		}
	}
	blocks(p.H1Blocks)
	var walk func([]*Section)
	walk = func(ss []*Section) {
		for _, s := range ss {
			in("heading", s.Heading.Span.Start, s.Heading.Span.End)
			in("content", s.Content.Start, s.Content.End)
			in("live", s.Live.Start, s.Live.End)
			blocks(s.Blocks)
			for _, it := range s.Items {
				in("item", it.Span.Start, it.Span.End)
			}
			walk(s.Children)
		}
	}
	walk(p.Sections)
}

func mustParse(t *testing.T, body string) *Prompt {
	t.Helper()
	p := Parse("t.md", []byte("---\nname: t\ndescription: d\npromptforge: 1\n---\n"+body))
	for _, e := range p.Errors {
		l, _ := p.File.Position(e.Span.Start)
		t.Fatalf("unexpected error at line %d: %s", l, e.Message)
	}
	return p
}

func shape(bs []*Block) string {
	var parts []string
	for _, b := range bs {
		if b.Kind == LuaBlock {
			parts = append(parts, "Lua("+b.Chunk.Label+")")
		} else {
			loop := ""
			if b.Prose.LoopCapable {
				loop = ",loop"
			}
			parts = append(parts, fmt.Sprintf("Prose(%q%s)", b.Prose.Text, loop))
		}
	}
	return strings.Join(parts, " ")
}

func TestBlockAlternation(t *testing.T) {
	p := mustParse(t, "# T\n\n## Review\n\nCheck the draft.\n\n```lua\nvar.a = 1\n```\n\n```lua\nvar.b = 2\n```\n")
	got := shape(p.Sections[0].Blocks)
	want := "Prose(\"Check the draft.\") Lua(section `Review` lua) Prose(\"\",loop) Lua(section `Review` epilog)"
	if got != want {
		t.Fatalf("blocks:\n got %s\nwant %s", got, want)
	}
	p = mustParse(t, "# T\n\n## S\n\n```lua\nx = 1\n```\n\nask\n\n```lua\nreturn reply\n```\n")
	if got, want := shape(p.Sections[0].Blocks), "Lua(section `S` prologue) Prose(\"ask\",loop) Lua(section `S` epilog)"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	p = mustParse(t, "# T\n\n## S\n\n```lua\nreturn 1\n```\n")
	if got, want := shape(p.Sections[0].Blocks), "Lua(section `S` prologue)"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	if p.Sections[0].Blocks[0].Chunk.FirstLine != 11 {
		t.Fatalf("FirstLine = %d, want 11", p.Sections[0].Blocks[0].Chunk.FirstLine)
	}
}

func TestSectionsAndMarkers(t *testing.T) {
	p := mustParse(t, "# Weekly\n\n```lua\nmodels.default(\"w\", \"m\")\n```\n\nIntro.\n\n---\nnotes\n\n## Gather\n\nx\n\n### Style\n\n---\n\n- short\n- no jargon\n\n## Later\n\nprose\n\n***\n\ndead\n")
	if p.Title != "Weekly" || p.Description != "Intro." || len(p.H1Blocks) != 2 {
		t.Fatalf("h1: %q %q %d", p.Title, p.Description, len(p.H1Blocks))
	}
	if len(p.Sections) != 2 || p.Sections[0].Name != "Gather" || len(p.Sections[0].Children) != 1 {
		t.Fatalf("tree wrong")
	}
	st := p.Sections[0].Children[0]
	if !st.OffWalk || !st.IsList || len(st.Items) != 2 || st.Items[1].Text != "no jargon" || st.Address() != "### Style" {
		t.Fatalf("style: offwalk=%v list=%v items=%v", st.OffWalk, st.IsList, st.Items)
	}
	later := p.Sections[1]
	if later.OffWalk || shape(later.Blocks) != "Prose(\"prose\",loop)" || p.File.Text(later.Dead) == "" {
		t.Fatalf("later: %s dead=%q", shape(later.Blocks), p.File.Text(later.Dead))
	}
}

func TestTitles(t *testing.T) {
	p := mustParse(t, "# T\n\n## Plan the *draft*\n\n## Call `fetch` twice\n\n## [Notes](notes.md) ##\n\n## Step {#anchor}\n\n## A &amp; B \\#1\n\nalpha\nbeta\n---\n")
	var names []string
	for _, s := range p.Sections {
		names = append(names, s.Name)
	}
	want := []string{"Plan the draft", "Call fetch twice", "Notes", "Step {#anchor}", "A & B #1", "alphabeta"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Fatalf("names = %q, want %q", names, want)
	}
	if !p.Sections[5].Heading.Setext {
		t.Fatalf("setext not detected")
	}
	// A setext title with a `#` after text: its span holds the underline.
	for _, body := range []string{"# T\n\n0# 0\n-\nx\n", "# T\n\n1.# x\n---\nx\n"} {
		p = mustParse(t, body)
		if len(p.Sections) != 1 || !p.Sections[0].Heading.Setext || !strings.HasSuffix(p.File.Text(p.Sections[0].Heading.Span), "-\n") {
			t.Errorf("%q: sections %d, heading %q", body, len(p.Sections), p.File.Text(p.Sections[0].Heading.Span))
		}
	}
}

func TestListRules(t *testing.T) {
	cases := map[string][]string{
		"- a\n* b\n1. c\n2) d\n2024. Launch\n- [ ] task\n-   spaced": {"a", "b", "c", "d", "Launch", "[ ] task", "  spaced"},
		"- a\nplain prose":  nil,
		"+ a\n- b":          nil,
		"3.14 apples\n- b":  nil,
		"- a\n  continued":  nil,
		"- a\n\n  - nested": {"a", "nested"},
	}
	for body, want := range cases {
		p := mustParse(t, "# T\n\n## S\n\n---\n\n"+body+"\n")
		var got []string
		for _, it := range p.Sections[0].Items {
			got = append(got, it.Text)
			if p.File.Text(it.Span) != it.Text {
				t.Errorf("item span %q != text %q", p.File.Text(it.Span), it.Text)
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") || p.Sections[0].IsList != (want != nil) {
			t.Errorf("%q: items %q, want %q", body, got, want)
		}
	}
}

func TestSharedAndH1(t *testing.T) {
	p := mustParse(t, "# T\n\nA.\n\n```lua shared\nfunction f() return 1 end\n```\n\nB.\n")
	if p.Shared == nil || p.Shared.Label != "prompt shared library" || !p.Shared.OK() || p.Shared.FirstLine != 11 {
		t.Fatalf("shared: %+v", p.Shared)
	}
	if p.Description != "A.\n\n   \n\nB." && !strings.HasPrefix(p.Description, "A.") {
		t.Fatalf("desc %q", p.Description)
	}
	if len(p.H1Blocks) != 1 || p.H1Blocks[0].Kind != ProseBlock || !p.H1Blocks[0].Prose.LoopCapable {
		t.Fatalf("h1 blocks: %s", shape(p.H1Blocks))
	}
}

func TestLuaErrorSpanOnAbsoluteLine(t *testing.T) {
	p := Parse("t.md", []byte("---\nname: t\ndescription: d\n---\n# T\n\n## S\n\n```lua\nlocal ok = 1\nlocal bad = 7 // 2\n```\n"))
	if len(p.Errors) != 1 {
		t.Fatalf("errors: %v", errLines(p))
	}
	e := p.Errors[0]
	if l, c := p.File.Position(e.Span.Start); l != 11 || c != 15 || p.File.Text(e.Span) != "//" {
		t.Fatalf("at %d:%d %q", l, c, p.File.Text(e.Span))
	}
	if !strings.Contains(e.Message, "(line 11)") || !strings.Contains(e.Message, "Lua 5.1") {
		t.Fatalf("message %q", e.Message)
	}
}

func TestProbe(t *testing.T) {
	cases := map[string]struct {
		v  uint32
		ok bool
	}{
		"---\npromptforge: 1\n---\n":                  {1, true},
		"---\nname: x\npromptforge: 2\nfoo: 1\n---\n": {2, true},
		"---\npromptforge: \"1\"\n---\n":              {0, false},
		"---\nname: x\n---\n":                         {0, false},
		"# T\n":                                       {0, false},
		"---\npromptforge: 1\n":                       {0, false},
		"\uFEFF---\r\npromptforge: 1\r\n---\r\n":      {1, true},
		"---\npromptforge: 1.5\n---\n":                {0, false},
	}
	for in, w := range cases {
		v, ok := Probe([]byte(in))
		if v != w.v || ok != w.ok {
			t.Errorf("Probe(%q) = %d,%v want %d,%v", in, v, ok, w.v, w.ok)
		}
	}
	if !DeclaresPromptforge([]byte("---\npromptforge: \"1\"\n---\n")) || DeclaresPromptforge([]byte("---\nname: x\n---\npromptforge: 1\n")) {
		t.Fatal("DeclaresPromptforge")
	}
}

// TestExamplesParse parses the repository's example prompts: each must
// parse without an error and keep the tree invariants.
func TestExamplesParse(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.md")
	if len(files) == 0 {
		t.Fatal("no example prompts found under examples/")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !DeclaresPromptforge(b) {
			continue
		}
		p := Parse(f, b)
		checkInvariants(t, p)
		if len(p.Errors) != 0 {
			t.Errorf("%s: %v", f, errLines(p))
		}
	}
}

func TestProseTemplateSpansCRLF(t *testing.T) {
	for _, nl := range []string{"\n", "\r\n"} {
		src := strings.ReplaceAll("---\nname: t\ndescription: d\n---\n# T\n\n## S\n\nline one\nsee {{ var.x }} and {{ args }}\n", "\n", nl)
		p := Parse("t.md", []byte(src))
		tp, err := p.Sections[0].Blocks[0].Prose.Template()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range tp.Nodes {
			if n.Kind == 1 {
				got = append(got, p.File.Text(n.Span)+"|"+p.File.Text(n.PathSpan)+"|"+p.File.Text(n.Segments[len(n.Segments)-1].Span))
			}
		}
		if strings.Join(got, ",") != "{{ var.x }}|var.x|x,{{ args }}|args|args" {
			t.Errorf("%q: %v", nl, got)
		}
	}
}

func TestLoadErrorsAndLazyCompile(t *testing.T) {
	cases := map[string]string{
		"break\n":               "no loop to break",
		"if x then break end\n": "no loop to break",
		"while true do local f = function() break end end\n": "no loop to break",
		"local function f(a) return ... end\n":               "cannot use '...' outside a vararg function",
	}
	for src, want := range cases {
		p := Parse("t.md", []byte("---\nname: t\ndescription: d\n---\n# T\n\n## S\n\n```lua\n"+src+"```\n"))
		if len(p.Errors) != 1 || !strings.Contains(p.Errors[0].Message, want) || p.Errors[0].Code != CodeLuaSyntax {
			t.Errorf("%q: errors %v", src, errLines(p))
		}
	}
	src := "# T\n\n## S\n\n```lua\nfor i = 1, 3 do if i == 2 then break end end\nlocal function f(...) return ... end\nreturn f(1)\n```\n"
	c := mustParse(t, src).Sections[0].Blocks[0].Chunk
	if c.Key() == nil || mustParse(t, src).Sections[0].Blocks[0].Chunk.Key() != c.Key() {
		t.Fatalf("two parses of the same chunk do not share its Key")
	}
}
