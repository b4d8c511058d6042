package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
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

// codeLens adapts features.RunLenses (test files get their own,
// testlens.go).
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
	for _, l := range features.RunLenses(snap.feat) {
		cmd := &protocol.Command{Title: l.Title, Command: commandRunPrompt, Arguments: []any{runArgs{URI: p.TextDocument.URI}}}
		if l.Section != nil {
			cmd.Command, cmd.Arguments = commandRunSection, []any{runArgs{URI: p.TextDocument.URI, Section: l.Section.Address()}}
		}
		out = append(out, protocol.CodeLens{Range: lspRange(f, l.Span), Command: cmd})
	}
	return out, nil
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentCodeLens,
		serve:     docMethod(handle((*server).codeLens), needFlow),
		advertise: func(c *serverCapabilities) { c.CodeLensProvider = &protocol.CodeLensOptions{} }}}
})
