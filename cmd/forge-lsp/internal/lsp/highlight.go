package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"go.lsp.dev/protocol"
)

// documentHighlight marks the other occurrences of the symbol at the
// cursor (features.Highlights).
func (s *server) documentHighlight(ctx context.Context, p *protocol.DocumentHighlightParams) (any, error) {
	out := []protocol.DocumentHighlight{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return out, nil
	}
	for _, h := range features.Highlights(snap.feat, offsetOf(snap.file, p.Position)) {
		kind := protocol.DocumentHighlightKindRead
		if h.Write {
			kind = protocol.DocumentHighlightKindWrite
		}
		out = append(out, protocol.DocumentHighlight{Range: lspRange(snap.file, h.Span), Kind: kind})
	}
	return out, nil
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentDocumentHighlight,
		serve:     docMethod(handle((*server).documentHighlight), 0),
		advertise: func(c *serverCapabilities) { c.DocumentHighlightProvider = true }}}
})
