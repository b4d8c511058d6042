package chunkmemo

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// TestFindings: a part's findings are judged once and reused, re-based,
// where the same chunk moved; judged again when the fingerprint or the
// region's text changed; never memoised when a finding leaves the region.
func TestFindings(t *testing.T) {
	parse.ResetCache()
	t.Cleanup(parse.ResetCache)
	const body = "# P\n\n## S\n\n```lua\nlocal x = 1\n```\n"
	key := NewKey("test")
	judged := 0
	judge := func(p *parse.Prompt, outside bool) func(func(analysis.Diagnostic)) {
		return func(report func(analysis.Diagnostic)) {
			judged++
			at := strings.Index(string(p.File.Content), "x = 1")
			d := analysis.Diagnostic{Span: source.Span{Start: at, End: at + 1}, Code: "c", Message: "m",
				SuggestedFixes: []analysis.SuggestedFix{{Edits: []analysis.TextEdit{{Span: source.Span{Start: at, End: at + 1}, NewText: "y"}}}}}
			if outside {
				d.Related = []analysis.RelatedInformation{{Span: source.Span{Start: 0, End: 1}}}
			}
			report(d)
		}
	}
	find := func(text string, fp int, outside bool) []analysis.Diagnostic {
		p := parse.Parse("p.md", []byte(text))
		c := p.Sections[0].Blocks[0].Chunk
		return Findings(key, Part[int]{Table: TableOf(c), File: p.File, Region: c.Span, FP: fp}, judge(p, outside))
	}
	check := func(text string, got []analysis.Diagnostic, wantJudged int) {
		t.Helper()
		at := strings.Index(text, "x = 1")
		if len(got) != 1 || got[0].Span.Start != at || got[0].SuggestedFixes[0].Edits[0].Span.Start != at {
			t.Fatalf("findings %+v, want one at %d", got, at)
		}
		if judged != wantJudged {
			t.Fatalf("judged %d times, want %d", judged, wantJudged)
		}
	}
	check(body, find(body, 1, false), 1)
	check(body, find(body, 1, false), 1) // reused
	moved := "# P\n\nmore prose here\n\n" + body[len("# P\n\n"):]
	check(moved, find(moved, 1, false), 1) // reused, re-based
	check(moved, find(moved, 2, false), 2) // another fingerprint
	crlf := strings.ReplaceAll(moved, "\n", "\r\n")
	check(crlf, find(crlf, 2, false), 3) // the region's bytes differ
	check(body, find(body, 3, true), 4)
	check(body, find(body, 3, true), 5) // a related span leaves the region: not memoised
}
