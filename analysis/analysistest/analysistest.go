// Package analysistest runs an analyzer over prompt files in a testdata
// folder and compares its diagnostics with expectations written in the
// files themselves, after golang.org/x/tools/go/analysis/analysistest:
//
//	tools.bind("bad alias", "x") -- want "invalid tool alias"
//	Some prose {{ var. }} <!-- want "empty" -->
//	name: Bad-Name # want "name"        (frontmatter only)
//
// Each quoted string is a regular expression (Go syntax, double or back
// quotes) matched against "CODE: MESSAGE" of one diagnostic starting on
// that line; `want@N` expects it on file line N instead (for lines that
// cannot hold a comment, such as headings and the --- delimiters). Every
// diagnostic must be expected and every expectation must be met. When a
// file NAME.golden exists next to the prompt, the first suggested fix of
// every diagnostic is applied and the result must equal it.
package analysistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// TestData returns the testdata folder of the calling package.
func TestData() string {
	d, err := filepath.Abs("testdata")
	if err != nil {
		panic(err)
	}
	return d
}

// Corpus returns every analyzer's test prompts (analysis/passes/*/testdata)
// and the checker's (analysis/checker/testdata), the corpus the
// whole-program tests run over; it fails tb when fewer than 20 are found.
func Corpus(tb testing.TB) []string {
	tb.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("analysistest: cannot find its own source")
	}
	root := filepath.Dir(filepath.Dir(self)) // analysis/
	files, _ := filepath.Glob(filepath.Join(root, "passes", "*", "testdata", "*.md"))
	more, _ := filepath.Glob(filepath.Join(root, "checker", "testdata", "*.md"))
	files = append(files, more...)
	if len(files) < 20 {
		tb.Fatalf("analysistest: only %d test prompts under %s", len(files), root)
	}
	return files
}

// Run checks every *.md file in dir (or only the named files) with a.
// It returns the diagnostics per file for further assertions.
func Run(t testing.TB, dir string, a *analysis.Analyzer, files ...string) map[string][]analysis.Diagnostic {
	t.Helper()
	return RunAll(t, dir, []*analysis.Analyzer{a}, files...)
}

// RunAll is Run for several analyzers at once (the checker's full set).
func RunAll(t testing.TB, dir string, as []*analysis.Analyzer, files ...string) map[string][]analysis.Diagnostic {
	t.Helper()
	if err := analysis.Validate(as); err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		m, err := filepath.Glob(filepath.Join(dir, "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			files = append(files, filepath.Base(f))
		}
	}
	if len(files) == 0 {
		t.Fatalf("no testdata files in %s", dir)
	}
	out := map[string][]analysis.Diagnostic{}
	for _, name := range files {
		path := filepath.Join(dir, name)
		content, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = runSource(t, path, content, as)
	}
	return out
}

// RunSource checks one in-memory file the same way.
func RunSource(t testing.TB, name string, content []byte, a *analysis.Analyzer) []analysis.Diagnostic {
	t.Helper()
	return runSource(t, name, content, []*analysis.Analyzer{a})
}

func runSource(t testing.TB, name string, content []byte, as []*analysis.Analyzer) []analysis.Diagnostic {
	t.Helper()
	p := parse.Parse(name, content)
	diags, err := analysis.Run(context.Background(), p, as, nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, p, diags)
	golden := name + ".golden"
	if want, err := os.ReadFile(golden); err == nil {
		got, err := ApplyFixes(content, diags)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if string(got) != string(want) {
			t.Errorf("%s: after applying suggested fixes got:\n%s\nwant (%s):\n%s", name, got, golden, want)
		}
	}
	return diags
}

type expectation struct {
	line int
	re   *regexp.Regexp
	met  bool
}

