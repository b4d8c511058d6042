package walkcheck_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/walkcheck"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), walkcheck.Analyzer)
}
