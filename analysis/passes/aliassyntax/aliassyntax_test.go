package aliassyntax_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/aliassyntax"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), aliassyntax.Analyzer)
}

// An alias built from known values is judged like a literal one, at the
// call, or at the section's call of the helper that makes it. In memory,
// so that the differential test's mutations of it do not join its corpus.
func TestComputedAliases(t *testing.T) {
	const src = "---\nname: ca\ndescription: Computed aliases.\npromptforge: 1\n---\n\n# CA\n\n" +
		"```lua shared\nKIND = \"web\"\nfunction use_tool(k)\n  tools.add(k .. \"_search\")\nend\nfunction use_bad(k)\n  tools.add(k .. \" search\")\nend\n```\n\n" +
		"## A\n\n```lua\n" +
		"use_tool(KIND)\n" +
		"use_bad(KIND) -- want `invalid tool alias \"web search\".*\\(the tools.add in this call of use_bad\\)`\n" +
		"local name = KIND .. \" fetch\"\n" +
		"tools.add(name) -- want `invalid tool alias \"web fetch\".*computed before the run`\n" +
		"tools.add(args)\n" +
		"```\n"
	analysistest.RunSource(t, "ca.md", []byte(src), aliassyntax.Analyzer)
}

// An alias an earlier section hands on in var is judged where it is
// used.
func TestAliasesFromVar(t *testing.T) {
	const src = "---\nname: av\ndescription: Aliases from var.\npromptforge: 1\n---\n\n# AV\n\n---\nNotes.\n\n" +
		"## Set\n\n```lua\nvar.tool = \"web search\"\nvar.good = \"web_search\"\n```\n\n" +
		"## Use\n\n```lua\n" +
		"tools.add(var.good)\n" +
		"tools.add(var.tool) -- want `invalid tool alias \"web search\".*computed before the run`\n" +
		"return \"x\"\n```\n"
	analysistest.RunSource(t, "av.md", []byte(src), aliassyntax.Analyzer)
}
