package chunkmemo

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/program"
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

// TestRegions: a part over a section's chunks (Index.Region) or a chunk
// with a few bytes around it (Part.Core) is reused, re-based, where it
// moved, and judged again when a chunk, the text between them or the
// bytes around the core changed, or the line breaks did.
func TestRegions(t *testing.T) {
	parse.ResetCache()
	t.Cleanup(parse.ResetCache)
	const body = "# P\n\n## S\n\n```lua\nlocal x = 1\n```\n\nProse {{ x }}.\n\n```lua\nlocal y = 2\n```\n\nAfter.\n\n## T\n\n```lua\nlocal z = 3\n```\n"
	key := NewKey("test-regions")
	judged := 0
	// find judges chunks lo and lo+1 of section S as one part (margin
	// < 0), or chunk lo+1 with margin bytes around it.
	find := func(text string, margin int) []analysis.Diagnostic {
		p := parse.Parse("p.md", []byte(text))
		prog := program.Of(p)
		ix := IndexOf(prog)
		lo := -1
		for i, c := range prog.Chunks {
			if c.Section != nil && c.Section.Name == "S" {
				lo = i
				break
			}
		}
		a, b := prog.Chunks[lo].Span, prog.Chunks[lo+1].Span
		part := Part[int]{Table: ix.Table(lo), File: p.File, FP: 1, Region: source.Span{Start: a.Start, End: b.End}, Text: ix.Region(lo, lo+1)}
		if part.Text != text[a.Start:b.End] || ix.Region(lo, lo+1) != part.Text {
			t.Fatalf("Region %q, want %q", part.Text, text[a.Start:b.End])
		}
		if margin >= 0 {
			part = Part[int]{Table: ix.Table(lo + 1), File: p.File, FP: 1, Region: source.Span{Start: b.Start - margin, End: b.End + margin}, Core: b, Text: ix.Span(lo + 1)}
		}
		return Findings(key, part, func(report func(analysis.Diagnostic)) {
			judged++
			at := strings.Index(text, "y = 2")
			report(analysis.Diagnostic{Span: source.Span{Start: at, End: at + 1}, Code: "c", Message: "m"})
		})
	}
	check := func(text string, got []analysis.Diagnostic, wantJudged int) {
		t.Helper()
		at := strings.Index(text, "y = 2")
		if len(got) != 1 || got[0].Span.Start != at {
			t.Fatalf("findings %+v, want one at %d", got, at)
		}
		if judged != wantJudged {
			t.Fatalf("judged %d times, want %d", judged, wantJudged)
		}
	}
	check(body, find(body, -1), 1)
	check(body, find(body, -1), 1) // reused
	moved := "# P\n\nmore prose\n\n" + body[len("# P\n\n"):]
	check(moved, find(moved, -1), 1) // reused, re-based
	after := strings.Replace(moved, "After.", "Later.", 1)
	check(after, find(after, -1), 1) // the text after the chunks is not in the part
	between := strings.Replace(after, "Prose {{ x }}", "Prose {{ xx }}", 1)
	check(between, find(between, -1), 2) // the text between them is
	chunk := strings.Replace(between, "local x = 1", "local x = 10", 1)
	check(chunk, find(chunk, -1), 3) // and the chunks
	check(chunk, find(chunk, 4), 4)  // the second chunk with margins
	check(chunk, find(chunk, 4), 4)
	margin := strings.Replace(chunk, "}}.\n\n```lua\nlocal y", "}}!\n\n```lua\nlocal y", 1)
	check(margin, find(margin, 4), 5) // the margin before changed
	check(margin, find(margin, 0), 6) // another region
	crlf := strings.ReplaceAll(margin, "\n", "\r\n")
	check(crlf, find(crlf, 0), 7) // other line breaks
}
