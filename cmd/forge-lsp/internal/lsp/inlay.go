package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// methodInlayHint is LSP 3.17's textDocument/inlayHint (the library
// predates it).
const methodInlayHint = "textDocument/inlayHint"

type inlayHintParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Range        protocol.Range                  `json:"range"`
}

// inlayHint is LSP 3.17's InlayHint with a string label.
type inlayHint struct {
	Position     protocol.Position `json:"position"`
	Label        string            `json:"label"`
	Kind         int               `json:"kind,omitempty"`
	Tooltip      string            `json:"tooltip,omitempty"`
	PaddingLeft  bool              `json:"paddingLeft,omitempty"`
	PaddingRight bool              `json:"paddingRight,omitempty"`
}

// inlayKindType is InlayHintKind.Type.
const inlayKindType = 1

// inlayHints adapts features.InlayHints.
func (s *server) inlayHints(ctx context.Context, p *inlayHintParams) (any, error) {
	out := []inlayHint{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return out, nil
	}
	f := snap.file
	r := source.Span{Start: offsetOf(f, p.Range.Start), End: offsetOf(f, p.Range.End)}
	for _, h := range features.InlayHints(snap.feat, r) {
		kind := 0
		if h.Type {
			kind = inlayKindType
		}
		out = append(out, inlayHint{Position: lspPos(f, h.Offset), Label: h.Label, Kind: kind, Tooltip: h.Tooltip, PaddingLeft: true})
	}
	return out, nil
}

// before reports whether position a comes before b.
func before(a, b protocol.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
}

var _ = register(func() []feature {
	return []feature{feature{method: methodInlayHint,
		serve:     docMethod(handle((*server).inlayHints), needBudgets),
		advertise: func(c *serverCapabilities) { c.InlayHintProvider = true }}}
})
