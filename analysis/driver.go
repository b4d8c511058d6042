package analysis

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis/cores"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/toolcat"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// CodeInternal is reported when an analyzer fails (returns an error,
// panics, or reports an undeclared code). It is a bug in forge-lsp, not
// in the prompt, but it is shown rather than hidden.
const CodeInternal = "internal"

// concurrentFrom is the prompt size from which Run starts a goroutine per
// analyzer (see BenchmarkRunSmall and BenchmarkRunLarge).
var concurrentFrom = 8 << 10

// Run is the driver: it applies the analyzers (and everything they
// require, each once) to p, then applies cfg (severity overrides, disabled
// codes) and the file's inline `forge:ignore` comments, and returns the
// diagnostics sorted by position. It never panics: a failing analyzer
// becomes an internal diagnostic. cfg may be nil.
//
// On a prompt of concurrentFrom bytes or more, analyzers run
// concurrently, each as soon as its requirements are done (like
// go/analysis's checker), so independent passes share the cores; on a
// smaller one they run one after another on a single goroutine. Their
// diagnostics are gathered in dependency order either way, so the output
// does not depend on scheduling.
//
// When ctx is cancelled Run returns ctx.Err() at once, without waiting for
// the analyzers still running; analyzers not yet started never start.
// The error is nil otherwise. A host that bounds how many analyses run
// at once learns when those analyzers are done too (WithWork).
func Run(ctx context.Context, p *parse.Prompt, analyzers []*Analyzer, cfg *Config) ([]Diagnostic, error) {
	diags, _, err := RunResults(ctx, p, analyzers, cfg)
	return diags, err
}

// RunResults is Run that also returns each analyzer's result (of those
// that ran and succeeded, requirements included), so a host reads what it
// needs of them (the checker: the flow result) without an analyzer of its
// own to capture it.
func RunResults(ctx context.Context, p *parse.Prompt, analyzers []*Analyzer, cfg *Config) ([]Diagnostic, map[*Analyzer]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	// The analysis counts as one busy core (analysis/cores) until every
	// analyzer it started has returned, also when cancelled.
	release := cores.Hold()
	if work, _ := ctx.Value(workKey{}).(*sync.WaitGroup); work != nil {
		work.Add(1)
		release = func(release func()) func() {
			return func() { release(); work.Done() }
		}(release)
	}
	var running sync.WaitGroup
	list := order(analyzers)
	type outcome struct {
		result any
		failed bool
		diags  []Diagnostic
		done   chan struct{}
	}
	catalog := cfg.catalog(p.File.Name)
	outs := make(map[*Analyzer]*outcome, len(list))
	for _, a := range list {
		outs[a] = &outcome{done: make(chan struct{})}
	}
	step := func(a *Analyzer) {
		o := outs[a]
		defer close(o.done)
		results := make(map[*Analyzer]any, len(a.Requires))
		for _, r := range a.Requires {
			ro := outs[r]
			<-ro.done
			if ro.failed {
				o.failed = true
				return // the requirement already reported its failure
			}
			results[r] = ro.result
		}
		if ctx.Err() != nil {
			o.failed = true
			return
		}
		o.result, o.diags, o.failed = runOne(p, a, results, cfg, catalog)
	}
	if len(p.File.Content) < concurrentFrom {
		// One goroutine, analyzers in dependency order: for a small
		// prompt, starting a goroutine (and growing its stack) per
		// analyzer costs more than the analyzers themselves.
		running.Add(1)
		goWork(func() {
			defer running.Done()
			for _, a := range list {
				step(a)
			}
		})
	} else {
		// Long-lived workers (workers.go): their stacks have grown.
		running.Add(len(list))
		for _, a := range list {
			goWork(func() {
				defer running.Done()
				step(a)
			})
		}
	}
	var out []Diagnostic
	results := make(map[*Analyzer]any, len(list))
	for _, a := range list {
		o := outs[a]
		select {
		case <-o.done:
		case <-ctx.Done():
			go func() {
				running.Wait()
				release()
			}()
			return nil, nil, ctx.Err()
		}
		out = append(out, o.diags...)
		if !o.failed {
			results[a] = o.result
		}
	}
	running.Wait()
	release()
	return finish(p.File, out, cfg), results, nil
}

type workKey struct{}

// WithWork returns a context under which Run counts itself in work until
// every analyzer it started has returned, also when it returned early
// because ctx was cancelled: the language server holds an analysis slot
// until then, so the analyzers of a cancelled version never run beside
// the slots' analyses.
func WithWork(ctx context.Context, work *sync.WaitGroup) context.Context {
	return context.WithValue(ctx, workKey{}, work)
}

// order returns the analyzers and their requirements, requirements first,
// each once.
func order(roots []*Analyzer) []*Analyzer {
	seen := map[*Analyzer]bool{}
	var list []*Analyzer
	var visit func(a *Analyzer)
	visit = func(a *Analyzer) {
		if a == nil || seen[a] {
			return
		}
		seen[a] = true // set first: Validate rejects cycles, this only guards against looping
		for _, r := range a.Requires {
			visit(r)
		}
		list = append(list, a)
	}
	for _, a := range roots {
		visit(a)
	}
	return list
}

