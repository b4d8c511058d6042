package parse

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/source"
	"golang.org/x/tools/txtar"
)

// TestLinearBodyMatchesJoined checks the fast path of buildBody (a file
// without CRs uses its own tail as the body) against the line-by-line
// join it replaces: same body, same line table, same file offsets.
func TestLinearBodyMatchesJoined(t *testing.T) {
	testdata, examples := sampleInputs(t)
	inputs := append(testdata, examples...)
	inputs = append(inputs, []byte(""), []byte("---\npromptforge: 1\n---"), []byte("---\npromptforge: 1\n---\n"), []byte("# T\n\nno newline at end"), []byte("\n\n\n"))
	if len(inputs) < 60 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	checked := 0
	for _, in := range inputs {
		fast := &parser{file: source.NewFile("t.md", in), prompt: &Prompt{}}
		fast.prompt.File = fast.file
		fast.splitFrontmatter()
		fast.buildBody()
		if !fast.linear {
			continue // has CRs: only the joined body applies
		}
		slow := &parser{file: fast.file, prompt: &Prompt{File: fast.file}, fmLines: fast.fmLines}
		slow.prompt.BodyStart = fast.prompt.BodyStart
		slow.joinBody()
		if string(fast.body) != string(slow.body) || fast.bodyStr != slow.bodyStr {
			t.Errorf("%q: body %q, joined %q", in, fast.body, slow.body)
			continue
		}
		if !slices.Equal(fast.bodyLines.offsets(), slow.bodyLines.offsets()) {
			t.Errorf("%q: lines %v, joined %v", in, fast.bodyLines.offsets(), slow.bodyLines.offsets())
			continue
		}
		for b := -1; b <= len(fast.body)+1; b++ {
			if fast.off(b) != slow.off(b) {
				t.Errorf("%q: off(%d) = %d, joined %d", in, b, fast.off(b), slow.off(b))
				break
			}
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d inputs took the fast path", checked)
	}
}

// TestBlockOnlyScanMatchesFull checks scanMarkdown's block-only parse
// (heading titles parsed on their own) against parsing inlines over the
// whole body: the same headings with the same titles and spans, breaks
// and fences, for every parse testdata input, the examples and titles
// full of inline syntax.
func TestBlockOnlyScanMatchesFull(t *testing.T) {
	titles := []string{
		"Plain", "Step 12: fetch", "a_b_c", "_a_ b", "*a* and **b**", "`code` span", "`a\\*b`",
		"a \\* b", "a\\", "&amp; &copy; &#35;", "<b>x</b> y", "<http://x.y>", "![alt](u) z",
		"[link](/u) text", "[ref] and [r2][ref]", "foo #", "foo \\#", "#", "foo ##   ", "C# tips",
		"a  b\t", "*unclosed", "[unclosed", "a <!-- c --> b", "x &nosuchentity; y",
	}
	var b strings.Builder
	b.WriteString("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# Title *x*\n\nIntro.\n\n[ref]: /url\n\n")
	for i, tt := range titles {
		fmt.Fprintf(&b, "## %s\n\ntext %d\n\n", tt, i)
		fmt.Fprintf(&b, "%s\n---\n\nsetext %d\n\n", tt, i)
		fmt.Fprintf(&b, "- ### %s\n\n> #### %s\n\n", tt, tt)
	}
	b.WriteString("Two line\nsetext *title*\n===\n\nend\n")
	testdata, examples := sampleInputs(t)
	inputs := append([][]byte{[]byte(b.String())}, testdata...)
	inputs = append(inputs, examples...)
	corpus, _ := filepath.Glob("testdata/fuzz/FuzzParse/*")
	for _, f := range corpus {
		data, _ := os.ReadFile(f)
		if s := string(data); strings.HasPrefix(s, "go test fuzz v1\n[]byte(") {
			if q, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(s, "go test fuzz v1\n[]byte(")), ")")); err == nil {
				inputs = append(inputs, []byte(q))
			}
		}
	}
	scan := func(in []byte, full bool) (*parser, string) { return scanWith(in, full, true) }
	fellBack := 0
	for _, in := range inputs {
		ps, got := scan(in, false)
		_, want := scan(in, true)
		if got != want {
			t.Errorf("%q:\nblock-only:\n%s\nfull:\n%s", in, got, want)
		}
		if ps.fullInline {
			fellBack++
		}
	}
	// The crafted input has a two-line setext title, so it takes the full
	// parse; most inputs must not.
	if fellBack == 0 || fellBack > len(inputs)/4 {
		t.Errorf("%d of %d inputs fell back to the full parse", fellBack, len(inputs))
	}
	if _, got := scan(inputs[0][:strings.Index(string(inputs[0]), "Two line")], false); !strings.Contains(got, `"a_b_c"`) || !strings.Contains(got, `"a and b"`) || !strings.Contains(got, `"ref and r2"`) {
		t.Errorf("titles not found in:\n%s", got)
	}
}

