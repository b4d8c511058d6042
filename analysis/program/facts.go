package program

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/analysis/cores"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// Facts returns the abstract interpreter's facts of chunk c, evaluated
// in the VM it runs in (docs/language.md#vm-setup): a section chunk
// starts from what the shared library leaves (its globals, minus the
// tool and model aliases the engine installs after it) and what the
// section's earlier chunks leave; an H1 chunk from what the H1's
// earlier chunks leave; the shared library from nothing. Each chunk's
// facts are memoised on its text and its entry environment, so an edit
// re-evaluates the chunk edited and the chunks whose entry it changed.
func (p *Program) Facts(c *Chunk) *value.Facts {
	if !p.factsReady.Load() {
		p.loadFacts()
	}
	if f := p.factsOf(c); f != nil {
		return f
	}
	return value.Of(c.Chunk)
}

// factsOf returns chunk c's facts in its VM, nil when none (c is not a
// chunk of p, or has no AST).
func (p *Program) factsOf(c *Chunk) *value.Facts {
	if c == nil || int(c.idx) >= len(p.facts) || p.Chunks[c.idx] != c {
		return nil
	}
	return p.facts[c.idx]
}

// Entry returns the environment parsed chunk c starts from in its VM
// (see Facts), or nil when nothing is known.
func (p *Program) Entry(c *parse.Chunk) *value.Env {
	p.loadFacts()
	for _, ch := range p.Chunks {
		if ch.Chunk == c {
			return p.entry[ch.idx]
		}
	}
	return nil
}

// loadFacts evaluates the prompt's chunks on first use (buildFacts). A
// panic there is raised again in every caller, as if each had evaluated
// the chunks itself: the evaluation may run on a goroutine of its own
// (StartFacts), where no analyzer would otherwise see it.
//
// While StartFacts' goroutine evaluates, callers wait for it to close
// factsDone rather than in the sync.Once: the once's mutex lets its
// waiters go one at a time, each woken by the one before once that one
// runs, so the analyzers that need facts started one after another
// (seen in execution traces of the 10,000-line prompt: 4-5 ms with one
// goroutine running while the others, runnable, waited their turn);
// closing a channel makes them all runnable at once.
func (p *Program) loadFacts() {
	// Every analyzer asks once per chunk: once the facts are built, an
	// atomic load answers (a receive from the closed channel and the
	// once's check cost several times that on each call).
	if p.factsReady.Load() {
		return
	}
	if p.factsAhead.Load() {
		<-p.factsDone
	}
	p.factsOnce.Do(p.evaluate)
	if p.factsPanic != nil {
		panic(*p.factsPanic)
	}
}

// evaluate runs buildFacts, keeping what a panic raised.
func (p *Program) evaluate() {
	defer func() {
		p.prev = nil
		if r := recover(); r != nil {
			p.factsPanic = &r
		}
	}()
	p.buildFacts()
	p.factsReady.Store(true)
}

// StartFacts starts evaluating the prompt's chunks (Facts) on a
// goroutine of its own when the prompt is large, so the evaluation runs
// while the analyzers that need only the model run, instead of after
// them on the first analyzer that asks for a chunk's facts. It is work
// the analysis needs anyway, so it takes no idle core (analysis/cores):
// the evaluation ahead inside it does. It is called at most once per
// Program (by the program analyzer).
func (p *Program) StartFacts() {
	if workers(len(p.Chunks)) > 1 && p.factsAhead.CompareAndSwap(false, true) {
		go func() {
			defer close(p.factsDone)
			p.factsOnce.Do(p.evaluate) // a panic is raised again in Facts' callers
		}()
	}
}

