package format

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"golang.org/x/tools/txtar"
)

func TestLua(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"spacing", "local x=1+2*f(a,b)\nx.y [ 'k' ]=-x", "local x = 1 + 2 * f(a, b)\nx.y[\"k\"] = -x"},
		{"indent", "if a then\nreturn 1\nelseif b then\n  return 2\nelse\nreturn 3 end", "if a then\n\treturn 1\nelseif b then\n\treturn 2\nelse\n\treturn 3\nend"},
		{"blank lines collapse", "local a = 1\n\n\n\nlocal b = 2\n\n", "local a = 1\n\nlocal b = 2"},
		{"comments", "-- lead\nlocal a = 1 -- trail\n\n--[[ block ]] local b = 2\nif a then\n  -- inside\nend", "-- lead\nlocal a = 1 -- trail\n\n--[[ block ]]\nlocal b = 2\nif a then\n\t-- inside\nend"},
		{"quotes", `local a, b, c = 'x', 'say "hi"', 'don\'t'`, `local a, b, c = "x", 'say "hi"', "don't"`},
		{"long strings kept", "local s = [[\n  raw 'x'\n]]", "local s = [[\n  raw 'x'\n]]"},
		{"call parentheses", "print 'x'\nf{a=1}", "print(\"x\")\nf({ a = 1 })"},
		{"tables", "local t = {1,2;3}\nlocal u = {\n a = 1, b = 2 }\nlocal e = { }", "local t = { 1, 2, 3 }\nlocal u = {\n\ta = 1,\n\tb = 2,\n}\nlocal e = {}"},
		{"functions", "local function f(a, ...) end\nlocal g = function() return 1 end\nfunction M.x:y() return end", "local function f(a, ...) end\nlocal g = function()\n\treturn 1\nend\nfunction M.x:y()\n\treturn\nend"},
		{"hug", "tools.add_local('n', 'd', {}, function(args) return args.x end)", "tools.add_local(\"n\", \"d\", {}, function(args)\n\treturn args.x\nend)"},
		{"expand args", "local v = some_function_name(argument_number_one, argument_number_two, argument_number_three, argument_number_four, five)",
			"local v = some_function_name(\n\targument_number_one,\n\targument_number_two,\n\targument_number_three,\n\targument_number_four,\n\tfive\n)"},
		{"hang chain", `local s = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" .. "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" .. "cccccccccccccccccccccccccccccccccccc" .. x`,
			"local s = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n\t.. \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"\n\t.. \"cccccccccccccccccccccccccccccccccccc\"\n\t.. x"},
		{"parentheses", "local a = ((x)) + (1)\nlocal b = (f())\nlocal c = ('x'):rep(2)\nlocal d = - -x", "local a = x + 1\nlocal b = (f())\nlocal c = (\"x\"):rep(2)\nlocal d = -(-x)"},
		{"semicolons", "local a = 1; local b = 2;", "local a = 1\nlocal b = 2"},
		{"loops", "for i=1,10,2 do x=i end\nfor k,v in pairs(t) do end\nwhile x do break end\nrepeat x=x-1 until x<0\ndo local y end",
			"for i = 1, 10, 2 do\n\tx = i\nend\nfor k, v in pairs(t) do\nend\nwhile x do\n\tbreak\nend\nrepeat\n\tx = x - 1\nuntil x < 0\ndo\n\tlocal y\nend"},
		{"comment in arguments", "f(a, -- why\n  b)", "f(\n\ta, -- why\n\tb\n)"},
		{"only comments", "-- a\n\n-- b", "-- a\n\n-- b"},
		{"empty", "\n\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Lua(c.in, Default().Lua)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			again, _ := Lua(got, Default().Lua)
			if again != got {
				t.Errorf("not idempotent:\n%s", again)
			}
		})
	}
}

