package callargs_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/callargs"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), callargs.Analyzer)
}