func (p *Program) buildFacts() {
	p.facts = make([]*value.Facts, len(p.Chunks))
	p.entry = make([]*value.Env, len(p.Chunks))
	// One work budget for the whole prompt (value.MaxPromptWork): past
	// it, the chunks left are evaluated without inlining or unrolling.
	budget := value.NewBudget()
	var shared, sharedExit *value.Env
	// prevFacts returns the facts of the chunk the last build paired
	// with c when they were evaluated from entry and fit what is left
	// of the budget (Take, as for early facts below), or nil.
	prevFacts := func(c *Chunk, entry *value.Env) *value.Facts {
		pv := p.prev
		if pv == nil {
			return nil
		}
		j := pv.from[c.idx]
		if j < 0 || pv.entry[j] != entry || !budget.Take(pv.facts[j]) {
			return nil
		}
		return pv.facts[j]
	}
	if p.Shared != nil && len(p.Shared.AST) > 0 {
		f := prevFacts(p.Shared, nil)
		if f == nil {
			f = value.OfInBudget(p.Shared.Chunk, nil, budget)
		}
		p.facts[p.Shared.idx] = f
		sharedExit = f.Exit
	}
	// chain evaluates u's chunks in order from entry; early, when not
	// nil, holds their facts evaluated ahead (see below).
	chain := func(u *Unit, entry *value.Env, early []earlyFacts) *value.Env {
		k := 0
		for _, c := range u.Chunks {
			if c.Kind == SharedChunk {
				continue
			}
			if len(c.AST) == 0 {
				continue
			}
			p.entry[c.idx] = entry
			var f *value.Facts
			if k < len(early) && early[k].entry == entry && budget.Take(early[k].f) {
				f = early[k].f
			} else if f = prevFacts(c, entry); f == nil {
				f = value.OfInBudget(c.Chunk, entry, budget)
			}
			k++
			p.facts[c.idx] = f
			entry = f.Exit
		}
		return entry
	}
	var h1 *value.Env
	if p.H1 != nil {
		h1 = chain(p.H1, nil, nil)
	}
	// The aliases are known once the H1 is evaluated (one bound under a
	// computed alias names each value it takes).
	if sharedExit != nil {
		if aliases, ok := p.aliases(); ok {
			shared = sharedExit.Without(aliases)
		}
	}
	// The walk starts from the H1's var: a key only the H1 writes holds
	// the H1's value in every section (chains and arms get copies).
	if keys := p.h1OnlyVars(); len(keys) > 0 {
		shared = shared.WithVars(h1, keys)
	}
	p.sectionBase, p.h1Exit = shared, h1
	// Every section starts from shared. On a large prompt, while cores
	// are idle (analysis/cores), helpers evaluate sections ahead on them,
	// each chunk within its own bound of work only (and memoised); the
	// loop below spends the prompt's budget in order, taking a section's
	// early facts where they fit what is left (value.Budget.Take, the
	// test OfInBudget's memo makes) and evaluating again only past what
	// the budget allows, so the facts are those of the evaluation in
	// order. Sections are claimed in order by whoever comes first: the
	// loop evaluates the ones no helper has taken itself, in order, and
	// waits only for a section a helper is evaluating now. With no idle
	// core there are no helpers and nothing is evaluated twice.
	ns := len(p.Sections)
	helpers := 0
	if w := workers(len(p.Chunks)); w > 1 && ns > 1 {
		helpers = cores.Help(w - 1)
	}
	if helpers == 0 {
		for _, u := range p.Sections {
			chain(u, shared, nil)
		}
		return
	}
	// The cores of helpers that never start (a panic before they do)
	// are given back; each started helper gives back its own.
	unstarted := helpers
	defer func() { cores.Release(unstarted) }()
	// made holds each section's early facts, in one slice: section i's
	// at made[at[i]:at[i]+n[i]] (n[i] may stop short of its chunks).
	at, n := make([]int32, ns), make([]int32, ns)
	total := 0
	for i, u := range p.Sections {
		at[i] = int32(total)
		for _, c := range u.Chunks {
			if c.Kind != SharedChunk && len(c.AST) > 0 {
				total++
			}
		}
	}
	made := make([]earlyFacts, total)
	// The early evaluations stop once they have spent the prompt's
	// budget: past it the loop below evaluates without inlining, and the
	// early work would be wasted.
	var spent atomic.Int64
	ahead := budget.Ahead()
	early := func(i int) {
		entry := shared
		for _, c := range p.Sections[i].Chunks {
			if c.Kind == SharedChunk || len(c.AST) == 0 {
				continue
			}
			if spent.Load() >= value.MaxPromptWork {
				return
			}
			f := value.OfInBudget(c.Chunk, entry, ahead)
			spent.Add(int64(f.Work()))
			made[at[i]+n[i]] = earlyFacts{entry, f}
			n[i]++
			entry = f.Exit
		}
	}
	// next is the first section nobody has claimed; ready[i] is done once
	// a helper that claimed section i has finished with it.
	var next atomic.Int64
	var failed atomic.Pointer[any]
	ready := make([]sync.WaitGroup, ns)
	for i := range ready {
		ready[i].Add(1)
	}
	defer next.Store(int64(ns)) // a panic below stops the helpers
	for range helpers {
		unstarted--
		go func() {
			defer cores.Release(1)
			for {
				i := int(next.Add(1) - 1)
				if i >= ns {
					return
				}
				func() {
					defer ready[i].Done()
					defer func() {
						if r := recover(); r != nil {
							failed.CompareAndSwap(nil, &r)
						}
					}()
					if failed.Load() == nil {
						early(i)
					}
				}()
			}
		}()
	}
	for i, u := range p.Sections {
		if next.CompareAndSwap(int64(i), int64(i+1)) {
			chain(u, shared, nil)
			continue
		}
		ready[i].Wait()
		if r := failed.Load(); r != nil {
			panic(*r) // a helper's panic, raised in Facts' callers
		}
		chain(u, shared, made[at[i]:at[i]+n[i]])
	}
}

