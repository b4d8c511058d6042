package walkcheck_test

import (
	"fmt"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/walkcheck"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), walkcheck.Analyzer)
}

// A nested call whose target jumps back (a jump inside an execute chain
// or a fanout arm stays there) recurses to the nesting cap, as does one
// made inside another call's arguments (which Lua evaluates first). In
// memory, so that the differential test's mutations of it do not join
// its corpus.
func TestRecursionThroughJump(t *testing.T) {
	const head = "---\nname: rj\ndescription: Recursion through a jump.\npromptforge: 1\n---\n\n# RJ\n\n"
	for i, body := range []string{
		"## A\n\n```lua\nlog(\"chain \" .. execute(\"## B\")) -- want `nested-recursion: execute recursion ## A -> ## B -> ## A: the nested run of its target jumps`\nreturn \"a\"\n```\n\n" +
			"## B\n\n---\n\n```lua\njump(\"## A\")\n```\n",
		"## F\n\n```lua\nlocal rs = fanout(\"## W\", {\"a\", \"b\"}) -- want `nested-recursion: fanout recursion ## F -> ## W -> ## F`\nreturn \"f\"\n```\n\n" +
			"## W\n\n---\n\n```lua\njump(\"## F\")\n```\n",
		"## G\n\n```lua\nlocal r = execute(\"## H\") -- the target jumps only sometimes\nreturn r\n```\n\n" +
			"## H\n\n---\n\n```lua\nif args == \"x\" then jump(\"## G\") end\nreturn \"h\"\n```\n",
		// A jump cycle inside the chain an execute runs.
		"## M\n\n```lua\nlocal r = execute(\"### S1\") -- want `jump-cycle: jump cycle ### S1 -> ### S2 -> ### S1 in the chain this execute runs`\nreturn r\n```\n\n" +
			"### S1\n\n```lua\nlog(\"s1\")\n```\n\n### S2\n\n```lua\njump(\"### S1\")\n```\n",
		// The chain ends: no cycle.
		"## M\n\n```lua\nlocal r = execute(\"### S1\")\nreturn r\n```\n\n" +
			"### S1\n\n```lua\nlog(\"s1\")\n```\n\n### S2\n\n```lua\nif args == \"x\" then jump(\"### S1\") end\n```\n",
	} {
		analysistest.RunSource(t, fmt.Sprintf("rj%d.md", i), []byte(head+body), walkcheck.Analyzer)
	}
}