func TestLuaOptions(t *testing.T) {
	o, err := ParseConfig("stylua.toml", []byte("indent_type = \"Spaces\"\nindent_width = 2\ncolumn_width = 40\nquote_style = \"AutoPreferSingle\"\ncall_parentheses = \"None\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Lua("if a then print(\"x\") f({1}) end\nlocal t = {alpha = 1, beta = 2, gamma = 3, delta = 4}", o.Lua)
	if err != nil {
		t.Fatal(err)
	}
	want := "if a then\n  print 'x'\n  f { 1 }\nend\nlocal t = {\n  alpha = 1,\n  beta = 2,\n  gamma = 3,\n  delta = 4,\n}"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{"indent_type = \"Tab\"", "column_width = 0", "no_such = 1", "indent_width = ["} {
		if _, err := ParseConfig("stylua.toml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "stylua.toml") {
			t.Errorf("%q: got %v, want an error naming the file", bad, err)
		}
	}
}

func TestMarkdown(t *testing.T) {
	in := "---\nname:    x\ndescription: d   \npromptforge: 1\ninput:\n    path: a\n    description: b # why\n---\n# T   \nIntro prose.  \nSecond line.\n\n\n\n```lua\nlocal x=1\n```\n## S\n```lua\n\n\nreturn x\n```\n\n\nTail prose\n\n\n"
	want := "---\nname: x\ndescription: d\npromptforge: 1\ninput:\n  path: a\n  description: b # why\n---\n\n# T\n\nIntro prose.  \nSecond line.\n\n```lua\nlocal x = 1\n```\n\n## S\n\n```lua\nreturn x\n```\n\nTail prose\n"
	got, err := Source("p.md", []byte(in), Default())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	again, err := Source("p.md", got, Default())
	if err != nil || string(again) != string(got) {
		t.Errorf("not idempotent: %v\n%s", err, again)
	}
	// CRLF files come out with LF line breaks.
	crlf := strings.ReplaceAll(want, "\n", "\r\n")
	if got, err := Source("p.md", []byte(crlf), Default()); err != nil || string(got) != want {
		t.Errorf("CRLF: %v\n%q", err, got)
	}
}

// TestParseErrorLeavesFile: a prompt that does not parse is refused with
// its location.
func TestParseError(t *testing.T) {
	_, err := Source("bad.md", []byte("---\nname: bad\ndescription: d\npromptforge: 1\n---\n# T\n\n```lua\nlocal = \n```\n"), Default())
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 9 || !strings.Contains(err.Error(), "bad.md:9:") {
		t.Fatalf("got %v, want a parse error at bad.md:9", err)
	}
}

// TestProveRefuses: the proof notices each kind of change.
func TestProveRefuses(t *testing.T) {
	base := "---\nname: x\npromptforge: 1\n---\n\n# T\n\n## S\n\nProse.\n\n```lua\nlocal a = 1 -- c\n```\n\nMore.\n"
	for _, c := range []struct{ name, from, to, want string }{
		{"prose", "Prose.", "Prose!", "prose block"},
		{"lua", "local a = 1", "local a = 2", "syntax tree"},
		{"comment", "-- c", "-- d", "comment"},
		{"frontmatter", "name: x", "name: y", "frontmatter"},
		{"section", "## S", "## R", "section"},
		{"h1", "# T", "# U", "title"},
		{"structure", "```lua\nlocal a = 1 -- c\n```", "```Lua\nlocal a = 1 -- c\n```", "blocks"},
	} {
		a := parse.Parse("p.md", []byte(base))
		b := parse.Parse("p.md", []byte(strings.Replace(base, c.from, c.to, 1)))
		if err := Prove(a, b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error about %s", c.name, err, c.want)
		}
	}
	a := parse.Parse("p.md", []byte(base))
	if err := Prove(a, parse.Parse("p.md", []byte(strings.Replace(base, "local a = 1", "local  a=1", 1)))); err != nil {
		t.Errorf("a layout change is refused: %v", err)
	}
}

// fuzzSeeds are the parser's fuzz seeds (its txtar cases and its corpus)
// and the formatter's corpus.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob("../../testdata/parse/*.txtar")
	for _, file := range files {
		a, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, af := range a.Files {
			if af.Name == "prompt.md" {
				seeds = append(seeds, af.Data)
			}
		}
	}
	corpusFiles, _ := filepath.Glob("../parse/testdata/fuzz/FuzzParse/*")
	for _, file := range corpusFiles {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "[]byte(") && strings.HasSuffix(line, ")") {
				if s, err := strconv.Unquote(line[len("[]byte(") : len(line)-1]); err == nil {
					seeds = append(seeds, []byte(s))
				}
			}
		}
	}
	for _, p := range corpus(f) {
		seeds = append(seeds, p.src)
	}
	return seeds
}

