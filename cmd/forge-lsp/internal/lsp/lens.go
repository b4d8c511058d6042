package lsp

import (
	"context"

	"go.lsp.dev/protocol"
)

// runArgs is the single argument object of forge.runSection and
// forge.runPrompt.
type runArgs struct {
	URI protocol.DocumentURI `json:"uri"`
	// Section is the heading string ("## Name") to run; empty runs the
	// whole prompt.
	Section string `json:"section,omitempty"`
	// Input is the run input (args); empty when omitted.
	Input string `json:"input,omitempty"`
}

func (s *server) codeLens(ctx context.Context, p *protocol.CodeLensParams) (any, error) {
	if isTestDoc(p.TextDocument.URI) {
		return s.testLenses(ctx, p.TextDocument.URI), nil
	}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	out := []protocol.CodeLens{}
	if snap == nil {
		return out, nil
	}
	f := snap.file
	if h := snap.prompt.H1; h != nil {
		out = append(out, protocol.CodeLens{
			Range:   lspRange(f, h.NameSpan),
			Command: &protocol.Command{Title: "▶ Run prompt", Command: commandRunPrompt, Arguments: []any{runArgs{URI: p.TextDocument.URI}}},
		})
	}
	for _, sec := range snap.index().Sections {
		if sec.Heading == nil {
			continue
		}
		out = append(out, protocol.CodeLens{
			Range: lspRange(f, sec.Heading.NameSpan),
			Command: &protocol.Command{Title: runSectionTitle(snap, sec), Command: commandRunSection,
				Arguments: []any{runArgs{URI: p.TextDocument.URI, Section: sec.Address()}}},
		})
	}
	return out, nil
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentCodeLens,
		serve:     docMethod(handle((*server).codeLens), needFlow),
		advertise: func(c *serverCapabilities) { c.CodeLensProvider = &protocol.CodeLensOptions{} }}}
})
