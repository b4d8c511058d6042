package lsp

import (
	"cmp"
	"slices"
)

// What an open document keeps between its versions is bounded by memory,
// not by a count of documents: ten 100-line prompts cost less than one
// 10,000-line prompt. A document keeps its snapshot (the parse, the
// program model, the findings and the features' memos) and its parse
// Reuse (what the parse of its next version takes from this one). The
// Reuse keeps the parse, and through it the program model memoised on it,
// alive: it is most of what a document retains (200 open 1,000-line
// prompts: 36 MB of live heap when each keeps both, 31 MB when each keeps
// only its Reuse, 13 MB when 16 keep both), so the two are dropped
// together; a document that lost them is parsed and analysed afresh
// (without reuse) on its next edit or request.
//
// Each document's retention is estimated from its text (retainedPerByte),
// the sum over the open documents is kept within the server's budget
// (options.RetainBudget) by dropping the least recently used documents'
// snapshots and Reuse, and a document is never dropped while its current
// version is still to be parsed or analysed (an edit or input change is
// pending: its snapshot is not current), nor the document whose snapshot
// is being stored.

// retainedPerByte estimates the heap a parsed prompt keeps per byte of
// its text: TestHeapOneOpen10k measures 9.8 MB of live heap for one
// 10,000-line prompt of 188 KB (parse tree, compiled Lua and its tokens,
// program model, the findings memoised per chunk). Chunks that several
// documents or versions share by their text are kept once, so the
// estimate bounds what documents retain from above.
const retainedPerByte = 52

// defaultRetainBudget is the estimated retention (retainedPerByte) the
// open documents may keep: about 5 MB of prompt text, twenty 10,000-line
// prompts or two hundred 1,000-line ones.
const defaultRetainBudget = 256 << 20

// retained estimates the bytes d keeps for its next versions: a parsed
// prompt retainedPerByte times its text, another document's snapshot
// (its file and line index) about its text.
func (d *document) retained() int64 {
	switch {
	case d.reuse != nil || d.snap != nil && d.snap.prompt != nil:
		return retainedPerByte * int64(len(d.text))
	case d.snap != nil:
		return int64(len(d.text))
	}
	return 0
}

// evictable reports whether d's snapshot and Reuse may be dropped: it
// has them, and its current version is not waiting for a parse or an
// analysis (which would reuse them).
func (d *document) evictable() bool {
	return (d.snap != nil || d.reuse != nil) && d.current(d.snap)
}

// retain drops the least recently used documents' snapshots and Reuse
// until the open documents' estimated retention is within the budget,
// keeping keep (the document whose snapshot was just stored) and every
// document with a pending version. It returns how many it dropped.
// Called with s.mu held.
func (s *server) retain(keep *document) int {
	var total int64
	for _, d := range s.docs {
		total += d.retained()
	}
	if total <= s.opts.RetainBudget {
		return 0
	}
	var lru []*document
	for _, d := range s.docs {
		if d != keep && d.evictable() {
			lru = append(lru, d)
		}
	}
	slices.SortFunc(lru, func(a, b *document) int { return cmp.Compare(a.lastUse, b.lastUse) })
	n := 0
	for _, d := range lru {
		if total <= s.opts.RetainBudget {
			break
		}
		total -= d.retained()
		d.snap, d.reuse = nil, nil
		n++
	}
	return n
}