// FuzzFormat: formatting never panics; what it returns passed the safety
// proof (so no comment or prose byte is lost) and formatting it again
// changes nothing. A refusal by the proof is a formatter bug.
func FuzzFormat(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Source("fuzz.md", data, Default())
		var ue *UnsafeError
		if errors.As(err, &ue) {
			t.Fatalf("%v", err)
		}
		if err != nil {
			return
		}
		again, err := Source("fuzz.md", out, Default())
		if err != nil {
			t.Fatalf("formatting the output: %v\n%s", err, out)
		}
		if string(again) != string(out) {
			t.Fatalf("not idempotent:\n--- first\n%s\n--- second\n%s", out, again)
		}
	})
}

func TestRange(t *testing.T) {
	src := "---\nname: r\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## S\n\n```lua\nlocal a=1\nif a then\nreturn 'x' end -- why\nlocal b   =   2\n```\n\nProse  \n"
	at := func(s string) int { return strings.Index(src, s) }
	cases := []struct {
		name       string
		start, end int
		want       string
	}{
		{"one statement", at("if a"), at("if a") + 2, strings.Replace(src, "if a then\nreturn 'x' end -- why", "if a then\n\treturn \"x\"\nend -- why", 1)},
		{"cursor", at("local b"), at("local b"), strings.Replace(src, "local b   =   2", "local b = 2", 1)},
		{"two statements", at("=1"), at("=   2"), strings.Replace(strings.Replace(src, "local a=1", "local a = 1", 1), "if a then\nreturn 'x' end -- why\nlocal b   =   2", "if a then\n\treturn \"x\"\nend -- why\nlocal b = 2", 1)},
		{"prose", at("Prose"), at("Prose") + 3, src},
	}
	for _, c := range cases {
		got, err := Range("r.md", []byte(src), c.start, c.end, Default())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
		// CRLF stays CRLF: the same range (its offsets moved by the CRs
		// before it) gives the same lines, ended by CRLF.
		crlf := strings.ReplaceAll(src, "\n", "\r\n")
		shift := func(k int) int { return k + strings.Count(src[:k], "\n") }
		got, err = Range("r.md", []byte(crlf), shift(c.start), shift(c.end), Default())
		if err != nil {
			t.Fatalf("%s, CRLF: %v", c.name, err)
		}
		if want := strings.ReplaceAll(c.want, "\n", "\r\n"); string(got) != want {
			t.Errorf("%s, CRLF: got\n%q\nwant\n%q", c.name, got, want)
		}
	}
}

