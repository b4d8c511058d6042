package program

import (
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Symbols is what navigation, hover, completion, rename and references
// need from a prompt: every section, every Lua chunk's tokens, the
// tool/model/local-tool declarations and every literal mention of a
// section address or an alias, with byte spans. Unlike the rest of the
// model it is built from tokens, not from the AST, so it stays useful
// while the user types and a chunk does not parse.
type Symbols struct {
	// Sections are all sections, depth-first in file order.
	Sections []*parse.Section
	// Chunks are the Lua chunks with their tokens: the shared chunk and
	// the H1 chunks first (so declarations are seen before their uses),
	// then each section's chunks.
	Chunks   []*ChunkTokens
	Tools    map[string]*ToolDecl
	ToolList []*ToolDecl
	Models   map[string]*ModelDecl
	Locals   []*LocalTool
	Refs     []*Ref
	// modelVars are the variables assigned a model handle by models.get
	// or models.use (`local w = models.get("writer")`).
	modelVars map[string]bool

	// refStarts indexes the refs found before the globals pass.
	refStarts map[int]bool
}

// ChunkTokens is one Lua chunk with its tokens.
type ChunkTokens struct {
	Chunk *parse.Chunk
	// Section is the chunk's section; nil for H1 and shared chunks.
	Section *parse.Section
	// lex is the chunk's memoised tokens (relative to base and line),
	// shared with the chunk's model and with other parses.
	lex        *chunkLex
	base, line int
}

// Tokens returns the chunk's tokens with absolute file offsets and lines,
// a copy the caller may keep.
func (ci *ChunkTokens) Tokens() []luatok.Token {
	return ci.lex.appendTokens(make([]luatok.Token, 0, len(ci.lex.toks)), ci.base, ci.line)
}

// RefKind is what a reference names.
type RefKind uint8

// Reference kinds.
const (
	RefSection RefKind = iota
	RefTool
	RefModel
	RefLocal
)

// Ref is one mention of a section address or an alias. Span covers the
// string's contents or the identifier.
type Ref struct {
	Kind RefKind
	Span source.Span
	Name string
	// Call says how it appears: "jump", "tools.add", "global", ...
	Call    string
	Section *parse.Section
	Chunk   *ChunkTokens
	// Decl marks the declaring mention (tools.bind's alias string).
	Decl bool
	// Target is the section a section reference resolves to (nil when it
	// does not resolve).
	Target *parse.Section
}

// ToolDecl is a tools.bind/need declaration in the H1.
type ToolDecl struct {
	Alias, Capability, Override string
	// Span is the alias string's contents.
	Span source.Span
	// Handle is the variable holding the handle, if any.
	Handle string
	// Call is "tools.bind" or the upstream "tools.need".
	Call string
	// Always is set by tools.always, with its description override.
	Always     bool
	AlwaysOver string
	// AddedIn are the sections that tools.add it, with their overrides.
	AddedIn []*parse.Section
	AddOver map[*parse.Section]string
}

// ModelDecl is a models.bind/need/default declaration.
type ModelDecl struct {
	Alias, Capability, Call string
	Span                    source.Span
	Handle                  string
}

// LocalTool is a tools.add_local declaration.
type LocalTool struct {
	Alias, Description string
	Params             []LocalParam
	Span, Handler      source.Span
	Section            *parse.Section
}

// LocalParam is one parameter of a local tool.
type LocalParam struct {
	Name, Type, Description string
}

// ControlCalls are the API functions whose first argument is a section
// address (api.Entry.TakesSection): jump, execute, fanout,
// list_from_section. The set is built on first use.
var ControlCalls = sync.OnceValue(controlCalls)

func controlCalls() map[string]bool {
	m := map[string]bool{}
	for _, e := range api.All() {
		if e.TakesSection() {
			m[e.Name] = true
		}
	}
	return m
}

type symbolsKey struct{}

// Symbols returns the prompt's declarations and references (SymbolsOf).
func (p *Program) Symbols() *Symbols { return SymbolsOf(p.Prompt) }

// SymbolsOf returns pr's declarations and references, built on first use
// and kept with the parse like the rest of the model (Of). They come from
// the chunks' tokens alone, so navigation does not wait for the walk of
// the chunks' ASTs.
func SymbolsOf(pr *parse.Prompt) *Symbols { return memoised(pr, symbolsKey{}, buildSymbols) }

func buildSymbols(pr *parse.Prompt) *Symbols {
	ix := &Symbols{Tools: map[string]*ToolDecl{}, Models: map[string]*ModelDecl{}}
	var visit func([]*parse.Section)
	visit = func(ss []*parse.Section) {
		for _, s := range ss {
			ix.Sections = append(ix.Sections, s)
			visit(s.Children)
		}
	}
	visit(pr.Sections)
	add := func(c *parse.Chunk, owner *parse.Section) {
		if c == nil || !c.SourceSpan.IsValid() || c.SourceSpan.End > len(pr.File.Content) {
			return
		}
		ix.Chunks = append(ix.Chunks, &ChunkTokens{Chunk: c, Section: owner, lex: lexOf(c, pr.File), base: pr.File.LineStart(c.FirstLine), line: c.FirstLine})
	}
	add(pr.Shared, nil)
	for _, b := range pr.H1Blocks {
		if b.Kind == parse.LuaBlock {
			add(b.Chunk, nil)
		}
	}
	for _, s := range ix.Sections {
		for _, b := range s.Blocks {
			if b.Kind == parse.LuaBlock {
				add(b.Chunk, s)
			}
		}
	}
	// The scans read the chunks' tokens with absolute offsets from one
	// scratch slice, so the index keeps only the shared relative ones.
	n := 0
	for _, ci := range ix.Chunks {
		n += len(ci.lex.toks)
	}
	all := make([]luatok.Token, 0, n)
	ends := make([]int, len(ix.Chunks))
	for i, ci := range ix.Chunks {
		all = ci.lex.appendTokens(all, ci.base, ci.line)
		ends[i] = len(all)
	}
	toks := func(i int) []luatok.Token {
		if i == 0 {
			return all[:ends[0]:ends[0]]
		}
		return all[ends[i-1]:ends[i]:ends[i]]
	}
	for i, ci := range ix.Chunks {
		ix.scanChunk(ci, toks(i))
	}
	for i, ci := range ix.Chunks {
		ix.scanGlobals(ci, toks(i))
	}
	for _, r := range ix.Refs {
		if r.Kind == RefSection {
			r.Target = ResolveAddress(pr, r.Section, r.Name)
		}
	}
	return ix
}

// ResolveAddress resolves a heading string against the sections owner
// may address, with the engine's own resolution (shared with the runtime
// and the analyzer). It returns nil for a malformed, unknown or ambiguous
// address.
func ResolveAddress(p *parse.Prompt, owner *parse.Section, addr string) *parse.Section {
	s, err := parse.Resolve(p, owner, addr)
	if err != nil {
		return nil
	}
	return s
}

// SplitAddress parses "## Name" into its level and trimmed name.
func SplitAddress(addr string) (int, string, bool) {
	level, name, err := parse.ParseTarget(addr)
	return level, name, err == nil
}

// Visible returns the sections owner may address.
func Visible(p *parse.Prompt, owner *parse.Section) []*parse.Section {
	if p == nil {
		return nil
	}
	return parse.Visible(p, owner)
}

// arg is one top-level argument of a call: its tokens.
type arg struct {
	toks []luatok.Token
}

// str returns the argument's string literal when it is exactly one.
func (a arg) str() (luatok.Token, bool) {
	if len(a.toks) == 1 && a.toks[0].Kind == luatok.String {
		return a.toks[0], true
	}
	return luatok.Token{}, false
}

// callArgs splits the arguments of the call whose '(' is toks[open].
func callArgs(toks []luatok.Token, open int) []arg {
	var args []arg
	depth := 0
	cur := arg{}
	for i := open; i < len(toks); i++ {
		t := toks[i]
		if t.Kind == luatok.Op {
			switch t.Value {
			case "(", "{", "[":
				depth++
				if depth == 1 {
					continue
				}
			case ")", "}", "]":
				depth--
				if depth == 0 {
					if len(cur.toks) > 0 {
						args = append(args, cur)
					}
					return args
				}
			case ",":
				if depth == 1 {
					args = append(args, cur)
					cur = arg{}
					continue
				}
			}
		}
		cur.toks = append(cur.toks, t)
	}
	if len(cur.toks) > 0 {
		args = append(args, cur)
	}
	return args
}

// qualified reports whether toks[i] starts `lib.member` and returns member.
func qualified(toks []luatok.Token, i int, lib string) (string, bool) {
	if i+2 >= len(toks) || toks[i].Kind != luatok.Name || toks[i].Value != lib {
		return "", false
	}
	if i > 0 && toks[i-1].Kind == luatok.Op && (toks[i-1].Value == "." || toks[i-1].Value == ":") {
		return "", false
	}
	if toks[i+1].Value != "." || toks[i+2].Kind != luatok.Name {
		return "", false
	}
	return toks[i+2].Value, true
}

// localAssigned returns the name in `local NAME =` directly before toks[i].
func localAssigned(toks []luatok.Token, i int) string {
	if i >= 2 && toks[i-1].Value == "=" && toks[i-2].Kind == luatok.Name {
		return toks[i-2].Value
	}
	return ""
}

func (ix *Symbols) ref(r Ref) { ix.Refs = append(ix.Refs, &r) }

func (ix *Symbols) scanChunk(ci *ChunkTokens, toks []luatok.Token) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind != luatok.Name {
			continue
		}
		if m, ok := qualified(toks, i, "tools"); ok {
			ix.toolsCall(ci, toks, i, m)
			continue
		}
		if m, ok := qualified(toks, i, "models"); ok {
			ix.modelsCall(ci, toks, i, m)
			continue
		}
		if ControlCalls()[t.Value] && i+1 < len(toks) && toks[i+1].Value == "(" &&
			!(i > 0 && (toks[i-1].Value == "." || toks[i-1].Value == ":")) {
			if args := callArgs(toks, i+1); len(args) > 0 {
				if s, ok := args[0].str(); ok {
					ix.ref(Ref{Kind: RefSection, Span: s.Inner(), Name: s.Value, Call: t.Value, Section: ci.Section, Chunk: ci})
				}
			}
		}
	}
}

