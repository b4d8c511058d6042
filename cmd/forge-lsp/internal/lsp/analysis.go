package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"go.lsp.dev/protocol"
)

// runAnalysis is the switch point to the analysis driver shared with
// `forge-lsp check`. Until the driver lands it reports the parser's errors.
func runAnalysis(ctx context.Context, snap *snapshot) []finding {
	var out []finding
	for _, e := range snap.prompt.Errors {
		out = append(out, finding{span: e.Span, severity: protocol.DiagnosticSeverityError, code: e.Code, message: e.Message})
	}
	_ = parse.CodeStructure
	return out
}
