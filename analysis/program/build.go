package program

import (
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

// Build builds the model. It never fails: chunks with syntax errors (nil
// AST) are skipped. Each chunk's walk is memoised on the parser's chunk
// (see chunkModel), so rebuilding after an edit re-walks only the chunks
// that changed.
func Build(pr *parse.Prompt) *Program {
	b := newBuilder(pr)
	b.units()
	b.fileOrder()
	b.pairPrev()
	handlerOf := b.handlers()
	b.models(handlerOf)
	b.records()
	if b.sameUnits {
		q := b.prev.q
		b.p.H1.Calls, b.p.H1.GlobalWrites = q.H1.Calls, q.H1.GlobalWrites
		for k, u := range b.p.Sections {
			u.Calls, u.GlobalWrites = q.Sections[k].Calls, q.Sections[k].GlobalWrites
		}
		return b.finish()
	}
	// A unit's calls are a run of p.Calls when its chunks' calls are
	// consecutive there (a unit without the shared chunk: its own chunks
	// are consecutive in file order); the other units' calls are copied
	// into one slice (a unit lists the shared chunk's calls too), cut by
	// unitViews.
	total := 0
	for i := -1; i < len(b.p.Sections); i++ {
		u := b.p.H1
		if i >= 0 {
			u = b.p.Sections[i]
		}
		if _, _, ok := callsRun(u); !ok {
			for _, c := range u.Chunks {
				total += int(c.nCalls)
			}
		}
	}
	if total > 0 {
		b.unitCalls = make([]*Call, 0, total)
	}
	b.unitViews(b.p.H1)
	for _, u := range b.p.Sections {
		b.unitViews(u)
	}
	return b.finish()
}

// finish keeps what the facts need of the last build, and makes the
// Program the last build of its file.
func (b *builder) finish() *Program {
	if b.prev != nil && b.prev.facts != nil {
		// Not the last build itself: a chain of Programs would stay
		// alive, each holding the one before.
		b.p.prev = &fromPrev{from: b.prev.from, facts: b.prev.facts, entry: b.prev.entry}
	}
	if b.repeated == nil {
		remember(b.p)
	}
	return b.p
}

// pairPrev pairs the chunks with the last build's of the file (see
// fromPrev), unless some chunks share a syntax tree (then a model may
// be a private copy's).
func (b *builder) pairPrev() {
	if b.repeated != nil || b.pr.File == nil {
		return
	}
	q := prevOf(b.pr.File.Name)
	if q == nil || q.Prompt == b.pr {
		return
	}
	from, lo, hi, qhi := pair(q, b.p.Chunks)
	if from == nil {
		return
	}
	b.prev = &fromPrev{q: q, from: from, lo: lo, hi: hi, qhi: qhi}
	b.p.edit.seq, b.p.edit.lo, b.p.edit.hi, b.p.edit.qhi = q.seq, int32(lo), int32(hi), int32(qhi)
	if q.factsReady.Load() {
		b.prev.facts, b.prev.entry = q.facts, q.entry
	}
}

// paired returns the chunk of the last build paired with chunk i, or
// nil.
func (b *builder) paired(i int) *Chunk {
	if b.prev == nil || b.prev.from[i] < 0 {
		return nil
	}
	return b.prev.q.Chunks[b.prev.from[i]]
}

// builder holds one build's allocations: the chunks, units and their
// chunk lists are a few exact-size slices, counted up front.
type builder struct {
	pr              *parse.Prompt
	p               *Program
	nUnits, nShared int
	chunks          []Chunk
	unitSlab        []Unit
	lists           []*Chunk
	// repeated holds the ASTs that several chunks share (repeatedASTs),
	// seen those of them a chunk already has; private marks the chunks
	// that got a copy (see newChunk).
	repeated, seen map[uintptr]bool
	private        map[*Chunk]bool
	// unitCalls holds the units' Calls (unitViews).
	unitCalls []*Call
	// prev is what the build takes from the last build of the file, or
	// nil (pairPrev).
	prev *fromPrev
	// sameUnits is set when the units' views are the last build's
	// (records).
	sameUnits bool
}

// luaBlocks counts the Lua blocks with a compiled chunk.
func luaBlocks(bs []*parse.Block) int {
	n := 0
	for _, b := range bs {
		if b.Kind == parse.LuaBlock && b.Chunk != nil {
			n++
		}
	}
	return n
}

func newBuilder(pr *parse.Prompt) *builder {
	nUnits, nChunks := 0, luaBlocks(pr.H1Blocks)
	var count func(ss []*parse.Section)
	count = func(ss []*parse.Section) {
		for _, s := range ss {
			nUnits++
			nChunks += luaBlocks(s.Blocks)
			count(s.Children)
		}
	}
	count(pr.Sections)
	nShared := 0
	if pr.Shared != nil {
		nShared = 1
	}
	return &builder{
		pr:       pr,
		p:        &Program{Prompt: pr, UnitOf: make(map[*parse.Section]*Unit, nUnits), Sections: make([]*Unit, 0, nUnits), factsDone: make(chan struct{})},
		nUnits:   nUnits,
		nShared:  nShared,
		chunks:   make([]Chunk, 0, nChunks+nShared),
		unitSlab: make([]Unit, nUnits+1),
		lists:    make([]*Chunk, 0, nChunks+nUnits*nShared),
		repeated: repeatedASTs(pr, nChunks+nShared),
	}
}

// astID identifies the AST of chunk c, which has one, by the address of
// its first statement.
func astID(c *parse.Chunk) uintptr { return uintptr(unsafe.Pointer(&c.AST[0])) }

// firstsPool holds the scratch slices of repeatedASTs.
var firstsPool = sync.Pool{New: func() any { return new([]uintptr) }}

// repeatedASTs returns the ASTs that more than one of pr's n chunks
// share, each by its first statement, or nil when none is (the usual
// case). It sorts the addresses of the chunks' first statements rather
// than building a set of them all, which cost a map of every chunk per
// build.
func repeatedASTs(pr *parse.Prompt, n int) map[uintptr]bool {
	fp := firstsPool.Get().(*[]uintptr)
	firsts := slices.Grow((*fp)[:0], n)
	add := func(c *parse.Chunk) {
		if c != nil && len(c.AST) > 0 {
			firsts = append(firsts, astID(c))
		}
	}
	add(pr.Shared)
	for _, blk := range pr.H1Blocks {
		if blk.Kind == parse.LuaBlock {
			add(blk.Chunk)
		}
	}
	var visit func(ss []*parse.Section)
	visit = func(ss []*parse.Section) {
		for _, s := range ss {
			for _, blk := range s.Blocks {
				if blk.Kind == parse.LuaBlock {
					add(blk.Chunk)
				}
			}
			visit(s.Children)
		}
	}
	visit(pr.Sections)
	// Addresses compare as the statements' identity: Go's collector
	// does not move objects, and the chunks keep them alive.
	slices.Sort(firsts)
	var repeated map[uintptr]bool
	for i := 1; i < len(firsts); i++ {
		if firsts[i] == firsts[i-1] {
			if repeated == nil {
				repeated = map[uintptr]bool{}
			}
			repeated[firsts[i]] = true
		}
	}
	*fp = firsts[:0]
	firstsPool.Put(fp)
	return repeated
}

// list returns the next n list slots, capacity-limited.
func (b *builder) list(n int) []*Chunk {
	if n == 0 {
		return nil
	}
	b.lists = b.lists[:len(b.lists)+n]
	return b.lists[len(b.lists)-n : len(b.lists)-n : len(b.lists)]
}

// newChunk adds a chunk. The parser memoises compiled chunks by (label,
// source), so two chunks of one prompt (say `## A` and `### A` with the
// same code) can share AST nodes. The model keys its maps by node, so a
// repeated AST gets a private copy from the same gopher-lua parser (and a
// private model). Chunks sharing a compiled result share its AST slice,
// so the slice's first element identifies the AST.
func (b *builder) newChunk(c *parse.Chunk, k ChunkKind, s *parse.Section, block int) *Chunk {
	b.chunks = append(b.chunks, Chunk{Chunk: c, Kind: k, Section: s, Block: block})
	ch := &b.chunks[len(b.chunks)-1]
	if len(c.AST) > 0 && b.repeated[astID(c)] {
		if b.seen[astID(c)] {
			cp := *c
			if stmts, err := luaparse.Parse(strings.NewReader(c.Source), c.Label); err == nil && len(stmts) > 0 {
				cp.AST = stmts
			}
			ch.Chunk = &cp
			if b.private == nil {
				b.private = map[*Chunk]bool{}
			}
			b.private[ch] = true
		} else {
			if b.seen == nil {
				b.seen = map[uintptr]bool{}
			}
			b.seen[astID(c)] = true
		}
	}
	return ch
}

// units makes the H1 unit and the section units, depth-first in file
// order; a section unit lists the shared chunk first.
func (b *builder) units() {
	p, pr := b.p, b.pr
	if pr.Shared != nil {
		p.Shared = b.newChunk(pr.Shared, SharedChunk, nil, -1)
	}
	p.H1 = &b.unitSlab[b.nUnits]
	p.H1.idx = -1
	p.H1.Chunks = b.list(luaBlocks(pr.H1Blocks))
	for i, blk := range pr.H1Blocks {
		if blk.Kind == parse.LuaBlock && blk.Chunk != nil {
			p.H1.Chunks = append(p.H1.Chunks, b.newChunk(blk.Chunk, H1Chunk, nil, i))
		}
	}
	var visit func(ss []*parse.Section)
	visit = func(ss []*parse.Section) {
		for _, s := range ss {
			u := &b.unitSlab[len(p.Sections)]
			u.Section, u.idx = s, int32(len(p.Sections))
			u.Chunks = b.list(b.nShared + luaBlocks(s.Blocks))
			if p.Shared != nil {
				u.Chunks = append(u.Chunks, p.Shared)
			}
			for i, blk := range s.Blocks {
				if blk.Kind == parse.LuaBlock && blk.Chunk != nil {
					u.Chunks = append(u.Chunks, b.newChunk(blk.Chunk, SectionChunk, s, i))
				}
			}
			p.Sections = append(p.Sections, u)
			p.UnitOf[s] = u
			visit(s.Children)
		}
	}
	visit(pr.Sections)
}

// fileOrder lists all chunks in file order, each once (p.Chunks).
func (b *builder) fileOrder() {
	p := b.p
	all := make([]*Chunk, 0, len(b.chunks))
	all = append(all, p.H1.Chunks...)
	if p.Shared != nil {
		all = append(all, p.Shared)
	}
	for _, u := range p.Sections {
		for _, c := range u.Chunks {
			if c.Kind == SectionChunk {
				all = append(all, c)
			}
		}
	}
	sortChunks(all)
	for i, c := range all {
		c.idx = int32(i)
	}
	p.Chunks = all
}

// handlers finds which function bodies run as add_local handlers, per
// VM.
func (b *builder) handlers() map[*ast.FunctionExpr]*ast.FuncCallExpr {
	// Each chunk's facts are its own (memoised on the parser's chunk):
	// on a large prompt they are made on all cores first, and the finder
	// below, whose marks cross chunks, reads them by chunk index.
	cs := b.p.Chunks
	facts := make([]*chunkFacts, len(cs))
	fbs := make([]*factsBuilder, workers(len(cs)))
	forEach(len(cs), func(w, i int) {
		if d := b.paired(i); d != nil {
			facts[i] = b.prev.q.hfacts[d.idx]
			return
		}
		if fbs[w] == nil {
			fbs[w] = newFactsBuilder()
		}
		facts[i] = factsOf(cs[i], b.private, fbs[w])
	})
	b.p.hfacts = facts
	if pv := b.prev; pv != nil && pv.sameHandlers(b.p, facts) {
		pv.handlers = true
		b.p.handlerOf, b.p.marked = pv.q.handlerOf, make([]bool, len(cs))
		for i, j := range pv.from {
			b.p.marked[i] = j >= 0 && pv.q.marked[j]
		}
		return b.p.handlerOf
	}
	// Sized for the handler arguments (each marks at least its own
	// function), so that a prompt with hundreds of handlers does not
	// grow the map through every size on each build.
	roots := 0
	for _, f := range facts {
		roots += len(f.roots)
	}
	handlerOf := make(map[*ast.FunctionExpr]*ast.FuncCallExpr, roots)
	hf := &handlerFinder{handlerOf: handlerOf, chunkFacts: facts, marked: make([]bool, len(cs))}
	b.p.marked, b.p.handlerOf = hf.marked, handlerOf
	hf.find(b.p.H1.Chunks)
	for _, u := range b.p.Sections {
		hf.find(u.Chunks)
	}
	return handlerOf
}

// models walks (or reuses) every chunk's model. A chunk's model depends
// on the chunk alone (and handlerOf, read only here), so on a large
// prompt the chunks are walked on all cores, each worker with its own
// scratch.
func (b *builder) models(handlerOf map[*ast.FunctionExpr]*ast.FuncCallExpr) {
	cs := b.p.Chunks
	scs := make([]*scratch, workers(len(cs)))
	forEach(len(cs), func(w, i int) {
		c := cs[i]
		if len(c.AST) == 0 {
			return
		}
		if m := b.pairedModel(i, handlerOf); m != nil {
			c.model = m
			return
		}
		if scs[w] == nil {
			scs[w] = &scratch{globalOf: map[*ast.IdentExpr]*Global{}}
		}
		c.model = modelOf(c, b.pr.File, b.p.chunkBase(c), handlerOf, scs[w], b.private[c])
	})
}

// pairedModel returns the model of the chunk paired with chunk i when
// it fits chunk i (chunkModel.fits: the same tree and kind, which pair
// checked, its lines starting where they did, and the same handlers),
// or nil.
func (b *builder) pairedModel(i int, handlerOf map[*ast.FunctionExpr]*ast.FuncCallExpr) *chunkModel {
	d := b.paired(i)
	if d == nil || d.model == nil {
		return nil
	}
	m, c := d.model, b.p.Chunks[i]
	if !sameLines(m.lines, b.prev.q.Prompt.File, d.FirstLine, b.pr.File, c.FirstLine) {
		return nil
	}
	// The last build's handlers (which the model fits), or a function
	// of neither chunk marked: the model's handlers (those of the last
	// build) and this build's are all nil.
	if !b.prev.handlers && (b.p.marked[i] || b.prev.q.marked[d.idx]) {
		for k, fe := range m.fns {
			if handlerOf[fe] != m.handlers[k] {
				return nil
			}
		}
	}
	return m
}

// records lists every chunk's records, shared with its model (see Call).
func (b *builder) records() {
	p := b.p
	// A model serves one chunk per build: the chunks of a build have
	// distinct ASTs (private copies, see newChunk), and a model fits only
	// the chunk whose AST it was walked from.
	p.seq, p.chunkOf = builds.Add(1), &chunkIndex{}
	var q *Program
	var from []int32
	if b.prev != nil {
		q, from = b.prev.q, b.prev.from
	}
	// reused reports whether chunk i has the model, and so the records,
	// of its paired chunk.
	reused := func(i int) bool {
		return from != nil && from[i] >= 0 && q.Chunks[from[i]].model == p.Chunks[i].model
	}
	// With the last build's handlers, and every paired chunk's model,
	// the add_local calls are the last build's (sameHandlers: the
	// chunks between have none) and so is rootCall, which is read only.
	// When every chunk is paired, in order, with its model (an edit in
	// prose), so are the lists, which are read only too.
	shareRoots := b.prev != nil && b.prev.handlers
	whole := q != nil && len(p.Chunks) == len(q.Chunks)
	for i := 0; (shareRoots || whole) && i < len(p.Chunks); i++ {
		shareRoots = shareRoots && (from[i] < 0 || reused(i))
		whole = whole && from[i] == int32(i) && reused(i)
	}
	if whole {
		// With the last build's handlers its units were checked to hold
		// the paired chunks (sameHandlers), so their views are its too.
		b.sameUnits = b.prev.handlers
		p.Calls, p.Globals, p.Locals, p.VarGlobals = q.Calls, q.Globals, q.Locals, q.VarGlobals
		if len(q.CallsKeys) > 0 {
			p.CallsKeys = make([]CallsKey, 0, len(q.CallsKeys))
		}
		if len(q.Unreachable) > 0 {
			p.Unreachable = make([]Unreachable, 0, len(q.Unreachable))
		}
		p.rootCall = q.rootCall
		if !shareRoots {
			p.rootCall = make(map[*ast.FuncCallExpr]*Call, len(q.rootCall))
		}
		for i, c := range p.Chunks {
			d := q.Chunks[i]
			c.callsAt, c.nCalls = d.callsAt, d.nCalls
			c.globalsAt, c.nGlobals = d.globalsAt, d.nGlobals
			c.localsAt, c.nLocals = d.localsAt, d.nLocals
			if c.model != nil {
				b.chunkExtras(c, shareRoots, false)
			}
		}
		return
	}
	var nCalls, nGlobals, nVars, nLocals, nRoots, nKeys, nUnreachable int
	for _, c := range p.Chunks {
		if m := c.model; m != nil {
			nCalls += len(m.calls)
			nGlobals += len(m.globals)
			nVars += len(m.vars)
			nLocals += len(m.locals)
			nRoots += len(m.roots)
			nKeys += len(m.callsKeys)
			nUnreachable += len(m.unreachable)
		}
	}
	p.Calls, p.Globals, p.Locals = make([]*Call, 0, nCalls), make([]*Global, 0, nGlobals), make([]*Local, 0, nLocals)
	if nKeys > 0 {
		p.CallsKeys = make([]CallsKey, 0, nKeys)
	}
	if nVars > 0 {
		p.VarGlobals = make([]*Global, 0, nVars)
	}
	if nUnreachable > 0 {
		p.Unreachable = make([]Unreachable, 0, nUnreachable)
	}
	if shareRoots {
		p.rootCall = q.rootCall
	} else {
		p.rootCall = make(map[*ast.FuncCallExpr]*Call, nRoots)
	}
	for i := 0; i < len(p.Chunks); {
		c := p.Chunks[i]
		if !reused(i) {
			b.chunkRecords(c, shareRoots)
			i++
			continue
		}
		// A run of chunks paired with consecutive chunks of the last
		// build, with their models: their records are a run of its
		// lists (each chunk's, even one without a model, starts where the
		// one before it ended), copied at once.
		k := i + 1
		for k < len(p.Chunks) && reused(k) && from[k] == from[k-1]+1 {
			k++
		}
		qa, qz := q.Chunks[from[i]], q.Chunks[from[k-1]]
		calls, globals, locals := int32(len(p.Calls)), int32(len(p.Globals)), int32(len(p.Locals))
		p.Calls = append(p.Calls, q.Calls[qa.callsAt:qz.callsAt+qz.nCalls]...)
		p.Globals = append(p.Globals, q.Globals[qa.globalsAt:qz.globalsAt+qz.nGlobals]...)
		p.Locals = append(p.Locals, q.Locals[qa.localsAt:qz.localsAt+qz.nLocals]...)
		for ; i < k; i++ {
			c, d := p.Chunks[i], q.Chunks[from[i]]
			c.callsAt, c.nCalls = calls+d.callsAt-qa.callsAt, d.nCalls
			c.globalsAt, c.nGlobals = globals+d.globalsAt-qa.globalsAt, d.nGlobals
			c.localsAt, c.nLocals = locals+d.localsAt-qa.localsAt, d.nLocals
			if c.model != nil {
				b.chunkExtras(c, shareRoots, true)
			}
		}
	}
}

// chunkRecords appends chunk c's records to the program's lists (none
// without a model; its lists still start where the last chunk's ended).
func (b *builder) chunkRecords(c *Chunk, shareRoots bool) {
	p, m := b.p, c.model
	c.callsAt, c.globalsAt, c.localsAt = int32(len(p.Calls)), int32(len(p.Globals)), int32(len(p.Locals))
	if m == nil {
		return
	}
	for i := range m.calls {
		p.Calls = append(p.Calls, &m.calls[i])
	}
	for i := range m.globals {
		p.Globals = append(p.Globals, &m.globals[i])
	}
	for i := range m.locals {
		p.Locals = append(p.Locals, &m.locals[i])
	}
	c.nCalls, c.nGlobals, c.nLocals = int32(len(m.calls)), int32(len(m.globals)), int32(len(m.locals))
	b.chunkExtras(c, shareRoots, true)
}

// chunkExtras notes chunk c (which has a model) in its model's slot, and
// adds its add_local calls (unless rootCall is the last build's), var
// accesses (when vars: unless VarGlobals is the last build's), tools.calls
// keys and unreachable statements.
func (b *builder) chunkExtras(c *Chunk, shareRoots, vars bool) {
	p, m := b.p, c.model
	if c.idx < 1<<slotBits {
		m.slot.Store(p.seq<<slotBits | uint64(c.idx))
	}
	if !shareRoots {
		for _, i := range m.roots {
			p.rootCall[m.calls[i].Expr] = &m.calls[i]
		}
	}
	if vars {
		for _, i := range m.vars {
			p.VarGlobals = append(p.VarGlobals, &m.globals[i])
		}
	}
	for _, k := range m.callsKeys {
		p.CallsKeys = append(p.CallsKeys, CallsKey{Chunk: c, Key: k})
	}
	for _, u := range m.unreachable {
		u.Chunk = c
		p.Unreachable = append(p.Unreachable, u)
	}
}

// unitViews fills a unit's Calls and GlobalWrites. Chunks are in run
// order within a unit (shared first), and calls in source order within a
// chunk, so u.Calls is in run order. A unit whose writes come from one
// chunk shares that chunk's memoised set.
// callsRun reports whether the calls of u's chunks, in u's order, are
// p.Calls[lo:hi].
func callsRun(u *Unit) (lo, hi int32, ok bool) {
	lo, hi = -1, -1
	for _, c := range u.Chunks {
		if c.nCalls == 0 {
			continue
		}
		if lo < 0 {
			lo, hi = c.callsAt, c.callsAt
		}
		if c.callsAt != hi {
			return 0, 0, false
		}
		hi += c.nCalls
	}
	return lo, hi, true
}

func (b *builder) unitViews(u *Unit) {
	p := b.p
	n, writers := 0, 0
	for _, c := range u.Chunks {
		n += int(c.nCalls)
		if c.model != nil && len(c.model.writes) > 0 {
			writers++
			u.GlobalWrites = c.model.writeSet
		}
	}
	lo, hi, run := callsRun(u)
	switch {
	case n == 0:
	case run:
		u.Calls = p.Calls[lo:hi:hi]
	default:
		l := len(b.unitCalls)
		u.Calls = b.unitCalls[l : l : l+n]
		b.unitCalls = b.unitCalls[:l+n]
	}
	if writers > 1 {
		u.GlobalWrites = map[string]bool{}
	}
	for _, c := range u.Chunks {
		if !run {
			u.Calls = append(u.Calls, p.Calls[c.callsAt:c.callsAt+c.nCalls]...)
		}
		if writers > 1 && c.model != nil {
			for _, w := range c.model.writes {
				u.GlobalWrites[w] = true
			}
		}
	}
}