// strArg returns argument k's string literal value, or "".
func strArg(args []arg, k int) string {
	if k < len(args) {
		if s, ok := args[k].str(); ok {
			return s.Value
		}
	}
	return ""
}

func (ix *Symbols) toolsCall(ci *ChunkTokens, toks []luatok.Token, i int, member string) {
	after := i + 3
	if member == "calls" {
		// tools.calls.x or tools.calls["x"]
		if after+1 < len(toks) && toks[after].Value == "." && toks[after+1].Kind == luatok.Name {
			n := toks[after+1]
			ix.ref(Ref{Kind: RefTool, Span: n.Span, Name: n.Value, Call: "tools.calls", Section: ci.Section, Chunk: ci})
		} else if after+1 < len(toks) && toks[after].Value == "[" && toks[after+1].Kind == luatok.String {
			s := toks[after+1]
			ix.ref(Ref{Kind: RefTool, Span: s.Inner(), Name: s.Value, Call: "tools.calls", Section: ci.Section, Chunk: ci})
		}
		return
	}
	if after >= len(toks) || toks[after].Value != "(" {
		return
	}
	args := callArgs(toks, after)
	call := "tools." + member
	switch member {
	case "bind", "need":
		if len(args) == 0 {
			return
		}
		a, ok := args[0].str()
		if !ok {
			return
		}
		d := &ToolDecl{Alias: a.Value, Span: a.Inner(), Handle: localAssigned(toks, i), Call: call,
			Capability: strArg(args, 1), Override: strArg(args, 2), AddOver: map[*parse.Section]string{}}
		if _, dup := ix.Tools[d.Alias]; !dup {
			ix.Tools[d.Alias] = d
			ix.ToolList = append(ix.ToolList, d)
		}
		ix.ref(Ref{Kind: RefTool, Span: d.Span, Name: d.Alias, Call: call, Section: ci.Section, Chunk: ci, Decl: true})
	case "always", "add":
		var names []luatok.Token
		if member == "add" && ix.oldMultiAdd(args) {
			// Upstream's older tools.add("a", "b"): every argument is an
			// alias (docs/migration.md).
			for _, a := range args {
				names = append(names, a.toks[0])
			}
			args = args[:1]
		} else if len(args) > 0 {
			for _, t := range args[0].toks {
				if t.Kind == luatok.String || t.Kind == luatok.Name {
					names = append(names, t)
				}
			}
		}
		over := strArg(args, 1)
		for _, n := range names {
			alias := n.Value
			if n.Kind != luatok.String {
				if d := ix.ToolByHandle(n.Value); d != nil && ci.Section == nil {
					alias = d.Alias // an H1 handle variable
				} else if d := ix.Tools[n.Value]; d != nil && ci.Section != nil {
					alias = d.Alias // an alias global in a section
				} else {
					continue // a variable we cannot follow
				}
			}
			ix.ref(Ref{Kind: RefTool, Span: n.Inner(), Name: alias, Call: call, Section: ci.Section, Chunk: ci})
			d := ix.Tools[alias]
			if d == nil {
				continue
			}
			if member == "always" {
				d.Always = true
				if over != "" {
					d.AlwaysOver = over
				}
			} else if ci.Section != nil {
				if _, seen := d.AddOver[ci.Section]; !seen {
					d.AddedIn = append(d.AddedIn, ci.Section)
				}
				d.AddOver[ci.Section] = over
			}
		}
	case "add_local", "local": // tools.local: upstream's old name (docs/migration.md)
		if len(args) == 0 {
			return
		}
		a, ok := args[0].str()
		if !ok {
			return
		}
		lt := &LocalTool{Alias: a.Value, Span: a.Inner(), Section: ci.Section, Description: strArg(args, 1)}
		call = "tools.add_local"
		if len(args) > 2 {
			lt.Params = parseParams(args[2].toks)
		}
		if len(args) > 3 && len(args[3].toks) > 0 {
			lt.Handler = args[3].toks[0].Span
		}
		ix.Locals = append(ix.Locals, lt)
		ix.ref(Ref{Kind: RefLocal, Span: lt.Span, Name: lt.Alias, Call: call, Section: ci.Section, Chunk: ci, Decl: true})
	}
}

