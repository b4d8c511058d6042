package checker_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

func TestValidate(t *testing.T) {
	if err := analysis.Validate(checker.Analyzers); err != nil {
		t.Fatal(err)
	}
}

// TestAll runs the whole checker over prompts that mix every kind of
// finding, so that analyzers are also checked against each other (no
// double reports of one problem).
func TestAll(t *testing.T) {
	analysistest.RunAll(t, analysistest.TestData(), checker.Analyzers)
}

// TestCodesDocumented checks that docs/codes.md has a section with a bad
// and a fixed example for every code, and documents no unknown code.
func TestCodesDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "codes.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	sections := map[string]string{}
	re := regexp.MustCompile("(?m)^### `([a-z0-9-]+)`")
	idx := re.FindAllStringSubmatchIndex(doc, -1)
	for i, m := range idx {
		end := len(doc)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		sections[doc[m[2]:m[3]]] = doc[m[0]:end]
	}
	for _, c := range checker.Codes() {
		sec, ok := sections[c.Name]
		if !ok {
			t.Errorf("docs/codes.md: no section for code %s", c.Name)
			continue
		}
		if !strings.Contains(sec, "Bad:") || !strings.Contains(sec, "Fixed:") {
			t.Errorf("docs/codes.md: code %s needs a Bad: and a Fixed: example", c.Name)
		}
		delete(sections, c.Name)
	}
	for name := range sections {
		if name != analysis.CodeInternal {
			t.Errorf("docs/codes.md documents unknown code %s", name)
		}
	}
}

// TestCleanPromptsHaveNoFindings guards against false positives on
// prompts that use the features correctly (clean*.md).
func TestCleanPromptsHaveNoFindings(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "clean*.md"))
	if len(files) < 2 {
		t.Fatalf("clean prompts: %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if d := checker.Check(parse.Parse(f, b), nil); len(d) != 0 {
			t.Errorf("%s: %d findings, first: %s: %s", f, len(d), d[0].Code, d[0].Message)
		}
	}
}

func TestConfigOverrides(t *testing.T) {
	src := []byte("---\nname: x\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nmodels.default(\"w\", \"a writer\")\nlocal unused = 1\nlocal other = 2 -- forge:ignore unused-local\n-- forge:ignore unused-local, undefined-global\nlocal third = nope\n```\n")
	p := parse.Parse("x.md", src)
	d := checker.Check(p, nil)
	if len(d) != 1 || d[0].Code != "unused-local" || d[0].Severity != analysis.Warning {
		t.Fatalf("default: got %+v, want one unused-local warning (the other two suppressed inline)", d)
	}
	cfg, err := analysis.ParseConfig("cfg.json", []byte(`{"severity": {"unused-local": "error"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := checker.Check(p, cfg); len(d) != 1 || d[0].Severity != analysis.Error {
		t.Fatalf("override: got %+v, want one error", d)
	}
	cfg.Severity["unused-local"] = analysis.Off
	if d := checker.Check(p, cfg); len(d) != 0 {
		t.Fatalf("off: got %+v, want none", d)
	}
	if _, err := analysis.ParseConfig("bad.json", []byte(`{"severity": {"unused-local": "loud"}}`)); err == nil {
		t.Error("bad severity accepted")
	}
	if _, err := analysis.ParseConfig("bad.json", []byte(`{"severities": {}}`)); err == nil {
		t.Error("unknown key accepted")
	}
	if got := cfg.UnknownCodes(checker.KnownCode); len(got) != 0 {
		t.Errorf("UnknownCodes = %v", got)
	}
}

func TestBigPromptIsClean(t *testing.T) {
	src := parsetest.Realistic(2000)
	if d := checker.Check(parse.Parse("big.md", src), nil); len(d) != 0 {
		t.Fatalf("benchmark prompt has %d findings, first %s: %s", len(d), d[0].Code, d[0].Message)
	}
}

// BenchmarkCheck10k measures parse and full analysis of a 10,000-line
// prompt in the same run, and reports analysis time relative to parsing.
// The parser memoises compiled Lua chunks, so parse time is measured both
// cold (cache reset, as for a file opened for the first time) and warm (as
// when an editor re-parses after a keystroke).
func BenchmarkCheck10k(b *testing.B) {
	src := parsetest.Realistic(10000)
	if l := strings.Count(string(src), "\n"); l < 10000 {
		b.Fatalf("prompt has %d lines", l)
	}
	var cold, warm, check time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		parse.ResetCache()
		t0 := time.Now()
		parse.Parse("big.md", src)
		t1 := time.Now()
		p := parse.Parse("big.md", src)
		t2 := time.Now()
		checker.Check(p, nil)
		check += time.Since(t2)
		cold += t1.Sub(t0)
		warm += t2.Sub(t1)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(ms(cold), "parse-cold-ms/op")
	b.ReportMetric(ms(warm), "parse-warm-ms/op")
	b.ReportMetric(ms(check), "analysis-ms/op")
	b.ReportMetric(ms(cold+check), "cold-parse+analysis-ms/op")
	b.ReportMetric(float64(check)/float64(cold), "analysis/parse-cold")
	b.ReportMetric(float64(check)/float64(warm), "analysis/parse-warm")
}

// TestEvaluatedPrompts runs the checker over realistic prompts written
// the way authors write them (shared-library constants and helpers,
// loops over constant lists, tables built in code), each with one
// defect whose value is made away from where the run fails: every
// defect is expected inline, and TestDifferential runs each prompt
// through the engine, which fails at that line.
func TestEvaluatedPrompts(t *testing.T) {
	dir := filepath.Join(analysistest.TestData(), "evaluated")
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(files) < 20 {
		t.Fatalf("want at least 20 prompts in %s, got %d (%v)", dir, len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n < 70 {
			t.Errorf("%s: %d lines, want a realistic prompt of 70 or more", f, n)
		}
	}
	analysistest.RunAll(t, dir, checker.Analyzers)
}