// runOne runs one analyzer whose requirements all succeeded, with their
// results.
func runOne(p *parse.Prompt, a *Analyzer, required map[*Analyzer]any, cfg *Config, catalog func() *toolrule.Catalog) (result any, diags []Diagnostic, failed bool) {
	internal := func(format string, args ...any) Diagnostic {
		return Diagnostic{Span: source.Span{}, Code: CodeInternal, Severity: Error, Analyzer: a.Name,
			Message: fmt.Sprintf("forge-lsp internal error in analyzer %s: ", a.Name) + fmt.Sprintf(format, args...) + " (please report this)"}
	}
	declared := map[string]*Code{}
	for _, c := range a.Codes {
		declared[c.Name] = c
	}
	pass := &Pass{Analyzer: a, Prompt: p, File: p.File, ResultOf: required, Config: cfg, Catalog: catalog}
	pass.Report = func(d Diagnostic) {
		c := declared[d.Code]
		if c == nil {
			diags = append(diags, internal("reported undeclared code %q: %s", d.Code, d.Message))
			return
		}
		if d.Severity == SeverityDefault {
			d.Severity = c.Severity
		}
		d.Analyzer = a.Name
		d.Span = clampSpan(d.Span, len(p.File.Content))
		diags = append(diags, d)
	}
	defer func() {
		if r := recover(); r != nil {
			result, failed = nil, true
			diags = append(diags, internal("panic: %v\n%s", r, debug.Stack()))
		}
	}()
	res, err := a.Run(pass)
	if err != nil {
		return nil, append(diags, internal("%v", err)), true
	}
	if err := checkResult(a, res); err != nil {
		return nil, append(diags, internal("%v", err)), true
	}
	return res, diags, false
}

func clampSpan(s source.Span, n int) source.Span {
	if s.Start < 0 {
		s.Start = 0
	}
	if s.Start > n {
		s.Start = n
	}
	if s.End < s.Start {
		s.End = s.Start
	}
	if s.End > n {
		s.End = n
	}
	return s
}

// finish applies configuration and suppressions, sorts and removes exact
// duplicates.
func finish(f *source.File, diags []Diagnostic, cfg *Config) []Diagnostic {
	sup := suppressions{f: f}
	out := diags[:0]
	for _, d := range diags {
		if d.Code != CodeInternal {
			if sev, ok := cfg.severity(d.Code); ok {
				if sev == Off {
					continue
				}
				d.Severity = sev
			}
			if sup.suppressed(d) {
				continue
			}
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Span.Start != b.Span.Start {
			return a.Span.Start < b.Span.Start
		}
		if a.Span.End != b.Span.End {
			return a.Span.End < b.Span.End
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message
	})
	dedup := out[:0]
	for i, d := range out {
		if i > 0 {
			prev := dedup[len(dedup)-1]
			if prev.Span == d.Span && prev.Code == d.Code && prev.Message == d.Message {
				continue
			}
		}
		dedup = append(dedup, d)
	}
	if dedup == nil {
		dedup = []Diagnostic{}
	}
	return dedup
}

// IgnoreDirective is the inline suppression marker. It is recognised in a
// Lua comment (`-- forge:ignore CODE[, CODE]`) and in an HTML comment in
// prose (`<!-- forge:ignore CODE -->`), and applies to diagnostics starting
// on its own line or the line below. Without codes it suppresses every
// code.
const IgnoreDirective = "forge:ignore"

var codeTokenRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-z][a-z0-9-]*`) })

// suppressions answers which codes the forge:ignore directives suppress
// on a line, reading only the lines asked about: a directive applies to
// its own line and the next, so a diagnostic's line and the one above it.
// The driver asks once per line that has a diagnostic, so after an edit
// its cost follows the findings, not the length of the file.
type suppressions struct {
	f *source.File
	// lines holds, per line asked about, the codes suppressed there (""
	// means all codes).
	lines map[int][]string
}

// suppressed reports whether d starts on a line whose directives name
// its code.
func (s *suppressions) suppressed(d Diagnostic) bool {
	l := s.f.Line(d.Span.Start)
	codes, ok := s.lines[l]
	if !ok {
		if l > 1 {
			codes = directives(s.f, l-1, nil)
		}
		codes = directives(s.f, l, codes)
		if s.lines == nil {
			s.lines = map[int][]string{}
		}
		s.lines[l] = codes
	}
	for _, c := range codes {
		if c == "" || c == d.Code {
			return true
		}
	}
	return false
}

// directives appends to codes those named by each forge:ignore directive
// on 1-based line n of f ("" for a directive that names none). Only a
// directive in a comment counts (after "--" on its line), so prose that
// merely mentions the word does not silence anything.
func directives(f *source.File, n int, codes []string) []string {
	c := f.Content
	ls, end := f.LineStart(n), len(c)
	if n < f.LineCount() {
		end = f.LineStart(n + 1)
	}
	for off := ls; ; {
		i := bytes.Index(c[off:end], []byte(IgnoreDirective))
		if i < 0 {
			return codes
		}
		at := off + i
		off = at + len(IgnoreDirective)
		if !bytes.Contains(c[ls:at], []byte("--")) {
			continue
		}
		rest := string(c[off:f.LineEnd(n)])
		if j := strings.Index(rest, "-->"); j >= 0 {
			rest = rest[:j]
		}
		named := codeTokenRE().FindAllString(rest, -1)
		if len(named) == 0 {
			named = []string{""}
		}
		codes = append(codes, named...)
	}
}

// catalog returns the tool catalog of a Run over the prompt named name,
// loaded at most once and only when a pass asks: the host's
// (Config.Catalog), else the one toolcat resolves for the prompt.
func (c *Config) catalog(name string) func() *toolrule.Catalog {
	if c != nil && c.Catalog != nil {
		cat := c.Catalog
		return func() *toolrule.Catalog { return cat }
	}
	return sync.OnceValue(func() *toolrule.Catalog { return toolcat.ForPrompt(name, c.WorkspaceToolsFile()) })
}
