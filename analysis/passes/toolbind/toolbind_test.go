package toolbind_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/toolbind"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

func TestBuiltin(t *testing.T) {
	analysistest.Run(t, filepath.Join(analysistest.TestData(), "builtin"), toolbind.Analyzer)
}

// Bindings in a loop or through a helper are judged per evaluation; an
// unknown alias with a capability no tool matches still fails.
func TestComputed(t *testing.T) {
	analysistest.Run(t, filepath.Join(analysistest.TestData(), "computed"), toolbind.Analyzer)
}

func TestWorkspace(t *testing.T) {
	analysistest.Run(t, filepath.Join(analysistest.TestData(), "ws"), toolbind.Analyzer)
}

// A prompt that is not a file on disk (an unsaved editor buffer) sees the
// built-ins only, and a configured tools file wins over the lookup.
func TestToolsFile(t *testing.T) {
	src := []byte("---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# P\n\n```lua\ntools.bind(\"wc\", \"count the words of a text\")\n```\n")
	run := func(name string, cfg *analysis.Config) []analysis.Diagnostic {
		diags, err := analysis.Run(t.Context(), parse.Parse(name, src), []*analysis.Analyzer{toolbind.Analyzer}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return diags
	}
	if d := run("untitled:Untitled-1", nil); len(d) != 1 || !strings.Contains(d[0].Message, "no tool matches") {
		t.Fatalf("built-ins only: got %v, want one Absent finding", d)
	}
	ws := filepath.Join(analysistest.TestData(), "ws", "forge-tools.json")
	if d := run("untitled:Untitled-1", &analysis.Config{ToolsFile: ws}); len(d) != 0 {
		t.Fatalf("with the tools file: got %v, want none", d)
	}
	// A broken tools file fails every run: reported once, at the first
	// capability.
	bad := filepath.Join(t.TempDir(), "forge-tools.json")
	if err := os.WriteFile(bad, []byte(`{"tools": [{"name": "x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := run("p.md", &analysis.Config{ToolsFile: bad}); len(d) != 1 || !strings.Contains(d[0].Message, "description is required") {
		t.Fatalf("broken tools file: got %v", d)
	}
}

// BenchmarkToolbind measures the pass on a prompt with many sections and
// two binds, against the program analysis it requires, in the same run:
// the catalog and every picker decision are memoised, so the pass should
// cost a small fraction of building the program.
func BenchmarkToolbind(b *testing.B) {
	var src strings.Builder
	src.WriteString("---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# P\n\n```lua\ntools.bind(\"search\", \"web search\")\ntools.bind(\"fetch\", \"fetch pages\")\nmodels.default(\"w\", \"a writer\")\n```\n\n")
	for i := 0; i < 1000; i++ {
		src.WriteString("## S\n\n```lua\ntools.add({\"fetch\"})\nlocal n = 1\n```\n\nSummarise.\n\n")
	}
	var prog, both time.Duration
	for b.Loop() {
		p := parse.Parse("p.md", []byte(src.String()))
		t0 := time.Now()
		if _, err := analysis.Run(b.Context(), p, []*analysis.Analyzer{program.Analyzer}, nil); err != nil {
			b.Fatal(err)
		}
		t1b := time.Now()
		p = parse.Parse("p.md", []byte(src.String()))
		t1 := time.Now()
		if _, err := analysis.Run(b.Context(), p, []*analysis.Analyzer{toolbind.Analyzer}, nil); err != nil {
			b.Fatal(err)
		}
		both += time.Since(t1)
		prog += t1b.Sub(t0)
	}
	b.ReportMetric(float64(both-prog)/float64(prog), "toolbind/program")
}
