package features

import (
	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// QuickFix is one suggested fix of a finding: its title, the finding it
// fixes, its edits, and whether it is the preferred one (the finding's
// only fix).
type QuickFix struct {
	Title     string
	Finding   analysis.Diagnostic
	Edits     []Edit
	Preferred bool
}

// QuickFixes offers the suggested fixes of the findings that overlap r,
// one per alternative, in the findings' order.
func QuickFixes(findings []analysis.Diagnostic, r source.Span) []QuickFix {
	var out []QuickFix
	for _, d := range findings {
		if d.Span.End < r.Start || d.Span.Start > r.End {
			continue
		}
		for i, fx := range d.SuggestedFixes {
			edits := make([]Edit, 0, len(fx.Edits))
			for _, e := range fx.Edits {
				edits = append(edits, Edit{Span: e.Span, NewText: e.NewText})
			}
			out = append(out, QuickFix{Title: fx.Message, Finding: d, Edits: edits, Preferred: i == 0 && len(d.SuggestedFixes) == 1})
		}
	}
	return out
}
