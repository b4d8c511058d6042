package features

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// RunLens is a "run" lens: on the H1's name (Section nil: run the whole
// prompt) or on a section heading's name (run that section).
type RunLens struct {
	Span    source.Span
	Section *parse.Section
	Title   string
}

// RunLenses are the run lenses of a prompt: one for the prompt on its
// H1, one per section on its heading.
func RunLenses(snap *Snapshot) []RunLens {
	var out []RunLens
	if h := snap.Prompt.H1; h != nil {
		out = append(out, RunLens{Span: h.NameSpan, Title: "▶ Run prompt"})
	}
	for _, sec := range snap.Symbols().Sections {
		if sec.Heading == nil {
			continue
		}
		out = append(out, RunLens{Span: sec.Heading.NameSpan, Section: sec, Title: runSectionTitle(snap, sec)})
	}
	return out
}

// runSectionTitle is the Run section lens's title: it says so when the
// section reads var keys that only the sections before it set, since a
// section run alone starts from the H1's var (docs/language.md#var).
// The flow analysis is the snapshot's memo.
func runSectionTitle(snap *Snapshot, sec *parse.Section) string {
	const title = "▶ Run section"
	keys := snap.Flow().AloneUnset(sec)
	if len(keys) == 0 {
		return title
	}
	return title + " (alone, var." + strings.Join(keys, ", var.") + " is unset)"
}
