package sectionref_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/sectionref"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), sectionref.Analyzer)
}

// A target computed from known values (a shared constant, a helper's
// result, a loop variable) is resolved like a literal, at the call, or
// at the section's call of the helper that makes it. In memory, so that
// the differential test's mutations of it do not join its corpus.
func TestComputedTargets(t *testing.T) {
	const src = "---\nname: ct\ndescription: Computed targets.\npromptforge: 1\n---\n\n# CT\n\n" +
		"```lua shared\nSTEPS = {\"Draft\", \"Revew\"}\nfunction go(name)\n  execute(\"## \" .. name)\nend\n```\n\n" +
		"## Main\n\n```lua\n" +
		"for _, s in ipairs(STEPS) do\n  local r = execute(\"## \" .. s) -- want `section heading .## Revew. not found.*computed before the run`\nend\n" +
		"go(\"Draft\")\n" +
		"go(\"Final\") -- want `section heading .## Final. not found.*\\(the execute in this call of go\\)`\n" +
		"go(args)\n" +
		"```\n\n" +
		"## Draft\n\n---\n\n```lua\nreturn \"d\"\n```\n\n## Review\n\n---\n\n```lua\nreturn \"r\"\n```\n"
	analysistest.RunSource(t, "ct.md", []byte(src), sectionref.Analyzer)
}

// A target an earlier section hands on in var is known where it is
// used, also when the jump that uses it is itself computed (such a jump
// may enter any section, with the var of the code before it). A key two
// ways into a section disagree on is unknown there: no finding.
func TestTargetsFromVar(t *testing.T) {
	const src = "---\nname: tv\ndescription: Targets from var.\npromptforge: 1\n---\n\n# TV\n\n---\nNotes.\n\n" +
		"## Pick\n\n```lua\nvar.next = \"## Fnial\"\nvar.step = \"## Draft\"\n```\n\n" +
		"## Go\n\n```lua\n" +
		"execute(var.step)\n" +
		"jump(var.next) -- want `section heading .## Fnial. not found.*computed before the run`\n" +
		"```\n\n" +
		"## Draft\n\n---\n\n```lua\nreturn \"d\"\n```\n\n" +
		"## Split\n\n```lua\nif args == \"a\" then\n  var.other = \"## Draft\"\nelse\n  var.other = \"## Nowhere\"\nend\n```\n\n" +
		"## Use\n\n```lua\nexecute(var.other)\nreturn \"u\"\n```\n"
	analysistest.RunSource(t, "tv.md", []byte(src), sectionref.Analyzer)
}

// A helper that jumps to a target built from its argument, called with
// a var value an earlier section wrote.
func TestHelperTargetsFromVar(t *testing.T) {
	const src = "---\nname: hv\ndescription: Helper targets from var.\npromptforge: 1\n---\n\n# HV\n\n" +
		"```lua shared\nfunction go_next(name)\n  jump(\"## \" .. name)\nend\n```\n\n---\nNotes.\n\n" +
		"## Setup\n\n```lua\nvar.next = \"Finsh\"\n```\n\n" +
		"## Go\n\n```lua\ngo_next(var.next) -- want `section heading .## Finsh. not found.*in this call of go_next`\n```\n\n" +
		"## Finish\n\n```lua\nreturn \"x\"\n```\n"
	analysistest.RunSource(t, "hv.md", []byte(src), sectionref.Analyzer)
}
