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

// TestRunByPosition: a Run finds the parts of the previous analysis of
// the document by position, in the bytes its lineage says the versions
// share, and judges again a part whose bytes an edit changed, even when
// the edit kept every length (a byte of a chunk's margin replaced).
// Without a known change (parse.ParseAfter) it falls back to the
// chunks' memos.
func TestRunByPosition(t *testing.T) {
	parse.ResetCache()
	t.Cleanup(parse.ResetCache)
	const body = "# P\n\n## S\n\n```lua\nlocal x = 1\n```\n\nProse {{ x }}.\n\n```lua\nlocal y = 2\n```\n\nAfter all, more prose.\n\n## T\n\n```lua\nlocal z = 3\n```\n"
	key := NewKey("test-run")
	judged := 0
	// analyse judges each chunk with 4 bytes around it; the finding's
	// message is the part's text.
	analyse := func(p *parse.Prompt) {
		t.Helper()
		ix := IndexOf(program.Of(p))
		run := Start[int](ix, key)
		defer run.Done()
		text := string(p.File.Content)
		for i, c := range ix.prog.Chunks {
			region := source.Span{Start: max(0, c.Span.Start-4), End: min(len(text), c.Span.End+4)}
			part := Part[int]{Table: ix.Table(i), Chunks: ix.Chunks(i, i), File: p.File, Region: region, Core: c.Span, FP: 1}
			got := run.Findings(part, func(report func(analysis.Diagnostic)) {
				judged++
				report(analysis.Diagnostic{Span: source.Span{Start: c.Span.Start, End: c.Span.Start + 1}, Code: "c", Message: text[region.Start:region.End]})
			})
			if len(got) != 1 || got[0].Span.Start != c.Span.Start || got[0].Message != text[region.Start:region.End] {
				t.Errorf("chunk %d: findings %+v, want one at %d with message %q", i, got, c.Span.Start, text[region.Start:region.End])
			}
		}
	}
	edit := func(p *parse.Prompt, old, new string) *parse.Prompt {
		t.Helper()
		text := string(p.File.Content)
		at := strings.Index(text, old)
		if at < 0 {
			t.Fatalf("no %q", old)
		}
		next := text[:at] + new + text[at+len(old):]
		return parse.ParseEdited(p.Reuse(), parse.Change{Before: at, After: len(text) - at - len(old)}, "p.md", []byte(next))
	}
	step := func(what string, p *parse.Prompt, wantJudged int) *parse.Prompt {
		t.Helper()
		before := judged
		analyse(p)
		if judged-before != wantJudged {
			t.Errorf("%s: judged %d parts, want %d", what, judged-before, wantJudged)
		}
		return p
	}
	p := step("cold", parse.Parse("p.md", []byte(body)), 3)
	// The first version keeps no record (it may have no next version).
	p = step("the first version again", parse.ParseEdited(p.Reuse(), parse.Change{Before: len(body), After: len(body)}, "p.md", []byte(body)), 0)
	p = step("a byte of a margin replaced", edit(p, "}}.", "}}!"), 1)
	p = step("prose inserted before every part", edit(p, "# P\n\n", "# P\n\nMore prose.\n\n"), 0)
	p = step("the same version again", p, 0)
	p = step("no change known", parse.ParseAfter(p.Reuse(), "p.md", p.File.Content), 0)
	p = step("after a version without a known change", edit(p, "more prose.", "some prose."), 0)
	// list is the run's stored list of parts.
	list := func(p *parse.Prompt) []record[int] {
		l, _ := p.Lineage()
		return runsOf(l).slots[key.slot].(*records[int]).parts
	}
	kept := &list(p)[0]
	p = step("a byte of a chunk replaced", edit(p, "local x = 1", "local x = 2"), 1)
	if &list(p)[0] != kept {
		t.Errorf("an edit that kept the number of parts copied the list")
	}
	p = step("a chunk inserted between two", edit(p, "After all", "```lua\nlocal w = 4\n```\n\nAfter all"), 2)
	if n := len(list(p)); n != 4 {
		t.Errorf("%d parts kept, want 4", n)
	}
	// y's bytes are those it had before the insertion, which its memo holds.
	p = step("the chunk removed again", edit(p, "```lua\nlocal w = 4\n```\n\nAfter all", "After all"), 0)
	if n := len(list(p)); n != 3 {
		t.Errorf("%d parts kept, want 3", n)
	}
	step("a line removed after the last part", edit(p, "local z = 3\n```\n", "local z = 3\n```"), 1)
}
