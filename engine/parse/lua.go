package parse

import (
	"bufio"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

func isUnicodeSpace(r rune) bool { return unicode.IsSpace(r) }

// compile syntax-checks a chunk with gopher-lua and keeps its AST and
// proto. Errors are mapped to absolute file lines; Lua 5.4-only syntax gets
// a message saying the engine runs Lua 5.1 (docs/language.md#lua-dialect).
func (ps *parser) compile(c *Chunk) {
	res := ps.prev.chunk(ps.same, &ps.chunkHint, c.SourceSpan.Start, c.SourceSpan.End, len(ps.file.Content), c.Name, c.Source)
	if res == nil {
		res = compileChunk(c.Source, c.Name)
	}
	if r := ps.prompt.reuse; r != nil {
		r.addChunk(c.SourceSpan.Start, res, len(ps.luaOpen)+len(ps.shared))
	}
	stmts, err := res.stmts, res.err
	if err == nil && stmts == nil && strings.TrimSpace(c.Source) != "" {
		err = fmt.Errorf("cannot parse chunk")
	}
	if le, ok := err.(*levelError); ok {
		ps.luaError(c, le.line, le.col, le.n, "lua compilation error at %s (line %d): %s", c.Label, c.FirstLine+le.line-1, le.msg)
		return
	}
	if err != nil {
		line, col, msg := 0, 0, err.Error()
		if pe, ok := err.(*luaparse.Error); ok {
			line, col = pe.Pos.Line, pe.Pos.Column
			msg = strings.TrimSpace(pe.Message)
			if pe.Token != "" {
				msg = fmt.Sprintf("%s near '%s'", msg, pe.Token)
			}
		}
		if line <= 0 { // EOF
			line = strings.Count(c.Source, "\n") + 1
		}
		if f := findLua54(c.Source, line); f != nil {
			ps.luaError(c, f.line, f.col, f.len, "%s", f.message(c))
			return
		}
		ps.luaError(c, line, col, 0, "lua compilation error at %s (line %d): %s", c.Label, c.FirstLine+line-1, msg)
		return
	}
	if f := res.gotoLabel; f != nil {
		ps.luaError(c, f.line, f.col, f.len, "%s", f.message(c))
		return
	}
	if res.loadLine > 0 {
		ps.luaError(c, res.loadLine, 0, 0, "lua compilation error at %s (line %d): %s", c.Label, c.FirstLine+res.loadLine-1, res.loadMsg)
		return
	}
	c.AST = stmts
	c.res = res
	// The cache's own copy of the text, not a substring of this parse's
	// body: what analyses memoise on the chunk (tokens' values) may point
	// into Source and must not pin a whole file's text in the cache.
	c.Source = res.key.source
}

// Key is an identity every parse of the same chunk (label and Lua text)
// shares, nil for a chunk with a syntax error. A layer that derives
// something costly from a chunk (the runtime's bytecode) memoises it
// under Key in a cache of its own.
func (c *Chunk) Key() any {
	if c.res == nil {
		return nil
	}
	return c.res
}

// Memo returns the value stored under key by SetMemo on any parse of
// the same chunk (same label and Lua text), or nil. Analyses keep facts
// they derive from the AST here, as the parser keeps the AST: an editor
// re-analyses the whole file after each keystroke while usually one chunk
// changed. A stored value lives as long as the parser's cache entry, is
// shared by every prompt and goroutine that parses the same chunk, and
// must be immutable and valid for any chunk with this text: anything that
// depends on the chunk's place in a file must be checked on use.
func (c *Chunk) Memo(key any) any {
	if c.res == nil {
		return nil
	}
	return c.res.memo.load(key)
}

// SetMemo stores v under key for Memo. It does nothing for a chunk with
// a syntax error.
func (c *Chunk) SetMemo(key, v any) {
	if c.res != nil {
		c.res.memo.store(key, v)
	}
}

// OK reports whether the chunk parsed without errors.
func (c *Chunk) OK() bool { return c.res != nil }

func safeParse(src, name string) (stmts []ast.Stmt, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	if err := syntaxLevels(src); err != nil {
		return nil, err
	}
	// gopher-lua's scanner reads through a 4 KiB bufio.Reader, which it
	// takes as it is when given one: a pooled one spares a prompt of
	// a thousand chunks 4 MiB of garbage (and the page faults of a heap
	// grown for it, in a short check).
	sr := strings.NewReader(src)
	br := luaReaders.Get().(*bufio.Reader)
	br.Reset(sr)
	defer func() {
		br.Reset(nil)
		luaReaders.Put(br)
	}()
	return luaparse.Parse(br, name)
}

// luaReaders holds the readers safeParse lends gopher-lua's scanner
// (luaparse.NewScanner keeps a *bufio.Reader of at least its 4 KiB).
var luaReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// gotoOrLabel finds a goto or label in Lua source that parsed: gopher-lua
// accepts them, Lua 5.1 does not have them.
func gotoOrLabel(src string) *lua54Finding {
	if !strings.Contains(src, "goto") && !strings.Contains(src, "::") {
		return nil // nothing gopher-lua accepts that Lua 5.1 would not
	}
	if f := findLua54(src, 0); f != nil && (f.what == "`goto`" || f.what == "a `::label::`") {
		return f
	}
	return nil
}

// luaError reports a lua-syntax error at chunk line/column (1-based; col 0
// means the whole line).
func (ps *parser) luaError(c *Chunk, line, col, n int, format string, args ...any) {
	fl := c.FirstLine + line - 1
	ls, le := ps.file.LineStart(fl), ps.file.LineEnd(fl)
	span := struct{ a, b int }{ls, le}
	if col > 0 && n > 0 && ls+col-1+n <= le {
		span.a = ls + col - 1
		span.b = span.a + n
	}
	if fl > ps.file.Line(c.Span.End) || fl < c.FirstLine-1 {
		span.a, span.b = c.Span.Start, c.Span.Start
	}
	ps.errorf(CodeLuaSyntax, spanOf(span.a, span.b), format, args...)
}

type lua54Finding struct {
	line, col, len int
	what, fix      string
	// oldJump marks goto("## X"), upstream's old spelling of jump.
	oldJump bool
}

// message is the lua-syntax error text for f in chunk c.
func (f *lua54Finding) message(c *Chunk) string {
	if f.oldJump {
		o, _ := api.LookupOld("goto")
		return fmt.Sprintf("lua compilation error at %s (line %d): %s", c.Label, c.FirstLine+f.line-1, api.OldMessage(o))
	}
	return fmt.Sprintf("lua compilation error at %s (line %d): %s is Lua 5.4 syntax, but the engine runs Lua 5.1: %s", c.Label, c.FirstLine+f.line-1, f.what, f.fix)
}

// findLua54 scans the tokens of Lua source (so strings and comments are
// skipped) for Lua 5.4-only constructs. With near > 0 it prefers one on
// that line; otherwise it returns the first one.
func findLua54(src string, near int) *lua54Finding {
	toks := luatok.Lex(src, 0, 1)
	lineStart := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	var first, onLine *lua54Finding
	for i, t := range toks {
		r := lua54(toks, i)
		if r == nil {
			continue
		}
		r.line = int(t.Line)
		r.col = t.Span.Start - lineStart[r.line-1] + 1
		if first == nil {
			first = r
		}
		if near > 0 && r.line == near {
			onLine = r
			break
		}
	}
	if onLine != nil {
		return onLine
	}
	if near > 0 {
		// A construct before the error line may have derailed the parser
		// (e.g. `local x <const> = 1` fails later on).
		if first != nil && first.line <= near {
			return first
		}
		return nil
	}
	return first
}

// lua54 describes toks[i] when it starts a Lua 5.4-only construct.
func lua54(toks []luatok.Token, i int) *lua54Finding {
	t := toks[i]
	switch t.Kind {
	case luatok.Op:
		switch t.Value {
		case "//":
			return &lua54Finding{len: 2, what: "the floor division operator `//`", fix: "use math.floor(a / b)"}
		case "<<", ">>":
			return &lua54Finding{len: 2, what: "the bit shift operator `" + t.Value + "`", fix: "bitwise operators do not exist in Lua 5.1; use arithmetic (x * 2^n, math.floor(x / 2^n))"}
		case "&", "|", "~":
			return &lua54Finding{len: 1, what: "the bitwise operator `" + t.Value + "`", fix: "bitwise operators do not exist in Lua 5.1; use arithmetic instead"}
		case "::":
			return &lua54Finding{len: 2, what: "a `::label::`", fix: "use loops with break, or functions, instead of goto/labels"}
		case "<":
			// `<const>` and `<close>`, written without spaces.
			if i+2 < len(toks) && (toks[i+1].Value == "const" || toks[i+1].Value == "close") && toks[i+1].Kind == luatok.Name &&
				toks[i+2].Value == ">" && t.Span.End == toks[i+1].Span.Start && toks[i+1].Span.End == toks[i+2].Span.Start {
				return &lua54Finding{len: 7, what: "the attribute `<" + toks[i+1].Value + ">`", fix: "remove the attribute (a plain `local` works in Lua 5.1)"}
			}
		}
	case luatok.Number:
		if low := strings.ToLower(t.Value); strings.HasPrefix(low, "0x") && strings.Contains(low, "p") {
			return &lua54Finding{len: len(t.Value), what: "the hexadecimal float literal `" + t.Value + "`", fix: "write the value in decimal"}
		}
	case luatok.Name:
		if t.Value == "goto" {
			f := &lua54Finding{len: 4, what: "`goto`", fix: "use loops with break, or functions, instead of goto/labels"}
			// goto("## X"): upstream's name of jump before a27687d.
			f.oldJump = i+1 < len(toks) && (toks[i+1].Value == "(" || toks[i+1].Kind == luatok.String)
			return f
		}
	}
	return nil
}
