package neardup_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/neardup"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), neardup.Analyzer)
}

// TestSameAsEngine checks that the pass's cached loop finds exactly the
// pairs toolrule.NearDuplicates finds.
func TestSameAsEngine(t *testing.T) {
	descs := []toolrule.Described{
		{Alias: "a", Description: "Search the web"}, {Alias: "b", Description: "search the web!"},
		{Alias: "c", Description: "Fetch a page"}, {Alias: "d", Description: "Fetch a  page."},
		{Alias: "e", Description: "Something else entirely"},
	}
	var src strings.Builder
	src.WriteString("---\nname: x\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## S\n\n```lua\n")
	for _, d := range descs {
		fmt.Fprintf(&src, "tools.add_local(%q, %q, {}, function() return \"\" end)\n", d.Alias, d.Description)
	}
	src.WriteString("```\n")
	p := parse.Parse("x.md", []byte(src.String()))
	got, err := analysis.Run(context.Background(), p, []*analysis.Analyzer{neardup.Analyzer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := toolrule.NearDuplicates(descs)
	if len(got) != len(want) {
		t.Fatalf("pass found %d pairs, engine %d", len(got), len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i].Message, w.Message()) {
			t.Errorf("pair %d: %q does not contain the engine message %q", i, got[i].Message, w.Message())
		}
	}
}