// scanWith runs the Markdown scan of in: by cached regions unless
// whole, with inlines everywhere when full. It returns the parser and a
// dump of what the scan found.
func scanWith(in []byte, full, whole bool) (*parser, string) {
	ps := &parser{file: source.NewFile("t.md", in), fullInline: full, wholeBody: whole}
	ps.prompt = &Prompt{File: ps.file}
	ps.splitFrontmatter()
	ps.buildBody()
	ps.scanMarkdown()
	var out strings.Builder
	for _, h := range ps.headings {
		fmt.Fprintf(&out, "h%d %q %d-%d setext=%v at=%d-%d\n", h.level, h.name, h.start, h.end, h.setext, h.nameA, h.nameB)
	}
	fmt.Fprintf(&out, "breaks %v lua %v shared %v\n", ps.breaks, ps.luaOpen, ps.shared)
	return ps, out.String()
}

// regionSeeds are bodies that exercise the region cuts: fences and HTML
// blocks left open or closed before a column-0 heading, containers,
// link references defined in one region and used in another.
var regionSeeds = []string{
	"# T\n\n```lua\nx = 1\n## not a heading\n```\n\n## A\n\ntext\n",
	"# T\n\n```lua\nx = 1\n\n## inside an open fence\n\nmore\n",
	"# T\n\n~~~~\ncode\n~~~\n## still code\n~~~~\n## A\n",
	"# T\n\n<div>\n## html type 6 continues\n\n## A\n",
	"# T\n\n<div>\n\n## A after a blank line\n",
	"# T\n\n<!-- open comment\n## in the comment\n-->\n## B\n",
	"# T\n\n<pre>\n## in pre\n</pre>\n## C\n",
	"# T\n\n- item\n  ```lua\n  x = 1\n## closes the list\n\n> quote\n> ```\n## closes the quote\n",
	"# T\n\npara\n## interrupts\nlazy\n=====\n",
	"# T\n\n[r]: /u\n\n## A [r]\n\n## B [s]\n\n[s]: /v\n",
	"## [x]\n\n[x]: /first\n\n## [x] again\n\n[x]: /second\n",
	"```\n## a\n",
	"## a\n```lua\n## b\n```\n## c\n    ## indented\n#not a heading\n#\n#\tx\n",
	"# T\n\n<script>\n## s\n</script>\n## after\n<?php\n## pi\n?>\n## end\n",
}

// TestRegionScanMatchesWholeBody checks the cached region scan against
// parsing the body in one piece, cold and warm, over the parse testdata,
// the examples and inputs built to stress the cuts.
func TestRegionScanMatchesWholeBody(t *testing.T) {
	inputs := append([]string{}, regionSeeds...)
	testdata, examples := sampleInputs(t)
	for _, b := range append(testdata, examples...) {
		inputs = append(inputs, string(b))
	}
	defer func() { prefill = true }()
	cut := 0
	for round := 0; round < 4; round++ { // cold, then warm; with and without prefill
		prefill = round < 2
		if round%2 == 0 {
			regions.reset()
		}
		for _, in := range inputs {
			ps, got := scanWith([]byte(in), false, false)
			_, want := scanWith([]byte(in), false, true)
			if got != want {
				t.Errorf("round %d, %q:\nregions:\n%s\nwhole body:\n%s", round, in, got, want)
			}
			if round == 0 && ps.byRegions && len(ps.headings) > 1 {
				cut++
			}
		}
	}
	if cut < 20 {
		t.Errorf("only %d inputs were scanned by regions", cut)
	}
	// Edits: each line of the stress inputs and the examples deleted in
	// turn, scanned with the unedited text's regions cached.
	edits := append(append([]string{}, regionSeeds...), inputs[len(inputs)-len(examples):]...)
	for _, in := range edits {
		lines := strings.SplitAfter(in, "\n")
		for i := range lines {
			edited := strings.Join(lines[:i], "") + strings.Join(lines[i+1:], "")
			scanWith([]byte(in), false, false)
			_, got := scanWith([]byte(edited), false, false)
			_, want := scanWith([]byte(edited), false, true)
			if got != want {
				t.Errorf("%q without line %d:\nregions:\n%s\nwhole body:\n%s", in, i+1, got, want)
			}
		}
	}
}

// FuzzRegionScan compares the region scan with the whole-body scan.
func FuzzRegionScan(f *testing.F) {
	for _, s := range regionSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, want := scanWith([]byte(s), false, true)
		for _, pre := range []bool{true, false} {
			prefill = pre
			regions.reset()
			_, got := scanWith([]byte(s), false, false)
			if got != want {
				t.Fatalf("%q (prefill %v):\nregions:\n%s\nwhole body:\n%s", s, pre, got, want)
			}
		}
		prefill = true
	})
}

// sampleInputs returns every file of the parse testdata archives and the
// shipped examples: real prompts for the equivalence tests below.
func sampleInputs(t *testing.T) (testdata, examples [][]byte) {
	t.Helper()
	files, _ := filepath.Glob("../../testdata/parse/*.txtar")
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, fl := range a.Files {
			testdata = append(testdata, fl.Data)
		}
	}
	names, _ := filepath.Glob("../../examples/*.md")
	for _, f := range names {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, b)
	}
	return testdata, examples
}

// offsets lists the line starts of t.
func (t lineTable) offsets() []int {
	out := make([]int, t.len())
	for k := range out {
		out[k] = t.at(k)
	}
	return out
}
