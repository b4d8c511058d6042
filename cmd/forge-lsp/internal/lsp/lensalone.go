package lsp

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// runSectionTitle is the Run section lens's title: it says so when the
// section reads var keys that only the sections before it set, since a
// section run alone starts from the H1's var (docs/language.md#var).
// fl is the flow analysis, computed on the first call of a request.
func runSectionTitle(snap *snapshot, sec *parse.Section, fl **flow.Result) string {
	const title = "▶ Run section"
	if *fl == nil {
		*fl = flow.Analyze(program.Of(snap.prompt))
	}
	keys := (*fl).AloneUnset(sec)
	if len(keys) == 0 {
		return title
	}
	return title + " (alone, var." + strings.Join(keys, ", var.") + " is unset)"
}
