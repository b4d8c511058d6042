package frontmatter_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/frontmatter"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), frontmatter.Analyzer)
}

// namePattern is the catalog's rule as its regular expression.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)

func checkValidName(t *testing.T, s string) {
	if got, want := frontmatter.ValidName(s), namePattern.MatchString(s); got != want {
		t.Errorf("ValidName(%q) = %v, the pattern says %v", s, got, want)
	}
}

func TestValidNameMatchesPattern(t *testing.T) {
	for _, s := range []string{"", "a", "A", "_a", "1a", "a1_b", "a-b", "a b", "a\n", "é", "ab" + strings.Repeat("x", 46), "ab" + strings.Repeat("x", 47), "list_prompts"} {
		checkValidName(t, s)
	}
}

func FuzzValidName(f *testing.F) {
	f.Add("my_prompt2")
	f.Add("Bad-Name")
	f.Fuzz(checkValidName)
}
