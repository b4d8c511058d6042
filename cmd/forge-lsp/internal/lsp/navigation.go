package lsp

import (
	"context"
	"errors"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Navigation (definition, references, rename) adapts the features of the
// same names: positions in, locations and edits out.

// locations converts spans of the document uri to LSP locations; never
// nil.
func locations(uri protocol.DocumentURI, f *source.File, spans []source.Span) []protocol.Location {
	out := make([]protocol.Location, 0, len(spans))
	for _, sp := range spans {
		out = append(out, protocol.Location{URI: uri, Range: lspRange(f, sp)})
	}
	return out
}

func (s *server) definition(ctx context.Context, p *protocol.DefinitionParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return []protocol.Location{}, nil
	}
	return locations(p.TextDocument.URI, snap.file, features.Definition(snap.feat, offsetOf(snap.file, p.Position))), nil
}

func (s *server) references(ctx context.Context, p *protocol.ReferenceParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return []protocol.Location{}, nil
	}
	spans := features.References(snap.feat, offsetOf(snap.file, p.Position), p.Context.IncludeDeclaration)
	return locations(p.TextDocument.URI, snap.file, spans), nil
}

// prepareRenameResult is the {range, placeholder} form.
type prepareRenameResult struct {
	Range       protocol.Range `json:"range"`
	Placeholder string         `json:"placeholder"`
}

// renameError is the protocol error for a features.Rename refusal.
func renameError(err error) error {
	if errors.Is(err, features.ErrNotRenamable) {
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
	}
	return jsonrpc2.NewError(jsonrpc2.InvalidParams, err.Error())
}

func (s *server) prepareRename(ctx context.Context, p *protocol.PrepareRenameParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return nil, nil
	}
	sp, name, err := features.PrepareRename(snap.feat, offsetOf(snap.file, p.Position))
	if err != nil {
		return nil, renameError(err)
	}
	return prepareRenameResult{Range: lspRange(snap.file, sp), Placeholder: name}, nil
}

// rename renames a section (features.Rename).
func (s *server) rename(ctx context.Context, p *protocol.RenameParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return nil, docNotOpen(p.TextDocument.URI)
	}
	edits, err := features.Rename(snap.feat, offsetOf(snap.file, p.Position), p.NewName)
	if err != nil {
		return nil, renameError(err)
	}
	return &protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{p.TextDocument.URI: textEdits(snap.file, edits)}}, nil
}

// textEdits converts features edits to LSP text edits.
func textEdits(f *source.File, edits []features.Edit) []protocol.TextEdit {
	out := make([]protocol.TextEdit, 0, len(edits))
	for _, e := range edits {
		out = append(out, protocol.TextEdit{Range: lspRange(f, e.Span), NewText: e.NewText})
	}
	return out
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
