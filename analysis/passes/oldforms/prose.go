package oldforms

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// placeholderForms reports old forms in prose placeholders, where the
// engine refuses them as it does in Lua (`{{ sys.taskid }}` fails with a
// Substitution error): the key is found by the engine's own rule
// (template.CheckKey), and where the replacement renders the same text
// (`{{ sys.index }}` prints the index as taskid did) --fix rewrites it.
func placeholderForms(pass *analysis.Pass) {
	var walk func(blocks []*parse.Block)
	walk = func(blocks []*parse.Block) {
		for _, b := range blocks {
			if b.Kind != parse.ProseBlock || !strings.Contains(b.Prose.Text, "{{") {
				continue
			}
			prosePlaceholders(pass, b.Prose)
		}
	}
	walk(pass.Prompt.H1Blocks)
	var sections func(ss []*parse.Section)
	sections = func(ss []*parse.Section) {
		for _, s := range ss {
			walk(s.Blocks)
			sections(s.Children)
		}
	}
	sections(pass.Prompt.Sections)
}

func prosePlaceholders(pass *analysis.Pass, pr *parse.Prose) {
	t, _ := pr.TextTemplate()
	if t == nil {
		return
	}
	at := func(sp source.Span) source.Span {
		return source.Span{Start: pr.FileOffset(sp.Start), End: pr.FileOffset(sp.End)}
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		e := template.CheckKey(n)
		if e == nil || e.Old == nil {
			continue
		}
		span := at(n.Segments[1].Span)
		var fixes []analysis.SuggestedFix
		if e.Path != "" {
			fixes = []analysis.SuggestedFix{{Message: "Change to {{ " + e.Path + " }}", Safe: true,
				Edits: []analysis.TextEdit{{Span: at(n.PathSpan), NewText: e.Path}}}}
		}
		d := analysis.Diagnostic{Span: span, Code: Code, Message: e.Message, SuggestedFixes: fixes}
		if !e.Old.Refused {
			d.Severity = analysis.Warning
		}
		pass.Report(d)
	}
}
