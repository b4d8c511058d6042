package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// documentSymbolKinds are the protocol's kinds of the outline's symbols.
var documentSymbolKinds = map[features.SymbolKind]protocol.SymbolKind{
	features.SymbolFrontmatter: protocol.SymbolKindModule,
	features.SymbolProperty:    protocol.SymbolKindProperty,
	features.SymbolH1:          protocol.SymbolKindFile,
	features.SymbolSection:     protocol.SymbolKindNamespace,
	features.SymbolTool:        protocol.SymbolKindFunction,
	features.SymbolModel:       protocol.SymbolKindClass,
}

// documentSymbol adapts features.DocumentSymbols.
func (s *server) documentSymbol(ctx context.Context, p *protocol.DocumentSymbolParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return []protocol.DocumentSymbol{}, nil
	}
	return documentSymbols(snap.file, features.DocumentSymbols(snap.feat)), nil
}

func documentSymbols(f *source.File, syms []features.Symbol) []protocol.DocumentSymbol {
	out := make([]protocol.DocumentSymbol, 0, len(syms))
	for _, sym := range syms {
		d := protocol.DocumentSymbol{Name: sym.Name, Detail: sym.Detail, Kind: documentSymbolKinds[sym.Kind],
			Range: lspRange(f, sym.Span), SelectionRange: lspRange(f, sym.Selection)}
		if len(sym.Children) > 0 {
			d.Children = documentSymbols(f, sym.Children)
		}
		out = append(out, d)
	}
	return out
}

// foldingRange adapts features.Folds: whole lines, a fold of one line
// left out.
func (s *server) foldingRange(ctx context.Context, p *protocol.FoldingRangeParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	out := []protocol.FoldingRange{}
	if snap == nil {
		return out, nil
	}
	f := snap.file
	for _, fold := range features.Folds(snap.feat) {
		a, _ := f.LSPPosition(fold.Span.Start)
		b, _ := f.LSPPosition(fold.Span.End)
		kind := protocol.RegionFoldingRange
		if fold.Kind == features.FoldFrontmatter {
			kind = protocol.ImportsFoldingRange
		}
		if b > a {
			out = append(out, protocol.FoldingRange{StartLine: a, EndLine: b, Kind: kind})
		}
	}
	return out, nil
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentDocumentSymbol, serve: docMethod(handle((*server).documentSymbol), 0),
		advertise: func(c *serverCapabilities) { c.DocumentSymbolProvider = true }},
		feature{method: protocol.MethodTextDocumentFoldingRange, serve: docMethod(handle((*server).foldingRange), 0),
			advertise: func(c *serverCapabilities) { c.FoldingRangeProvider = true }}}
})
