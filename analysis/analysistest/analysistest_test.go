package analysistest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *recorder) Helper()           {}

// onLine reports "hit" on every line containing HIT.
var onLine = &analysis.Analyzer{Name: "hit", Doc: "d",
	Codes: []*analysis.Code{{Name: "hit", Severity: analysis.Warning, Summary: "s"}},
	Run: func(p *analysis.Pass) (any, error) {
		for l := 1; l <= p.File.LineCount(); l++ {
			s := source.Span{Start: p.File.LineStart(l), End: p.File.LineEnd(l)}
			if strings.Contains(p.File.Text(s), "HIT") {
				p.Reportf(s, "hit", "found HIT")
			}
		}
		return nil, nil
	}}

const head = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n"

func TestExpectations(t *testing.T) {
	cases := []struct {
		name, body string
		fails      []string
	}{
		{"met", "```lua\nlocal HIT = 1 -- want \"hit: found HIT\"\n```\n\nHIT <!-- want `found` -->\n", nil},
		{"unexpected", "```lua\nlocal HIT = 1\n```\n", []string{"unexpected diagnostic: hit: found HIT"}},
		{"unmatched", "```lua\nlocal x = 1 -- want \"found\"\n```\n", []string{`no diagnostic matched "found"`}},
		{"wrong text", "HIT <!-- want \"other\" -->\n", []string{"unexpected diagnostic", `no diagnostic matched "other"`}},
		{"at line", "HIT\n\n<!-- want@9 \"found\" -->\n", nil},
		{"two on one line", "HIT HIT <!-- want \"found\" \"found\" -->\n", []string{`no diagnostic matched "found"`}},
	}
	for _, c := range cases {
		r := &recorder{TB: t}
		RunSource(r, c.name+".md", []byte(head+c.body), onLine)
		if len(r.errs) != len(c.fails) {
			t.Errorf("%s: failures %q, want %q", c.name, r.errs, c.fails)
			continue
		}
		for i, f := range c.fails {
			if !strings.Contains(r.errs[i], f) {
				t.Errorf("%s: failure %q does not contain %q", c.name, r.errs[i], f)
			}
		}
	}
}

func TestApplyFixes(t *testing.T) {
	content := []byte("abcdef")
	ds := []analysis.Diagnostic{
		{SuggestedFixes: []analysis.SuggestedFix{{Edits: []analysis.TextEdit{{Span: source.Span{Start: 4, End: 6}, NewText: "XY"}}}}},
		{SuggestedFixes: []analysis.SuggestedFix{{Edits: []analysis.TextEdit{{Span: source.Span{Start: 0, End: 1}, NewText: "Z"}}}}},
	}
	got, err := ApplyFixes(content, ds)
	if err != nil || string(got) != "ZbcdXY" {
		t.Fatalf("got %q %v", got, err)
	}
	ds = append(ds, analysis.Diagnostic{SuggestedFixes: []analysis.SuggestedFix{{Edits: []analysis.TextEdit{{Span: source.Span{Start: 3, End: 5}, NewText: "!"}}}}})
	if _, err := ApplyFixes(content, ds); err == nil {
		t.Error("overlapping edits accepted")
	}
}
