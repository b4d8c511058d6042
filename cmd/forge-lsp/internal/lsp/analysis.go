package lsp

import (
	"context"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"go.lsp.dev/protocol"
)

// runAnalysis calls the analysis driver shared with `forge-lsp check`
// (analysis/checker), so the editor and the CLI never disagree, and
// converts its diagnostics to findings. The workspace configuration
// (.forge-lsp.json) is looked up from the file's directory for file: URIs.
func runAnalysis(ctx context.Context, snap *snapshot) []finding {
	var cfg *analysis.Config
	if strings.HasPrefix(string(snap.uri), "file:") {
		if c, err := analysis.FindConfig(snap.file.Name); err == nil {
			cfg = c
		}
	}
	diags := checker.Check(snap.prompt, cfg)
	out := make([]finding, 0, len(diags))
	for _, d := range diags {
		fd := finding{span: d.Span, severity: severityOf(d.Severity), code: d.Code, message: d.Message}
		for _, sf := range d.SuggestedFixes {
			fx := fix{title: sf.Message}
			for _, e := range sf.Edits {
				fx.edits = append(fx.edits, edit{span: e.Span, text: e.NewText})
			}
			fd.fixes = append(fd.fixes, fx)
		}
		for _, r := range d.Related {
			fd.related = append(fd.related, related{span: r.Span, message: r.Message})
		}
		out = append(out, fd)
	}
	return out
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
