package modelopts_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/modelopts"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/rules"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), modelopts.Analyzer)
}

// The API table the analyzer and the editor read lists exactly the option
// keys the engine's rule accepts.
func TestKeysMatchEngineRule(t *testing.T) {
	var names []string
	for _, o := range api.ModelOpts {
		names = append(names, o.Name)
		if err := rules.ModelOpt("models.bind", o.Name, rules.Value{Type: "nil", Len: -1}); err != nil && strings.HasPrefix(err.Error(), "unknown") {
			t.Errorf("api.ModelOpts has %q, which the engine rejects: %v", o.Name, err)
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != strings.Join(rules.ModelOptKeys, ",") {
		t.Errorf("api.ModelOpts keys %v, engine keys %v", names, rules.ModelOptKeys)
	}
}
