package program

import (
	"sync/atomic"

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
// (Chunk.Source), whose strings decode as the AST's do, with offsets
// mapped line by line to the file.
type chunkLex struct {
	// lines[k] is the start of the chunk's line k+1 relative to the base,
	// for every line of the source and the one after it. The chunk's
	// model shares the slice (chunkModel.lines).
	lines []int32
	toks  []luatok.Token
}

type lexKey struct{}

// lexes counts the chunks lexed (tests prove each is lexed once).
var lexes atomic.Int64

// lexOf returns chunk c's tokens in file f, from the memo when it fits.
func lexOf(c *parse.Chunk, f *source.File) *chunkLex {
	base := f.LineStart(c.FirstLine)
	if l, ok := c.Memo(lexKey{}).(*chunkLex); ok && l.fits(c, f, base) {
		return l
	}
	lexes.Add(1)
	l := &chunkLex{lines: make([]int32, lineCount(c)+1)}
	for k := range l.lines {
		l.lines[k] = int32(f.LineStart(c.FirstLine+k) - base)
	}
	l.toks = luatok.AppendLex(make([]luatok.Token, 0, len(c.Source)/5), c.Source, 0, func(line int) int {
		if line < len(l.lines) {
			return int(l.lines[line])
		}
		return int(l.lines[len(l.lines)-1])
	})
	if len(l.toks) < cap(l.toks)*7/8 {
		l.toks = append([]luatok.Token(nil), l.toks...)
	}
	c.SetMemo(lexKey{}, l)
	return l
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

// appendTokens appends the tokens with absolute offsets and lines, for
// the chunk at base whose first Lua line is line.
func (l *chunkLex) appendTokens(out []luatok.Token, base, line int) []luatok.Token {
	for _, t := range l.toks {
		t.Span.Start += base
		t.Span.End += base
		t.Line += int32(line)
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
