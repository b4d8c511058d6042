package flow

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// varFlow is which `var` keys may be set where, in walk order
// (docs/language.md#var): the H1's writes seed the walk; a section entry
// sees what any section before it on some path may have written
// (fall-through, jumps, a child walk returning); an execute chain or a
// fanout arm starts from a copy of its caller's var, and its writes are
// dropped when it returns, so they never flow back to the caller.
//
// Sets over-approximate: a key counts as set when any write may run
// before, so a read is judged only when no write can precede it
// (precision first). A `var` use the analyzer cannot follow (a computed
// key, var passed as a whole) may write any key from its chunk on; a
// computed jump target may enter any section with the var of the code
// before it (walker.anyJumps), and past a bound turns the analysis off.
type varFlow struct {
	// keySets: the keys each chunk may write (anywhere in it, functions
	// included); the all bit is set by a use of var as a whole.
	keySets
	off bool
	// before holds, per section (place.n), the keys that may be set
	// when it is entered.
	before []bitset
	// own holds the keys each section may write, and preds the var
	// edges between sections (computed callers included), by place.n.
	own   []bitset
	preds [][]int32
	// first holds, per section, the keys that may be set when it is
	// entered for the first time (firstBefore), computed on first use
	// under mu; nil until then.
	mu    sync.Mutex
	first []bitset
	// succ inverts preds; back and fwd mark a search's sections with
	// its stamp; budget is what the searches may still spend.
	succ      [][]int32
	back, fwd []uint32
	stamp     uint32
	stack     []int32
	budget    int
}

type bitset []uint64

