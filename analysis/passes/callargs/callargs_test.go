package callargs_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/passes/callargs"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), callargs.Analyzer)
}

// A store read of a path that only a later section writes fails (the
// store starts empty); a path an execute chain wrote before the read
// exists, as the store is one per run. The prompt is in memory, not in
// testdata, so that the differential test's mutations of it (which
// reorder its sections) do not join the corpus.
func TestStoreWalkOrder(t *testing.T) {
	analysistest.RunSource(t, "storeorder.md", []byte(storeOrderPrompt), callargs.Analyzer)
}

const storeOrderPrompt = "---\nname: storeorder\ndescription: Store reads in walk order.\npromptforge: 1\n---\n\n# Store order\n\n## Early read\n\n```lua\nlocal early = store.read(\"late/notes.md\") -- want \"file not found: late/notes.md: the only writes of it run after this read in walk order\"\nlocal chained = execute(\"## Writer chain\")\nlocal ok = store.read(\"chain/out.md\")\n```\n\n## Late write\n\n```lua\nstore.write(\"late/notes.md\", \"x\")\nlocal again = store.read(\"late/notes.md\")\n```\n\n## Writer chain\n\n---\n\n```lua\nstore.write(\"chain/out.md\", \"y\")\nreturn \"ok\"\n```\n"

// A store write in a loop over a known list writes the paths of its
// iterations, each known: a read of any other path fails (the store
// starts empty), and a read of one of them does not. In memory, for the
// reason TestStoreWalkOrder gives.
func TestStoreWritesUnrolled(t *testing.T) {
	analysistest.RunSource(t, "unrolled.md", []byte(unrolledPrompt), callargs.Analyzer)
}

const unrolledPrompt = "---\nname: unrolled\ndescription: Store writes in an unrolled loop.\npromptforge: 1\n---\n\n# Unrolled\n\n" +
	"```lua shared\nQUEUES = {billing = \"queue/billing\", bugs = \"queue/bugs\"}\nfunction queue_file(name)\n  return QUEUES[name] .. \".md\"\nend\n```\n\n## Setup\n\n```lua\n" +
	"local never = store.read(\"queue/other.md\") -- want \"file not found: queue/other.md: no store.write\"\n" +
	"for _, q in ipairs({\"billing\", \"bugs\"}) do\n  store.write(queue_file(q), \"# \" .. q)\nend\n" +
	"local bugs = store.read(\"queue/bugs.md\")\n```\n"

// The checker refuses what each host function's declaration in
// rules.ArgTypes refuses, the declaration the runtime checks its
// arguments against: section targets, fanout's worker, tools.add and the
// models' aliases and prompts, with values known through locals; what a
// declaration accepts (a number where Lua converts it, a Tool object)
// passes.
func TestDeclaredArgTypes(t *testing.T) {
	analysistest.RunSource(t, "argtypes.md", []byte(argTypesPrompt), callargs.Analyzer)
}

const argTypesPrompt = "---\nname: argtypes\ndescription: Declared argument types.\npromptforge: 1\n---\n\n# Arg types\n\n```lua\nmodels.default(\"m\", \"general assistant model\")\nsearch = tools.bind(\"search\", \"web search capability\")\n```\n\n## A\n\n```lua\nlocal n, t = 5, {}\n" +
	"if args == \"a\" then jump(n) end -- want `section target must be a string, got number`\n" +
	"if args == \"b\" then execute(t) end -- want `section target must be a string, got table`\n" +
	"if args == \"c\" then tools.add(n) end -- want `tools.add expects strings, Tool objects, or arrays of either, got number`\n" +
	"if args == \"d\" then tools.add(\"search\", t) end -- want `tools.add override must be a string, got table`\n" +
	"if args == \"e\" then models.use(true) end -- want `bad argument #1 to models.use \\(string expected, got boolean\\)`\n" +
	"if args == \"f\" then fanout(t, {\"a\"}) end -- want `bad argument #1 to fanout \\(string expected, got table\\)`\n" +
	"if args == \"g\" then reply = models.infer(t) end -- want `bad argument #1 to models.infer \\(string expected, got table\\)`\n" +
	"if args == \"h\" then local _ = store.read(\"a.txt\", \"one\") end -- want `bad argument #2 to store.read \\(number expected, got string\\)`\n" +
	"if args == \"i\" then local _ = store.exists(n) end\n" +
	"if args == \"j\" then tools.add(search) end\n" +
	"if args == \"k\" then local _ = models.get(n) end\n" +
	"if args == \"l\" then tools.add(models.get(\"m\")) end -- want `tools.add expects strings, Tool objects, or arrays of either, got userdata`\n" +
	"```\n\nGo.\n\n## B\n\n---\n\nDone.\n"

// A var read in a jump cycle is judged at the section's first entry:
// the write that comes back around the cycle (Pick jumping to Draft)
// does not count there, so the first run of Draft fails; a write before
// the cycle, or a first entry that comes through the writer, does count.
// In memory, for the reason TestStoreWalkOrder gives.
func TestVarReadJumpCycle(t *testing.T) {
	analysistest.RunSource(t, "cycle.md", []byte(cyclePrompt), callargs.Analyzer)
	analysistest.RunSource(t, "cycleok.md", []byte(cycleOKPrompt), callargs.Analyzer)
}

const cycleHead = "---\nname: cycle\ndescription: Var reads in a jump cycle.\npromptforge: 1\n---\n\n# Cycle\n\n"

const cyclePrompt = cycleHead + "## Draft\n\n```lua\nlocal title = \"Draft: \" .. var.topic -- want \"var.topic is not set the first time section `Draft` runs\"\nreply = title\n```\n\n" +
	"## Pick\n\n```lua\nvar.topic = \"tides\"\nif args == \"again\" then jump(\"## Draft\") end\nreturn \"done\"\n```\n"

const cycleOKPrompt = cycleHead + "## Init\n\n```lua\nvar.first = \"a\"\n```\n\n" +
	"## Draft\n\n```lua\nlocal title = \"Draft: \" .. var.first\nreply = title\n```\n\n" +
	"## Pick\n\n```lua\nvar.first = \"b\"\nvar.second = \"c\"\nif args == \"again\" then jump(\"## Draft\") end\njump(\"## Review\")\n```\n\n" +
	"## Review\n\n---\n\n```lua\nlocal r = \"Review: \" .. var.second\nif args == \"more\" then jump(\"## Pick\") end\nreturn r\n```\n"
