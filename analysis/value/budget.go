// The work budget of a whole prompt: every chunk's evaluation spends
// from one budget (each chunk at most maxWork), so a prompt of many
// chunks that each inline and unroll as much as they may stays bounded;
// past the budget the rest is top (calls are not inlined, loops not
// unrolled: summarised, which is sound but knows less).

package value

import (
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// MaxPromptWork is the statements and calls the evaluation of one
// prompt may spend inlining and unrolling, over all its chunks.
const MaxPromptWork = 200_000

// Budget is what is left of one prompt's work budget. A nil *Budget is
// unlimited (each chunk still spends at most maxWork).
type Budget struct {
	left int
	// of is set on a budget for evaluating of's prompt ahead (Ahead).
	of *Budget
}

// NewBudget returns a prompt's full budget.
func NewBudget() *Budget { return &Budget{left: MaxPromptWork} }

// Ahead returns a budget for evaluating b's prompt's chunks ahead of
// its evaluation in order (on other goroutines): like a nil *Budget,
// each chunk may spend its own bound and nothing is spent, but the
// chunks count as b's prompt's, so an interpreter keeps what it learned
// about function bodies between them.
func (b *Budget) Ahead() *Budget {
	if b == nil {
		return nil
	}
	return &Budget{of: b}
}

// prompt is the budget that identifies b's prompt.
func (b *Budget) prompt() *Budget {
	if b != nil && b.of != nil {
		return b.of
	}
	return b
}

// Left returns the work left (MaxPromptWork for nil or ahead).
func (b *Budget) Left() int {
	if b == nil || b.of != nil {
		return MaxPromptWork
	}
	return b.left
}

// limit is the work a chunk evaluated now may spend.
func (b *Budget) limit() int {
	if b == nil || b.of != nil {
		return maxWork
	}
	return max(min(maxWork, b.left), 0)
}

// spend takes a chunk's work from the budget.
func (b *Budget) spend(f *Facts) {
	if b != nil && b.of == nil {
		b.left = max(b.left-f.work, 0)
	}
}

// over reports whether spending extra more work would pass the chunk's
// limit, noting that a bound was hit.
func (in *interp) over(extra int) bool {
	l := in.limit
	switch l {
	case 0:
		l = maxWork
	case -1:
		l = 0
	}
	if in.work+extra > l {
		in.limited = true
		return true
	}
	return false
}

// fits reports whether memoised facts f hold for a chunk evaluated with
// work limit l: they spent less and hit no bound of work, or they were
// made with the same limit.
func (f *Facts) fits(l int) bool {
	return !f.limited && f.work <= l || f.limit == l
}

// Take reports whether facts f of a chunk, evaluated with no prompt
// budget (OfInBudget with a nil *Budget, or b.Ahead()), are the facts OfInBudget would
// give now with b, and then spends their work from b as OfInBudget
// would; it spends nothing when the chunk must be evaluated again.
func (b *Budget) Take(f *Facts) bool {
	if f == nil || !f.fits(b.limit()) {
		return false
	}
	b.spend(f)
	return true
}

// Limited reports whether a bound of work (the chunk's, or what was
// left of its prompt's) cut the chunk's evaluation short.
func (f *Facts) Limited() bool { return f.limited }

// OfInBudget is OfIn spending from the prompt's budget b (nil: only the
// chunk's own bound).
func OfInBudget(c *parse.Chunk, entry *Env, b *Budget) *Facts {
	if len(c.AST) == 0 {
		return &Facts{}
	}
	l := b.limit()
	if entry == nil {
		if f, ok := c.Memo(factsKey{}).(*Facts); ok && f.ast0 == c.AST[0] && f.fits(l) {
			b.spend(f)
			return f
		}
		f := interpretLimit(c.AST, nil, l, b)
		c.SetMemo(factsKey{}, f)
		b.spend(f)
		return f
	}
	m, ok := c.Memo(envKey{}).(*chunkFacts)
	if !ok || m.ast0 != c.AST[0] {
		m = &chunkFacts{ast0: c.AST[0]}
		c.SetMemo(envKey{}, m)
	}
	// A chunk is usually evaluated from one entry, edit after edit: the
	// one stored last answers without the lock and the map.
	if e := m.last.Load(); e != nil && e.entry == entry && e.f.fits(l) {
		b.spend(e.f)
		return e.f
	}
	m.mu.Lock()
	f, ok := m.by[entry]
	m.mu.Unlock()
	if ok && f.fits(l) {
		b.spend(f)
		return f
	}
	f = interpretLimit(c.AST, entry, l, b)
	m.mu.Lock()
	// The map is made for a second entry: most chunks only ever have
	// the one in last.
	if prev := m.last.Load(); m.by == nil && prev != nil && prev.entry != entry {
		m.by = map[*Env]*Facts{prev.entry: prev.f}
	}
	if m.by != nil {
		if len(m.by) >= maxEntries {
			clear(m.by)
		}
		m.by[entry] = f
	}
	m.last.Store(&entryFacts{entry, f})
	m.mu.Unlock()
	b.spend(f)
	return f
}

// Work returns the work the chunk's evaluation spent.
func (f *Facts) Work() int { return f.work }
