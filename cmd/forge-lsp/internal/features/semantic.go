package features

import (
	"slices"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// Semantic token types and modifiers, in legend order: a token's type is
// its index here, its modifiers a bit set over semModifiers.
const (
	semNamespace  = iota // API tables (tools, store, models, var, sys, string, ...)
	semFunction          // API functions and functions the prompt defines
	semMethod            // calls with ':' (model:infer)
	semVariable          // locals, globals, placeholder roots
	semParameter         // function parameters at their declaration
	semProperty          // fields, placeholder members, frontmatter keys
	semKeyword           // Lua keywords
	semString            // Lua strings
	semNumber            // Lua numbers
	semComment           // Lua comments
	semType              // section references ("## Write" in jump(...))
	semEnumMember        // tool and model aliases
	semMacro             // the {{ }} of placeholders
)

// SemanticTypes are the token types in legend order: a token's Type is
// its index here.
var SemanticTypes = []string{
	"namespace", "function", "method", "variable", "parameter", "property",
	"keyword", "string", "number", "comment", "type", "enumMember", "macro",
}

// Modifier bits. "global" is not one of LSP's predefined modifiers: it
// marks variables that are globals of the prompt's Lua, so editors can
// colour them apart from locals.
const (
	modDeclaration = 1 << iota
	modReadonly
	modDefaultLibrary
	modGlobal
)

// SemanticModifiers are the modifier names in legend order: bit i of a
// token's Mods is SemanticModifiers[i].
var SemanticModifiers = []string{"declaration", "readonly", "defaultLibrary", "global"}

// SemToken is one semantic token in byte offsets: its type (an index of
// SemanticTypes) and modifiers (bits over SemanticModifiers).
type SemToken struct {
	Start, End int32 // file offsets (a prompt is far below 2 GiB)
	Type, Mods uint32
}

// SemanticTokens returns the tokens that overlap r, sorted and split so
// that none spans a line break.
func SemanticTokens(snap *Snapshot, r source.Span) []SemToken {
	pr := snap.Prompt
	f := snap.File
	out := make([]SemToken, 0, min(r.End-r.Start, len(f.Content))/6+16)
	add := func(sp source.Span, typ, mods uint32) {
		if sp.End <= sp.Start || sp.End < r.Start || sp.Start > r.End {
			return
		}
		out = append(out, SemToken{int32(sp.Start), int32(sp.End), typ, mods})
	}
	// Frontmatter keys.
	if fm := pr.Frontmatter; fm != nil {
		var keys func(fs []*parse.Field)
		keys = func(fs []*parse.Field) {
			for _, fd := range fs {
				add(fd.KeySpan, semProperty, 0)
				keys(fd.Children)
			}
		}
		keys(fm.Fields)
	}
	// Lua, through the program model (who is global, what is a call of
	// which API entry) and the Lua tokenizer (every token's span). A
	// chunk's tokens depend on its text alone, so they are memoised on
	// the parsed chunk and only changed chunks are classified again.
	var marks map[int]luaMark
	luaChunk := func(c *parse.Chunk) {
		if c.SourceSpan.End < r.Start || c.SourceSpan.Start > r.End {
			return
		}
		toks := chunkSemantic(f, c, func() map[int]luaMark {
			if marks == nil {
				marks = luaMarks(snap.Program())
			}
			return marks
		})
		for _, t := range toks {
			if int(t.End) >= r.Start && int(t.Start) <= r.End {
				out = append(out, t)
			}
		}
	}
	// Placeholders in prose.
	placeholders := func(b *parse.Block) {
		if b.Prose.Span.End < r.Start || b.Prose.Span.Start > r.End || !strings.Contains(b.Prose.Text, "{{") {
			return
		}
		t, _ := b.Prose.Template()
		for _, n := range t.Nodes {
			if n.Kind != template.Placeholder {
				continue
			}
			add(source.Span{Start: n.Span.Start, End: n.Span.Start + 2}, semMacro, 0)
			for i, seg := range n.Segments {
				typ, mods := uint32(semProperty), uint32(0)
				if i == 0 {
					typ = semVariable
					if e, ok := api.Lookup(seg.Name); ok && e.Host {
						mods = modDefaultLibrary | modReadonly
						if e.Kind == api.Table {
							typ = semNamespace
						}
					}
				}
				add(seg.Span, typ, mods)
			}
			if n.Span.End-n.Span.Start >= 4 && f.Text(source.Span{Start: n.Span.End - 2, End: n.Span.End}) == "}}" {
				add(source.Span{Start: n.Span.End - 2, End: n.Span.End}, semMacro, 0)
			}
		}
	}
	// Blocks in file order (the shared library sits among the H1's), so
	// that the tokens come out sorted and need no sort.
	shared := pr.Shared
	blocks := func(bs []*parse.Block) {
		for _, b := range bs {
			if shared != nil && (b.Kind == parse.ProseBlock || b.Chunk != nil) && b.Span().Start > shared.Span.Start {
				luaChunk(shared)
				shared = nil
			}
			switch {
			case b.Kind == parse.LuaBlock && b.Chunk != nil:
				luaChunk(b.Chunk)
			case b.Kind == parse.ProseBlock:
				placeholders(b)
			}
		}
	}
	blocks(pr.H1Blocks)
	if shared != nil {
		// Nothing of the H1 follows the library: it comes before the
		// sections, and only once.
		luaChunk(shared)
		shared = nil
	}
	var walk func(ss []*parse.Section)
	walk = func(ss []*parse.Section) {
		for _, sec := range ss {
			if sec.Content.End >= r.Start && sec.Content.Start <= r.End {
				blocks(sec.Blocks)
			}
			walk(sec.Children)
		}
	}
	walk(pr.Sections)
	if cmp := func(a, b SemToken) int { return int(a.Start) - int(b.Start) }; !slices.IsSortedFunc(out, cmp) {
		slices.SortFunc(out, cmp)
	}
	out = splitLines(f, out)
	// Keep the pieces that overlap r (a multi-line token may have pieces
	// outside it).
	kept := out[:0]
	for _, t := range out {
		if int(t.End) > r.Start && int(t.Start) < r.End {
			kept = append(kept, t)
		}
	}
	return kept
}

// luaMark is what the program model knows about a token at an offset.
type luaMark struct {
	Type, Mods uint32
}

// luaMarks classifies the tokens the program model has spans for:
// globals, declared locals, alias arguments and section references.
func luaMarks(prog *program.Program) map[int]luaMark {
	m := make(map[int]luaMark, len(prog.Globals)+len(prog.Locals))
	for _, g := range prog.Globals {
		name := g.Expr.Value
		mk := luaMark{semVariable, modGlobal}
		if e, ok := api.Lookup(name); ok {
			switch {
			case e.Kind == api.Table:
				mk = luaMark{semNamespace, modDefaultLibrary}
			case e.IsFunc():
				mk = luaMark{semFunction, modDefaultLibrary}
			default:
				mk = luaMark{semVariable, modDefaultLibrary | modReadonly}
			}
		} else if g.Write && !g.FieldWrite {
			mk.Mods |= modDeclaration
		}
		m[prog.GlobalSpan(g).Start] = mk
	}
	for _, l := range prog.Locals {
		mk := luaMark{semVariable, modDeclaration}
		if l.Param {
			mk.Type = semParameter
		}
		m[prog.LocalSpan(l).Start] = mk
	}
	for _, c := range prog.Calls {
		switch c.Canonical() {
		case "tools.bind", "tools.add", "tools.always", "tools.add_local",
			"models.bind", "models.default", "models.use", "models.get":
			if _, sp, ok := prog.StringArg(c, 0); ok {
				m[sp.Start] = luaMark{semEnumMember, 0}
			}
		case "jump", "execute", "fanout", "list_from_section":
			for i := range c.Expr.Args {
				if v, sp, ok := prog.StringArg(c, i); ok && strings.HasPrefix(v, "#") {
					m[sp.Start] = luaMark{semType, 0}
				}
			}
		}
	}
	return m
}

// chunkSemantic returns the semantic tokens of one chunk, computed once
// per chunk text and place and memoised in this package's own cache
// (semanticMemo). marks gives the program model's classification, built
// only when a chunk misses.
func chunkSemantic(f *source.File, c *parse.Chunk, marks func() map[int]luaMark) []SemToken {
	key := c.Key()
	if key != nil {
		if m := semanticMemo.get(key); m != nil && m.base == c.SourceSpan.Start && m.end == c.SourceSpan.End {
			return m.toks
		}
	}
	toks := luaTokens(nil, f, c, marks(), source.Span{Start: c.SourceSpan.Start, End: c.SourceSpan.End})
	if key != nil {
		semanticMemo.put(key, &chunkSemTokens{base: c.SourceSpan.Start, end: c.SourceSpan.End, toks: toks})
	}
	return toks
}

// chunkSemTokens are one chunk's semantic tokens at one place in a file.
type chunkSemTokens struct {
	base, end int
	toks      []SemToken
}

// semanticMemo keeps the semantic tokens of the chunks in use, by
// parse.Chunk.Key: this package's memo, not the parser's. It is a
// two-generation cache: when the current generation is full it becomes
// the previous one, so the chunks of the open documents stay and memory
// stays bounded.
var semanticMemo = &genMemo{max: 4096}

type genMemo struct {
	mu        sync.Mutex
	max       int
	cur, prev map[any]*chunkSemTokens
}

func (g *genMemo) get(key any) *chunkSemTokens {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m := g.cur[key]; m != nil {
		return m
	}
	if m := g.prev[key]; m != nil {
		g.putLocked(key, m)
		return m
	}
	return nil
}

func (g *genMemo) put(key any, m *chunkSemTokens) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.putLocked(key, m)
}

