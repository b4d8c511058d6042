package emptyplaceholder_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/emptyplaceholder"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), emptyplaceholder.Analyzer)
}
