package lsp

import (
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// index is what the navigation features know about one snapshot: every
// section, every Lua chunk's tokens, tool/model declarations and every
// literal reference to a section or an alias. It is built lazily from the
// parse tree plus the token scanner and never outlives its snapshot.
type index struct {
	prompt   *parse.Prompt
	sections []*parse.Section // all sections, file order
	chunks   []*chunkInfo
	tools    map[string]*toolDecl
	toolList []*toolDecl
	models   map[string]*modelDecl
	locals   []*localTool
	refs     []*ref
	// refStarts indexes the refs found before the globals pass.
	refStarts map[int]bool
}

// chunkInfo is one Lua chunk with its tokens.
type chunkInfo struct {
	chunk *parse.Chunk
	// owner is the section the chunk belongs to; nil for H1 and shared.
	owner *parse.Section
	toks  []token
}

type refKind uint8

const (
	refSection refKind = iota
	refTool
	refModel
	refLocal
)

// ref is one mention of a section address or alias. span covers the
// string's contents or the identifier.
type ref struct {
	kind  refKind
	span  source.Span
	name  string
	call  string // how it appears: "jump", "tools.add", "global", ...
	owner *parse.Section
	chunk *chunkInfo
	// decl marks the declaring mention (tools.bind's alias string).
	decl bool
	// target is the resolved section of a section reference (nil when it
	// does not resolve); targets lists all matches when ambiguous.
	target *parse.Section
}

// toolDecl is a tools.bind/need declaration in H1.
type toolDecl struct {
	alias      string
	capability string
	override   string
	span       source.Span // the alias string's contents
	handle     string      // local variable holding the handle, if any
	call       string      // "tools.bind" or the upstream "tools.need"
	always     bool
	alwaysOver string
	addedIn    []*parse.Section
	addOver    map[*parse.Section]string
}

// modelDecl is a models.bind/need/default declaration.
type modelDecl struct {
	alias      string
	capability string
	call       string
	span       source.Span
	handle     string
}

// localTool is a tools.add_local declaration in a section.
type localTool struct {
	alias       string
	description string
	params      []localParam
	span        source.Span
	handler     source.Span
	owner       *parse.Section
}

type localParam struct {
	name, typ, description string
}

// controlCalls take a section address as their first argument.
var controlCalls = map[string]bool{"jump": true, "execute": true, "fanout": true, "list_from_section": true}

func (snap *snapshot) index() *index {
	if snap.idx == nil {
		snap.idx = buildIndex(snap.prompt)
	}
	return snap.idx
}

func buildIndex(p *parse.Prompt) *index {
	ix := &index{prompt: p, tools: map[string]*toolDecl{}, models: map[string]*modelDecl{}}
	if p == nil {
		return ix
	}
	var walk func([]*parse.Section)
	walk = func(ss []*parse.Section) {
		for _, s := range ss {
			ix.sections = append(ix.sections, s)
			walk(s.Children)
		}
	}
	walk(p.Sections)

	add := func(c *parse.Chunk, owner *parse.Section) {
		if c == nil || !c.SourceSpan.IsValid() || c.SourceSpan.End > len(p.File.Content) {
			return
		}
		src := p.File.Content[c.SourceSpan.Start:c.SourceSpan.End]
		ix.chunks = append(ix.chunks, &chunkInfo{chunk: c, owner: owner, toks: chunkTokens(c, src, c.SourceSpan.Start)})
	}
	add(p.Shared, nil)
	for _, b := range p.H1Blocks {
		if b.Kind == parse.LuaBlock {
			add(b.Chunk, nil)
		}
	}
	for _, s := range ix.sections {
		for _, b := range s.Blocks {
			if b.Kind == parse.LuaBlock {
				add(b.Chunk, s)
			}
		}
	}
	// Declarations first (H1 and shared chunks come first in ix.chunks),
	// so that uses in sections can be recognised.
	for _, ci := range ix.chunks {
		ix.scanChunk(ci)
	}
	for _, ci := range ix.chunks {
		ix.scanGlobals(ci)
	}
	for _, r := range ix.refs {
		if r.kind == refSection {
			r.target = resolveAddress(p, r.owner, r.name)
		}
	}
	return ix
}

// arg is one top-level argument of a call: its tokens.
type arg struct {
	toks []token
}

// str returns the argument's string literal when it is exactly one.
func (a arg) str() (token, bool) {
	if len(a.toks) == 1 && a.toks[0].kind == tokString {
		return a.toks[0], true
	}
	return token{}, false
}

// callArgs splits the arguments of the call whose '(' is toks[open].
// It returns the arguments and the index after ')'.
func callArgs(toks []token, open int) ([]arg, int) {
	var args []arg
	depth := 0
	cur := arg{}
	i := open
	for ; i < len(toks); i++ {
		t := toks[i]
		if t.kind == tokPunct {
			switch t.text {
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
					return args, i + 1
				}
			case ",":
				if depth == 1 {
					args = append(args, cur)
					cur = arg{}
					continue
				}
			}
		}
		if t.kind == tokName && depth == 1 && (t.text == "function") {
			// A function body: keep only its first token; the rest is
			// scanned separately by the outer loop.
			cur.toks = append(cur.toks, t)
			continue
		}
		cur.toks = append(cur.toks, t)
	}
	if len(cur.toks) > 0 {
		args = append(args, cur)
	}
	return args, i
}

