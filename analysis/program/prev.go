package program

// Building from the previous build of the same file: an editor builds a
// Program after every keystroke, and usually one chunk changed. Every
// chunk's model and facts are memoised on the parser's chunk, but
// finding them there costs a memo look-up per product per chunk and a
// check of each memo against the build (its lines, its handlers, its
// entry environment), which on a prompt of a thousand chunks was most of
// a build. A build instead starts from the last Program built for the
// same file name: it pairs its chunks with that Program's in file order
// (the same syntax tree and kind, from both ends: the edited chunks are
// between) and takes each paired chunk's handler facts, model, records
// and, where its entry environment is the same, facts from it, checking
// only what may differ (where the chunk's lines start, which of its
// functions are handlers, the budget left). The chunks between are built
// as before, from their memos or anew.

import (
	"bytes"

	"github.com/forge-lsp/forge-lsp/analysis/internal/lastbyfile"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// lastBuilt holds, by file name, the last Program built of that file,
// without keeping it alive.
var lastBuilt lastbyfile.Map[Program]

// prevOf returns the last Program built for pr's file, or nil.
func prevOf(name string) *Program { return lastBuilt.Load(name) }

// remember makes p the last Program built for its file.
func remember(p *Program) { lastBuilt.Store(p.Prompt.File.Name, p) }

// fromPrev is what a build takes from the previous one (see above).
type fromPrev struct {
	q *Program
	// from is, by chunk index, the index of the paired chunk in q, or -1.
	from []int32
	// facts and entry are q's (nil when q's facts were not ready when
	// the build started); kept until this Program's facts are built.
	facts []*value.Facts
	entry []*value.Env
	// lo and hi bound the chunks between the paired runs, in this build
	// and in q ([lo, hi) and [lo, qhi)).
	lo, hi, qhi int
	// handlers is set when the build shares q's handlerOf (sameHandlers).
	handlers bool
}

// sameHandlers reports whether the handler functions of the build are
// q's: its units hold the chunks paired with those of q's units, in the
// same order, and no chunk between the paired runs, here or in q, has an
// add_local call or assigns a function to a name. Then a chunk between
// has no function marked (a mark starts at an add_local call and goes on
// to functions by name) and marks nothing elsewhere, and the paired
// chunks are marked as in q, in the same order, by the same calls
// (handlerFinder). facts are the build's handler facts.
func (pv *fromPrev) sameHandlers(p *Program, facts []*chunkFacts) bool {
	q := pv.q
	if q.handlerOf == nil || len(p.Sections) != len(q.Sections) {
		return false
	}
	quiet := func(f *chunkFacts) bool { return len(f.roots) == 0 && len(f.funcs) == 0 }
	for i := pv.lo; i < pv.hi; i++ {
		if !quiet(facts[i]) {
			return false
		}
	}
	for j := pv.lo; j < pv.qhi; j++ {
		if !quiet(q.hfacts[j]) {
			return false
		}
	}
	same := func(u, qu *Unit) bool {
		if len(u.Chunks) != len(qu.Chunks) {
			return false
		}
		for k, c := range u.Chunks {
			j, d := pv.from[c.idx], qu.Chunks[k].idx
			if j != d && (j >= 0 || d < int32(pv.lo) || d >= int32(pv.qhi)) {
				return false
			}
		}
		return true
	}
	if !same(p.H1, q.H1) {
		return false
	}
	for k, u := range p.Sections {
		if !same(u, q.Sections[k]) {
			return false
		}
	}
	return true
}

// pair pairs the build's chunks with prev's in file order: the longest
// run of chunks from the start, then from the end, with the same syntax
// tree (or none) and kind. It returns nil when nothing pairs, else also
// the bounds of the chunks between (fromPrev.lo, hi, qhi).
func pair(q *Program, cs []*Chunk) (from []int32, lo, hi, qhi int) {
	qs := q.Chunks
	same := func(c, d *Chunk) bool {
		if c.Kind != d.Kind || len(c.AST) != len(d.AST) {
			return false
		}
		return len(c.AST) == 0 || &c.AST[0] == &d.AST[0]
	}
	n := 0
	for n < len(cs) && n < len(qs) && same(cs[n], qs[n]) {
		n++
	}
	m := 0
	for m < len(cs)-n && m < len(qs)-n && same(cs[len(cs)-1-m], qs[len(qs)-1-m]) {
		m++
	}
	if n+m == 0 {
		return nil, 0, 0, 0
	}
	from = make([]int32, len(cs))
	for i := range from {
		switch {
		case i < n:
			from[i] = int32(i)
		case i >= len(cs)-m:
			from[i] = int32(i - len(cs) + len(qs))
		default:
			from[i] = -1
		}
	}
	return from, n, len(cs) - m, len(qs) - m
}

// sameLines reports whether chunk lines first, first+1, ... of f start
// where lines qFirst, qFirst+1, ... of qf do, relative to the first,
// given that rel are where those of qf start (the paired chunk's model's
// lines): when the text from the first line's start to the start of the
// line after the chunk is the same bytes, its line breaks are at the same
// places. One comparison of the chunk's bytes costs less than a look at
// each line's start (linesFit, which it falls back to at the end of a
// file, where a line start may be clamped).
func sameLines(rel []int32, qf *source.File, qFirst int, f *source.File, first int) bool {
	n := len(rel) - 1
	qb, b, end := qf.LineStart(qFirst), f.LineStart(first), int(rel[n])
	if qf.LineStart(qFirst+n) != qb+end || qb+end >= len(qf.Content) ||
		b+end >= len(f.Content) || f.LineStart(first+n) != b+end {
		return linesFit(rel, f, first)
	}
	return bytes.Equal(qf.Content[qb:qb+end], f.Content[b:b+end])
}

// linesFit reports whether rel are where chunk lines first, first+1, ...
// start in f relative to the first (as chunkModel.lines and
// chunkLex.lines hold them): chunkLex.fits without a call per line.
func linesFit(rel []int32, f *source.File, first int) bool {
	starts := f.LineStarts()
	lo := first - 1
	if lo < 0 || lo+len(rel) > len(starts) {
		base := f.LineStart(first)
		for k, r := range rel {
			if f.LineStart(first+k)-base != int(r) {
				return false
			}
		}
		return true
	}
	base := starts[lo]
	for k, r := range starts[lo : lo+len(rel)] {
		if r-base != int(rel[k]) {
			return false
		}
	}
	return true
}
