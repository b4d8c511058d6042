package lsp

import (
	"context"

	"go.lsp.dev/protocol"
)

// codeAction offers the analyzer's suggested fixes for the findings that
// overlap the requested range, one quick fix per alternative.
func (s *server) codeAction(ctx context.Context, p *protocol.CodeActionParams) (any, error) {
	out := []protocol.CodeAction{}
	snap := s.promptAt(p.TextDocument.URI)
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
	// races ahead of it analyses the current version itself.
	s.ensureAnalysed(ctx, snap)
	f := snap.file
	start, end := offsetOf(f, p.Range.Start), offsetOf(f, p.Range.End)
	for _, fd := range snap.findings {
		if fd.span.End < start || fd.span.Start > end {
			continue
		}
		diag := toDiagnostics(p.TextDocument.URI, f, []finding{fd})
		for i, fx := range fd.fixes {
			edits := make([]protocol.TextEdit, 0, len(fx.edits))
			for _, e := range fx.edits {
				edits = append(edits, protocol.TextEdit{Range: lspRange(f, e.span), NewText: e.text})
			}
			out = append(out, protocol.CodeAction{
				Title:       fx.title,
				Kind:        protocol.QuickFix,
				Diagnostics: diag,
				IsPreferred: i == 0 && len(fd.fixes) == 1,
				Edit:        &protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{p.TextDocument.URI: edits}},
			})
		}
	}
	return out, nil
}