// TestRangeLineBreaks: range formatting keeps each line's break. Only the
// replaced lines change, ending as the lines they replace did.
func TestRangeLineBreaks(t *testing.T) {
	head := "---\nname: r\ndescription: d\npromptforge: 1\n---\n\n# T\n\n"
	cases := []struct{ name, src, at, want string }{
		{"CRLF fence in an LF file",
			head + "```lua\r\nlocal a=1\r\nlocal b   =   2\r\n```\n\nProse\n", "b   =",
			head + "```lua\r\nlocal a=1\r\nlocal b = 2\r\n```\n\nProse\n"},
		{"LF fence in a CRLF file",
			strings.ReplaceAll(head, "\n", "\r\n") + "```lua\nlocal a=1\nif a then return 1 end\n```\r\n", "if a",
			strings.ReplaceAll(head, "\n", "\r\n") + "```lua\nlocal a=1\nif a then\n\treturn 1\nend\n```\r\n"},
		{"CRLF, a statement over lines",
			strings.ReplaceAll(head+"```lua\nlocal t = {\n1,\n  2}\nlocal z=1\n```\n", "\n", "\r\n"), "1,",
			strings.ReplaceAll(head+"```lua\nlocal t = {\n\t1,\n\t2,\n}\nlocal z=1\n```\n", "\n", "\r\n")},
	}
	for _, c := range cases {
		at := strings.Index(c.src, c.at)
		got, err := Range("r.md", []byte(c.src), at, at, Default())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s: got\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
	// Between a CR and its LF is the end of that line.
	src := strings.ReplaceAll(head+"```lua\nlocal a=1\nlocal b=2\n```\n", "\n", "\r\n")
	at := strings.Index(src, "a=1") + 3
	got, err := Range("r.md", []byte(src), at+1, at+1, Default())
	if want := strings.Replace(src, "a=1", "a = 1", 1); err != nil || string(got) != want {
		t.Errorf("between CR and LF: %v\n%q\nwant\n%q", err, got, want)
	}
}

func TestLuaOffsets(t *testing.T) {
	seg := []byte("a\r\nbc\r\n\r\nd")
	lua := "a\nbc\n\nd"
	for k := 0; k <= len(lua); k++ {
		f := fileOffset(seg, k)
		if back := luaOffset(seg, f); back != k {
			t.Errorf("lua %d -> file %d -> lua %d", k, f, back)
		}
		if k < len(lua) && lua[k] != '\n' && seg[f] != lua[k] {
			t.Errorf("lua %d (%q) -> file %d (%q)", k, lua[k], f, seg[f])
		}
	}
}

func TestDiff(t *testing.T) {
	a, b := "one\ntwo\nthree\nfour\n", "one\ntwo!\nthree\nfour\n"
	e := Diff([]byte(a), []byte(b))
	if len(e) != 1 || a[:e[0].Start]+e[0].New+a[e[0].End:] != b || e[0].Start != 4 || e[0].End != 8 {
		t.Errorf("got %+v", e)
	}
	if Diff([]byte(a), []byte(a)) != nil {
		t.Errorf("an edit for equal texts")
	}
	for _, c := range [][2]string{{"", "x\n"}, {"x", ""}, {"a\nb", "a\nb\n"}, {"a\r\nb\r\n", "a\nb\n"}} {
		e := Diff([]byte(c[0]), []byte(c[1]))
		if got := c[0][:e[0].Start] + e[0].New + c[0][e[0].End:]; got != c[1] {
			t.Errorf("%q -> %q: got %q", c[0], c[1], got)
		}
	}
}

// TestRangeEdit: the edit of a range format covers the changed lines
// only, never splits a CRLF, and applied to the text gives RangeOf's
// result.
func TestRangeEdit(t *testing.T) {
	src := "---\nname: r\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nlocal a = 1\nif a then return 'x' end\nlocal b = 2\n```\n"
	for _, text := range []string{src, strings.ReplaceAll(src, "\n", "\r\n")} {
		at := strings.Index(text, "if a")
		p := parse.Parse("r.md", []byte(text))
		e, err := RangeEdit(p, strings.Index(text, "local a"), strings.Index(text, "local b")+5, Default())
		if err != nil || e == nil {
			t.Fatalf("%q: %v %v", text, e, err)
		}
		if e.Start != at || text[e.End] != '\r' && text[e.End] != '\n' {
			t.Errorf("%q: the edit covers %q", text, text[e.Start:e.End])
		}
		whole, _ := RangeOf(p, strings.Index(text, "local a"), strings.Index(text, "local b")+5, Default())
		if got := text[:e.Start] + e.New + text[e.End:]; got != string(whole) {
			t.Errorf("%q: the edit gives %q, RangeOf %q", text, got, whole)
		}
		if e, _ := RangeEdit(p, strings.Index(text, "local a"), strings.Index(text, "local a"), Default()); e != nil {
			t.Errorf("%q: a formatted statement gives the edit %+v", text, e)
		}
	}
}
