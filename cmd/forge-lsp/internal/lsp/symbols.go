package lsp

import (
	"context"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// sectionExtent is a section's heading plus its content and all of its
// descendants: what folds and what a document symbol covers.
func sectionExtent(s *parse.Section) source.Span {
	sp := source.Span{Start: s.Heading.Span.Start, End: s.Content.End}
	if n := len(s.Children); n > 0 {
		if e := sectionExtent(s.Children[n-1]).End; e > sp.End {
			sp.End = e
		}
	}
	return sp
}

// trimTrailingSpace shrinks a span so it does not end in blank lines.
func trimTrailingSpace(f *source.File, sp source.Span) source.Span {
	for sp.End > sp.Start && sp.End <= len(f.Content) && strings.ContainsRune(" \t\r\n", rune(f.Content[sp.End-1])) {
		sp.End--
	}
	return sp
}

func (s *server) documentSymbol(ctx context.Context, p *protocol.DocumentSymbolParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	out := []protocol.DocumentSymbol{}
	if snap == nil {
		return out, nil
	}
	pr, f, ix := snap.prompt, snap.file, snap.index()
	if fm := pr.Frontmatter; fm != nil {
		sym := protocol.DocumentSymbol{Name: "frontmatter", Kind: protocol.SymbolKindModule,
			Range: lspRange(f, fm.Span), SelectionRange: lspRange(f, fm.Span)}
		for _, fd := range fm.Fields {
			sp := source.Span{Start: fd.KeySpan.Start, End: max(fd.KeySpan.End, fd.ValueSpan.End)}
			sym.Children = append(sym.Children, protocol.DocumentSymbol{Name: fd.Key, Detail: fd.Value,
				Kind: protocol.SymbolKindProperty, Range: lspRange(f, sp), SelectionRange: lspRange(f, fd.KeySpan)})
		}
		out = append(out, sym)
	}
	if pr.H1 != nil {
		sp := source.Span{Start: pr.H1.Span.Start, End: pr.H1Region.End}
		h1 := protocol.DocumentSymbol{Name: "# " + pr.Title, Detail: "preamble", Kind: protocol.SymbolKindFile,
			Range: lspRange(f, trimTrailingSpace(f, sp)), SelectionRange: lspRange(f, pr.H1.NameSpan)}
		for _, d := range ix.ToolList {
			h1.Children = append(h1.Children, protocol.DocumentSymbol{Name: d.Alias, Detail: "tool: " + d.Capability,
				Kind: protocol.SymbolKindFunction, Range: lspRange(f, d.Span), SelectionRange: lspRange(f, d.Span)})
		}
		for _, r := range ix.Refs {
			if r.Kind == program.RefModel && r.Decl && r.Section == nil {
				d := ix.Models[r.Name]
				h1.Children = append(h1.Children, protocol.DocumentSymbol{Name: r.Name, Detail: r.Call + ": " + d.Capability,
					Kind: protocol.SymbolKindClass, Range: lspRange(f, r.Span), SelectionRange: lspRange(f, r.Span)})
			}
		}
		out = append(out, h1)
	}
	// Group the section-level declarations once, so the tree is built in
	// one pass over them rather than one pass per section.
	localsOf := map[*parse.Section][]protocol.DocumentSymbol{}
	for _, lt := range ix.Locals {
		localsOf[lt.Section] = append(localsOf[lt.Section], protocol.DocumentSymbol{Name: lt.Alias, Detail: "local tool: " + lt.Description,
			Kind: protocol.SymbolKindFunction, Range: lspRange(f, lt.Span), SelectionRange: lspRange(f, lt.Span)})
	}
	modelsOf := map[*parse.Section][]protocol.DocumentSymbol{}
	for _, r := range ix.Refs {
		if r.Kind == program.RefModel && r.Decl && r.Section != nil {
			modelsOf[r.Section] = append(modelsOf[r.Section], protocol.DocumentSymbol{Name: r.Name, Detail: r.Call,
				Kind: protocol.SymbolKindClass, Range: lspRange(f, r.Span), SelectionRange: lspRange(f, r.Span)})
		}
	}
	var conv func(sec *parse.Section) protocol.DocumentSymbol
	conv = func(sec *parse.Section) protocol.DocumentSymbol {
		detail := ""
		switch {
		case sec.OffWalk:
			detail = "off-walk"
		case sec.IsList:
			detail = "list"
		}
		sym := protocol.DocumentSymbol{Name: sec.Address(), Detail: detail, Kind: protocol.SymbolKindNamespace,
			Range:          lspRange(f, trimTrailingSpace(f, sectionExtent(sec))),
			SelectionRange: lspRange(f, sec.Heading.NameSpan)}
		sym.Children = append(sym.Children, localsOf[sec]...)
		sym.Children = append(sym.Children, modelsOf[sec]...)
		for _, c := range sec.Children {
			sym.Children = append(sym.Children, conv(c))
		}
		return sym
	}
	for _, sec := range pr.Sections {
		if sec.Heading != nil {
			out = append(out, conv(sec))
		}
	}
	return out, nil
}

func (s *server) foldingRange(ctx context.Context, p *protocol.FoldingRangeParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	out := []protocol.FoldingRange{}
	if snap == nil {
		return out, nil
	}
	f, ix := snap.file, snap.index()
	add := func(sp source.Span, kind protocol.FoldingRangeKind) {
		sp = trimTrailingSpace(f, sp)
		a, _ := f.LSPPosition(sp.Start)
		b, _ := f.LSPPosition(sp.End)
		if b > a {
			out = append(out, protocol.FoldingRange{StartLine: a, EndLine: b, Kind: kind})
		}
	}
	pr := snap.prompt
	if pr.Frontmatter != nil {
		add(pr.Frontmatter.Span, protocol.ImportsFoldingRange)
	}
	if pr.H1 != nil {
		add(source.Span{Start: pr.H1.Span.Start, End: pr.H1Region.End}, protocol.RegionFoldingRange)
	}
	for _, sec := range ix.Sections {
		if sec.Heading != nil {
			add(sectionExtent(sec), protocol.RegionFoldingRange)
		}
	}
	for _, c := range ix.Chunks {
		add(c.Chunk.Span, protocol.RegionFoldingRange)
	}
	return out, nil
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentDocumentSymbol, serve: docMethod(handle((*server).documentSymbol), 0),
		advertise: func(c *serverCapabilities) { c.DocumentSymbolProvider = true }},
		feature{method: protocol.MethodTextDocumentFoldingRange, serve: docMethod(handle((*server).foldingRange), 0),
			advertise: func(c *serverCapabilities) { c.FoldingRangeProvider = true }}}
})
