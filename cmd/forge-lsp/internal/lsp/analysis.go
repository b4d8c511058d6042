package lsp

import (
	"context"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// runAnalysis calls the analysis driver shared with `forge-lsp check`
// (analysis/checker), so the editor and the CLI never disagree. It stops
// and returns ctx.Err() when ctx is cancelled (the document changed
// again). The workspace configuration (.forge-lsp.json) is looked up from
// the file's directory for file: URIs. toolsFile is the configured
// workspace tools file ("": the one found next to the file, as a run does).
func runAnalysis(ctx context.Context, snap *snapshot, toolsFile string) ([]analysis.Diagnostic, error) {
	var cfg *analysis.Config
	if strings.HasPrefix(string(snap.uri), "file:") {
		if c, err := analysis.FindConfig(snap.file.Name); err == nil {
			cfg = c
		}
	}
	if toolsFile != "" {
		var c analysis.Config
		if cfg != nil {
			c = *cfg
		}
		c.ToolsFile = toolsFile
		cfg = &c
	}
	return checker.CheckContext(ctx, snap.prompt, cfg)
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
