package cli

import (
	"context"

	"github.com/forge-lsp/forge-lsp/cmd/internal/findings"
	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
)

// Findings is findings.Of: one prompt or test file checked exactly as
// `forge-lsp check --format json` does.
func Findings(path string, content []byte) ([]Diagnostic, error) { return findings.Of(path, content) }

// TestReport is testrun.Report: the test files under paths run offline,
// as `forge-lsp test --format json` does.
func TestReport(ctx context.Context, paths []string, opts testrun.Options) (testrun.JSONReport, []string) {
	return testrun.Report(ctx, paths, opts)
}