// SectionBase returns the environment a section's first chunk starts
// from when nothing is known about the var values the walk brings: the
// shared library's globals, and the scalar var keys only the H1 writes.
func (p *Program) SectionBase() *value.Env {
	p.loadFacts()
	return p.sectionBase
}

// H1Exit returns the environment the H1's chunks leave (its var seeds
// the walk), or nil when nothing is known.
func (p *Program) H1Exit() *value.Env {
	p.loadFacts()
	return p.h1Exit
}

// aliases returns the tool and model aliases the H1 declares, which the
// engine installs as globals after the shared library; ok is false when
// one is not known (any global may be hidden). An alias that is not a
// literal is known when the H1's evaluation knows it in every
// evaluation of the call (a loop unrolled: one alias each).
func (p *Program) aliases() ([]string, bool) {
	var out []string
	for _, c := range p.Calls {
		switch c.Canonical() {
		case "tools.bind", "tools.always", "models.bind":
		default:
			continue
		}
		if len(c.Expr.Args) == 0 {
			continue
		}
		s, ok := c.Expr.Args[0].(*ast.StringExpr)
		if ok {
			out = append(out, s.Value)
			continue
		}
		f := p.factsOf(p.ChunkOf(c))
		if f == nil || c.InFunc {
			return nil, false
		}
		if _, ran := f.Args(c.Expr); !ran && f.Exit != nil {
			continue // never runs
		}
		for _, v := range f.Views(c.Expr) {
			a := v.Arg(c.Expr, 0)
			if !a.Const || a.T != value.String {
				return nil, false
			}
			out = append(out, a.Str)
		}
	}
	sort.Strings(out)
	return out, true
}

// h1OnlyVars returns the var keys the H1 may write that no other chunk
// writes, sorted; none when a chunk outside the H1 uses var as a whole
// (a computed key, var passed to a function). Only scalar values are
// carried (WithVars), so a key's value cannot change in place.
func (p *Program) h1OnlyVars() []string {
	// The H1's keys first (few), then the other chunks' writes strike
	// theirs: no set of every key the prompt writes is built.
	var h1 map[string]bool
	for _, g := range p.VarGlobals {
		rest, ok := strings.CutPrefix(g.Path, "var.")
		if !ok {
			if p.ChunkOf(g).Kind != H1Chunk {
				return nil
			}
			continue
		}
		if (g.FieldWrite || g.Write) && p.ChunkOf(g).Kind == H1Chunk {
			if h1 == nil {
				h1 = map[string]bool{}
			}
			key, _, _ := strings.Cut(rest, ".")
			h1[key] = true
		}
	}
	if len(h1) == 0 {
		return nil
	}
	for _, g := range p.VarGlobals {
		if rest, ok := strings.CutPrefix(g.Path, "var."); ok && (g.FieldWrite || g.Write) && p.ChunkOf(g).Kind != H1Chunk {
			key, _, _ := strings.Cut(rest, ".")
			delete(h1, key)
		}
	}
	var out []string
	for k := range h1 {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ProseBefore reports whether a non-blank prose block precedes block i of
// section s: then the section's model has made a round before block i
// runs (sys.reply_finish_reason is set).
func ProseBefore(s *parse.Section, i int) bool {
	for _, b := range s.Blocks[:min(i, len(s.Blocks))] {
		if b.Kind == parse.ProseBlock && strings.TrimSpace(b.Prose.Text) != "" {
			return true
		}
	}
	return false
}

// Infers reports whether the unit makes any infer call (true for a nil
// unit: unknown).
func (u *Unit) Infers() bool {
	if u == nil {
		return true
	}
	for _, c := range u.Calls {
		if c.Expr.Method == "infer" || c.Canonical() == "models.infer" {
			return true
		}
	}
	return false
}

// earlyFacts are a chunk's facts evaluated from entry with no prompt
// budget (buildFacts).
type earlyFacts struct {
	entry *value.Env
	f     *value.Facts
}
