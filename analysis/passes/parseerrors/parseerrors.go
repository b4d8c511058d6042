package parseerrors

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
)

// Analyzer reports the parse errors.
var Analyzer = &analysis.Analyzer{
	Name: "parseerrors",
	Doc:  "report the engine parser's errors: frontmatter, structure, fence, list and Lua syntax",
	Codes: []*analysis.Code{
		{Name: parse.CodeFrontmatter, Severity: analysis.Error, Summary: "The frontmatter is missing, unclosed, not valid YAML, or has a missing, unknown or mistyped key."},
		{Name: parse.CodeStructure, Severity: analysis.Error, Summary: "The heading structure is invalid: no or several H1s, an empty or orphan heading, or duplicate sibling sections."},
		{Name: parse.CodeFence, Severity: analysis.Error, Summary: "A Lua fence is not closed exactly, or a `lua shared` fence is misplaced or repeated."},
		{Name: parse.CodeList, Severity: analysis.Error, Summary: "A list section has an empty bullet item."},
		{Name: parse.CodeLuaSyntax, Severity: analysis.Error, Summary: "A live Lua chunk does not compile as Lua 5.1."},
	},
	Run: run,
}

func run(pass *analysis.Pass) (any, error) {
	p := pass.Prompt
	for _, e := range p.Errors {
		d := analysis.Diagnostic{Span: e.Span, Code: e.Code, Message: e.Message}
		if e.Code == parse.CodeFrontmatter {
			d.SuggestedFixes = frontmatterFix(pass, e)
		}
		if e.Code == parse.CodeLuaSyntax && pass.File.Text(e.Span) == "goto" && strings.Contains(e.Message, "renamed to jump") {
			// goto("## X"), upstream's name of jump (docs/migration.md).
			d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Rename to jump", Safe: true,
				Edits: []analysis.TextEdit{{Span: e.Span, NewText: "jump"}}}}
		}
		if e.Code == parse.CodeFence && pass.File.Text(e.Span) == "```lua prompt" {
			// The removed H1 fence (docs/migration.md): which of the two
			// it becomes is the author's choice, so neither is safe.
			for _, to := range []string{"```lua", "```lua shared"} {
				d.SuggestedFixes = append(d.SuggestedFixes, analysis.SuggestedFix{Message: "Change to " + to,
					Edits: []analysis.TextEdit{{Span: e.Span, NewText: to}}})
			}
		}
		pass.Report(d)
	}
	return nil, nil
}

func frontmatterFix(pass *analysis.Pass, e *parse.Error) []analysis.SuggestedFix {
	fm := pass.Prompt.Frontmatter
	if fm == nil {
		return nil
	}
	for _, f := range fm.Fields {
		switch {
		case f.KeySpan == e.Span && strings.Contains(e.Message, "unknown key"):
			if to := suggest.Closest(f.Key, parse.FrontmatterKeys); to != "" {
				return []analysis.SuggestedFix{{Message: "Rename to `" + to + "`",
					Edits: []analysis.TextEdit{{Span: f.KeySpan, NewText: to}}}}
			}
		case f.Key == "promptforge" && f.ValueSpan == e.Span && f.Quoted:
			if v := strings.TrimSpace(f.Value); v != "" && strings.Trim(v, "0123456789") == "" {
				return []analysis.SuggestedFix{{Message: "Write `promptforge: " + v + "` unquoted",
					Edits: []analysis.TextEdit{{Span: f.ValueSpan, NewText: v}}, Safe: true}}
			}
		}
		for _, c := range f.Children {
			if c.KeySpan == e.Span && strings.Contains(e.Message, "unknown key") {
				if to := suggest.Closest(c.Key, parse.IOKeys); to != "" {
					return []analysis.SuggestedFix{{Message: "Rename to `" + to + "`",
						Edits: []analysis.TextEdit{{Span: c.KeySpan, NewText: to}}}}
				}
			}
		}
	}
	return nil
}
