package lsp

import (
	"context"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// target is what the cursor designates: a section, or an alias of a kind.
type target struct {
	section *parse.Section
	kind    program.RefKind
	name    string
}

// targetAt resolves the cursor to a section (on its heading or on a
// resolved reference) or to a tool/model/local alias.
func targetAt(ix *program.Symbols, off int) (target, bool) {
	if r := ix.RefAt(off); r != nil {
		if r.Kind == program.RefSection {
			if r.Target == nil {
				return target{}, false
			}
			return target{section: r.Target, kind: program.RefSection}, true
		}
		return target{kind: r.Kind, name: r.Name}, true
	}
	if s := ix.HeadingAt(off); s != nil {
		return target{section: s, kind: program.RefSection}, true
	}
	return target{}, false
}

// declSpan is where a target is declared.
func declSpan(ix *program.Symbols, t target, owner *parse.Section) (source.Span, bool) {
	switch t.kind {
	case program.RefSection:
		return t.section.Heading.NameSpan, true
	case program.RefTool:
		if d := ix.Tools[t.name]; d != nil {
			return d.Span, true
		}
	case program.RefModel:
		if d := ix.Models[t.name]; d != nil {
			return d.Span, true
		}
	case program.RefLocal:
		for _, lt := range ix.Locals {
			if lt.Alias == t.name && (owner == nil || lt.Section == owner) {
				return lt.Span, true
			}
		}
	}
	return source.Span{}, false
}

// refsTo lists every mention of t (declarations included when decl).
func refsTo(ix *program.Symbols, t target, decl bool) []source.Span {
	var out []source.Span
	if t.kind == program.RefSection {
		if decl {
			out = append(out, t.section.Heading.NameSpan)
		}
		for _, r := range ix.Refs {
			if r.Kind == program.RefSection && r.Target == t.section {
				out = append(out, r.Span)
			}
		}
		return out
	}
	for _, r := range ix.Refs {
		if r.Kind == t.kind && r.Name == t.name && (decl || !r.Decl) {
			out = append(out, r.Span)
		}
	}
	return out
}

func (s *server) definition(ctx context.Context, p *protocol.DefinitionParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	out := []protocol.Location{}
	if snap == nil {
		return out, nil
	}
	ix := snap.index()
	off := offsetOf(snap.file, p.Position)
	t, ok := targetAt(ix, off)
	if !ok {
		// {{ var.x }} goes to the first `var.x =` in the prompt's Lua.
		if n, ok := placeholderAt(snap, ix, off); ok && len(n.Segments) > 1 && n.Segments[0].Name == "var" {
			if as := varAssignments(ix, n.Segments[1].Name); len(as) > 0 {
				out = append(out, protocol.Location{URI: p.TextDocument.URI, Range: lspRange(snap.file, as[0])})
			}
		}
		return out, nil
	}
	if sp, ok := declSpan(ix, t, ix.SectionAt(off)); ok {
		out = append(out, protocol.Location{URI: p.TextDocument.URI, Range: lspRange(snap.file, sp)})
	}
	return out, nil
}

func (s *server) references(ctx context.Context, p *protocol.ReferenceParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	out := []protocol.Location{}
	if snap == nil {
		return out, nil
	}
	ix := snap.index()
	t, ok := targetAt(ix, offsetOf(snap.file, p.Position))
	if !ok {
		return out, nil
	}
	for _, sp := range refsTo(ix, t, p.Context.IncludeDeclaration) {
		out = append(out, protocol.Location{URI: p.TextDocument.URI, Range: lspRange(snap.file, sp)})
	}
	return out, nil
}

// prepareRenameResult is the {range, placeholder} form.
type prepareRenameResult struct {
	Range       protocol.Range `json:"range"`
	Placeholder string         `json:"placeholder"`
}

func (s *server) prepareRename(ctx context.Context, p *protocol.PrepareRenameParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return nil, nil
	}
	ix := snap.index()
	off := offsetOf(snap.file, p.Position)
	t, ok := targetAt(ix, off)
	if !ok || t.kind != program.RefSection {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "only section headings and references to them can be renamed")
	}
	sp := t.section.Heading.NameSpan
	if r := ix.RefAt(off); r != nil {
		sp = r.Span
	}
	return prepareRenameResult{Range: lspRange(snap.file, sp), Placeholder: t.section.Name}, nil
}

// rename renames a section: its heading text and every literal reference
// that resolves to it (a reference elsewhere that spells the same address
// but resolves to another section is left alone).
func (s *server) rename(ctx context.Context, p *protocol.RenameParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return nil, docNotOpen(p.TextDocument.URI)
	}
	ix := snap.index()
	t, ok := targetAt(ix, offsetOf(snap.file, p.Position))
	if !ok || t.kind != program.RefSection {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "only section headings and references to them can be renamed")
	}
	name := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(p.NewName), "#"))
	if name == "" || strings.ContainsAny(name, "\r\n") {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "the new section name must be non-empty and on one line")
	}
	sec := t.section
	siblings := snap.prompt.Sections
	if sec.Parent != nil {
		siblings = sec.Parent.Children
	}
	for _, o := range siblings {
		if o != sec && o.Name == name {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "a sibling section is already named %q (line %d)", name, snap.file.Line(o.Heading.Span.Start))
		}
	}
	f := snap.file
	edits := []protocol.TextEdit{{Range: lspRange(f, sec.Heading.NameSpan), NewText: name}}
	for _, r := range ix.Refs {
		if r.Kind != program.RefSection || r.Target != sec {
			continue
		}
		// Keep the reference's own spelling of the level and spacing.
		old := f.Text(r.Span)
		lead := len(old) - len(strings.TrimLeft(old, " \t"))
		hashes := strings.IndexFunc(old[lead:], func(c rune) bool { return c != '#' })
		if hashes < 0 {
			continue
		}
		quote := byte('"')
		if r.Span.Start > 0 {
			quote = f.Content[r.Span.Start-1]
		}
		newText := old[:lead] + strings.Repeat("#", hashes) + " " + luaEscape(name, quote)
		edits = append(edits, protocol.TextEdit{Range: lspRange(f, r.Span), NewText: newText})
	}
	return &protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{p.TextDocument.URI: edits}}, nil
}

// luaEscape escapes s for a Lua string delimited by quote (long brackets
// need no escaping).
func luaEscape(s string, quote byte) string {
	if quote != '"' && quote != '\'' {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, string(quote), `\`+string(quote))
	return r.Replace(s)
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentDefinition, serve: docMethod(handle((*server).definition), 0),
		advertise: func(c *serverCapabilities) { c.DefinitionProvider = true }},
		feature{method: protocol.MethodTextDocumentReferences, serve: docMethod(handle((*server).references), 0),
			advertise: func(c *serverCapabilities) { c.ReferencesProvider = true }},
		feature{method: protocol.MethodTextDocumentPrepareRename, serve: docMethod(handle((*server).prepareRename), 0)},
		feature{method: protocol.MethodTextDocumentRename, serve: docMethod(handle((*server).rename), 0),
			advertise: func(c *serverCapabilities) { c.RenameProvider = &protocol.RenameOptions{PrepareProvider: true} }}}
})
