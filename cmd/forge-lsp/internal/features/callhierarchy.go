package features

import (
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Call is one edge of the section call graph: the section at the other
// end (nil for the H1's code) and the references that make it, in file
// order.
type Call struct {
	Section *parse.Section
	Spans   []source.Span
}

// Callers are the sections (and the H1, Section nil) whose code refers to
// sec (jump, execute, fanout, list_from_section), in order of their
// first reference.
func Callers(snap *Snapshot, sec *parse.Section) []Call {
	return sectionRefs(snap, func(r *program.Ref) (*parse.Section, bool) { return r.Section, r.Target == sec })
}

// Callees are the sections the code of sec (nil: the H1's) refers to, in
// order of their first reference.
func Callees(snap *Snapshot, sec *parse.Section) []Call {
	return sectionRefs(snap, func(r *program.Ref) (*parse.Section, bool) {
		return r.Target, r.Target != nil && r.Section == sec
	})
}

// sectionRefs groups the section references pick keeps by the section
// it names for each, in order of their first reference.
func sectionRefs(snap *Snapshot, pick func(r *program.Ref) (*parse.Section, bool)) []Call {
	var out []Call
	at := map[*parse.Section]int{}
	for _, r := range snap.Symbols().Refs {
		if r.Kind != program.RefSection {
			continue
		}
		key, ok := pick(r)
		if !ok {
			continue
		}
		idx, seen := at[key]
		if !seen {
			out = append(out, Call{Section: key})
			idx = len(out) - 1
			at[key] = idx
		}
		out[idx].Spans = append(out[idx].Spans, r.Span)
	}
	return out
}
