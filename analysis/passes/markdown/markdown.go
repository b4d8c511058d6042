package markdown

import (
	"regexp"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Codes.
const (
	CodeSetext     = "setext-heading"
	CodeHeadLike   = "heading-like-prose"
	CodeNearMiss   = "fence-near-miss"
	CodeAllOffWalk = "all-off-walk"
	CodeEmptyLoop  = "empty-loop-prose"
)

// Analyzer reports surprising Markdown.
var Analyzer = &analysis.Analyzer{
	Name: "markdown",
	Doc:  "report Markdown whose meaning differs from its look: setext headings, heading-like prose, near-miss Lua fences, an empty walk",
	Codes: []*analysis.Code{
		{Name: CodeSetext, Severity: analysis.Warning, Summary: "A --- line directly under a paragraph line turned that line into an H2 section."},
		{Name: CodeHeadLike, Severity: analysis.Warning, Summary: "A line looks like a heading (##Name, 7 #s) but is prose sent to the model."},
		{Name: CodeNearMiss, Severity: analysis.Warning, Summary: "A fence looks like a Lua chunk but is not exactly ```lua, so its code goes to the model as prose."},
		{Name: CodeAllOffWalk, Severity: analysis.Warning, Summary: "Every top-level section is off-walk, so the walk runs no section."},
		{Name: CodeEmptyLoop, Severity: analysis.Warning, Summary: "Adjacent Lua fences make an empty prose block the loop-capable one, so the real prose gets a single model round without the tool loop."},
	},
	Run: run,
}

var (
	headLikeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}(#{1,6}[^#\s]|#{7,}(\s|$))`) })
	nearMissRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^\\s*(`{3,}|~{3,})\\s*[Ll][Uu][Aa]\\b") })
	fenceRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^\\s*(`{3,}|~{3,})") })
)

func run(pass *analysis.Pass) (any, error) {
	p := pass.Prompt
	f := pass.File
	var walk func(ss []*parse.Section)
	walk = func(ss []*parse.Section) {
		for _, s := range ss {
			if s.Heading != nil && s.Heading.Setext && s.Level == 2 {
				l := f.Line(s.Heading.Span.Start)
				pass.Reportf(source.Span{Start: f.LineStart(l), End: f.LineEnd(l)}, CodeSetext,
					"the --- line under %q makes it an H2 section heading (setext), not a break; put a blank line before --- if you meant a comment boundary or off-walk marker", strings.TrimSpace(f.Text(source.Span{Start: f.LineStart(l), End: f.LineEnd(l)})))
			}
			for _, b := range s.Blocks {
				if b.Kind == parse.ProseBlock {
					prose(pass, b.Prose)
				}
			}
			emptyLoop(pass, s.Blocks)
			walk(s.Children)
		}
	}
	for _, b := range p.H1Blocks {
		if b.Kind == parse.ProseBlock {
			prose(pass, b.Prose)
		}
	}
	walk(p.Sections)
	if len(p.Sections) > 0 {
		all := true
		for _, s := range p.Sections {
			all = all && s.OffWalk
		}
		if all {
			pass.Reportf(p.Sections[0].Heading.Span, CodeAllOffWalk, "every top-level section is off-walk (starts with ---), so a run executes only the H1; remove the marker from the section that should run first")
		}
	}
	return nil, nil
}

// emptyLoop reports non-empty prose that lost the tool loop to a later,
// empty prose block created by two adjacent fences (docs/language.md#prose-blocks).
func emptyLoop(pass *analysis.Pass, blocks []*parse.Block) {
	var loop *parse.Prose
	for _, b := range blocks {
		if b.Kind == parse.ProseBlock && b.Prose.LoopCapable {
			loop = b.Prose
		}
	}
	if loop == nil || strings.TrimSpace(loop.Text) != "" {
		return
	}
	for _, b := range blocks {
		if b.Kind == parse.ProseBlock && b.Prose != loop && strings.TrimSpace(b.Prose.Text) != "" {
			l := pass.File.Line(b.Prose.Span.Start)
			ll := pass.File.Line(loop.Span.Start)
			pass.Reportf(source.Span{Start: b.Prose.Span.Start, End: pass.File.LineEnd(l)}, CodeEmptyLoop,
				"this prose gets a single model round without the tool loop: the loop runs on the last prose block, which is the empty one between the adjacent ```lua fences at line %d; merge those fences into one", ll)
		}
	}
}

// prose scans a prose block's lines outside non-Lua code fences.
func prose(pass *analysis.Pass, pr *parse.Prose) {
	off := 0
	inFence := ""
	for line := range strings.SplitAfterSeq(pr.Text, "\n") {
		start := off
		off += len(line)
		text := strings.TrimRight(line, "\r\n")
		// Only lines starting with #, ` or ~ (after indentation) can match;
		// skip the regexps for the rest.
		if t := strings.TrimLeft(text, " \t"); t == "" || (t[0] != '#' && t[0] != '`' && t[0] != '~') {
			if inFence == "" {
				continue
			}
		}
		// FileOffset, not Span.Start+i: CRLF files lose their CRs in Text.
		span := source.Span{Start: pr.FileOffset(start), End: pr.FileOffset(start + len(text))}
		if m := fenceRE().FindStringSubmatch(text); m != nil {
			if inFence == "" {
				if nearMissRE().MatchString(text) {
					pass.Reportf(span, CodeNearMiss, "this fence is not a Lua chunk (only a line that is exactly ```lua at column 0 is), so its code is sent to the model as prose; write ```lua")
				}
				inFence = m[1]
				continue
			}
			if strings.TrimSpace(text) == inFence || strings.HasPrefix(strings.TrimSpace(text), inFence) && strings.Trim(strings.TrimSpace(text), inFence[:1]) == "" {
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		if headLikeRE().MatchString(text) {
			pass.Reportf(span, CodeHeadLike, "this line looks like a heading but is prose sent to the model: a heading needs 1-6 # followed by a space")
		}
	}
}
