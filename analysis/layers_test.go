package analysis_test

import (
	"os/exec"
	"strings"
	"testing"
)

// runtimeOnly are the packages the analyzer must never link: the run
// engine, the model loop, the Lua sandbox, the store, the gateway client,
// the network, the Lua VM and compiler (gopher-lua's root package: the
// checker needs only its parser and syntax tree) and process execution. What the analyzer shares with a run (section lookup,
// the API table, the alias and near-duplicate rules) lives in pure engine
// packages: engine/parse, engine/api, engine/toolrule.
var runtimeOnly = []string{
	"github.com/forge-lsp/forge-lsp/engine/run",
	"github.com/forge-lsp/forge-lsp/engine/loop",
	"github.com/forge-lsp/forge-lsp/engine/sandbox",
	"github.com/forge-lsp/forge-lsp/engine/store",
	"github.com/forge-lsp/forge-lsp/engine/gateway",
	"net/http",
	"github.com/yuin/gopher-lua",
	"os/exec",
}

// TestAnalysisLinksNoRuntime fails when any package under analysis/ (tests
// excluded) depends, directly or not, on a runtime-only package.
func TestAnalysisLinksNoRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps",
		"-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`,
		"github.com/forge-lsp/forge-lsp/analysis/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	// importers[p] is one package that imports p, for the failure message.
	importers := map[string]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if _, ok := importers[imp]; !ok {
				importers[imp] = f[0]
			}
		}
	}
	if len(importers) == 0 {
		t.Fatal("go list printed no imports")
	}
	for _, bad := range runtimeOnly {
		if by, ok := importers[bad]; ok {
			t.Errorf("analysis links %s (imported by %s); move what the analyzer needs into a pure engine package", bad, by)
		}
	}
}
