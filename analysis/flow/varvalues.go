package flow

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// varValues are the values `var` holds when each section is entered,
// in walk order (docs/language.md#var), and each section chunk's facts
// evaluated from them (docs/architecture.md#the-evaluator).
//
// The H1's var seeds the walk: a key the H1 may write holds what the
// H1 leaves in it, any other key is nil. Along each var edge of the walk
// (fall-through, a jump, a child walk returning, an execute chain or a
// fanout arm starting from a copy of its caller's var) a section hands
// on what its chunks leave where control may leave them (value.Facts
// VarOut); a section entered several ways starts from the join of what
// each way brings. A key a section does not write passes through it
// unchanged; a section that may write var as a whole makes every key
// unknown; a loop of edges is followed to a fixed point, and a key that
// still changes after a few rounds is unknown.
type varValues struct {
	// entry is the environment each section's first chunk starts from
	// (absent: the program's, when the walk knows nothing more).
	entry map[*parse.Section]*value.Env
	facts map[*program.Chunk]*value.Facts
}

// maxVarRounds bounds the rounds of the fixed point; from widenRound on
// a key whose entry value still changes becomes unknown.
const (
	maxVarRounds = 8
	widenRound   = 3
)

// Facts returns chunk c's facts evaluated in its VM with the var values
// the walk brings to its section (see varValues); the program's facts
// when the walk adds nothing. The passes ask it for every chunk, several
// each: the answers are made for all chunks on the first call and kept
// by chunk index.
func (r *Result) Facts(c *program.Chunk) *value.Facts {
	r.factsAtOnce.Do(func() {
		r.factsAt = make([]*value.Facts, len(r.Prog.Chunks))
		for i, c := range r.Prog.Chunks {
			r.factsAt[i] = r.walkFacts(c)
		}
	})
	if c != nil {
		if i := c.Index(); i < len(r.factsAt) && r.Prog.Chunks[i] == c {
			return r.factsAt[i]
		}
	}
	return r.walkFacts(c) // not a chunk of r.Prog
}

// walkFacts is Facts without the kept answers.
func (r *Result) walkFacts(c *program.Chunk) *value.Facts {
	if sv := r.storeValues(); sv != nil {
		if f, ok := sv.facts[c]; ok {
			return f
		}
	}
	return r.varFacts(c)
}

// varFacts is Facts without the store contents the walk brings.
func (r *Result) varFacts(c *program.Chunk) *value.Facts {
	if vv := r.varValues(); vv != nil {
		if f, ok := vv.facts[c]; ok {
			return f
		}
	}
	return r.Prog.Facts(c)
}

// Entry returns the environment parsed chunk c starts from in its VM,
// with the var values the walk brings (see Facts), or nil when nothing
// is known.
func (r *Result) Entry(c *parse.Chunk) *value.Env {
	if vv := r.varValues(); vv != nil {
		if ch := r.chunkOf(c); ch != nil && ch.Kind == program.SectionChunk {
			if e, ok := vv.entry[ch.Section]; ok {
				u := r.Prog.UnitOf[ch.Section]
				for _, x := range u.Chunks {
					if x.Kind == program.SharedChunk || len(x.AST) == 0 {
						continue
					}
					if x.Chunk == c {
						return e
					}
					e = r.Facts(x).Exit
				}
			}
		}
	}
	return r.Prog.Entry(c)
}

func (r *Result) chunkOf(c *parse.Chunk) *program.Chunk {
	for _, ch := range r.Prog.Chunks {
		if ch.Chunk == c {
			return ch
		}
	}
	return nil
}

func (r *Result) varValues() *varValues {
	r.valsOnce.Do(func() { r.vals = r.computeVarValues() })
	return r.vals
}

// unitVars is what one section's code does with var: the keys it
// reads, whether it uses var as a whole (then every
// key matters), and the keys it may write (all: any key).
type unitVars struct {
	names  []int
	whole  bool
	writes []bool
	all    bool
}

