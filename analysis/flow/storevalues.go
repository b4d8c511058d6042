package flow

import (
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// storeValues are the known store contents when each section is
// entered, in walk order (docs/architecture.md#the-evaluator), and the
// facts of the chunks evaluated from them.
//
// The store is one per run (docs/language.md#store): what a section, a
// chain or an arm writes stays. A path written with known text holds it
// until something that may change it runs (a write of an unknown path,
// an execute chain, a fanout, a call the evaluator does not follow,
// which the evaluator marks by forgetting it). Along each edge of the
// walk a section hands on what its chunks leave where control may leave
// them (value.Facts.StoreOut); a section entered several ways starts
// from the join of what each way brings; a chain starts from the store
// at its execute call, and what it writes flows back as unknown (the
// caller forgets the store at the call). The arms of a fanout run at
// the same time and share the store, so a section an arm may run starts
// knowing nothing. The H1's contents seed the walk.
//
// The contents are carried only where no code can change the store
// while prose runs: the prompt declares no local tool (whose handler
// would run then) or no function of the prompt writes the store, runs a
// chain or an arm; and only when the shared library, which runs at the
// start of every VM, changes no store path.
type storeValues struct {
	facts map[*program.Chunk]*value.Facts
}

func (r *Result) storeValues() *storeValues {
	r.storeOnce.Do(func() { r.store = r.computeStoreValues() })
	return r.store
}

// storeReads are the store functions whose result or failure depends on
// a file's contents.
func storeReads(name string) bool {
	switch name {
	case "store.read", "store.read_numbered", "store.str_replace":
		return true
	}
	return false
}

// storeChanges are the calls that may change the store's files.
func storeChanges(name string) bool {
	switch name {
	case "store.write", "store.append", "store.str_replace", "store.delete", "execute", "fanout":
		return true
	}
	return false
}

func (r *Result) computeStoreValues() *storeValues {
	if !r.storeWrites {
		return nil // no path is written with known text (writesKnown below)
	}
	prog := r.Prog
	// The paths whose contents matter: read by a section with a known
	// path, and written somewhere with known text.
	ids := map[string]int{}
	var keys []string
	localTools := false
	funcWrites := false
	writesKnown := map[string]bool{}
	storeUnit := map[*parse.Section]bool{}
	for _, c := range prog.Calls {
		name := c.Canonical()
		if name == "tools.add_local" {
			localTools = true
		}
		changes := storeChanges(name)
		if !changes && !storeReads(name) {
			continue
		}
		ch := prog.ChunkOf(c) // only for store calls: this loop sees every call
		if changes {
			if ch.Kind == program.SharedChunk && !c.InFunc {
				return nil // runs again at the start of every VM
			}
			if c.InFunc {
				funcWrites = true
			}
		}
		if ch.Kind == program.SectionChunk {
			storeUnit[ch.Section] = true
		}
		if name != "store.write" && name != "store.append" && !storeReads(name) {
			continue
		}
		f := prog.Facts(ch)
		p, ok := f.Arg(c.Expr, 0).StrConst()
		if !ok {
			continue
		}
		if name == "store.write" || name == "store.append" {
			if _, ok := f.Arg(c.Expr, 1).StrConst(); ok {
				writesKnown[p] = true
			}
			continue
		}
		if ch.Kind == program.SectionChunk {
			if _, seen := ids[p]; !seen {
				ids[p] = len(keys)
				keys = append(keys, p)
			}
		}
	}
	if localTools && funcWrites {
		return nil
	}
	used := keys[:0]
	for _, k := range keys {
		if writesKnown[k] {
			used = append(used, k)
		}
	}
	keys = used
	if len(keys) == 0 {
		return nil
	}
	vf := r.varFlow()
	if vf.off || len(r.anyCallers) > 0 {
		return nil
	}
	n := r.places.len()
	units := make([]*program.Unit, n)
	for _, u := range prog.Sections {
		if p, ok := r.places.of(u.Section); ok {
			units[p.n] = u
		}
	}
	// The sections an arm may run: the workers and what follows them.
	succ := make([][]int32, n)
	for i, ps := range r.preds {
		for _, p := range ps {
			if p >= 0 {
				succ[p] = append(succ[p], int32(i))
			}
		}
	}
	inArm := make([]bool, n)
	var stack []int32
	for i := range r.targets.span {
		for _, t := range r.targets.of(i) {
			if t.kind == "fanout" && t.sec != nil {
				stack = append(stack, int32(r.places.at(t.sec).n))
			}
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if inArm[i] {
			continue
		}
		inArm[i] = true
		stack = append(stack, succ[i]...)
	}
	sv := &storeValues{facts: map[*program.Chunk]*value.Facts{}}
	budget := value.NewBudget()
	top := func() []value.Value {
		o := make([]value.Value, len(keys))
		for k := range o {
			o[k] = value.Top
		}
		return o
	}
	// outOf joins what the chunks of a unit hand on: where control
	// leaves them (at is StoreOut), or where a chain or an arm starts
	// (StoreAtCalls).
	outOf := func(fs []*value.Facts, at func(*value.Facts) ([]value.VarVal, bool)) []value.Value {
		o := top()
		for j, f := range fs {
			vals, ok := at(f)
			for k, key := range keys {
				v := value.Top
				if ok {
					for _, x := range vals {
						if x.Key == key {
							v = x.V
							break
						}
					}
				}
				if j == 0 {
					o[k] = v
				} else {
					o[k] = value.Join(o[k], v)
				}
			}
		}
		return o
	}
	// The seed: the H1 evaluated with its store contents kept from
	// chunk to chunk.
	seed := top()
	if prog.H1 != nil {
		e := (*value.Env)(nil).WithStoreValues(nil)
		var last *value.Facts
		for _, c := range prog.H1.Chunks {
			if c.Kind == program.SharedChunk || len(c.AST) == 0 {
				continue
			}
			f := value.OfInBudget(c.Chunk, e, budget)
			sv.facts[c] = f
			e, last = f.Exit, f
		}
		if last != nil {
			for k, key := range keys {
				if v, ok := e.Get("store:" + key); ok && e != nil {
					seed[k] = v
				}
			}
		}
	}
	vv := r.varValues()
	base := prog.SectionBase()
	in := make([][]value.Value, n)
	out := make([][]value.Value, n)
	outCall := make([][]value.Value, n)
	// evaluate runs section i's chunks from the entry its in-values
	// make, and returns what it hands on along the walk and to the
	// chains and arms it starts.
	evaluate := func(i int) ([]value.Value, []value.Value) {
		u := units[i]
		if u == nil {
			return append([]value.Value(nil), in[i]...), top()
		}
		var lua []*program.Chunk
		for _, c := range u.Chunks {
			if c.Kind != program.SharedChunk && len(c.AST) > 0 {
				lua = append(lua, c)
			}
		}
		if len(lua) == 0 {
			return append([]value.Value(nil), in[i]...), top() // prose only
		}
		var set []value.VarVal
		for k, v := range in[i] {
			if !v.IsTop() && !inArm[i] {
				set = append(set, value.VarVal{Key: keys[k], V: v})
			}
		}
		if inArm[i] || len(set) == 0 && !storeUnit[u.Section] {
			for _, c := range lua {
				delete(sv.facts, c)
			}
			return top(), top()
		}
		e := base
		if vv != nil {
			if x, ok := vv.entry[u.Section]; ok {
				e = x
			}
		}
		e = e.WithStoreValues(set)
		fs := make([]*value.Facts, 0, len(lua))
		for _, c := range lua {
			f := value.OfInBudget(c.Chunk, e, budget)
			sv.facts[c] = f
			fs = append(fs, f)
			e = f.Exit
		}
		return outOf(fs, (*value.Facts).StoreOut), outOf(fs, (*value.Facts).StoreAtCalls)
	}
	sources := func(i int, yield func([]value.Value)) {
		for j, p := range r.preds[i] {
			switch {
			case p < 0:
				yield(seed)
			case r.predChain != nil && j < len(r.predChain[i]) && r.predChain[i][j]:
				yield(outCall[p])
			default:
				yield(out[p])
			}
		}
	}
	update := func(i int) bool {
		o, oc := evaluate(i)
		changed := out[i] == nil || !sameVals(out[i], o) || !sameVals(outCall[i], oc)
		out[i], outCall[i] = o, oc
		return changed
	}
	if !fixpoint(in, sources, func(i int) bool { return out[i] != nil }, update) {
		return nil
	}
	return sv
}
