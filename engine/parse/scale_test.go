package parse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
	gmast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// The inputs below once took seconds to minutes to parse because some
// step was quadratic in them. Each generator makes a prompt whose body
// repeats one construct n times.

// ScaleInputs are the generators, by construct, with a size n for the
// benchmarks (4n is measured too) and a smaller one for the tests.
var scaleInputs = []struct {
	name        string
	gen         func(n int) []byte
	bench, test int
}{
	{"quoteLines", parsetest.QuoteLines, 25000, 2000},
	{"luaSections", genLuaSections, 5000, 200},
	{"nestedList", parsetest.NestedList, 500, 100},
	{"bulletRun", genBulletRun, 2000, 200},
	{"concatChain", parsetest.ConcatChain, 50000, 2000},
}

// genLuaSections is n sections with one Lua fence each.
func genLuaSections(n int) []byte {
	var b strings.Builder
	b.WriteString(parsetest.Head)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nvar.x = %d\n```\n\n", i, i)
	}
	return []byte(b.String())
}

// genBulletRun nests n lists on one line ("- - - … item"), then follows
// it with n lazy continuation lines.
func genBulletRun(n int) []byte {
	return []byte(parsetest.Head + "## S\n\n" + strings.Repeat("- ", n) + "item\n" + strings.Repeat("more\n", n))
}

// BenchmarkParseScale reports, for each construct, the cold parse's cost
// per input byte at n and 4n and their ratio ("growth"): about 1 when the
// parse is linear in the input, about 4 when it is quadratic.
func BenchmarkParseScale(b *testing.B) {
	for _, in := range scaleInputs {
		b.Run(in.name, func(b *testing.B) {
			parsetest.ReportGrowth(b, in.gen(in.bench), in.gen(4*in.bench), func(data []byte) {
				ResetCache()
				Parse("g.md", data)
			})
		})
	}
}

// TestParseScaleAllocs catches a parse step that became quadratic again,
// without timing anything: allocations per input byte must not grow
// between n and 4n.
func TestParseScaleAllocs(t *testing.T) {
	for _, in := range scaleInputs {
		t.Run(in.name, func(t *testing.T) {
			small, large := in.gen(in.test), in.gen(4*in.test)
			per := func(data []byte) float64 {
				return testing.AllocsPerRun(2, func() {
					ResetCache()
					Parse("g.md", data)
				}) / float64(len(data))
			}
			ps, pl := per(small), per(large)
			if pl > 1.5*ps {
				t.Errorf("allocations per byte grow from %.3f at n=%d to %.3f at 4n", ps, in.test, pl)
			}
		})
	}
}

// scannedBody is the body text the Markdown scan of data parses.
func scannedBody(data []byte) []byte {
	f := Parse("g.md", data).File
	ps := &parser{file: f, prompt: &Prompt{File: f}}
	ps.splitFrontmatter()
	ps.buildBody()
	if capped := ps.capNesting(); capped != nil {
		return capped
	}
	return ps.body
}

// containerWork counts the bytes goldmark examines to continue open
// containers: every line of a block nested d containers deep is looked
// at once per container. It stands in for the block parse's time.
func containerWork(src []byte) int {
	work := 0
	containedBlocks(src, func(n gmast.Node, depth int) {
		for i := 0; i < n.Lines().Len(); i++ {
			seg := n.Lines().At(i)
			work += depth * (seg.Stop - lineStartIn(src, seg.Start))
		}
	})
	return work
}

// containedBlocks calls f for every block of src's block parse that has
// lines, with the number of list items and block quotes it is nested in.
func containedBlocks(src []byte, f func(n gmast.Node, depth int)) {
	doc := blockParser().Parse(text.NewReader(src))
	_ = gmast.Walk(doc, func(n gmast.Node, entering bool) (gmast.WalkStatus, error) {
		if !entering || n.Type() != gmast.TypeBlock || n.Lines().Len() == 0 {
			return gmast.WalkContinue, nil
		}
		depth := 0
		for p := n.Parent(); p != nil; p = p.Parent() {
			if k := p.Kind(); k == gmast.KindListItem || k == gmast.KindBlockquote {
				depth++
			}
		}
		f(n, depth)
		return gmast.WalkContinue, nil
	})
}

// TestMarkdownScanWork catches block nesting that makes the Markdown scan
// superlinear again, by counting work instead of timing it: the container
// work per input byte must not grow between n and 4n.
func TestMarkdownScanWork(t *testing.T) {
	for _, in := range scaleInputs {
		t.Run(in.name, func(t *testing.T) {
			small, large := in.gen(in.test), in.gen(4*in.test)
			ws := float64(containerWork(scannedBody(small))) / float64(len(small))
			wl := float64(containerWork(scannedBody(large))) / float64(len(large))
			if wl > 1.5*ws+1 {
				t.Errorf("container work per byte grows from %.1f at n=%d to %.1f at 4n", ws, in.test, wl)
			}
		})
	}
}

// TestNestingCap: a line nested past MaxNesting is a parse error at that
// line, and what the Markdown scan sees of the body is at most MaxNesting
// containers deep, however deep the input.
func TestNestingCap(t *testing.T) {
	for _, data := range [][]byte{parsetest.NestedList(MaxNesting + 20), genBulletRun(3 * MaxNesting),
		[]byte(parsetest.Head + "## S\n\n" + strings.Repeat(">", 200) + " deep\n\nafter\n")} {
		p := Parse("g.md", data)
		if len(p.Errors) == 0 || !strings.Contains(p.Errors[0].Message, fmt.Sprintf("more than %d levels", MaxNesting)) {
			t.Fatalf("want a nesting error, got %v", p.Errors)
		}
		if l, _ := p.File.Position(p.Errors[0].Span.Start); l < 9 {
			t.Errorf("error at line %d, want a line of the body", l)
		}
		ps := &parser{file: p.File, prompt: &Prompt{File: p.File}}
		ps.splitFrontmatter()
		ps.buildBody()
		capped := ps.capNesting()
		if capped == nil {
			t.Fatal("capNesting hid nothing")
		}
		if d := maxDepth(capped); d > MaxNesting {
			t.Errorf("the scanned body is %d levels deep, want at most %d", d, MaxNesting)
		}
	}
	// Within the cap nothing is reported.
	if p := Parse("g.md", parsetest.NestedList(MaxNesting-1)); len(p.Errors) != 0 {
		t.Errorf("%d levels: unexpected error %v", MaxNesting-1, p.Errors[0])
	}
}

// maxDepth is the deepest nesting of list items and block quotes goldmark
// builds for src.
func maxDepth(src []byte) int {
	doc := blockParser().Parse(text.NewReader(src))
	depth, deepest := 0, 0
	_ = gmast.Walk(doc, func(n gmast.Node, entering bool) (gmast.WalkStatus, error) {
		switch n.Kind() {
		case gmast.KindListItem, gmast.KindBlockquote:
			if entering {
				depth++
				deepest = max(deepest, depth)
			} else {
				depth--
			}
		}
		return gmast.WalkContinue, nil
	})
	return deepest
}

// TestNestingBound: nestingBound is an upper bound on the containers that
// goldmark opens or continues on a line, for every line that starts a
// block (lazy continuation lines open nothing).
func TestNestingBound(t *testing.T) {
	docs := []string{
		"- a\n  - b\n    - c\n      - d\n",
		"- - - x\n",
		"> > > x\n> > y\n",
		"1. a\n   2) b\n      - c\n        > d\n",
		"- a\n\n\t- b\n\n\t\t- c\n",
		"* a\n  + b\n    * c\n",
		"> - a\n>   - b\n>     > c\n",
		"-\n  a\n  -\n    b\n",
		"1234. a\n      - b\n",
		string(parsetest.NestedList(30)[len(parsetest.Head)+6:]),
		strings.Repeat("- ", 30) + "x\n",
	}
	for _, d := range docs {
		src := []byte(d)
		containedBlocks(src, func(n gmast.Node, depth int) {
			ls := lineStartIn(src, n.Lines().At(0).Start)
			le := lineEndIn(src, ls)
			if le > ls && src[le-1] == '\n' {
				le-- // the line without its break
			}
			if b := nestingBound(src[ls:le]); b < depth {
				t.Errorf("%q: line %q is %d deep, bound %d", d, src[ls:le], depth, b)
			}
		})
	}
}

// TestResolveIndexed: resolving a visible target allocates nothing once
// the prompt's index is built (it used to copy the visible set per call,
// so resolving every reference was quadratic in the sections), and it
// agrees with a search of the visible set.
func TestResolveIndexed(t *testing.T) {
	var b strings.Builder
	b.WriteString(parsetest.Head)
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "## S%d\n\ntext\n\n### C\n\nchild\n\n", i)
	}
	b.WriteString("## S5\n\nduplicate\n\n")
	p := Parse("g.md", []byte(b.String()))
	from := p.Sections[10]
	if _, err := Resolve(p, from, "## S20"); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() { _, _ = Resolve(p, from, "## S20") }); n != 0 {
		t.Errorf("Resolve allocates %.0f times per call", n)
	}
	for _, target := range []string{"## S20", "### C", "## S10", "## S5", "## Nope", "### Nope", "#### C"} {
		got, err := Resolve(p, from, target)
		want, werr := ResolveFrom(Visible(p, from), from, target)
		if got != want || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Errorf("%s: Resolve = %v, %v; search = %v, %v", target, got, err, want, werr)
		}
	}
	if _, err := Resolve(p, from, "## S10"); err == nil || !strings.Contains(err.Error(), "cannot target itself") || !strings.Contains(err.Error(), "and 151 more") {
		t.Errorf("self target: %v", err)
	}
}

// TestSyntaxLevels: a chunk nested deeper than MaxSyntaxLevels (a long
// `..` chain, deep brackets or blocks) is a lua-syntax error at the token
// that goes past the limit, before gopher-lua's parser stack grows with
// it; ordinary long chunks are not affected.
func TestSyntaxLevels(t *testing.T) {
	chunk := func(lua string) []*Error {
		return Parse("g.md", []byte(parsetest.Head+"## S\n\n```lua\n"+lua+"\n```\n")).Errors
	}
	deep := map[string]string{
		"concat":   "local x = " + strings.Repeat("1 .. ", 2000) + "1",
		"power":    "local x = " + strings.Repeat("2 ^ ", 300) + "1",
		"parens":   "local x = " + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300),
		"tables":   "local x = " + strings.Repeat("{", 300) + strings.Repeat("}", 300),
		"blocks":   strings.Repeat("do ", 300) + strings.Repeat("end ", 300),
		"ifs":      strings.Repeat("if x then ", 300) + strings.Repeat("end ", 300),
		"mixed":    "local x = " + strings.Repeat("(a .. ", 150) + "b" + strings.Repeat(")", 150),
		"notChain": "local x = " + strings.Repeat("not ", 300) + "true",
	}
	for name, lua := range deep {
		errs := chunk(lua)
		if len(errs) != 1 || errs[0].Code != CodeLuaSyntax || !strings.Contains(errs[0].Message, "too many syntax levels") {
			t.Errorf("%s: want one too-many-levels error, got %v", name, errs)
			continue
		}
		p := Parse("g.md", []byte(parsetest.Head+"## S\n\n```lua\n"+lua+"\n```\n"))
		if l, col := p.File.Position(errs[0].Span.Start); l != 15 || col < 200 {
			t.Errorf("%s: error at line %d column %d, want line 15 (the chunk's line), at the token past the limit", name, l, col)
		}
		if sp := errs[0].Span; sp.End-sp.Start > 5 {
			t.Errorf("%s: error spans %q, want one token", name, p.File.Content[sp.Start:sp.End])
		}
	}
	fine := map[string]string{
		"chain199":    "local x = " + strings.Repeat("1 .. ", 199) + "1",
		"statements":  strings.Repeat("local x = 1 .. 2 .. 3 .. 4 .. 5 .. 6\n", 500),
		"juxtaposed":  strings.Repeat("x = a .. b .. c\ny = d .. \"e\"\n", 500),
		"blocks":      strings.Repeat("for i = 1, 2 do x = x .. i end\nwhile false do end\nif a then b() elseif c then d() else e() end\n", 300),
		"functions":   strings.Repeat("local function f(a) return a .. (a .. a) end\n", 500),
		"tableChains": strings.Repeat("t = {a .. b, c .. d .. e, [f .. g] = h}\n", 500),
	}
	for name, lua := range fine {
		if errs := chunk(lua); len(errs) != 0 {
			t.Errorf("%s: unexpected %v", name, errs[0])
		}
	}
}

// TestMayNestDeep: the one-pass pre-test counts what the definition
// counts (each of ( [ { ^ # . and each occurrence of function, repeat,
// then, do and not) on sources around the threshold, in words and apart.
func TestMayNestDeep(t *testing.T) {
	count := func(src string) int {
		n := strings.Count(src, "(") + strings.Count(src, "[") + strings.Count(src, "{") +
			strings.Count(src, "^") + strings.Count(src, "#") + strings.Count(src, ".")
		for _, kw := range []string{"function", "repeat", "then", "do", "not"} {
			n += strings.Count(src, kw)
		}
		return n
	}
	parts := []string{"(", "[", "{", "^", "#", "..", "function", "repeat", "then", "do", "dodo", "not", "nothen", "done", "undo",
		"x", " ", "\n", "fun", "repea", "the", "d", "no", "t", "r", "f", "n", "\"do\"", "-- then\n"}
	seen := map[bool]int{}
	for seed := range 200 {
		var b strings.Builder
		for k := 0; b.Len() < 50+seed*12; k++ {
			b.WriteString(parts[(seed*7+k*k*13+k)%len(parts)])
		}
		src := b.String()
		if got, want := mayNestDeep(src), count(src) > MaxSyntaxLevels; got != want {
			t.Fatalf("mayNestDeep(%q) = %v, want %v (count %d)", src, got, want, count(src))
		}
		seen[count(src) > MaxSyntaxLevels]++
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Fatalf("the sources fall on one side of the threshold only: %v", seen)
	}
}