// OldMultiAdd reports whether the arguments of a tools.add call are
// upstream's older several-aliases form, tools.add("a", "b")
// (docs/migration.md), by the rule of Program.OldMultiAdd on tokens (the
// H1's declarations are scanned before any section's calls).
func (ix *Symbols) oldMultiAdd(args []arg) bool {
	if len(args) < 2 {
		return false
	}
	for _, a := range args {
		if len(a.toks) != 1 || (a.toks[0].Kind != luatok.String && a.toks[0].Kind != luatok.Name) {
			return false
		}
	}
	second := args[1].toks[0]
	return len(args) > 2 || second.Kind == luatok.Name || ix.Tools[second.Value] != nil
}

// parseParams reads `{ name = "type", other = {"type", "desc"} }` from the
// tokens of the table argument (including its braces).
func parseParams(toks []luatok.Token) []LocalParam {
	var out []LocalParam
	depth := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.Value {
		case "{":
			depth++
			continue
		case "}":
			depth--
			continue
		}
		if depth != 1 || t.Kind != luatok.Name || i+2 >= len(toks) || toks[i+1].Value != "=" {
			continue
		}
		p := LocalParam{Name: t.Value}
		v := toks[i+2]
		if v.Kind == luatok.String {
			p.Type = v.Value
		} else if v.Value == "{" {
			var strs []string
			for j := i + 3; j < len(toks) && toks[j].Value != "}"; j++ {
				if toks[j].Kind == luatok.String {
					strs = append(strs, toks[j].Value)
				}
			}
			if len(strs) > 0 {
				p.Type = strs[0]
			}
			if len(strs) > 1 {
				p.Description = strs[1]
			}
		}
		out = append(out, p)
	}
	return out
}

