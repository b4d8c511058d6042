// The abstract global environment a chunk starts from: what the shared
// library, and the chunks that ran before in the same VM, leave behind.

package value

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// Env is an abstract global environment: the known globals (constants,
// table shapes, closures with their upvalues frozen) and var keys a
// chunk starts from, and the names that functions of the environment
// may change when they run. A nil *Env knows nothing (the H1's first
// chunk, or a chunk whose VM is not known). Envs are immutable, so a
// chunk's facts are memoised on the pointer of their entry Env.
type Env struct {
	globals  kv
	volatile map[string]bool
	// built holds the environments built on this one, made on first
	// use: most environments (a chunk's exit, kept with its facts by
	// every open document) never have one, and a collection marks what
	// they keep.
	built atomic.Pointer[envBuilt]
	// stableStore: see interp.stableStore.
	stableStore bool
}

// envBuilt memoises the environments built on an Env, so that the same
// inputs give the same pointer (and the chunks' memos hit).
type envBuilt struct {
	// without memoises Without, withVars WithVars (on its from).
	without  sync.Map
	withVars sync.Map
	// internState interns the environments WithVarValues and
	// WithStoreValues build.
	internState
}

// builtOn returns env's memo of the environments built on it.
func (env *Env) builtOn() *envBuilt {
	if b := env.built.Load(); b != nil {
		return b
	}
	env.built.CompareAndSwap(nil, &envBuilt{})
	return env.built.Load()
}

// Get returns the value global name (or "var.<key>") has in env.
func (env *Env) Get(name string) (Value, bool) {
	if env == nil {
		return Value{}, false
	}
	return env.globals.get(name)
}

// Names returns the known globals of env, sorted.
func (env *Env) Names() []string {
	if env == nil {
		return nil
	}
	var out []string
	for _, g := range env.globals {
		out = append(out, g.name)
	}
	sort.Strings(out)
	return out
}

// Without returns env without the globals names (the aliases the engine
// installs after the shared library, which hide its globals of the same
// name). It returns env itself when none is known.
func (env *Env) Without(names []string) *Env {
	if env == nil || len(names) == 0 {
		return env
	}
	drop := false
	for _, n := range names {
		if _, ok := env.globals.get(n); ok {
			drop = true
		}
	}
	if !drop {
		return env
	}
	key := strings.Join(names, "\x00")
	built := env.builtOn()
	if e, ok := built.without.Load(key); ok {
		return e.(*Env)
	}
	out := &Env{volatile: env.volatile}
	for _, g := range env.globals {
		if !has(names, g.name) {
			out.globals = append(out.globals, g)
		}
	}
	e, _ := built.without.LoadOrStore(key, out)
	return e.(*Env)
}

// exit returns the environment the interpreted chunk leaves to the next
// chunk of its VM: its globals and var keys with closures frozen, minus
// what may change before that chunk runs (the store and reply, which
// prose blocks and tools change, and what the chunk's functions may
// assign, since a tool handler may run in between).
func (in *interp) exit() *Env {
	if in.bail {
		return nil
	}
	env := &Env{stableStore: in.stableStore}
	vol := len(in.volatile) > 0 || len(in.envVolatile) > 0
	if vol {
		env.volatile = make(map[string]bool, len(in.volatile)+len(in.envVolatile))
		for k := range in.envVolatile {
			env.volatile[k] = true
		}
		for k := range in.volatile {
			env.volatile[k] = true
		}
	}
	env.globals = make(kv, 0, len(in.globals))
	for _, g := range in.globals {
		switch {
		case strings.HasPrefix(g.name, storeKey) && !in.stableStore, g.name == "reply",
			env.volatile[g.name],
			strings.HasPrefix(g.name, "var.") && env.volatile["var"]:
			continue
		}
		env.globals = append(env.globals, gv{g.name, in.freeze(g.v, 0)})
	}
	return env
}

// chunkFacts are a chunk's facts under each entry environment it was
// evaluated from. The parser shares a chunk between parses, and between
// the places of one prompt, that have the same text (a short epilog
// repeated in every section), so one chunk may start from many
// environments: the facts are kept per entry, up to maxEntries.
type chunkFacts struct {
	ast0 ast.Stmt
	mu   sync.Mutex
	// by holds the facts of each entry evaluated, made when a second
	// entry is (nil: the one in last, if any).
	by map[*Env]*Facts
	// last is the entry evaluated last with its facts (also in by when
	// by is made, or cleared from it with the others), read without the
	// lock and written under it.
	last atomic.Pointer[entryFacts]
}

// entryFacts are a chunk's facts from one entry environment.
type entryFacts struct {
	entry *Env
	f     *Facts
}

// maxEntries bounds the environments a chunk's memo keeps.
const maxEntries = 1024

type envKey struct{}

// OfIn returns the facts of a parsed chunk that starts from the
// environment entry (nil: nothing known), memoised on the chunk and
// the entry: a chunk is evaluated again only when its text or its
// entry environment changed.
func OfIn(c *parse.Chunk, entry *Env) *Facts { return OfInBudget(c, entry, nil) }

// WithVars returns env (nil: an empty environment) plus the scalar
// constants the keys hold in from (the H1's exit environment) as var
// fields, memoised on from so that the same inputs give the same
// pointer (and the memo goes when from does).
func (env *Env) WithVars(from *Env, keys []string) *Env {
	if from == nil {
		return env
	}
	var add kv
	for _, k := range keys {
		if v, ok := from.globals.get("var." + k); ok && v.Const && v.T&(String|Number|Boolean) != 0 {
			add = append(add, gv{"var." + k, v})
		}
	}
	if len(add) == 0 {
		return env
	}
	base := env
	if base == nil {
		base = &Env{}
	}
	key := withKey{env, strings.Join(keys, "\x00")}
	built := from.builtOn()
	if e, ok := built.withVars.Load(key); ok {
		return e.(*Env)
	}
	out := &Env{volatile: base.volatile}
	for _, g := range base.globals {
		if _, dup := add.get(g.name); !dup {
			out.globals = append(out.globals, g)
		}
	}
	out.globals = append(out.globals, add...)
	e, _ := built.withVars.LoadOrStore(key, out)
	return e.(*Env)
}

type withKey struct {
	env  *Env
	keys string
}