func (b bitset) has(i int) bool { return i >= 0 && i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

// or adds o to b, reporting whether b changed.
func (b bitset) or(o bitset) bool {
	changed := false
	for i := range o {
		if n := b[i] | o[i]; n != b[i] {
			b[i], changed = n, true
		}
	}
	return changed
}

// maxVarBits bounds the sets' total size (sections times keys).
const maxVarBits = 1 << 22

func (r *Result) varFlow() *varFlow {
	r.varsOnce.Do(func() { r.vars = r.computeVarFlow() })
	return r.vars
}

func (r *Result) computeVarFlow() *varFlow {
	vf := &varFlow{keySets: keySets{keys: map[string]int{}}}
	prog := r.Prog
	if r.anyJump && !r.anyJumpWalked || r.preds == nil {
		vf.off = true
		return vf
	}
	var writes []keyWrite
	var wholes []*program.Chunk
	// lines holds the section chunks' writes with their lines, for the
	// edges a control call makes (upTo).
	lines := map[*program.Chunk][]lineWrite{}
	for _, g := range prog.VarGlobals {
		rest, ok := strings.CutPrefix(g.Path, "var.")
		if !ok {
			continue // var as a whole: the chunk's facts say whether it may write (VarWhole)
		}
		if !g.FieldWrite && !g.Write {
			continue
		}
		key, _, _ := strings.Cut(rest, ".")
		c := prog.ChunkOf(g)
		writes = append(writes, keyWrite{c, vf.id(key)})
		if c.Kind == program.SectionChunk && (r.predVia != nil || r.anyVia != nil) {
			line := g.Expr.Line()
			if g.InFunc {
				line = 0 // a function may run before the call, whenever it is defined
			}
			lines[c] = append(lines[c], lineWrite{line, vf.id(key)})
		}
	}
	for _, c := range prog.Chunks {
		if len(c.AST) > 0 && prog.Facts(c).VarWhole {
			wholes = append(wholes, c)
		}
	}
	if vf.words()*64*(r.places.len()+1) > maxVarBits {
		vf.all = len(vf.keys)
		vf.off = true
		return vf
	}
	vf.fill(prog, writes, wholes)
	newSet := vf.newSet
	// out[n] is what section n may leave: what it saw plus its writes.
	n := r.places.len()
	units := make([]*program.Unit, n)
	for _, u := range prog.Sections {
		if p, ok := r.places.of(u.Section); ok {
			units[p.n] = u
		}
	}
	own := make([]bitset, n)
	for i, u := range units {
		own[i] = newSet()
		if u == nil {
			continue
		}
		for _, c := range u.Chunks {
			if b := vf.of(c); b != nil {
				own[i].or(b)
			}
		}
	}
	vf.before = make([]bitset, n)
	for i := range vf.before {
		vf.before[i] = newSet()
		vf.before[i].or(vf.h1)
	}
	preds := r.preds
	if len(r.anyCallers) > 0 {
		preds = make([][]int32, n)
		for i := range preds {
			preds[i] = append(append([]int32(nil), r.preds[i]...), r.anyCallers...)
		}
	}
	vf.own, vf.preds = own, preds
	// from[i][j] is what pred j of section i may have written when it
	// makes the edge: own[p], or only the code before the control call
	// that makes it.
	from := make([][]bitset, n)
	for i := range r.predVia {
		for j, c := range r.predVia[i] {
			if c == nil || preds[i][j] < 0 {
				continue
			}
			if from[i] == nil {
				from[i] = make([]bitset, len(preds[i]))
			}
			from[i][j] = vf.upTo(prog, units[preds[i][j]], c, lines)
		}
	}
	// The computed callers' edges follow each section's own preds.
	var anyFrom []bitset
	for j, c := range r.anyVia {
		if c != nil {
			if anyFrom == nil {
				anyFrom = make([]bitset, len(r.anyVia))
			}
			anyFrom[j] = vf.upTo(prog, units[r.anyCallers[j]], c, lines)
		}
	}
	if anyFrom != nil {
		for i := range from {
			if from[i] == nil {
				from[i] = make([]bitset, len(preds[i]))
			}
			copy(from[i][len(r.preds[i]):], anyFrom)
		}
	}
	// Iterate to the fixed point; each round adds keys, so it ends.
	for changed := true; changed; {
		changed = false
		for i := 0; i < n; i++ {
			for j, p := range preds[i] {
				if p < 0 {
					continue
				}
				if vf.before[i].or(vf.before[p]) {
					changed = true
				}
				o := own[p]
				if from[i] != nil && j < len(from[i]) && from[i][j] != nil {
					o = from[i][j]
				}
				if vf.before[i].or(o) {
					changed = true
				}
			}
		}
	}
	return vf
}

// lineWrite is a var key a chunk writes at a line of its code.
type lineWrite struct{ line, key int }

// upTo returns the keys unit u's code may have written when control
// call c of its chunk runs (docs/language.md#var): a jump leaves the
// section at the call, and an execute chain or a fanout arm starts from
// a copy of var made there. That is the shared library, the blocks
// before c's, and c's chunk up to the top-level statement holding c: a
// statement that starts after it runs only once c has run (a chunk with
// goto is taken whole, as is a write whose line the statement before
// may still reach, and a write in a function, which may run whenever
// the function is called).
func (vf *varFlow) upTo(prog *program.Program, u *program.Unit, c *program.Call, lines map[*program.Chunk][]lineWrite) bitset {
	out := vf.newSet()
	if u == nil {
		return out
	}
	at := prog.ChunkOf(c)
	for _, ch := range u.Chunks {
		if b := vf.of(ch); b != nil && (ch.Kind == program.SharedChunk || ch.Block < at.Block) {
			out.or(b)
		}
	}
	b := vf.of(at)
	if b == nil {
		return out
	}
	if strings.Contains(at.Source, "goto") {
		out.or(b)
		return out
	}
	// after is the first line of the statements that start after the
	// call's line, reached only once the statement holding it is done.
	line, after, end := c.Expr.Line(), -1, 0
	for _, st := range at.AST {
		if st.Line() > line {
			after = st.Line()
			break
		}
		end = max(end, st.Line(), st.LastLine())
	}
	// The all bit (var used as a whole) is kept: it has no line.
	if b.has(vf.all) {
		out[vf.all/64] |= 1 << (vf.all % 64)
	}
	for _, w := range lines[at] {
		if after < 0 || w.line < after || w.line <= end {
			out[w.key/64] |= 1 << (w.key % 64)
		}
	}
	return out
}

// firstBefore returns the keys that may be set when section n is
// entered for the first time. That entry's var comes from the H1 and
// the sections on a path of var edges from the start to n that does not
// pass n (sections that run before n's first entry): those both
// reachable from the start without passing n and reaching n. When n is
// on no cycle of var edges, every path avoids it and the set is
// before[n]; on a jump cycle it leaves out the writes that only come
// back around the cycle. Each section costs a search of the graph, so
// the searches share a budget linear in the graph's size; past it the
// answer is before[n] (never a finding the budget made up).
func (vf *varFlow) firstBefore(n int) bitset {
	vf.mu.Lock()
	defer vf.mu.Unlock()
	if vf.first == nil {
		vf.first = make([]bitset, len(vf.before))
		vf.succ = make([][]int32, len(vf.preds))
		edges := 0
		for i, ps := range vf.preds {
			for _, p := range ps {
				if p >= 0 {
					vf.succ[p] = append(vf.succ[p], int32(i))
				}
			}
			edges += len(ps)
		}
		vf.budget = firstBudget * (edges + len(vf.preds))
		vf.back, vf.fwd = make([]uint32, len(vf.preds)), make([]uint32, len(vf.preds))
	}
	if b := vf.first[n]; b != nil {
		return b
	}
	if vf.budget <= 0 {
		return vf.before[n]
	}
	vf.stamp++
	mark := vf.stamp
	// back: the sections that reach n without passing n.
	cyclic := false
	stack := append(vf.stack[:0], int32(n))
	for len(stack) > 0 {
		q := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		vf.budget -= 1 + len(vf.preds[q])
		for _, p := range vf.preds[q] {
			switch {
			case p < 0:
			case int(p) == n:
				cyclic = true
			case vf.back[p] != mark:
				vf.back[p] = mark
				stack = append(stack, p)
			}
		}
	}
	if !cyclic {
		vf.stack = stack
		vf.first[n] = vf.before[n]
		return vf.first[n]
	}
	// fwd: the sections reachable from the start without passing n.
	for i, ps := range vf.preds {
		if i != n && slices.Contains(ps, -1) {
			vf.fwd[i] = mark
			stack = append(stack, int32(i))
		}
	}
	vf.budget -= len(vf.preds)
	for len(stack) > 0 {
		q := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		vf.budget -= 1 + len(vf.succ[q])
		for _, x := range vf.succ[q] {
			if int(x) != n && vf.fwd[x] != mark {
				vf.fwd[x] = mark
				stack = append(stack, x)
			}
		}
	}
	vf.stack = stack
	out := make(bitset, len(vf.h1))
	out.or(vf.h1)
	for q := range vf.back {
		if vf.back[q] == mark && vf.fwd[q] == mark {
			out.or(vf.own[q])
		}
	}
	vf.first[n] = out
	return out
}

// firstBudget bounds firstBefore's searches: this many times the var
// graph's size in all.
const firstBudget = 16

// VarMaySet reports whether var.key may be set when the given block of
// section s starts (s nil: the H1's block), counting the walk before the
// section and the unit's chunks before the block (the shared library
// first). It is true when the analysis cannot tell.
func (r *Result) VarMaySet(s *parse.Section, block int, key string) bool {
	return r.varMaySet(s, block, key, false)
}

// VarSetFirst is VarMaySet on the section's first entry: a read there
// of a key no code before that entry may set fails the first time the
// section runs, even when a jump cycle through the section sets it for
// later entries (docs/language.md#var). It is true when the analysis
// cannot tell.
func (r *Result) VarSetFirst(s *parse.Section, block int, key string) bool {
	return r.varMaySet(s, block, key, true)
}

func (r *Result) varMaySet(s *parse.Section, block int, key string, first bool) bool {
	vf := r.varFlow()
	if vf.off {
		return true
	}
	k, ok := vf.keys[key]
	if !ok {
		k = -1
	}
	if s == nil {
		for _, c := range r.Prog.H1.Chunks {
			if c.Block < block && vf.may(vf.of(c), k) {
				return true
			}
		}
		return false
	}
	p, ok := r.places.of(s)
	u := p.unit
	if !ok || u == nil || vf.may(vf.before[p.n], k) && !first {
		return true
	}
	for _, c := range u.Chunks {
		if (c.Kind == program.SharedChunk || c.Block < block) && vf.may(vf.of(c), k) {
			return true
		}
	}
	return vf.may(vf.before[p.n], k) && vf.may(vf.firstBefore(p.n), k)
}

// VarMaySetIn reports whether var.key may be set while chunk c runs:
// VarMaySet at its block, or a write in c itself.
func (r *Result) VarMaySetIn(c *program.Chunk, key string) bool {
	vf := r.varFlow()
	if vf.off {
		return true
	}
	k, ok := vf.keys[key]
	if !ok {
		k = -1
	}
	if vf.may(vf.of(c), k) {
		return true
	}
	switch c.Kind {
	case program.SharedChunk:
		return true
	case program.H1Chunk:
		return r.VarMaySet(nil, c.Block, key)
	}
	return r.VarMaySet(c.Section, c.Block, key)
}

// VarAlone reports whether var.key may be set when section s runs alone
// (`run --section`, a test case's `section:`): it starts from the H1's
// var only (docs/language.md#var).
func (r *Result) VarAlone(key string) bool {
	vf := r.varFlow()
	if vf.off {
		return true
	}
	k, ok := vf.keys[key]
	if !ok {
		k = -1
	}
	return vf.may(vf.h1, k)
}

// AloneUnset returns the var keys section s reads (in Lua where a nil
// value fails, or as {{ var.k }} in its prose) that the walk before it
// may set but the H1 does not: run alone (`run --section`, a test case's
// `section:`, the Run section lens) it starts from the H1's var only
// (docs/language.md#var), so the read fails there. The keys are sorted,
// each once.
func (r *Result) AloneUnset(s *parse.Section) []string {
	vf := r.varFlow()
	u := r.Prog.UnitOf[s]
	if vf.off || u == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	// aloneSet reports whether key may be set at block i when s runs
	// alone: by the H1, or by the unit's chunks before the block.
	aloneSet := func(key string, block int, own *program.Chunk) bool {
		k, ok := vf.keys[key]
		if !ok {
			k = -1
		}
		if vf.may(vf.h1, k) {
			return true
		}
		for _, c := range u.Chunks {
			if c != own && (c.Kind == program.SharedChunk || c.Block < block) && vf.may(vf.of(c), k) {
				return true
			}
		}
		return false
	}
	add := func(key string) {
		if !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	for _, c := range u.Chunks {
		if c.Kind != program.SectionChunk || len(c.AST) == 0 {
			continue
		}
		for _, rd := range r.Prog.Facts(c).VarReads {
			if !rd.InFunc && !rd.Cond && !rd.Written && !rd.MayBefore && !aloneSet(rd.Key, c.Block, c) && r.VarMaySet(s, c.Block, rd.Key) {
				add(rd.Key)
			}
		}
	}
	for i, b := range s.Blocks {
		if b.Kind != parse.ProseBlock || b.Prose == nil {
			continue
		}
		t, err := b.Prose.Template()
		if err != nil || t == nil {
			continue
		}
		for _, n := range t.Nodes {
			if n.Kind != template.Placeholder || len(n.Segments) < 2 || n.Segments[0].Name != "var" {
				continue
			}
			key := n.Segments[1].Name
			if !aloneSet(key, i, nil) && r.VarMaySet(s, i, key) {
				add(key)
			}
		}
	}
	sort.Strings(out)
	return out
}
