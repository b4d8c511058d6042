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
	} {
		analysistest.RunSource(t, fmt.Sprintf("rj%d.md", i), []byte(head+body), walkcheck.Analyzer)
	}
}
