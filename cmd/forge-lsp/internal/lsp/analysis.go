package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// runAnalysis calls the analysis driver shared with `forge-lsp check`
// (analysis/checker), so the editor and the CLI never disagree, with the
// snapshot's inputs: the workspace configuration (.forge-lsp.json found
// from the file's folder for file: URIs, the configured tools file) and
// the tool catalog. It stops and returns ctx.Err() when ctx is cancelled
// (the document changed again).
func runAnalysis(ctx context.Context, snap *snapshot) ([]analysis.Diagnostic, error) {
	return checker.CheckContext(ctx, snap.prompt, snap.inputs().config)
}

// toDiagnostics converts the analysis's diagnostics to protocol
// diagnostics; never nil. It is the one conversion on their way out.
func toDiagnostics(uri protocol.DocumentURI, f *source.File, ds []analysis.Diagnostic) []protocol.Diagnostic {
	out := make([]protocol.Diagnostic, 0, len(ds))
	for _, d := range ds {
		out = append(out, toDiagnostic(uri, f, d))
	}
	return out
}

func toDiagnostic(uri protocol.DocumentURI, f *source.File, d analysis.Diagnostic) protocol.Diagnostic {
	pd := protocol.Diagnostic{
		Range:    lspRange(f, d.Span),
		Severity: severityOf(d.Severity),
		Source:   "forge",
		Message:  d.Message,
	}
	if d.Code != "" {
		pd.Code = d.Code
	}
	for _, r := range d.Related {
		pd.RelatedInformation = append(pd.RelatedInformation, protocol.DiagnosticRelatedInformation{
			Location: protocol.Location{URI: uri, Range: lspRange(f, r.Span)},
			Message:  r.Message,
		})
	}
	return pd
}

func severityOf(s analysis.Severity) protocol.DiagnosticSeverity {
	switch s {
	case analysis.Warning:
		return protocol.DiagnosticSeverityWarning
	case analysis.Info:
		return protocol.DiagnosticSeverityInformation
	case analysis.Hint:
		return protocol.DiagnosticSeverityHint
	}
	return protocol.DiagnosticSeverityError
}
