package analysis_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

func noop(*analysis.Pass) (any, error) { return nil, nil }

// run is analysis.Run with a context that is never cancelled.
func run(t *testing.T, p *parse.Prompt, as []*analysis.Analyzer, cfg *analysis.Config) []analysis.Diagnostic {
	t.Helper()
	ds, err := analysis.Run(context.Background(), p, as, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestRunCancelled: a cancelled context makes Run return ctx.Err() at
// once, before the analyzers it waits for finish. (A Run that waited would
// deadlock here: the blocked analyzer is released only after Run
// returns.) With a context cancelled before the call no analyzer runs.
func TestRunCancelled(t *testing.T) {
	p := parse.Parse("t.md", []byte("---\nname: t\ndescription: d\npromptforge: 1\n---\n# T\n"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Bool
	record := func(*analysis.Pass) (any, error) { ran.Store(true); return nil, nil }
	if ds, err := analysis.Run(ctx, p, []*analysis.Analyzer{{Name: "a", Doc: "a", Run: record}}, nil); err != context.Canceled || ds != nil || ran.Load() {
		t.Fatalf("cancelled before: %v, %v, ran %v", ds, err, ran.Load())
	}

	ctx, cancel = context.WithCancel(context.Background())
	started, release := make(chan struct{}), make(chan struct{})
	blocking := &analysis.Analyzer{Name: "blocking", Doc: "b", ResultType: reflect.TypeOf(0), Run: func(*analysis.Pass) (any, error) {
		close(started)
		<-release
		return 0, nil
	}}
	dependent := &analysis.Analyzer{Name: "dependent", Doc: "d", Requires: []*analysis.Analyzer{blocking}, Run: noop}
	done := make(chan error)
	go func() {
		_, err := analysis.Run(ctx, p, []*analysis.Analyzer{dependent}, nil)
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("cancelled while running: %v", err)
	}
	close(release)
}

// TestRunWork: under WithWork, a Run that returned because it was
// cancelled stays counted until the analyzer it had started returns, and
// the one it had not started never runs.
func TestRunWork(t *testing.T) {
	p := parse.Parse("t.md", []byte("---\nname: t\ndescription: d\npromptforge: 1\n---\n# T\n"))
	var work sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}), make(chan struct{})
	var finished, dependentRan atomic.Bool
	blocking := &analysis.Analyzer{Name: "blocking", Doc: "b", ResultType: reflect.TypeOf(0), Run: func(*analysis.Pass) (any, error) {
		close(started)
		<-release
		finished.Store(true)
		return 0, nil
	}}
	dependent := &analysis.Analyzer{Name: "dependent", Doc: "d", Requires: []*analysis.Analyzer{blocking}, Run: func(*analysis.Pass) (any, error) {
		dependentRan.Store(true)
		return nil, nil
	}}
	done := make(chan error)
	go func() {
		_, err := analysis.Run(analysis.WithWork(ctx, &work), p, []*analysis.Analyzer{dependent}, nil)
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("cancelled while running: %v", err)
	}
	waited := make(chan struct{})
	go func() {
		work.Wait()
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("the work was done while an analyzer still ran")
	case <-time.After(20 * time.Millisecond): // the failure shows within it; a pass never waits for it
	}
	close(release)
	<-waited
	if !finished.Load() || dependentRan.Load() {
		t.Fatalf("blocking finished %v, dependent ran %v", finished.Load(), dependentRan.Load())
	}
	// A Run that completes is done when it returns.
	var work2 sync.WaitGroup
	if _, err := analysis.Run(analysis.WithWork(context.Background(), &work2), p, []*analysis.Analyzer{{Name: "a", Doc: "a", Run: noop}}, nil); err != nil {
		t.Fatal(err)
	}
	work2.Wait()
}

func TestValidate(t *testing.T) {
	a := &analysis.Analyzer{Name: "a", Doc: "a", Run: noop}
	b := &analysis.Analyzer{Name: "b", Doc: "b", Run: noop, Requires: []*analysis.Analyzer{a}}
	a.Requires = []*analysis.Analyzer{b} // cycle
	a.ResultType, b.ResultType = reflect.TypeOf(0), reflect.TypeOf(0)
	err := analysis.Validate([]*analysis.Analyzer{a})
	if err == nil || !strings.Contains(err.Error(), "cycle in Requires: a -> b -> a") {
		t.Fatalf("cycle not reported: %v", err)
	}
	cases := []struct {
		a    *analysis.Analyzer
		want string
	}{
		{&analysis.Analyzer{Name: "Bad Name", Doc: "x", Run: noop}, "name must match"},
		{&analysis.Analyzer{Name: "nodoc", Run: noop}, "has no Doc"},
		{&analysis.Analyzer{Name: "norun", Doc: "x"}, "has no Run"},
		{&analysis.Analyzer{Name: "badcode", Doc: "x", Run: noop, Codes: []*analysis.Code{{Name: "x", Summary: "s"}}}, "default severity"},
		{&analysis.Analyzer{Name: "req", Doc: "x", Run: noop, Requires: []*analysis.Analyzer{{Name: "noresult", Doc: "x", Run: noop}}}, "has no ResultType"},
	}
	for _, c := range cases {
		if err := analysis.Validate([]*analysis.Analyzer{c.a}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.a.Name, err, c.want)
		}
	}
	x := &analysis.Analyzer{Name: "x", Doc: "x", Run: noop, Codes: []*analysis.Code{{Name: "same", Severity: analysis.Error, Summary: "s"}}}
	y := &analysis.Analyzer{Name: "y", Doc: "y", Run: noop, Codes: []*analysis.Code{{Name: "same", Severity: analysis.Error, Summary: "s"}}}
	if err := analysis.Validate([]*analysis.Analyzer{x, y}); err == nil || !strings.Contains(err.Error(), `code "same" declared by both`) {
		t.Errorf("duplicate code: %v", err)
	}
}

const src = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nlocal a = 1 -- forge:ignore c1\n-- forge:ignore\nlocal b = 2\nlocal c = 3\n```\n\nprose <!-- forge:ignore c2 -->\n"

// reporter reports c1 and c2 at the start of every line of the file.
func reporter(code ...string) *analysis.Analyzer {
	var codes []*analysis.Code
	for _, c := range code {
		codes = append(codes, &analysis.Code{Name: c, Severity: analysis.Warning, Summary: "s"})
	}
	return &analysis.Analyzer{Name: "reporter", Doc: "d", Codes: codes, Run: func(p *analysis.Pass) (any, error) {
		for l := p.File.LineCount(); l >= 1; l-- { // reversed: the driver sorts
			for _, c := range code {
				p.Reportf(source.Span{Start: p.File.LineStart(l), End: p.File.LineEnd(l)}, c, "line %d", l)
			}
		}
		return nil, nil
	}}
}

func lines(f *source.File, ds []analysis.Diagnostic, code string) []int {
	var out []int
	for _, d := range ds {
		if d.Code == code {
			out = append(out, f.Line(d.Span.Start))
		}
	}
	return out
}

func TestDriverSuppressionAndOrder(t *testing.T) {
	p := parse.Parse("t.md", []byte(src))
	ds := run(t, p, []*analysis.Analyzer{reporter("c1", "c2")}, nil)
	for i := 1; i < len(ds); i++ {
		if ds[i-1].Span.Start > ds[i].Span.Start {
			t.Fatal("diagnostics not sorted")
		}
	}
	// Line 10 ignores c1 on itself and line 11; line 11 ignores all on 11
	// and 12; line 16 ignores c2 on 16 and 17.
	got1 := lines(p.File, ds, "c1")
	got2 := lines(p.File, ds, "c2")
	for _, l := range got1 {
		if l == 10 || l == 11 || l == 12 {
			t.Errorf("c1 reported on suppressed line %d", l)
		}
	}
	for _, l := range got2 {
		if l == 11 || l == 12 || l == 16 || l == 17 {
			t.Errorf("c2 reported on suppressed line %d", l)
		}
	}
	if !contains(got2, 10) || !contains(got1, 13) || !contains(got1, 16) {
		t.Errorf("too much suppressed: c1 %v c2 %v", got1, got2)
	}
	if ds[0].Severity != analysis.Warning || ds[0].Analyzer != "reporter" {
		t.Errorf("default severity/analyzer not filled: %+v", ds[0])
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestDriverFailures(t *testing.T) {
	p := parse.Parse("t.md", []byte(src))
	panics := &analysis.Analyzer{Name: "panics", Doc: "d", ResultType: reflect.TypeOf(0), Run: func(*analysis.Pass) (any, error) { panic("boom") }}
	dependent := &analysis.Analyzer{Name: "dependent", Doc: "d", Requires: []*analysis.Analyzer{panics}, Run: func(*analysis.Pass) (any, error) {
		t.Error("dependent ran although its requirement failed")
		return nil, nil
	}}
	errs := &analysis.Analyzer{Name: "errs", Doc: "d", Run: func(*analysis.Pass) (any, error) { return nil, errors.New("bad") }}
	undeclared := &analysis.Analyzer{Name: "undeclared", Doc: "d", Run: func(p *analysis.Pass) (any, error) {
		p.Reportf(source.Span{Start: -5, End: 1 << 30}, "nope", "x")
		return nil, nil
	}}
	wrongResult := &analysis.Analyzer{Name: "wrong", Doc: "d", ResultType: reflect.TypeOf(""), Run: func(*analysis.Pass) (any, error) { return 1, nil }}
	ds := run(t, p, []*analysis.Analyzer{dependent, errs, undeclared, wrongResult}, nil)
	want := map[string]string{"panics": "panic: boom", "errs": "bad", "undeclared": `undeclared code "nope"`, "wrong": "returned int"}
	for _, d := range ds {
		if d.Code != analysis.CodeInternal {
			t.Errorf("unexpected %+v", d)
			continue
		}
		if w, ok := want[d.Analyzer]; !ok || !strings.Contains(d.Message, w) {
			t.Errorf("%s: %q", d.Analyzer, d.Message)
		}
		delete(want, d.Analyzer)
	}
	if len(want) != 0 {
		t.Errorf("missing internal diagnostics for %v", want)
	}
}

func TestDriverConfigAndSpanClamp(t *testing.T) {
	p := parse.Parse("t.md", []byte(src))
	a := reporter("c1", "c2")
	cfg := &analysis.Config{Severity: map[string]analysis.Severity{"c1": analysis.Off, "c2": analysis.Error}}
	ds := run(t, p, []*analysis.Analyzer{a}, cfg)
	for _, d := range ds {
		if d.Code == "c1" || d.Severity != analysis.Error {
			t.Fatalf("config not applied: %+v", d)
		}
	}
	// Out-of-file spans are clamped.
	big := &analysis.Analyzer{Name: "big", Doc: "d", Codes: []*analysis.Code{{Name: "c", Severity: analysis.Hint, Summary: "s"}},
		Run: func(p *analysis.Pass) (any, error) {
			p.Reportf(source.Span{Start: -3, End: 1 << 20}, "c", "x")
			return nil, nil
		}}
	ds = run(t, p, []*analysis.Analyzer{big}, nil)
	if len(ds) != 1 || ds[0].Span.Start != 0 || ds[0].Span.End != len(src) {
		t.Fatalf("span not clamped: %+v", ds)
	}
	if ds := run(t, p, nil, nil); ds == nil {
		t.Error("Run returned nil; front ends need an empty non-nil slice")
	}
}

func TestFindConfig(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sub, "p.md")
	if c, err := analysis.FindConfig(file); err != nil || c != nil {
		// A config above the temp dir would be surprising but possible.
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a", analysis.ConfigFileName), []byte(`{"severity":{"x":"hint"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := analysis.FindConfig(file)
	if err != nil || c == nil || c.Severity["x"] != analysis.Hint || !strings.HasSuffix(c.Path, filepath.Join("a", analysis.ConfigFileName)) {
		t.Fatalf("FindConfig: %+v %v", c, err)
	}
	if err := os.WriteFile(filepath.Join(sub, analysis.ConfigFileName), []byte(`{"severity":{"x":"nope"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.FindConfig(file); err == nil {
		t.Error("bad nearest config accepted")
	}
}

func TestSeverityNames(t *testing.T) {
	for s := analysis.Error; s <= analysis.Off; s++ {
		got, err := analysis.ParseSeverity(s.String())
		if err != nil || got != s {
			t.Errorf("%v round trip: %v %v", s, got, err)
		}
	}
	if _, err := analysis.ParseSeverity("default"); err == nil {
		t.Error("default accepted as a configured severity")
	}
}

// TestSuppressionEdges: the driver reads the directives of the lines
// that have diagnostics, and its answers are those of a scan of the
// whole file: CRLF breaks, a directive on the last line without a line
// break, two directives on one line, one on the first line, a directive
// of the word in prose that is not a comment, and one right after
// another on the same line.
func TestSuppressionEdges(t *testing.T) {
	srcs := []string{
		"# T\r\n\r\n```lua\r\nlocal a = 1 -- forge:ignore c1\r\nlocal b = 2\r\n```\r\n\r\nsay forge:ignore c2 here\r\nnext\r\n",
		"-- forge:ignore c2\n# T\n\nprose <!-- forge:ignore c1 --> and <!-- forge:ignore c2 -->\nafter\nlast <!-- forge:ignore -->",
		"# T\n\n```lua\n-- forge:ignoreforge:ignore c1\nx = 1\n-- forge:ignore c3, c2\ny = 2\n```\n",
		"",
	}
	for _, src := range srcs {
		p := parse.Parse("t.md", []byte(src))
		ds := run(t, p, []*analysis.Analyzer{reporter("c1", "c2")}, nil)
		got := map[[2]int]bool{}
		for _, d := range ds {
			got[[2]int{p.File.Line(d.Span.Start), int(d.Code[1] - '0')}] = true
		}
		want := wholeFileSuppressions(p.File)
		for l := 1; l <= p.File.LineCount(); l++ {
			for _, code := range []string{"c1", "c2"} {
				sup := false
				for _, c := range want[l] {
					sup = sup || c == "" || c == code
				}
				if reported := got[[2]int{l, int(code[1] - '0')}]; reported == sup {
					t.Errorf("%q line %d: %s reported %v, a whole-file scan suppresses it: %v", src, l, code, reported, sup)
				}
			}
		}
	}
}

// wholeFileSuppressions is the reference: every forge:ignore directive
// of f found by one scan of the file, by line it applies to.
func wholeFileSuppressions(f *source.File) map[int][]string {
	set := map[int][]string{}
	c := string(f.Content)
	for off := 0; ; {
		i := strings.Index(c[off:], analysis.IgnoreDirective)
		if i < 0 {
			return set
		}
		at := off + i
		off = at + len(analysis.IgnoreDirective)
		line := f.Line(at)
		if !strings.Contains(c[f.LineStart(line):at], "--") {
			continue
		}
		rest := c[off:f.LineEnd(line)]
		if j := strings.Index(rest, "-->"); j >= 0 {
			rest = rest[:j]
		}
		codes := strings.FieldsFunc(rest, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') })
		if len(codes) == 0 {
			codes = []string{""}
		}
		set[line] = append(set[line], codes...)
		set[line+1] = append(set[line+1], codes...)
	}
}