// qualified reports whether toks[i] starts `lib.member` and returns member.
func qualified(toks []token, i int, lib string) (string, bool) {
	if i+2 >= len(toks) || toks[i].kind != tokName || toks[i].text != lib {
		return "", false
	}
	if i > 0 && toks[i-1].kind == tokPunct && (toks[i-1].text == "." || toks[i-1].text == ":") {
		return "", false
	}
	if toks[i+1].text != "." || toks[i+2].kind != tokName {
		return "", false
	}
	return toks[i+2].text, true
}

// localAssigned returns the name in `local NAME =` directly before toks[i].
func localAssigned(toks []token, i int) string {
	if i >= 3 && toks[i-1].text == "=" && toks[i-2].kind == tokName && toks[i-3].text == "local" {
		return toks[i-2].text
	}
	if i >= 2 && toks[i-1].text == "=" && toks[i-2].kind == tokName {
		return toks[i-2].text
	}
	return ""
}

func spanOf(t token) source.Span { return source.Span{Start: t.innerStart, End: t.innerEnd} }

func (ix *index) scanChunk(ci *chunkInfo) {
	toks := ci.toks
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tokName {
			continue
		}
		if m, ok := qualified(toks, i, "tools"); ok {
			ix.toolsCall(ci, i, m)
			continue
		}
		if m, ok := qualified(toks, i, "models"); ok {
			ix.modelsCall(ci, i, m)
			continue
		}
		if controlCalls[t.text] && i+1 < len(toks) && toks[i+1].text == "(" &&
			!(i > 0 && (toks[i-1].text == "." || toks[i-1].text == ":")) {
			args, _ := callArgs(toks, i+1)
			if len(args) > 0 {
				if s, ok := args[0].str(); ok {
					ix.refs = append(ix.refs, &ref{kind: refSection, span: spanOf(s), name: s.text, call: t.text, owner: ci.owner, chunk: ci})
				}
			}
		}
	}
}

