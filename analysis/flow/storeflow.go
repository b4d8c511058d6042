package flow

import (
	"github.com/forge-lsp/forge-lsp/analysis/program"
)

// storeFlow is which store paths may have been written when a section is
// entered, in walk order. Unlike var, the store is one per run: what an
// execute chain or a fanout arm writes stays when it returns, so a
// section's writes include those of every section its chains and arms
// may run. A path counts as written when any write may run before
// (precision first); a write whose path is not a known string may write
// any path from its chunk on.
type storeFlow struct {
	keySets
	off    bool
	before []bitset
}

// maxStoreSections bounds the section-by-section reachability sets.
const maxStoreSections = 2000

func (r *Result) storeFlow() *storeFlow {
	r.storesOnce.Do(func() { r.stores = r.computeStoreFlow() })
	return r.stores
}

func (r *Result) computeStoreFlow() *storeFlow {
	sf := &storeFlow{keySets: keySets{keys: map[string]int{}}}
	prog := r.Prog
	n := r.places.len()
	if r.anyJump || r.preds == nil || n > maxStoreSections {
		sf.off = true
		return sf
	}
	var writes []keyWrite
	var wholes []*program.Chunk
	for _, c := range prog.Calls {
		switch c.Canonical() {
		case "store.write", "store.append":
		default:
			continue
		}
		ch := prog.ChunkOf(c)
		if deadCall(ch, c) {
			continue // after a statement that ends the chunk: never runs
		}
		p, ok := prog.Facts(ch).Arg(c.Expr, 0).StrConst()
		if !ok {
			wholes = append(wholes, ch)
			continue
		}
		writes = append(writes, keyWrite{ch, sf.id(p)})
	}
	sf.fill(prog, writes, wholes)
	newSet := sf.newSet
	// own[i]: the writes of section i's unit.
	own := make([]bitset, n)
	for i := range own {
		own[i] = newSet()
	}
	for _, u := range prog.Sections {
		p, ok := r.places.of(u.Section)
		if !ok {
			continue
		}
		for _, c := range u.Chunks {
			if b := sf.of(c); b != nil {
				own[p.n].or(b)
			}
		}
	}
	// succ and callees, by place.n: what may run after a section in the
	// same walk, and the sections its chains and arms start at.
	succ := make([][]int32, n)
	for i, ps := range r.preds {
		for _, p := range ps {
			if p >= 0 {
				succ[p] = append(succ[p], int32(i))
			}
		}
	}
	callees := make([][]int32, n)
	for i := range r.targets.span {
		for _, t := range r.targets.of(i) {
			if (t.kind == "execute" || t.kind == "fanout") && t.sec != nil {
				callees[i] = append(callees[i], int32(r.places.at(t.sec).n))
			}
		}
	}
	for _, c := range r.anyCallers {
		for j := 0; j < n; j++ {
			callees[c] = append(callees[c], int32(j))
		}
	}
	// ext[i]: what section i may write while it runs, its chains and arms
	// included: the writes of every section they may reach. A fixed point
	// over the reach: each round only adds bits.
	ext := make([]bitset, n)
	for i := range ext {
		ext[i] = newSet()
		ext[i].or(own[i])
	}
	// reach[i]: what a chain starting at i may write (i and all it can
	// run after it, chains included).
	reach := make([]bitset, n)
	for i := range reach {
		reach[i] = newSet()
		reach[i].or(own[i])
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < n; i++ {
			for _, c := range callees[i] {
				if ext[i].or(reach[c]) {
					changed = true
				}
				if reach[i].or(reach[c]) {
					changed = true
				}
			}
			for _, s := range succ[i] {
				if reach[i].or(reach[s]) {
					changed = true
				}
			}
		}
	}
	sf.before = make([]bitset, n)
	for i := range sf.before {
		sf.before[i] = newSet()
		sf.before[i].or(sf.h1)
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < n; i++ {
			for _, p := range r.preds[i] {
				if p < 0 {
					continue
				}
				if sf.before[i].or(sf.before[p]) {
					changed = true
				}
				if sf.before[i].or(ext[p]) {
					changed = true
				}
			}
		}
	}
	for i := range sf.before {
		// A section's own chains and arms may write before any of its
		// reads; so may its own code (a conservative per-section view).
		sf.before[i].or(ext[i])
	}
	return sf
}

// StoreMaySet reports whether store path p may exist when chunk c runs:
// written by the H1 before it, by code that may run before its section
// in walk order, by the section itself or its chains and arms, or by a
// write whose path is not known. It is true when the analysis cannot
// tell.
func (r *Result) StoreMaySet(c *program.Chunk, p string) bool {
	sf := r.storeFlow()
	if sf.off {
		return true
	}
	k, ok := sf.keys[p]
	if !ok {
		k = -1
	}
	may := func(b bitset) bool { return sf.may(b, k) }
	switch c.Kind {
	case program.H1Chunk:
		for _, h := range r.Prog.H1.Chunks {
			if h.Block <= c.Block && may(sf.of(h)) {
				return true
			}
		}
		return false
	case program.SectionChunk:
		pl, ok := r.places.of(c.Section)
		return !ok || may(sf.before[pl.n])
	}
	return true
}

// deadCall reports whether call c of chunk ch never runs: it comes
// after a top-level statement that always ends the chunk (a jump, a
// return, an error), at top level or in a function defined there.
func deadCall(ch *program.Chunk, c *program.Call) bool {
	if len(ch.AST) == 0 {
		return false
	}
	f := factsOf(ch.Chunk)
	return f.dead && c.Expr.Line() >= f.deadLine
}
