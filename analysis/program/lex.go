package program

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// chunkLex is a chunk's tokens, lexed once and shared by everything that
// reads them: the walk that builds the chunk's model (modelOf), the
// symbols index (ChunkTokens) and, through Tokens, the language server's
// semantic tokens. It is memoised on the chunk (parse.Chunk.Memo) like
// the model, so after an edit only the changed chunks are lexed again.
//
// Offsets are relative to the chunk's base (the file offset of its first
// Lua line) and lines to its first Lua line (0), so the same tokens serve
// the chunk wherever the edit moved it; they depend only on the chunk's
// text and on where its lines start relative to the base (CRLF breaks),
// which fits checks. The tokens are lexed from the parser's text
// (Chunk.Source, the parser cache's own copy), whose strings decode as the
// AST's do, with offsets mapped line by line to the file.
//
// Every open document keeps its chunks' tokens, so they are stored
// packed and without pointers (24 bytes each, which the garbage collector
// does not scan): a token's value is a slice of src, or for a string
// with escapes one of the few decoded values in extra.
type chunkLex struct {
	// lines[k] is the start of the chunk's line k+1 relative to the base,
	// for every line of the source and the one after it. The chunk's
	// model shares the slice (chunkModel.lines).
	lines []int32
	src   string
	toks  []packedToken
	extra []string
}

// packedToken is a luatok.Token relative to its chunk (see chunkLex).
// val is the offset of the value in src, or -1-i for extra[i].
type packedToken struct {
	start, end, line int32
	val, vlen        int32
	kind, open       uint8
	closed           bool
}

type lexKey struct{}

// lexes counts the chunks lexed (tests prove each is lexed once).
var lexes atomic.Int64

// lexOf returns chunk c's tokens in file f, from the memo when it fits.
func lexOf(c *parse.Chunk, f *source.File) *chunkLex {
	buf := tokBufs.Get().(*[]luatok.Token)
	defer tokBufs.Put(buf)
	l, toks, fresh := lexInto(c, f, (*buf)[:0])
	if fresh && cap(toks) <= maxTokBuf {
		clear(toks) // drop the values' references to the source
		*buf = toks[:0]
	}
	return l
}

// lexInto is lexOf lexing, when the memo does not fit, into buf: fresh
// is then true and toks are the chunk's tokens unpacked (as
// l.appendTokens(nil, 0, 0) gives them), so that the walk of a chunk
// just lexed reads them without unpacking its own.
func lexInto(c *parse.Chunk, f *source.File, buf []luatok.Token) (l *chunkLex, toks []luatok.Token, fresh bool) {
	base := f.LineStart(c.FirstLine)
	if l, ok := c.Memo(lexKey{}).(*chunkLex); ok && l.fits(c, f, base) {
		return l, buf, false
	}
	lexes.Add(1)
	// The closure reads lines, not l: capturing the result would move it
	// to the heap on every call, memo hits included.
	lines := make([]int32, lineCount(c)+1)
	for k := range lines {
		lines[k] = int32(f.LineStart(c.FirstLine+k) - base)
	}
	toks = luatok.AppendLex(buf, c.Source, 0, func(line int) int {
		if line < len(lines) {
			return int(lines[line])
		}
		return int(lines[len(lines)-1])
	})
	l = &chunkLex{lines: lines, src: c.Source}
	l.toks = make([]packedToken, len(toks))
	for i, t := range toks {
		p := packedToken{start: int32(t.Span.Start), end: int32(t.Span.End), line: t.Line,
			vlen: int32(len(t.Value)), kind: uint8(t.Kind), open: t.Open, closed: t.Closed}
		if off, ok := offsetIn(l.src, t.Value); ok {
			p.val = int32(off)
		} else {
			p.val = int32(-1 - len(l.extra))
			l.extra = append(l.extra, t.Value)
		}
		l.toks[i] = p
	}
	c.SetMemo(lexKey{}, l)
	return l, toks, true
}

// tokBufs hold the lexer's output while a chunk is packed: a chunk's
// tokens are 56 bytes each before packing, so a prompt of many chunks
// would otherwise allocate the unpacked size of all its code again.
var tokBufs = sync.Pool{New: func() any { return new([]luatok.Token) }}

// maxTokBuf is the largest token buffer kept for reuse.
const maxTokBuf = 1 << 14

// offsetIn returns the offset of v in src when v is a substring of src's
// memory (as the lexer's values are, except decoded strings).
func offsetIn(src, v string) (int, bool) {
	if len(v) == 0 {
		return 0, true
	}
	s := uintptr(unsafe.Pointer(unsafe.StringData(src)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(v)))
	if len(src) == 0 || p < s || p+uintptr(len(v)) > s+uintptr(len(src)) {
		return 0, false
	}
	return int(p - s), true
}

// fits reports whether the lex is valid for chunk c at base in f.
func (l *chunkLex) fits(c *parse.Chunk, f *source.File, base int) bool {
	for k, rel := range l.lines {
		if f.LineStart(c.FirstLine+k)-base != int(rel) {
			return false
		}
	}
	return true
}

// appendTokens appends the tokens with offsets and lines shifted by base
// and line: the chunk's absolute tokens when base is the file offset of
// its first Lua line and line that line's number.
func (l *chunkLex) appendTokens(out []luatok.Token, base, line int) []luatok.Token {
	for i := range l.toks {
		p := &l.toks[i]
		t := luatok.Token{Span: source.Span{Start: int(p.start) + base, End: int(p.end) + base}, Line: p.line + int32(line),
			Kind: luatok.Kind(p.kind), Open: p.open, Closed: p.closed}
		if p.val >= 0 {
			t.Value = l.src[p.val : p.val+p.vlen]
		} else {
			t.Value = l.extra[-1-p.val]
		}
		out = append(out, t)
	}
	return out
}

// Tokens returns chunk c's Lua tokens with absolute file offsets and
// lines: a copy of its memoised tokens (lexed once per chunk text and
// place, see chunkLex), which the caller may keep or change.
func Tokens(c *parse.Chunk, f *source.File) []luatok.Token {
	l := lexOf(c, f)
	return l.appendTokens(make([]luatok.Token, 0, len(l.toks)), f.LineStart(c.FirstLine), c.FirstLine)
}