func (r *Result) computeVarValues() *varValues {
	prog := r.Prog
	if prog.Shared != nil && len(prog.Shared.AST) > 0 && prog.Facts(prog.Shared).VarWhole {
		return nil
	}
	// No Lua reads a var key (nor var as a whole): nothing to follow,
	// and no key need be numbered.
	if !luaReadsVar(prog) {
		return nil
	}
	// Number every key the prompt names.
	ids := map[string]int{}
	var keys []string
	id := func(k string) int {
		i, ok := ids[k]
		if !ok {
			i = len(keys)
			ids[k] = i
			keys = append(keys, k)
		}
		return i
	}
	names := map[*program.Chunk][]int{}
	whole := map[*program.Chunk]bool{}
	sharedWrites := map[int]bool{}
	for _, g := range prog.VarGlobals {
		ch := prog.ChunkOf(g)
		rest, ok := strings.CutPrefix(g.Path, "var.")
		if !ok {
			whole[ch] = true
			continue
		}
		k, _, deeper := strings.Cut(rest, ".")
		i := id(k)
		if deeper || !g.Write && !g.FieldWrite {
			// A read of the key (var.k.f = v reads var.k): the key's
			// entry value matters. A key the unit only assigns starts
			// unknown, which spares evaluating the unit again; what it
			// hands on is what it assigned.
			names[ch] = append(names[ch], i)
		}
		if ch.Kind == program.SharedChunk && (g.Write || g.FieldWrite) {
			sharedWrites[i] = true
		}
	}
	if len(keys) == 0 {
		return nil
	}
	// No Lua reads a var key (nor var as a whole): nothing to follow,
	// and the key sets of the walk need not be built.
	reads := len(whole) > 0
	for _, ks := range names {
		reads = reads || len(ks) > 0
	}
	if !reads {
		return nil
	}
	vf := r.varFlow()
	if vf.off {
		return nil
	}
	n := r.places.len()
	units := make([]*program.Unit, n)
	for _, u := range prog.Sections {
		if p, ok := r.places.of(u.Section); ok {
			units[p.n] = u
		}
	}
	uv := make([]unitVars, n)
	for i, u := range units {
		if u == nil {
			continue
		}
		x := &uv[i]
		x.writes = make([]bool, len(keys))
		seen := map[int]bool{}
		for _, c := range u.Chunks {
			if whole[c] {
				x.whole = true
			}
			for _, k := range names[c] {
				if !seen[k] {
					seen[k] = true
					x.names = append(x.names, k)
				}
			}
			if b := vf.of(c); b != nil {
				if b.has(vf.all) {
					x.all = true
				}
				for k, j := range vf.keys {
					if b.has(j) {
						if i, ok := ids[k]; ok {
							x.writes[i] = true
						}
					}
				}
			}
		}
		for k := range sharedWrites {
			x.writes[k] = true
		}
		if x.whole {
			x.names = x.names[:0]
			for k := range keys {
				x.names = append(x.names, k)
			}
		}
	}
	// Only the keys some section reads matter: a key no Lua reads (only
	// {{ var.k }} in prose, say) is left out of the values.
	if keys, uv, sharedWrites = usedKeys(keys, uv, sharedWrites); len(keys) == 0 {
		return nil
	}
	// The seed: what the H1 leaves.
	seed := make([]value.Value, len(keys))
	h1 := prog.H1Exit()
	for i, k := range keys {
		j, named := vf.keys[k]
		if !vf.h1.has(vf.all) && (!named || !vf.h1.has(j)) {
			seed[i] = value.NilValue
			continue
		}
		seed[i] = value.Top
		if v, ok := h1.Get("var." + k); ok && h1 != nil {
			seed[i] = v
		}
	}
	base := prog.SectionBase()
	vv := &varValues{entry: map[*parse.Section]*value.Env{}, facts: map[*program.Chunk]*value.Facts{}}
	// The sections evaluated again spend from a work budget of their
	// own (value.MaxPromptWork), as the program's evaluation does.
	budget := value.NewBudget()
	in := make([][]value.Value, n)
	out := make([][]value.Value, n)
	// evaluate runs section i's chunks from the entry its in-values
	// make, and returns what it hands on.
	evaluate := func(i int) []value.Value {
		u := units[i]
		x := &uv[i]
		o := append([]value.Value(nil), in[i]...)
		if u == nil {
			return o
		}
		var set []value.VarVal
		var drop []string
		for _, k := range x.names {
			if sharedWrites[k] {
				continue
			}
			if v := in[i][k]; v.IsTop() {
				drop = append(drop, keys[k])
			} else {
				set = append(set, value.VarVal{Key: keys[k], V: v})
			}
		}
		entry := base.WithVarValues(set, drop)
		if entry == base {
			delete(vv.entry, u.Section)
		} else {
			vv.entry[u.Section] = entry
		}
		e := entry
		first := true
		// cur is each key's value when the next chunk starts.
		cur := append([]value.Value(nil), in[i]...)
		var escaped []int
		for _, c := range u.Chunks {
			if c.Kind == program.SharedChunk || len(c.AST) == 0 {
				continue
			}
			var f *value.Facts
			if entry == base {
				// What the program evaluated: no other var values.
				f = prog.Facts(c)
				delete(vv.facts, c)
			} else {
				f = value.OfInBudget(c.Chunk, e, budget)
				vv.facts[c] = f
			}
			vals, ok := f.VarOut()
			for k, w := range x.writes {
				if !w {
					// A key the section never assigns may still change:
					// its table read into a local is a proxy that code
					// may write through (value.Facts.VarEscaped).
					if f.VarEscaped(keys[k]) {
						escaped = append(escaped, k)
					}
					continue
				}
				// at is the key's value when the chunk starts.
				at, known := e.Get("var." + keys[k])
				if !known {
					at = cur[k]
				}
				v, after := value.Top, value.Top
				switch {
				case !ok || sharedWrites[k]:
				case !f.VarTouched(keys[k]):
					v, after = at, at
				default:
					for _, vl := range vals {
						if vl.Key == keys[k] {
							v = vl.V
							break
						}
					}
					if x, ok := f.Exit.Get("var." + keys[k]); ok {
						after = x
					}
				}
				cur[k] = after
				if first {
					o[k] = v
				} else {
					o[k] = value.Join(o[k], v)
				}
			}
			e = f.Exit
			first = false
		}
		for _, k := range escaped {
			o[k] = value.Top
		}
		if x.all {
			// var as a whole may change: nothing is known after.
			for k := range o {
				o[k] = value.Top
			}
			return o
		}
		if first {
			// No Lua ran: the section writes nothing.
			for k, w := range x.writes {
				if w {
					o[k] = in[i][k]
				}
			}
		}
		return o
	}
	sources := func(i int, yield func([]value.Value)) {
		for _, p := range vf.preds[i] {
			if p < 0 {
				yield(seed)
			} else {
				yield(out[p])
			}
		}
	}
	update := func(i int) bool {
		o := evaluate(i)
		changed := out[i] == nil || !sameVals(out[i], o)
		out[i] = o
		return changed
	}
	if !fixpoint(in, sources, func(i int) bool { return out[i] != nil }, update) {
		return nil // no fixed point within the bound: nothing known
	}
	return vv
}

