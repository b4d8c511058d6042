package lsp

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// runSectionTitle is the Run section lens's title: it says so when the
// section reads var keys that only the sections before it set, since a
// section run alone starts from the H1's var (docs/language.md#var).
// The flow analysis is the snapshot's memo, made before the lock
// (needFlow).
func runSectionTitle(snap *snapshot, sec *parse.Section) string {
	const title = "▶ Run section"
	keys := snap.flowResult().AloneUnset(sec)
	if len(keys) == 0 {
		return title
	}
	return title + " (alone, var." + strings.Join(keys, ", var.") + " is unset)"
}