func (ix *Symbols) modelsCall(ci *ChunkTokens, toks []luatok.Token, i int, member string) {
	after := i + 3
	if after >= len(toks) || toks[after].Value != "(" {
		return
	}
	args := callArgs(toks, after)
	if len(args) == 0 {
		return
	}
	a, ok := args[0].str()
	if !ok {
		return
	}
	call := "models." + member
	switch member {
	case "bind", "need", "default", "always", "only": // always, only: upstream's old names of default (docs/migration.md)
		if member == "always" || member == "only" {
			call = "models.default"
		}
		d := &ModelDecl{Alias: a.Value, Call: call, Span: a.Inner(), Handle: localAssigned(toks, i), Capability: strArg(args, 1)}
		if _, dup := ix.Models[d.Alias]; !dup {
			ix.Models[d.Alias] = d
		}
		ix.ref(Ref{Kind: RefModel, Span: d.Span, Name: d.Alias, Call: call, Section: ci.Section, Chunk: ci, Decl: true})
	case "use", "get":
		ix.ref(Ref{Kind: RefModel, Span: a.Inner(), Name: a.Value, Call: call, Section: ci.Section, Chunk: ci})
		if v := localAssigned(toks, i); v != "" {
			if ix.modelVars == nil {
				ix.modelVars = map[string]bool{}
			}
			ix.modelVars[v] = true
		}
	}
}

