package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// callItem is CallHierarchyItem with its data kept out (items are found
// again by their position).
type callItem struct {
	Name           string               `json:"name"`
	Kind           protocol.SymbolKind  `json:"kind"`
	Detail         string               `json:"detail,omitempty"`
	URI            protocol.DocumentURI `json:"uri"`
	Range          protocol.Range       `json:"range"`
	SelectionRange protocol.Range       `json:"selectionRange"`
}

type callIncoming struct {
	From       callItem         `json:"from"`
	FromRanges []protocol.Range `json:"fromRanges"`
}

type callOutgoing struct {
	To         callItem         `json:"to"`
	FromRanges []protocol.Range `json:"fromRanges"`
}

// sectionItem is the hierarchy item of a section, or of the H1 (the
// caller of the references in H1 code) when sec is nil.
func sectionItem(snap *snapshot, sec *parse.Section) (callItem, bool) {
	f := snap.file
	if sec == nil {
		h := snap.prompt.H1
		if h == nil {
			return callItem{}, false
		}
		return callItem{Name: "# " + snap.prompt.Title, Kind: protocol.SymbolKindModule, Detail: "preamble", URI: snap.uri,
			Range: lspRange(f, source.Span{Start: h.Span.Start, End: snap.prompt.H1Region.End}), SelectionRange: lspRange(f, h.NameSpan)}, true
	}
	return callItem{Name: sec.Address(), Kind: protocol.SymbolKindNamespace, URI: snap.uri,
		Range: lspRange(f, features.SectionSpan(sec)), SelectionRange: lspRange(f, sec.Heading.NameSpan)}, true
}

func (s *server) prepareCallHierarchy(ctx context.Context, p *protocol.CallHierarchyPrepareParams) (any, error) {
	out := []callItem{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return out, nil
	}
	off := offsetOf(snap.file, p.Position)
	if sec := features.SectionTarget(snap.feat, off); sec != nil {
		it, _ := sectionItem(snap, sec)
		return append(out, it), nil
	}
	if h := snap.prompt.H1; h != nil && h.Span.Contains(off) && off < h.Span.End {
		it, _ := sectionItem(snap, nil)
		return append(out, it), nil
	}
	return out, nil
}

// itemSection finds an item's section again: nil with ok for the H1.
func (s *server) itemSection(ctx context.Context, it callItem) (*snapshot, *parse.Section, bool) {
	snap := s.promptAt(ctx, it.URI)
	if snap == nil {
		return nil, nil, false
	}
	off := offsetOf(snap.file, it.SelectionRange.Start)
	if sec := snap.index().HeadingAt(off); sec != nil {
		return snap, sec, true
	}
	if h := snap.prompt.H1; h != nil && h.Span.Contains(off) {
		return snap, nil, true
	}
	return nil, nil, false
}

// incomingCalls adapts features.Callers.
func (s *server) incomingCalls(ctx context.Context, p *struct {
	Item callItem `json:"item"`
}) (any, error) {
	out := []callIncoming{}
	snap, sec, ok := s.itemSection(ctx, p.Item)
	if !ok || sec == nil {
		return out, nil
	}
	for _, c := range features.Callers(snap.feat, sec) {
		it, ok := sectionItem(snap, c.Section)
		if !ok {
			continue
		}
		out = append(out, callIncoming{From: it, FromRanges: ranges(snap.file, c.Spans)})
	}
	return out, nil
}

// outgoingCalls adapts features.Callees.
func (s *server) outgoingCalls(ctx context.Context, p *struct {
	Item callItem `json:"item"`
}) (any, error) {
	out := []callOutgoing{}
	snap, sec, ok := s.itemSection(ctx, p.Item)
	if !ok {
		return out, nil
	}
	for _, c := range features.Callees(snap.feat, sec) {
		it, _ := sectionItem(snap, c.Section)
		out = append(out, callOutgoing{To: it, FromRanges: ranges(snap.file, c.Spans)})
	}
	return out, nil
}

// ranges converts spans to LSP ranges.
func ranges(f *source.File, spans []source.Span) []protocol.Range {
	out := make([]protocol.Range, 0, len(spans))
	for _, sp := range spans {
		out = append(out, lspRange(f, sp))
	}
	return out
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentPrepareCallHierarchy, serve: docMethod(handle((*server).prepareCallHierarchy), 0),
		advertise: func(c *serverCapabilities) { c.CallHierarchyProvider = true }},
		feature{method: protocol.MethodCallHierarchyIncomingCalls, serve: docMethod(handle((*server).incomingCalls), 0)},
		feature{method: protocol.MethodCallHierarchyOutgoingCalls, serve: docMethod(handle((*server).outgoingCalls), 0)}}
})
