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
	var out []Call
	byCaller := map[*parse.Section]int{}
	for _, r := range snap.Symbols().Refs {
		if r.Kind != program.RefSection || r.Target != sec {
			continue
		}
		idx, seen := byCaller[r.Section]
		if !seen {
			out = append(out, Call{Section: r.Section})
			idx = len(out) - 1
			byCaller[r.Section] = idx
		}
		out[idx].Spans = append(out[idx].Spans, r.Span)
	}
	return out
}

// Callees are the sections the code of sec (nil: the H1's) refers to, in
// order of their first reference.
func Callees(snap *Snapshot, sec *parse.Section) []Call {
	var out []Call
	byTarget := map[*parse.Section]int{}
	for _, r := range snap.Symbols().Refs {
		if r.Kind != program.RefSection || r.Target == nil || r.Section != sec {
			continue
		}
		idx, seen := byTarget[r.Target]
		if !seen {
			out = append(out, Call{Section: r.Target})
			idx = len(out) - 1
			byTarget[r.Target] = idx
		}
		out[idx].Spans = append(out[idx].Spans, r.Span)
	}
	return out
}