// ToolByHandle returns the tool whose handle variable is name.
func (ix *Symbols) ToolByHandle(name string) *ToolDecl {
	for _, d := range ix.ToolList {
		if d.Handle == name {
			return d
		}
	}
	return nil
}

// IsModelHandle reports whether name is a variable holding a model
// handle: from a declaration (models.bind/default) or from models.get or
// models.use.
func (ix *Symbols) IsModelHandle(name string) bool {
	return ix.ModelByHandle(name) != nil || ix.modelVars[name]
}

// ModelByHandle returns the model whose handle variable is name.
func (ix *Symbols) ModelByHandle(name string) *ModelDecl {
	for _, d := range ix.Models {
		if d.Handle == name {
			return d
		}
	}
	return nil
}

// scanGlobals records alias globals in sections and handle variables in
// H1: a bare name equal to a declared alias (sections) or to the variable
// holding a bind handle (H1) that is not a field and not assigned to.
func (ix *Symbols) scanGlobals(ci *ChunkTokens, toks []luatok.Token) {
	for i, t := range toks {
		if t.Kind != luatok.Name {
			continue
		}
		if i > 0 && (toks[i-1].Value == "." || toks[i-1].Value == ":" || toks[i-1].Value == "local") {
			continue
		}
		if i+1 < len(toks) && toks[i+1].Value == "=" {
			continue
		}
		var d *ToolDecl
		if ci.Section != nil {
			d = ix.Tools[t.Value]
		} else {
			d = ix.ToolByHandle(t.Value)
		}
		if d == nil || ix.hasRefAt(t.Span.Start) {
			continue
		}
		call := "global"
		if ci.Section == nil {
			call = "handle"
		}
		ix.ref(Ref{Kind: RefTool, Span: t.Span, Name: d.Alias, Call: call, Section: ci.Section, Chunk: ci})
	}
}

func (ix *Symbols) hasRefAt(off int) bool {
	if ix.refStarts == nil {
		ix.refStarts = make(map[int]bool, len(ix.Refs))
		for _, r := range ix.Refs {
			ix.refStarts[r.Span.Start] = true
		}
	}
	return ix.refStarts[off]
}

// SectionAt returns the innermost section whose heading or content
// contains off, or nil (H1 region, frontmatter).
func (ix *Symbols) SectionAt(off int) *parse.Section {
	var best *parse.Section
	for _, s := range ix.Sections {
		if s.Heading != nil && off >= s.Heading.Span.Start && off <= s.Content.End {
			best = s
		}
	}
	return best
}

// RefAt returns the reference whose span contains off.
func (ix *Symbols) RefAt(off int) *Ref {
	for _, r := range ix.Refs {
		if r.Span.Contains(off) {
			return r
		}
	}
	return nil
}

// HeadingAt returns the section whose heading line contains off.
func (ix *Symbols) HeadingAt(off int) *parse.Section {
	for _, s := range ix.Sections {
		if s.Heading != nil && off >= s.Heading.Span.Start && off < s.Heading.Span.End {
			return s
		}
	}
	return nil
}

// ChunkAt returns the chunk whose Lua source contains off.
func (ix *Symbols) ChunkAt(off int) *ChunkTokens {
	for _, c := range ix.Chunks {
		if off >= c.Chunk.SourceSpan.Start && off <= c.Chunk.SourceSpan.End {
			return c
		}
	}
	return nil
}