var (
	commentRE = regexp.MustCompile(`<!--|--|#`)
	wantRE    = regexp.MustCompile(`\bwant(@\d+)?((?:\s+(?:"(?:[^"\\]|\\.)*"|` + "`[^`]*`" + `))+)`)
)
var quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|` + "`[^`]*`")

// Expectations parses the want comments of a file.
func Expectations(p *parse.Prompt) ([]*expectation, error) {
	f := p.File
	var exps []*expectation
	fmEnd := -1
	if p.Frontmatter != nil {
		fmEnd = p.Frontmatter.Span.End
	}
	for line := 1; line <= f.LineCount(); line++ {
		text := f.Text(source.Span{Start: f.LineStart(line), End: f.LineEnd(line)})
		var c []int
		for _, m := range commentRE.FindAllStringIndex(text, -1) {
			if text[m[0]] == '#' && f.LineStart(line) > fmEnd {
				continue // '#' comments exist only in YAML
			}
			c = m
			break
		}
		if c == nil {
			continue
		}
		rest := text[c[1]:]
		for _, m := range wantRE.FindAllStringSubmatchIndex(rest, -1) {
			target := line
			if m[2] >= 0 {
				n, err := strconv.Atoi(rest[m[2]+1 : m[3]])
				if err != nil {
					return nil, err
				}
				target = n
			}
			for _, q := range quotedRE.FindAllString(rest[m[4]:m[5]], -1) {
				pat, err := strconv.Unquote(q)
				if err != nil {
					return nil, fmt.Errorf("line %d: bad want string %s: %v", line, q, err)
				}
				re, err := regexp.Compile(pat)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", line, err)
				}
				exps = append(exps, &expectation{line: target, re: re})
			}
		}
	}
	return exps, nil
}

func check(t testing.TB, p *parse.Prompt, diags []analysis.Diagnostic) {
	t.Helper()
	f := p.File
	exps, err := Expectations(p)
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	for _, d := range diags {
		if !d.Span.IsValid() || d.Span.End > len(f.Content) {
			t.Errorf("%s: diagnostic %q has span %v outside the file", f.Name, d.Message, d.Span)
		}
		if err := checkFixes(d, len(f.Content)); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		line, col := f.Position(d.Span.Start)
		text := d.Code + ": " + d.Message
		matched := false
		for _, e := range exps {
			if !e.met && e.line == line && e.re.MatchString(text) {
				e.met, matched = true, true
				break
			}
		}
		if !matched {
			t.Errorf("%s:%d:%d: unexpected diagnostic: %s", f.Name, line, col, text)
		}
	}
	for _, e := range exps {
		if !e.met {
			t.Errorf("%s:%d: no diagnostic matched %q", f.Name, e.line, e.re)
		}
	}
}

func checkFixes(d analysis.Diagnostic, n int) error {
	for _, fix := range d.SuggestedFixes {
		edits := append([]analysis.TextEdit{}, fix.Edits...)
		sort.Slice(edits, func(i, j int) bool { return edits[i].Span.Start < edits[j].Span.Start })
		for i, e := range edits {
			if !e.Span.IsValid() || e.Span.End > n {
				return fmt.Errorf("fix %q of %q: edit span %v outside the file", fix.Message, d.Message, e.Span)
			}
			if i > 0 && edits[i-1].Span.End > e.Span.Start {
				return fmt.Errorf("fix %q of %q: overlapping edits", fix.Message, d.Message)
			}
		}
	}
	return nil
}

// ApplyFixes applies the first suggested fix of every diagnostic. Edits of
// different diagnostics must not overlap (identical edits are applied
// once).
func ApplyFixes(content []byte, diags []analysis.Diagnostic) ([]byte, error) {
	var edits []analysis.TextEdit
	for _, d := range diags {
		if len(d.SuggestedFixes) > 0 {
			edits = append(edits, d.SuggestedFixes[0].Edits...)
		}
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].Span.Start < edits[j].Span.Start })
	var b strings.Builder
	last := 0
	for i, e := range edits {
		if i > 0 && edits[i-1] == e {
			continue
		}
		if e.Span.Start < last {
			return nil, fmt.Errorf("overlapping edits at offset %d", e.Span.Start)
		}
		b.Write(content[last:e.Span.Start])
		b.WriteString(e.NewText)
		last = e.Span.End
	}
	b.Write(content[last:])
	return []byte(b.String()), nil
}