// luaReadsVar reports whether some Lua code reads a var key (var.k.f = v
// reads var.k) or uses var as a whole.
func luaReadsVar(prog *program.Program) bool {
	for _, g := range prog.VarGlobals {
		rest, ok := strings.CutPrefix(g.Path, "var.")
		if !ok {
			return true
		}
		if _, _, deeper := strings.Cut(rest, "."); deeper || !g.Write && !g.FieldWrite {
			return true
		}
	}
	return false
}

// fixpoint runs a forward analysis over the walk's places to its fixed
// point, visiting them in order each round: in[i], place i's entry
// values, is the join of what sources(i) yields (its predecessors'
// outputs; nil for one not reached yet), and update(i) evaluates place
// i from in[i] and reports whether its outputs changed. A place whose
// entry is unchanged is evaluated only if it has no outputs yet
// (evaluated). From widenRound on, an entry value that still changes
// widens to top. It reports false when no fixed point is reached within
// maxVarRounds rounds. The var and store value flows share it.
func fixpoint(in [][]value.Value, sources func(i int, yield func([]value.Value)), evaluated func(i int) bool, update func(i int) bool) bool {
	for round := 0; round < maxVarRounds; round++ {
		changed := false
		for i := range in {
			var next []value.Value
			sources(i, func(from []value.Value) {
				switch {
				case from == nil:
				case next == nil:
					next = append([]value.Value(nil), from...)
				default:
					for k := range next {
						next[k] = value.Join(next[k], from[k])
					}
				}
			})
			if next == nil {
				continue
			}
			if in[i] != nil && sameVals(in[i], next) {
				if !evaluated(i) {
					update(i)
				}
				continue
			}
			if in[i] != nil && round >= widenRound {
				for k := range next {
					if !value.Equal(next[k], in[i][k]) {
						next[k] = value.Top
					}
				}
			}
			in[i] = next
			if update(i) {
				changed = true
			}
		}
		if !changed {
			return true
		}
	}
	return false
}

func sameVals(a, b []value.Value) bool {
	for i := range a {
		if !value.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// usedKeys keeps the keys that some unit reads (every key when one
// reads var as a whole), renumbering them in the units' sets.
func usedKeys(keys []string, uv []unitVars, shared map[int]bool) ([]string, []unitVars, map[int]bool) {
	used := make([]bool, len(keys))
	for i := range uv {
		for _, k := range uv[i].names {
			used[k] = true
		}
	}
	renum := make([]int, len(keys))
	var out []string
	for k, u := range used {
		renum[k] = -1
		if u {
			renum[k] = len(out)
			out = append(out, keys[k])
		}
	}
	if len(out) == len(keys) {
		return keys, uv, shared
	}
	for i := range uv {
		x := &uv[i]
		names := x.names[:0]
		for _, k := range x.names {
			names = append(names, renum[k])
		}
		x.names = names
		if x.writes != nil {
			w := make([]bool, len(out))
			for k, on := range x.writes {
				if on && renum[k] >= 0 {
					w[renum[k]] = true
				}
			}
			x.writes = w
		}
	}
	sh := map[int]bool{}
	for k := range shared {
		if renum[k] >= 0 {
			sh[renum[k]] = true
		}
	}
	return out, uv, sh
}