func (ix *index) toolsCall(ci *chunkInfo, i int, member string) {
	toks := ci.toks
	after := i + 3
	if member == "calls" {
		// tools.calls.x or tools.calls["x"]
		if after+1 < len(toks) && toks[after].text == "." && toks[after+1].kind == tokName {
			n := toks[after+1]
			ix.refs = append(ix.refs, &ref{kind: refTool, span: source.Span{Start: n.start, End: n.end}, name: n.text, call: "tools.calls", owner: ci.owner, chunk: ci})
		} else if after+1 < len(toks) && toks[after].text == "[" && toks[after+1].kind == tokString {
			s := toks[after+1]
			ix.refs = append(ix.refs, &ref{kind: refTool, span: spanOf(s), name: s.text, call: "tools.calls", owner: ci.owner, chunk: ci})
		}
		return
	}
	if after >= len(toks) || toks[after].text != "(" {
		return
	}
	args, _ := callArgs(toks, after)
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
		d := &toolDecl{alias: a.text, span: spanOf(a), handle: localAssigned(toks, i), call: call, addOver: map[*parse.Section]string{}}
		if len(args) > 1 {
			if s, ok := args[1].str(); ok {
				d.capability = s.text
			}
		}
		if len(args) > 2 {
			if s, ok := args[2].str(); ok {
				d.override = s.text
			}
		}
		if _, dup := ix.tools[d.alias]; !dup {
			ix.tools[d.alias] = d
			ix.toolList = append(ix.toolList, d)
		}
		ix.refs = append(ix.refs, &ref{kind: refTool, span: d.span, name: d.alias, call: call, owner: ci.owner, chunk: ci, decl: true})
	case "always", "add":
		var names []token
		var over string
		for k, a := range args {
			if k == 0 {
				for _, t := range a.toks {
					if t.kind == tokString || t.kind == tokName {
						names = append(names, t)
					}
				}
			} else if s, ok := a.str(); ok && k == 1 {
				over = s.text
			}
		}
		for _, n := range names {
			alias := n.text
			sp := source.Span{Start: n.start, End: n.end}
			if n.kind == tokString {
				sp = spanOf(n)
			} else if d := ix.toolByHandle(n.text); d != nil && ci.owner == nil {
				alias = d.alias // an H1 handle variable
			} else if d := ix.tools[n.text]; d != nil && ci.owner != nil {
				alias = d.alias // an alias global in a section
			} else {
				continue // a variable we cannot follow
			}
			ix.refs = append(ix.refs, &ref{kind: refTool, span: sp, name: alias, call: call, owner: ci.owner, chunk: ci})
			d := ix.tools[alias]
			if d == nil {
				continue
			}
			if member == "always" {
				d.always = true
				if over != "" {
					d.alwaysOver = over
				}
			} else if ci.owner != nil {
				if _, seen := d.addOver[ci.owner]; !seen {
					d.addedIn = append(d.addedIn, ci.owner)
				}
				d.addOver[ci.owner] = over
			}
		}
	case "add_local":
		if len(args) == 0 {
			return
		}
		a, ok := args[0].str()
		if !ok {
			return
		}
		lt := &localTool{alias: a.text, span: spanOf(a), owner: ci.owner}
		if len(args) > 1 {
			if s, ok := args[1].str(); ok {
				lt.description = s.text
			}
		}
		if len(args) > 2 {
			lt.params = parseParams(args[2].toks)
		}
		if len(args) > 3 && len(args[3].toks) > 0 {
			t := args[3].toks[0]
			lt.handler = source.Span{Start: t.start, End: t.end}
		}
		ix.locals = append(ix.locals, lt)
		ix.refs = append(ix.refs, &ref{kind: refLocal, span: lt.span, name: lt.alias, call: call, owner: ci.owner, chunk: ci, decl: true})
	}
}

// parseParams reads `{ name = "type", other = {"type", "desc"} }` from the
// tokens of the table argument (including its braces).
func parseParams(toks []token) []localParam {
	var out []localParam
	depth := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.text {
		case "{":
			depth++
			continue
		case "}":
			depth--
			continue
		}
		if depth != 1 || t.kind != tokName || i+2 >= len(toks) || toks[i+1].text != "=" {
			continue
		}
		p := localParam{name: t.text}
		v := toks[i+2]
		if v.kind == tokString {
			p.typ = v.text
		} else if v.text == "{" {
			var strs []string
			for j := i + 3; j < len(toks) && toks[j].text != "}"; j++ {
				if toks[j].kind == tokString {
					strs = append(strs, toks[j].text)
				}
			}
			if len(strs) > 0 {
				p.typ = strs[0]
			}
			if len(strs) > 1 {
				p.description = strs[1]
			}
		}
		out = append(out, p)
	}
	return out
}

func (ix *index) modelsCall(ci *chunkInfo, i int, member string) {
	toks := ci.toks
	after := i + 3
	if after >= len(toks) || toks[after].text != "(" {
		return
	}
	args, _ := callArgs(toks, after)
	if len(args) == 0 {
		return
	}
	a, ok := args[0].str()
	if !ok {
		return
	}
	call := "models." + member
	switch member {
	case "bind", "need", "default":
		d := &modelDecl{alias: a.text, call: call, span: spanOf(a), handle: localAssigned(toks, i)}
		if len(args) > 1 {
			if s, ok := args[1].str(); ok {
				d.capability = s.text
			}
		}
		if _, dup := ix.models[d.alias]; !dup {
			ix.models[d.alias] = d
		}
		ix.refs = append(ix.refs, &ref{kind: refModel, span: d.span, name: d.alias, call: call, owner: ci.owner, chunk: ci, decl: true})
	case "use", "get":
		ix.refs = append(ix.refs, &ref{kind: refModel, span: spanOf(a), name: a.text, call: call, owner: ci.owner, chunk: ci})
	}
}

func (ix *index) toolByHandle(name string) *toolDecl {
	for _, d := range ix.toolList {
		if d.handle == name {
			return d
		}
	}
	return nil
}

