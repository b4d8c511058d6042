package oldforms_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
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
	if len(sev) != 3 || sev[0] != analysis.Warning || sev[1] != analysis.Error || sev[2] != analysis.Error {
		t.Errorf("addmany.md severities = %v, want [warning error error]", sev)
	}
}

// exempt are codes that are no follow-on: the version finding for
// promptforge: 2, and tool-binding (the test binds a capability the
// default catalog lacks).
var exempt = map[string]bool{"frontmatter-version": true, "tool-binding": true}

// TestNoFollowOn runs every analyzer over the old-form prompts: the only
// errors are the old forms themselves (and the version finding for
// promptforge: 2), none caused by reading an old form as unknown, and
// after the quick fixes no error is left.
func TestNoFollowOn(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range checker.Check(parse.Parse(f, b), nil) {
			if d.Severity == analysis.Error && d.Code != oldforms.Code && !exempt[d.Code] {
				t.Errorf("%s: follow-on %s: %s", f, d.Code, d.Message)
			}
		}
		golden, err := os.ReadFile(f + ".golden")
		if err != nil {
			continue
		}
		for _, d := range checker.Check(parse.Parse(f, golden), nil) {
			// Left: old forms whose rewrite needs the author (no safe fix).
			if d.Code == oldforms.Code && (len(d.SuggestedFixes) == 0 || !d.SuggestedFixes[0].Safe) {
				continue
			}
			if d.Severity == analysis.Error && !exempt[d.Code] || d.Code == oldforms.Code {
				t.Errorf("%s.golden: %s: %s", f, d.Code, d.Message)
			}
		}
	}
}
