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
