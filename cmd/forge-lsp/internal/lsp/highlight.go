package lsp

import (
	"context"

	"go.lsp.dev/protocol"
)

// documentHighlight marks the other occurrences of the symbol at the
// cursor, read from the program model's symbols of the current parse.
func (s *server) documentHighlight(ctx context.Context, p *protocol.DocumentHighlightParams) (any, error) {
	out := []protocol.DocumentHighlight{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return out, nil
	}
	ix := snap.index()
	off := offsetOf(snap.file, p.Position)
	t, ok := targetAt(ix, off)
	if !ok {
		return out, nil
	}
	decl, hasDecl := declSpan(ix, t, nil)
	for _, sp := range refsTo(ix, t, true) {
		kind := protocol.DocumentHighlightKindRead
		if hasDecl && sp == decl {
			kind = protocol.DocumentHighlightKindWrite
		}
		out = append(out, protocol.DocumentHighlight{Range: lspRange(snap.file, sp), Kind: kind})
	}
	return out, nil
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentDocumentHighlight,
		serve:     docMethod(handle((*server).documentHighlight), 0),
		advertise: func(c *serverCapabilities) { c.DocumentHighlightProvider = true }}}
})
