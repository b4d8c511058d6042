// Package api is the one table of every Lua name a PromptForge prompt can
// use: host functions and tables (tools, models, store, control flow), the
// sandboxed standard library, and the names the sandbox removes. The
// runtime installs what it lists, the analyzer checks calls against it, and
// hover and completion show its signatures and docs, so the three can never
// disagree about what exists where (docs/language.md#lua-api).
package api

import (
	"sort"
	"strings"
	"sync"
)

// Where is a set of execution contexts.
type Where uint8

// Execution contexts. A fanout arm and an execute chain are Section.
const (
	// H1 is a live H1 chunk (the preamble VM, run once before sections).
	H1 Where = 1 << iota
	// Section is a section chunk (H2..H6), also in execute chains and arms.
	Section
	// Handler is the body of a tools.add_local handler while the model
	// calls it; it runs in the section VM with jump disabled.
	Handler
	// SharedLoad is the top level of the `lua shared` chunk while it is
	// replayed into a section VM, before the section's own chunks.
	SharedLoad
)

// Anywhere is every context.
const Anywhere = H1 | Section | Handler | SharedLoad

// SectionLike is every context that runs in a section VM.
const SectionLike = Section | Handler | SharedLoad

// String names the contexts for messages ("H1", "sections", ...).
func (w Where) String() string {
	var parts []string
	if w&H1 != 0 {
		parts = append(parts, "H1")
	}
	if w&Section != 0 {
		parts = append(parts, "sections")
	}
	if w&Handler != 0 {
		parts = append(parts, "add_local handlers")
	}
	if w&SharedLoad != 0 {
		parts = append(parts, "the shared-library load")
	}
	if len(parts) == 0 {
		return "nowhere"
	}
	return strings.Join(parts, ", ")
}

// Kind tells functions from tables and plain values.
type Kind uint8

// Entry kinds.
const (
	Func Kind = iota
	Table
	Value
	// Method is a function called with `:` on a handle (model:infer).
	Method
)

// Entry describes one Lua name.
type Entry struct {
	// Name is the dotted path: "jump", "tools.bind", "sys.id",
	// "string.format". Handle members use the handle type as root:
	// "Tool.name", "Model:infer".
	Name string
	// Synonyms are other spellings of the same entry (upstream's
	// "tools.need" for "tools.bind").
	Synonyms []string
	Kind     Kind
	// Signature is shown by hover and completion, e.g.
	// "tools.bind(alias, capability, override?) -> Tool".
	Signature string
	// Defined lists the contexts where the name exists (is not nil).
	Defined Where
	// Allowed lists the contexts where calling (or using) it succeeds;
	// always a subset of Defined. Defined-but-not-allowed calls raise a
	// host error ("... is only available in sections").
	Allowed Where
	// ReadOnly marks host names a prompt must not assign: the runtime
	// rejects the write (sys, tools.calls) or the write breaks the host
	// (replacing jump or store).
	ReadOnly bool
	// Host is true for names the engine adds; false for the Lua standard
	// library.
	Host bool
	// Doc is the hover text (Markdown).
	Doc string
	// Misplaced, when set, is the runtime's error for a call where the
	// name is defined but not allowed. Empty means the usual text for
	// its placement ("X is only available during live H1 execution", ...).
	Misplaced string
}

// IsFunc reports whether the entry is callable.
func (e *Entry) IsFunc() bool { return e.Kind == Func || e.Kind == Method }

// Removed lists the standard names the sandbox deletes or never opens
// (docs/language.md#sandbox plus gopher-lua's own extras). Using one is a call on nil.
var Removed = []string{
	"load", "loadstring", "dofile", "loadfile", "collectgarbage", "require",
	"getfenv", "setfenv", "rawget", "rawset", "rawequal", "rawlen", "print",
	"warn", "module", "newproxy", "_printregs",
	"io", "os", "package", "coroutine", "debug", "utf8", "channel",
}

const h1Only = H1
const sectionCalls = Section | Handler | SharedLoad

