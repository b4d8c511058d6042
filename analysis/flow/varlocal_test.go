package flow_test

import (
	"os"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"

	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// TestVarSetInUnit: wherever VarSetInUnit says a section's own code may
// have set a key before a block, VarMaySet and VarSetFirst say so too,
// over every analyzer test prompt (with jump cycles, execute chains,
// fanout arms, var used as a whole), every section, block and key the
// prompt writes; and it says so for the realistic prompt's placeholders,
// whose keys the section sets just before.
func TestVarSetInUnit(t *testing.T) {
	files := analysistest.Corpus(t)
	check := func(name string, src []byte) int {
		p := parse.Parse(name, src)
		prog := program.Build(p)
		r := flow.Analyze(prog)
		keys := map[string]bool{"absent_key": true}
		for _, g := range prog.VarGlobals {
			if rest, ok := strings.CutPrefix(g.Path, "var."); ok {
				k, _, _ := strings.Cut(rest, ".")
				keys[k] = true
			}
		}
		local := 0
		for _, u := range prog.Sections {
			s := u.Section
			for b := 0; b <= len(s.Blocks); b++ {
				for k := range keys {
					if !r.VarSetInUnit(s, b, k) {
						continue
					}
					local++
					if !r.VarMaySet(s, b, k) || !r.VarSetFirst(s, b, k) {
						t.Errorf("%s: section %q block %d key %q: VarSetInUnit but VarMaySet %v, VarSetFirst %v",
							name, s.Name, b, k, r.VarMaySet(s, b, k), r.VarSetFirst(s, b, k))
					}
				}
			}
		}
		return local
	}
	total := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += check(f, src)
	}
	if total == 0 {
		t.Fatal("VarSetInUnit never answered true")
	}
	if n := check("big.md", parsetest.Realistic(300)); n < 10 {
		t.Fatalf("VarSetInUnit true for %d keys of the realistic prompt", n)
	}
}
