package lsp

import (
	"context"

	"go.lsp.dev/protocol"
)

// codeAction offers the analyzer's suggested fixes for the findings that
// overlap the requested range, one quick fix per alternative.
func (s *server) codeAction(ctx context.Context, p *protocol.CodeActionParams) (any, error) {
	out := []protocol.CodeAction{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return out, nil
	}
	if len(p.Context.Only) > 0 {
		wanted := false
		for _, k := range p.Context.Only {
			if k == protocol.QuickFix || k == "" {
				wanted = true
			}
		}
		if !wanted {
			return out, nil
		}
	}
	// Findings normally come from the debounced analysis; a request that
	// races ahead of it analysed the version before it locked (needs).
	s.analyse(ctx, snap)
	findings, _ := snap.findings.peek()
	f := snap.file
	start, end := offsetOf(f, p.Range.Start), offsetOf(f, p.Range.End)
	for _, d := range findings {
		if d.Span.End < start || d.Span.Start > end {
			continue
		}
		diag := []protocol.Diagnostic{toDiagnostic(p.TextDocument.URI, f, d)}
		for i, fx := range d.SuggestedFixes {
			edits := make([]protocol.TextEdit, 0, len(fx.Edits))
			for _, e := range fx.Edits {
				edits = append(edits, protocol.TextEdit{Range: lspRange(f, e.Span), NewText: e.NewText})
			}
			out = append(out, protocol.CodeAction{
				Title:       fx.Message,
				Kind:        protocol.QuickFix,
				Diagnostics: diag,
				IsPreferred: i == 0 && len(d.SuggestedFixes) == 1,
				Edit:        &protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{p.TextDocument.URI: edits}},
			})
		}
	}
	return out, nil
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentCodeAction,
		serve: docMethod(handle((*server).codeAction), needFindings),
		advertise: func(c *serverCapabilities) {
			c.CodeActionProvider = &protocol.CodeActionOptions{CodeActionKinds: []protocol.CodeActionKind{protocol.QuickFix}}
		}}}
})