// entries is the table itself. Keep it in the order of docs/language.md so
// that documentation generated from it reads naturally.
var entries = []Entry{
	// Run data (docs/language.md#section-environment).
	{Name: "args", Kind: Value, Signature: "args: string", Defined: Anywhere, Allowed: Anywhere, Host: true,
		Doc: "The run's input string. Inside an execute chain it is the chain's input, as is `{{ args }}` in the chain's prose."},
	{Name: "reply", Kind: Value, Signature: "reply: string|nil", Defined: Anywhere, Allowed: Anywhere, Host: true,
		Doc: "The current model reply. nil in the first section and at the start of an execute chain. A section chunk may assign a string or nil; the value is read back after every chunk. H1 writes are ignored."},
	{Name: "item", Kind: Value, Signature: "item: any", Defined: Anywhere, Allowed: Anywhere, Host: true,
		Doc: "The fanout arm's collection member (nil outside a fanout arm)."},
	{Name: "var", Kind: Table, Signature: "var: table", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true,
		Doc: "Walk-local JSON data: `var.k = v` stores a copy. Carries across sections and jumps; chains and arms get a copy. Reassigning `var` itself is an error: write `var.<field>`."},
	{Name: "sys", Kind: Table, Signature: "sys: table (read-only)", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true,
		Doc: "Sealed run metadata. Any write raises `sys is read-only`; an unknown field raises `unknown sys field`."},
	{Name: "sys.when", Kind: Value, Signature: "sys.when: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The walk's start time (RFC 3339 UTC)."},
	{Name: "sys.now", Kind: Value, Signature: "sys.now: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "This VM's setup time (RFC 3339 UTC)."},
	{Name: "sys.id", Kind: Value, Signature: "sys.id: integer", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "Run-global entry id: 0 for H1, then 1, 2, ... per section entry."},
	{Name: "sys.section_name", Kind: Value, Signature: "sys.section_name: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The section heading without `#` (the title in H1)."},
	{Name: "sys.execution", Kind: Value, Signature: "sys.execution: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The execution id of the run."},
	{Name: "sys.section_count", Kind: Value, Signature: "sys.section_count: integer", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The number of top-level sections."},
	{Name: "sys.model", Kind: Value, Signature: "sys.model: string", Defined: sectionCalls, Allowed: sectionCalls, ReadOnly: true, Host: true, Doc: "The section model's catalog id; present from the first prose block once a model resolves. Never in H1."},
	{Name: "sys.reply_finish_reason", Kind: Value, Signature: "sys.reply_finish_reason: string|nil", Defined: sectionCalls, Allowed: sectionCalls, ReadOnly: true, Host: true, Doc: "The last model round's finish reason; present after an inference."},
	{Name: "sys.index", Kind: Value, Signature: "sys.index: integer", Defined: sectionCalls, Allowed: sectionCalls, ReadOnly: true, Host: true, Doc: "1-based arm index; only inside fanout arms."},

	{Name: "log", Kind: Func, Signature: "log(message: string)", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true,
		Doc: "Emit `Lua: <message>` to the observer. Exactly one UTF-8 string of at most 256 characters without control characters; 1024 events per VM."},
	{Name: "untrusted", Kind: Func, Signature: "untrusted(s: string) -> string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true,
		Doc: "Wrap `s` in the run's nonce envelope so the model treats it as data, not instructions (e.g. `untrusted(store.read(p))`)."},

	// Tools (docs/language.md#tools).
	{Name: "tools", Kind: Table, Signature: "tools: table", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true,
		Doc: "Tool declaration (H1: bind, always) and scoping (sections: add, add_local, calls)."},
	{Name: "tools.bind", Synonyms: []string{"tools.need"}, Kind: Func, Signature: "tools.bind(alias: string, capability: string, override?: string) -> Tool",
		Defined: Anywhere, Allowed: h1Only, Host: true,
		Doc: "H1 only. Resolve a tool by capability description and bind it to `alias` (`[A-Za-z][A-Za-z0-9_-]{0,63}`). `override` replaces the model-facing description. The tool is not exposed until tools.always or tools.add. `tools.need` is the upstream spelling."},
	{Name: "tools.always", Kind: Func, Signature: "tools.always(alias: string, override?: string)", Defined: Anywhere, Allowed: h1Only, Host: true,
		Doc: "H1 only. Expose a bound tool in every section (and later H1 prose). `override` replaces the binding's model-facing description."},
	{Name: "tools.add", Kind: Func, Signature: "tools.add(alias|Tool|{alias|Tool...}, override?: string)", Defined: Anywhere, Allowed: sectionCalls, Host: true,
		Doc: "Sections only. Expose bound tools to this section from the next prose block. Atomic; arrays take no override; `add()` is a no-op."},
	{Name: "tools.add_local", Kind: Func, Signature: "tools.add_local(alias: string, description: string, params: table, handler: function(args) -> string)",
		Defined: Anywhere, Allowed: sectionCalls, Host: true,
		Misplaced: "tools.add_local is only available in sections (## headings); local tools are H2-only",
		Doc:       "Sections only (in H1 the call fails: local tools are H2-only). Declare a tool backed by a Lua handler running in this section's VM. `params` maps names to a type (`string`, `integer`, `number`, `boolean`) or `{type, description}`; all are required. The handler cannot call jump. Visible from the next prose block."},
	{Name: "tools.calls", Kind: Table, Signature: "tools.calls: table<alias, integer> (read-only)", Defined: sectionCalls, Allowed: sectionCalls, ReadOnly: true, Host: true,
		Doc: "Per-alias model call counts, installed at the section's first prose block (nil before). Reading an alias outside the section's scope is an error."},
	{Name: "Tool.name", Kind: Value, Signature: "Tool.name: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The alias."},
	{Name: "Tool.description", Kind: Value, Signature: "Tool.description: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The capability text passed to bind."},
	{Name: "Tool.parameters", Kind: Value, Signature: "Tool.parameters: table", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The tool's JSON schema (`{}` on section alias globals)."},
	{Name: "Tool.wire_name", Kind: Value, Signature: "Tool.wire_name: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The tool's wire name."},
	{Name: "Tool.untrusted", Kind: Value, Signature: "Tool.untrusted: boolean", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "Always false: trust is decided per call output."},

	// Models (docs/language.md#models).
	{Name: "models", Kind: Table, Signature: "models: table", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true,
		Doc: "Model declaration (H1: bind, default) and selection (sections: use, get); infer everywhere."},
	{Name: "models.bind", Synonyms: []string{"models.need"}, Kind: Func, Signature: "models.bind(alias: string, description: string, opts?: {thinking?, context?, temperature?, max_tokens?}) -> Model",
		Defined: Anywhere, Allowed: h1Only, Host: true,
		Doc: "H1 only. Resolve a model from the gateway catalog by description and bind it to `alias`. `models.need` is the upstream spelling."},
	{Name: "models.default", Kind: Func, Signature: "models.default(alias: string, description?: string, opts?: table) -> Model", Defined: Anywhere, Allowed: h1Only, Host: true,
		Doc: "H1 only, at most once per prompt. With a description: bind and make it the default. With only an alias: make an already bound model the default."},
	{Name: "models.use", Kind: Func, Signature: "models.use(alias: string) -> Model", Defined: Anywhere, Allowed: sectionCalls, Host: true,
		Doc: "Sections only, at most once per section. Select a bound model for this section's prose; it must run before the first prose block to affect prose."},
	{Name: "models.get", Kind: Func, Signature: "models.get(alias: string) -> Model", Defined: sectionCalls, Allowed: sectionCalls, Host: true,
		Doc: "Sections only (absent in H1). Return a bound model's handle without selecting it."},
	{Name: "models.infer", Kind: Func, Signature: "models.infer(prompt: string) -> string", Defined: Anywhere, Allowed: Anywhere, Host: true,
		Doc: "One tool-free model round with the current model (section selection, else the default). Never touches reply or the conversation."},
	{Name: "Model:infer", Kind: Method, Signature: "Model:infer(prompt: string) -> string", Defined: Anywhere, Allowed: Anywhere, Host: true,
		Doc: "One tool-free round with this handle's model and options; takes no second argument."},
	{Name: "Model.name", Kind: Value, Signature: "Model.name: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The alias."},
	{Name: "Model.model_id", Kind: Value, Signature: "Model.model_id: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The catalog id."},
	{Name: "Model.description", Kind: Value, Signature: "Model.description: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The description passed to bind."},
	{Name: "Model.context", Kind: Value, Signature: "Model.context: integer", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The catalog context size."},
	{Name: "Model.thinking", Kind: Value, Signature: "Model.thinking: boolean|nil", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The thinking option, nil unless set."},
	{Name: "Model.temperature", Kind: Value, Signature: "Model.temperature: number|nil", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The temperature option, nil unless set."},
	{Name: "Model.max_tokens", Kind: Value, Signature: "Model.max_tokens: integer|nil", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The max_tokens option, nil unless set."},
	{Name: "Model.dialect", Kind: Value, Signature: "Model.dialect: string", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "`openai` or `gemma3_tool_code`."},

	// Control flow (docs/language.md#control-flow).
	{Name: "jump", Kind: Func, Signature: `jump(target: "## Heading")`, Defined: Anywhere, Allowed: Section, ReadOnly: true, Host: true,
		Doc: "Sections only. End this section and continue the walk at a visible section (a sibling, or a direct child which starts a child walk). Not available in H1, during the shared-library load, or inside add_local handlers."},
	{Name: "execute", Kind: Func, Signature: `execute(target: "## Heading", input?: string) -> string`, Defined: Anywhere, Allowed: sectionCalls, ReadOnly: true, Host: true,
		Doc: "Sections only. Run a contained chain starting at a visible section and return its result; `input` becomes `{{ args }}` in the chain's prose. Depth cap 8."},
	{Name: "fanout", Kind: Func, Signature: `fanout(worker: "## Heading", collection: table) -> {result...}`, Defined: Anywhere, Allowed: sectionCalls, ReadOnly: true, Host: true,
		Doc: "Sections only. Run the worker section once per collection member (`item`, `sys.index`), at most 8 at a time; results have `.text`, `.ok`, `.item`, `.exhausted`."},
	{Name: "list_from_section", Kind: Func, Signature: `list_from_section(heading: "## Heading") -> {string...}`, Defined: Anywhere, Allowed: sectionCalls, ReadOnly: true, Host: true,
		Doc: "Sections only. The items of a visible list section."},

	// Store (docs/language.md#store).
	{Name: "store", Kind: Table, Signature: "store: table", Defined: Anywhere, Allowed: Anywhere, ReadOnly: true, Host: true, Doc: "The run's file store shared by all sections, chains and arms."},
	{Name: "store.write", Kind: Func, Signature: "store.write(path: string, text: string)", Defined: Anywhere, Allowed: Anywhere, Host: true, Doc: "Create or replace a file. Two arms of one fanout writing the same path is a race error."},
	{Name: "store.append", Kind: Func, Signature: "store.append(path: string, text: string)", Defined: Anywhere, Allowed: Anywhere, Host: true, Doc: "Append to a file, creating it if missing."},
	{Name: "store.read", Kind: Func, Signature: "store.read(path: string, first?: integer, last?: integer) -> string", Defined: Anywhere, Allowed: Anywhere, Host: true, Doc: "The file's contents, or its 1-based inclusive line range."},
	{Name: "store.read_numbered", Kind: Func, Signature: "store.read_numbered(path: string, first?: integer, last?: integer) -> string", Defined: Anywhere, Allowed: Anywhere, Host: true, Doc: "Like read, with `<n>| ` line numbers."},
	{Name: "store.str_replace", Kind: Func, Signature: "store.str_replace(path: string, old: string, new: string)", Defined: Anywhere, Allowed: Anywhere, Host: true, Doc: "Replace the single occurrence of `old`; zero or several occurrences are errors."},
	{Name: "store.delete", Kind: Func, Signature: "store.delete(path: string)", Defined: Anywhere, Allowed: Anywhere, Host: true, Doc: "Delete a file (idempotent)."},
	{Name: "store.glob", Kind: Func, Signature: "store.glob(pattern: string) -> {string...}", Defined: Anywhere, Allowed: Anywhere, Host: true, Doc: "Matching paths in byte order (`*` within a segment, `**` as a whole segment)."},
	{Name: "store.exists", Kind: Func, Signature: "store.exists(path: string) -> boolean", Defined: Anywhere, Allowed: Anywhere, Host: true, Doc: "Whether the file exists."},
}

// ModelOpt is one key of the opts table of models.bind/models.default
// (docs/language.md#model-options).
type ModelOpt struct {
	Name string
	// Type is "boolean", "integer>0" or "number[0,2]".
	Type string
	Doc  string
}

// ModelOpts lists the accepted opts keys; any other key is an error.
var ModelOpts = []ModelOpt{
	{Name: "thinking", Type: "boolean", Doc: "Filter: true keeps catalog models whose thinking is switchable or always, false keeps switchable or never; also sent as chat_template_kwargs.enable_thinking."},
	{Name: "context", Type: "integer>0", Doc: "Filter: the catalog context must be at least this many tokens."},
	{Name: "temperature", Type: "number[0,2]", Doc: "Sampling temperature sent on the wire."},
	{Name: "max_tokens", Type: "integer>0", Doc: "Reply token cap sent on the wire."},
}

// Standard library names the sandbox keeps (gopher-lua, Lua 5.1, plus the
// 5.4 conveniences table.unpack and math.type; docs/language.md#sandbox).
// A function, so the map is built on first use, not at process start.
func stdFuncs() map[string]string {
	return map[string]string{
		"assert": "assert(v, message?)", "error": "error(message, level?)", "ipairs": "ipairs(t)",
		"next": "next(t, k?)", "pairs": "pairs(t)", "pcall": "pcall(f, ...)", "select": "select(n, ...)",
		"tonumber": "tonumber(v, base?)", "tostring": "tostring(v)", "type": "type(v)", "unpack": "unpack(t, i?, j?)",
		"xpcall": "xpcall(f, handler)", "setmetatable": "setmetatable(t, mt)", "getmetatable": "getmetatable(v)",
		"string.byte": "", "string.char": "", "string.dump": "", "string.find": "", "string.format": "", "string.gmatch": "",
		"string.gsub": "", "string.len": "", "string.lower": "", "string.match": "", "string.rep": "", "string.reverse": "",
		"string.sub": "", "string.upper": "",
		"table.concat": "", "table.insert": "", "table.maxn": "", "table.remove": "", "table.sort": "", "table.getn": "", "table.unpack": "",
		"math.abs": "", "math.acos": "", "math.asin": "", "math.atan": "", "math.atan2": "", "math.ceil": "", "math.cos": "",
		"math.cosh": "", "math.deg": "", "math.exp": "", "math.floor": "", "math.fmod": "", "math.frexp": "", "math.ldexp": "",
		"math.log": "", "math.log10": "", "math.max": "", "math.min": "", "math.mod": "", "math.modf": "", "math.pow": "",
		"math.rad": "", "math.random": "", "math.randomseed": "", "math.sin": "", "math.sinh": "", "math.sqrt": "", "math.tan": "",
		"math.tanh": "", "math.type": "",
	}
}

var stdValues = []string{"_G", "_VERSION", "string", "table", "math", "math.pi", "math.huge"}

// index is the entries' lookup tables.
type index struct {
	byName  map[string]*Entry
	all     []*Entry
	removed map[string]bool
}

// idx builds the lookup tables on first use, not at process start.
var idx = sync.OnceValue(func() *index {
	std := stdFuncs()
	n := len(entries) + len(std) + len(stdValues)
	x := &index{all: make([]*Entry, 0, n), byName: make(map[string]*Entry, n+16), removed: make(map[string]bool, len(Removed))}
	for i := range entries {
		x.all = append(x.all, &entries[i])
	}
	// The standard library's entries in one allocation.
	lib := make([]Entry, 0, len(std)+len(stdValues))
	for name, sig := range std {
		if sig == "" {
			sig = name + "(...)"
		}
		lib = append(lib, Entry{Name: name, Kind: Func, Signature: sig, Defined: Anywhere, Allowed: Anywhere,
			Doc: "Lua 5.1 standard library (gopher-lua)."})
	}
	for _, name := range stdValues {
		k := Table
		if strings.Contains(name, ".") || strings.HasPrefix(name, "_") {
			k = Value
		}
		lib = append(lib, Entry{Name: name, Kind: k, Signature: name, Defined: Anywhere, Allowed: Anywhere,
			Doc: "Lua 5.1 standard library (gopher-lua)."})
	}
	sort.SliceStable(lib, func(i, j int) bool { return lib[i].Name < lib[j].Name })
	for i := range lib {
		x.all = append(x.all, &lib[i])
	}
	for _, e := range x.all {
		x.byName[e.Name] = e
		for _, s := range e.Synonyms {
			x.byName[s] = e
		}
	}
	for _, r := range Removed {
		x.removed[r] = true
	}
	return x
})

// All returns every entry: host entries in documentation order, then the
// standard library sorted by name. The slice must not be modified.
func All() []*Entry { return idx().all }

// Lookup finds an entry by name or synonym ("tools.need" finds tools.bind).
func Lookup(name string) (*Entry, bool) {
	e, ok := idx().byName[name]
	return e, ok
}

// IsRemoved reports whether a global was removed by the sandbox.
func IsRemoved(global string) bool { return idx().removed[global] }

// Globals returns the global names that exist in the contexts w (roots of
// all entries defined there, handle types excluded), sorted. The slice is
// computed once per w and shared: it must not be modified.
func Globals(w Where) []string { return globalsIn(w).names }

// GlobalSet is Globals(w) as a set, computed once per w and shared: it
// must not be modified.
func GlobalSet(w Where) map[string]bool { return globalsIn(w).set }

type globals struct {
	names []string
	set   map[string]bool
}

var (
	globalsMu sync.Mutex
	globalsOf = map[Where]*globals{}
)

func globalsIn(w Where) *globals {
	globalsMu.Lock()
	defer globalsMu.Unlock()
	if g := globalsOf[w]; g != nil {
		return g
	}
	g := &globals{set: map[string]bool{}}
	for _, e := range idx().all {
		if e.Defined&w == 0 || strings.ContainsAny(e.Name, ".:") || isHandleType(e.Name) {
			continue
		}
		if !g.set[e.Name] {
			g.set[e.Name] = true
			g.names = append(g.names, e.Name)
		}
	}
	sort.Strings(g.names)
	globalsOf[w] = g
	return g
}

// Members returns the entries directly under a table ("tools" gives
// tools.bind, tools.need's entry, ...) that exist in contexts w, sorted by
// name, synonyms included as their own names. The slice is computed once
// per table and w and shared: it must not be modified.
func Members(table string, w Where) []string {
	k := membersKey{table, w}
	membersMu.Lock()
	defer membersMu.Unlock()
	if out, ok := membersOf[k]; ok {
		return out
	}
	prefix := table + "."
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if strings.HasPrefix(n, prefix) && !strings.Contains(n[len(prefix):], ".") && !seen[n] {
			seen[n] = true
			out = append(out, n[len(prefix):])
		}
	}
	for _, e := range idx().all {
		if e.Defined&w == 0 {
			continue
		}
		add(e.Name)
		for _, s := range e.Synonyms {
			add(s)
		}
	}
	sort.Strings(out)
	membersOf[k] = out
	return out
}

type membersKey struct {
	table string
	w     Where
}

var (
	membersMu sync.Mutex
	membersOf = map[membersKey][]string{}
)

// IsTable reports whether name is a table entry whose members are all
// known (so an unknown member is a mistake): tools, models, store, sys,
// string, table, math.
func IsTable(name string) bool {
	e, ok := idx().byName[name]
	// var and tools.calls are keyed by the prompt's own data; _G holds
	// the prompt's globals.
	return ok && e.Kind == Table && name != "var" && name != "_G" && name != "tools.calls"
}

func isHandleType(name string) bool { return name == "Tool" || name == "Model" }
