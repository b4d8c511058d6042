package flow

import (
	"sort"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// deadSpans computes the code no run can reach: the rest of a chunk after
// a top-level jump, error or return; the blocks of a section after one
// that surely ends it; the sections no walk can enter.
func (r *Result) deadSpans(facts []*chunkFacts) {
	p := r.Prog.Prompt
	f := p.File
	if f == nil {
		return
	}
	add := func(a, b int) {
		if a < b {
			r.dead = append(r.dead, source.Span{Start: a, End: b})
		}
	}
	for i, c := range r.Prog.Chunks {
		if facts[i] != nil && facts[i].dead {
			add(f.LineStart(c.FirstLine+facts[i].deadLine-1), c.Span.End)
		}
	}
	blocks := func(bs []*parse.Block) {
		for i, b := range bs {
			if b.Kind == parse.LuaBlock && b.Chunk != nil && r.endOf(b.Chunk) == Ends && i+1 < len(bs) {
				add(bs[i+1].Span().Start, bs[len(bs)-1].Span().End)
				return
			}
		}
	}
	blocks(p.H1Blocks)
	// The sections by their number (places), without a look-up each.
	for n, pl := range r.places.list {
		s := pl.unit.Section
		if !(n < len(r.May.Entered.in) && r.May.Entered.in[n]) && s.Heading != nil {
			add(s.Heading.Span.Start, s.Content.End)
		} else if i := pl.firstEnd; i >= 0 && int(i)+1 < len(s.Blocks) {
			add(s.Blocks[i+1].Span().Start, s.Blocks[len(s.Blocks)-1].Span().End)
		}
	}
	sort.Slice(r.dead, func(i, j int) bool { return r.dead[i].Start < r.dead[j].Start })
}

// Dead reports whether the start of s lies in code no run can reach.
func (r *Result) Dead(s source.Span) bool {
	i := sort.Search(len(r.dead), func(i int) bool { return r.dead[i].End > s.Start })
	for ; i < len(r.dead) && r.dead[i].Start <= s.Start; i++ {
		if s.Start < r.dead[i].End {
			return true
		}
	}
	return false
}
