package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"go.lsp.dev/protocol"
)

// hover adapts features.HoverAt: test files show their cases' last
// results (testlens.go).
func (s *server) hover(ctx context.Context, p *protocol.HoverParams) (any, error) {
	if isTestDoc(p.TextDocument.URI) {
		if h := s.testHover(ctx, p); h != nil {
			return h, nil
		}
		return nil, nil
	}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return nil, nil
	}
	h, ok := features.HoverAt(snap.feat, offsetOf(snap.file, p.Position))
	if !ok {
		return nil, nil
	}
	r := lspRange(snap.file, h.Span)
	return &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.Markdown, Value: h.Markdown}, Range: &r}, nil
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentHover,
		serve:     docMethod(handle((*server).hover), needBudgets|needCatalog),
		advertise: func(c *serverCapabilities) { c.HoverProvider = true }}}
})
