package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// completion adapts features.CompleteAt.
func (s *server) completion(ctx context.Context, p *protocol.CompletionParams) (any, error) {
	list := &protocol.CompletionList{Items: []protocol.CompletionItem{}}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return list, nil
	}
	list.Items = append(list.Items, completionItems(snap.file, features.CompleteAt(snap.feat, offsetOf(snap.file, p.Position)))...)
	return list, nil
}

// completionKinds maps features' kinds to the protocol's.
var completionKinds = map[features.CompletionKind]protocol.CompletionItemKind{
	features.KindVariable:  protocol.CompletionItemKindVariable,
	features.KindProperty:  protocol.CompletionItemKindProperty,
	features.KindReference: protocol.CompletionItemKindReference,
	features.KindField:     protocol.CompletionItemKindField,
	features.KindFunction:  protocol.CompletionItemKindFunction,
	features.KindModule:    protocol.CompletionItemKindModule,
}

// completionItems converts features' items to the protocol's.
func completionItems(f *source.File, cs []features.Completion) []protocol.CompletionItem {
	out := make([]protocol.CompletionItem, 0, len(cs))
	for _, c := range cs {
		it := protocol.CompletionItem{Label: c.Label, Kind: completionKinds[c.Kind], Detail: c.Detail,
			TextEdit: &protocol.TextEdit{Range: lspRange(f, c.Edit.Span), NewText: c.Edit.NewText}}
		if c.Doc != "" {
			it.Documentation = protocol.MarkupContent{Kind: protocol.Markdown, Value: c.Doc}
		}
		out = append(out, it)
	}
	return out
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentCompletion,
		serve: docMethod(handle((*server).completion), needCatalog),
		advertise: func(c *serverCapabilities) {
			c.CompletionProvider = &protocol.CompletionOptions{TriggerCharacters: []string{".", "\"", "'", "#"}}
		}}}
})
