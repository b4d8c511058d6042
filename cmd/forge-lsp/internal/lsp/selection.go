package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"go.lsp.dev/protocol"
)

// methodSelectionRange is textDocument/selectionRange (not among the
// library's method names).
const methodSelectionRange = "textDocument/selectionRange"

// selectionRangeResult is SelectionRange with a pointer parent (the
// library's is a pointer too; a local type keeps the JSON explicit).
type selectionRangeResult struct {
	Range  protocol.Range        `json:"range"`
	Parent *selectionRangeResult `json:"parent,omitempty"`
}

type selectionRangeParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Positions    []protocol.Position             `json:"positions"`
}

// selectionRange adapts features.SelectionSpans: each position's chain
// of enclosing ranges, innermost first.
func (s *server) selectionRange(ctx context.Context, p *selectionRangeParams) (any, error) {
	out := []*selectionRangeResult{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	for _, pos := range p.Positions {
		if snap == nil {
			out = append(out, &selectionRangeResult{Range: protocol.Range{Start: pos, End: pos}})
			continue
		}
		spans := features.SelectionSpans(snap.feat, offsetOf(snap.file, pos))
		var chain *selectionRangeResult
		for i := len(spans) - 1; i >= 0; i-- {
			chain = &selectionRangeResult{Range: lspRange(snap.file, spans[i]), Parent: chain}
		}
		out = append(out, chain)
	}
	return out, nil
}

var _ = register(func() []feature {
	return []feature{feature{method: methodSelectionRange,
		serve:     docMethod(handle((*server).selectionRange), 0),
		advertise: func(c *serverCapabilities) { c.SelectionRangeProvider = true }}}
})
