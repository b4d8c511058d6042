package parse

import "sync"

// Lineage is a document's chain of parsed versions. A parse given a
// previous version's Reuse (ParseAfter, ParseEdited, ParseFile) joins
// that version's lineage, and records what the caller told it about
// which bytes the two versions share (Change; nothing for ParseAfter).
// A layer that keeps results by file position across versions (the
// passes' findings, analysis/internal/chunkmemo) asks it which bytes of
// the version it analyses are those of a version it analysed before
// (Same), instead of comparing the texts, and keeps its results on it
// (Memo), for as long as some version of the document is kept.
type Lineage struct {
	mu sync.Mutex
	// next is the version number the next parse of the lineage gets.
	next uint64
	// log holds the most recent versions' steps, version v at
	// v%lineageLog.
	log  [lineageLog]step
	memo sync.Map
}

// lineageLog is how many versions a lineage remembers: Same answers
// for versions at most that many parses apart.
const lineageLog = 64

// step is what a version's parse knew of its previous version: its
// number, and the bytes of its previous version it shares (Change).
type step struct {
	version, prev uint64
	same          Change
}

// Lineage returns p's lineage and p's version in it (0 for the first
// parse of a document, which starts a lineage).
func (p *Prompt) Lineage() (*Lineage, uint64) { return p.lineage, p.version }

// join makes p a version of prev's lineage (a new one when prev has
// none), sharing what ch says with prev's version (nothing when ch is
// nil).
func (p *Prompt) join(prev *Reuse, ch *Change) {
	if prev == nil || prev.lineage == nil {
		p.lineage = &Lineage{next: 1}
		return
	}
	l := prev.lineage
	var same Change
	if ch != nil {
		same = *ch
	}
	l.mu.Lock()
	v := l.next
	l.next++
	l.log[v%lineageLog] = step{version: v, prev: prev.version, same: same}
	l.mu.Unlock()
	p.lineage, p.version = l, v
}

// Same reports which bytes of version to are those of version from (an
// earlier version of the lineage): its first before bytes are from's
// first before bytes, and its last after bytes are from's last after
// bytes. ok is false when the lineage cannot tell (to does not descend
// from from, or too many parses apart); before and after are then 0.
func (l *Lineage) Same(from, to uint64) (before, after int, ok bool) {
	if l == nil {
		return 0, 0, false
	}
	if from == to {
		return 1 << 62, 1 << 62, true // the same version: every byte
	}
	before, after = 1<<62, 1<<62
	l.mu.Lock()
	defer l.mu.Unlock()
	for v, n := to, 0; v != from; n++ {
		s := l.log[v%lineageLog]
		if n >= lineageLog || v < from || s.version != v {
			return 0, 0, false
		}
		before, after = min(before, s.same.Before), min(after, s.same.After)
		v = s.prev
	}
	return before, after, true
}

// Memo returns the value stored under key by SetMemo on the lineage, or
// nil. What is stored is kept for as long as any version of the
// document is: it must hold nothing of one version's analysis.
func (l *Lineage) Memo(key any) any {
	v, _ := l.memo.Load(key)
	return v
}

// SetMemo stores v under key unless a value is already there, and
// returns the stored value.
func (l *Lineage) SetMemo(key, v any) any {
	got, _ := l.memo.LoadOrStore(key, v)
	return got
}
