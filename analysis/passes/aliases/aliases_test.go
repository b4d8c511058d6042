package aliases_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/aliases"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), aliases.Analyzer)
}

// A tool the H1 binds under an alias computed from the run input is not
// known before the run: no alias is then reported undeclared, and no
// tools.calls key out of scope (the run below succeeds). The prompt is
// in memory, not in testdata, so that the differential test's mutants
// (which need the shared library's names in sections) do not join the
// corpus: an unknown alias may hide any shared global.
func TestComputedOpen(t *testing.T) {
	analysistest.RunSource(t, "computed_open.md", []byte(computedOpenPrompt), aliases.Analyzer)
}

const computedOpenPrompt = "---\nname: computed_open\ndescription: A tool alias computed from the run input is not known before the run.\npromptforge: 1\n---\n\n# Computed open\n\n```lua\nmodels.default(\"writer\", \"a general assistant\")\ntools.bind(string.lower(args:sub(1, 3)) .. \"_search\", \"web_search\")\n```\n\n## Use it\n\n```lua\ntools.add(\"the_search\")\n```\n\nSay hi.\n\n```lua\nlog(tostring(tools.calls.the_search))\n```\n"
