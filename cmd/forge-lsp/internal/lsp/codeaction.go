package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// codeAction offers the analyzer's suggested fixes for the findings that
// overlap the requested range, one quick fix per alternative
// (features.QuickFixes).
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
	r := source.Span{Start: offsetOf(f, p.Range.Start), End: offsetOf(f, p.Range.End)}
	for _, fx := range features.QuickFixes(findings, r) {
		out = append(out, protocol.CodeAction{
			Title:       fx.Title,
			Kind:        protocol.QuickFix,
			Diagnostics: []protocol.Diagnostic{toDiagnostic(p.TextDocument.URI, f, fx.Finding)},
			IsPreferred: fx.Preferred,
			Edit:        &protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{p.TextDocument.URI: textEdits(f, fx.Edits)}},
		})
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