// scanGlobals records alias globals in sections and handle variables in
// H1: a bare name equal to a declared alias (sections) or to the variable
// holding a bind handle (H1) that is not a field and not assigned to.
func (ix *index) scanGlobals(ci *chunkInfo) {
	toks := ci.toks
	for i, t := range toks {
		if t.kind != tokName {
			continue
		}
		if i > 0 && (toks[i-1].text == "." || toks[i-1].text == ":" || toks[i-1].text == "local") {
			continue
		}
		if i+1 < len(toks) && toks[i+1].text == "=" {
			continue
		}
		var d *toolDecl
		if ci.owner != nil {
			d = ix.tools[t.text]
		} else {
			d = ix.toolByHandle(t.text)
		}
		if d == nil || ix.hasRefAt(t.start) {
			continue
		}
		call := "global"
		if ci.owner == nil {
			call = "handle"
		}
		ix.refs = append(ix.refs, &ref{kind: refTool, span: source.Span{Start: t.start, End: t.end}, name: d.alias, call: call, owner: ci.owner, chunk: ci})
	}
}

func (ix *index) hasRefAt(off int) bool {
	if ix.refStarts == nil {
		ix.refStarts = make(map[int]bool, len(ix.refs))
		for _, r := range ix.refs {
			ix.refStarts[r.span.Start] = true
		}
	}
	return ix.refStarts[off]
}

// resolveAddress resolves a heading string against owner's visible set
// with the engine's own resolution (parse.Resolve, shared with the runtime
// and the analyzer). It returns nil for a malformed, unknown or ambiguous
// address.
func resolveAddress(p *parse.Prompt, owner *parse.Section, addr string) *parse.Section {
	s, err := parse.Resolve(p, owner, addr)
	if err != nil {
		return nil
	}
	return s
}

// splitAddress parses "## Name" into its level and trimmed name.
func splitAddress(addr string) (int, string, bool) {
	level, name, err := parse.ParseTarget(addr)
	return level, name, err == nil
}

// visibleSet returns the sections owner may address (parse.Visible).
func visibleSet(p *parse.Prompt, owner *parse.Section) []*parse.Section {
	if p == nil {
		return nil
	}
	return parse.Visible(p, owner)
}

// sectionAt returns the innermost section whose heading or content
// contains off, or nil (H1 region, frontmatter).
func (ix *index) sectionAt(off int) *parse.Section {
	var best *parse.Section
	for _, s := range ix.sections {
		if s.Heading != nil && off >= s.Heading.Span.Start && off <= s.Content.End {
			best = s
		}
	}
	return best
}

// refAt returns the reference whose span contains off.
func (ix *index) refAt(off int) *ref {
	for _, r := range ix.refs {
		if r.span.Contains(off) {
			return r
		}
	}
	return nil
}

// headingAt returns the section whose heading line contains off.
func (ix *index) headingAt(off int) *parse.Section {
	for _, s := range ix.sections {
		if s.Heading != nil && off >= s.Heading.Span.Start && off < s.Heading.Span.End {
			return s
		}
	}
	return nil
}

// chunkAt returns the chunk whose Lua source contains off.
func (ix *index) chunkAt(off int) *chunkInfo {
	for _, c := range ix.chunks {
		if off >= c.chunk.SourceSpan.Start && off <= c.chunk.SourceSpan.End {
			return c
		}
	}
	return nil
}

// lexMemo is a chunk's tokens relative to the chunk's first byte, kept on
// the parser's cached chunk (parse.Chunk.Memo) with the file bytes they
// were scanned from: after an edit only the changed chunks are lexed
// again, the others' tokens are copied and shifted.
type lexMemo struct {
	raw  string
	toks []token
}

type lexKey struct{}

// chunkTokens returns the tokens of a chunk's file bytes src, which start
// at file offset base.
func chunkTokens(c *parse.Chunk, src []byte, base int) []token {
	m, ok := c.Memo(lexKey{}).(*lexMemo)
	if !ok || m.raw != string(src) {
		m = &lexMemo{raw: string(src), toks: lexLua(src, 0)}
		c.SetMemo(lexKey{}, m)
	}
	out := make([]token, len(m.toks))
	for i, t := range m.toks {
		t.start += base
		t.end += base
		if t.kind == tokString {
			t.innerStart += base
			t.innerEnd += base
		}
		out[i] = t
	}
	return out
}