func (g *genMemo) putLocked(key any, m *chunkSemTokens) {
	if g.cur == nil || len(g.cur) >= g.max {
		g.prev, g.cur = g.cur, make(map[any]*chunkSemTokens)
	}
	g.cur[key] = m
}

// luaKeywords are Lua 5.1's reserved words plus goto.
var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true,
	"false": true, "for": true, "function": true, "goto": true, "if": true, "in": true,
	"local": true, "nil": true, "not": true, "or": true, "repeat": true, "return": true,
	"then": true, "true": true, "until": true, "while": true,
}

// luaTokens appends the semantic tokens of one chunk that overlap r.
func luaTokens(out []SemToken, f *source.File, c *parse.Chunk, marks map[int]luaMark, r source.Span) []SemToken {
	toks := program.Tokens(c, f)
	gap := c.SourceSpan.Start
	// path is the API path of the previous name token, for members.
	prevPath := ""
	for i, t := range toks {
		if t.Span.Start > r.End {
			break
		}
		out = appendComments(out, f.Content, gap, t.Span.Start, r)
		gap = t.Span.End
		var typ, mods uint32
		emit := true
		path := ""
		switch t.Kind {
		case luatok.String:
			typ = semString
			if mk, ok := marks[t.Span.Start]; ok {
				typ, mods = mk.Type, mk.Mods
			}
		case luatok.Number:
			typ = semNumber
		case luatok.Op:
			emit = false
		case luatok.Name:
			switch {
			case luaKeywords[t.Value]:
				typ = semKeyword
			case i > 0 && toks[i-1].Kind == luatok.Op && (toks[i-1].Value == "." || toks[i-1].Value == ":"):
				typ = semProperty
				if toks[i-1].Value == ":" {
					typ = semMethod
				}
				if prevPath != "" {
					path = prevPath + "." + t.Value
					if prevPath == "tools.calls" {
						typ = semEnumMember
					} else if e, ok := api.Lookup(path); ok {
						mods = modDefaultLibrary
						switch {
						case e.Kind == api.Table:
							typ = semNamespace
						case e.IsFunc():
							typ = semFunction
						}
					}
				}
			default:
				typ = semVariable
				if mk, ok := marks[t.Span.Start]; ok {
					typ, mods = mk.Type, mk.Mods
					if mods&modDefaultLibrary != 0 {
						path = t.Value
					}
				}
			}
		}
		if t.Kind != luatok.Op || (t.Value != "." && t.Value != ":") {
			prevPath = path
		}
		if emit && t.Span.End >= r.Start {
			out = append(out, SemToken{int32(t.Span.Start), int32(t.Span.End), typ, mods})
		}
	}
	return appendComments(out, f.Content, gap, c.SourceSpan.End, r)
}

