package placeholders_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/placeholders"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), placeholders.Analyzer)
}

// A {{ var.k }} in a section of a jump cycle is judged at the section's
// first entry: the write that only comes back around the cycle does not
// count. In memory, so that the differential test's mutations of it do
// not join its corpus.
func TestVarJumpCycle(t *testing.T) {
	const src = "---\nname: cycle\ndescription: A var placeholder in a jump cycle.\npromptforge: 1\n---\n\n# Cycle\n\n```lua\nmodels.default(\"writer\", \"general assistant model\")\n```\n\n" +
		"## Draft\n\nWrite about {{ var.topic }}. <!-- want \"var.topic is not set the first time section `Draft` runs\" -->\n\n" +
		"## Pick\n\n```lua\nvar.topic = \"tides\"\nvar.tone = \"calm\"\nif args == \"again\" then jump(\"## Draft\") end\njump(\"## Tone\")\n```\n\n" +
		"## Tone\n\n---\n\nKeep it {{ var.tone }}.\n\n```lua\nif args == \"more\" then jump(\"## Pick\") end\nreturn \"done\"\n```\n"
	analysistest.RunSource(t, "cycle.md", []byte(src), placeholders.Analyzer)
}
