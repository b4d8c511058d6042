package oldforms_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/oldforms"
)

func Test(t *testing.T) {
	got := analysistest.Run(t, analysistest.TestData(), oldforms.Analyzer)
	// tools.add("a", "b") runs (the second string is an override): a
	// warning; with a third argument the engine refuses it: an error.
	var sev []analysis.Severity
	for _, d := range got["addmany.md"] {
		sev = append(sev, d.Severity)
	}
	if len(sev) != 2 || sev[0] != analysis.Warning || sev[1] != analysis.Error {
		t.Errorf("addmany.md severities = %v, want [warning error]", sev)
	}
}