// appendComments appends the comments in content[from:to], the gap
// between two tokens, which holds nothing but white space and comments.
func appendComments(out []SemToken, content []byte, from, to int, r source.Span) []SemToken {
	for i := from; i < to; {
		switch content[i] {
		case ' ', '\t', '\r', '\n', '\f', '\v':
			i++
			continue
		}
		if i+1 >= to || content[i] != '-' || content[i+1] != '-' {
			i++ // not expected between tokens; skip rather than guess
			continue
		}
		end := i + 2
		if lv := longOpen(content[end:to]); lv >= 0 {
			closer := "]" + strings.Repeat("=", lv) + "]"
			if k := strings.Index(string(content[end:to]), closer); k >= 0 {
				end += k + len(closer)
			} else {
				end = to
			}
		} else {
			for end < to && content[end] != '\n' {
				end++
			}
			if end > i && content[end-1] == '\r' {
				end--
			}
		}
		if end >= r.Start && i <= r.End {
			out = append(out, SemToken{int32(i), int32(end), semComment, 0})
		}
		i = end
	}
	return out
}

// longOpen returns the level of a long bracket ([[ or [==[) at the start
// of b, or -1.
func longOpen(b []byte) int {
	if len(b) < 2 || b[0] != '[' {
		return -1
	}
	n := 1
	for n < len(b) && b[n] == '=' {
		n++
	}
	if n < len(b) && b[n] == '[' {
		return n - 1
	}
	return -1
}

// splitLines cuts tokens that span line breaks into one token per line
// (clients need not support multi-line tokens), dropping empty pieces.
func splitLines(f *source.File, toks []SemToken) []SemToken {
	out := make([]SemToken, 0, len(toks)+len(toks)/16)
	l := 1 // the line of the last piece: toks are sorted, so it only moves on
	for _, t := range toks {
		start, end := int(t.Start), int(t.End)
		for start < end {
			if f.LineStart(l) > start || f.LineStart(l+1) <= start {
				if l+1 < f.LineCount() && f.LineStart(l+2) > start && f.LineStart(l+1) <= start {
					l++ // the next line: the common case after a split
				} else {
					l = f.Line(start)
				}
			}
			le := f.LineEnd(l)
			if end <= le || le < start {
				out = append(out, SemToken{int32(start), t.End, t.Type, t.Mods})
				break
			}
			if le > start {
				out = append(out, SemToken{int32(start), int32(le), t.Type, t.Mods})
			}
			start = f.LineStart(l + 1)
		}
	}
	return out
}
