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

// A jump (or a pcall(jump), or an execute) carries var as it is at the
// call: the writes its section makes after the call never reach the
// section it enters. A write before the call, in a loop around it or in
// a function (which may run first) does.
func TestVarJumpLeavesEarly(t *testing.T) {
	const src = "---\nname: early\ndescription: var keys written after a jump.\npromptforge: 1\n---\n\n# Early\n\n```lua\nmodels.default(\"writer\", \"general assistant model\")\n```\n\n" +
		"## Start\n\n```lua\nvar.before = \"b\"\nlocal function later()\n  var.in_func = \"f\"\nend\nfor i = 1, 2 do\n  if i == 2 then jump(\"## Show\") end\n  var.looped = \"l\"\n  later()\nend\nvar.after = \"a\"\nerror(\"not reached\")\n```\n\n" +
		"## Show\n\nHave {{ var.before }}, {{ var.looped }} and {{ var.in_func }}, not {{ var.after }}. <!-- want \"var.after is not set here\" -->\n\n" +
		"## Guarded\n\n```lua\npcall(jump, \"## Again\")\nvar.guarded = \"g\"\n```\n\n" +
		"## Again\n\nNot {{ var.guarded }}. <!-- want \"var.guarded is not set here\" -->\n\n" +
		"```lua\nlocal r = execute(\"## Chain\")\nvar.chained = \"c\"\n```\n\n" +
		"## Chain\n\n---\n\nNot {{ var.chained }} yet. <!-- want \"var.chained is not set here\" -->\n\n```lua\nreturn \"ok\"\n```\n"
	analysistest.RunSource(t, "early.md", []byte(src), placeholders.Analyzer)
}
