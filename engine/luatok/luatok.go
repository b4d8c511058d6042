// Package luatok is the one Lua tokenizer of the parser, the analyzer and
// the language server. gopher-lua's AST carries line numbers only, so the
// analyzer finds each node's name or literal among the tokens of its line;
// the language server navigates over the tokens of each chunk; the parser
// scans them for Lua 5.4-only syntax to explain a compile error.
//
// The tokenizer is tolerant, as an editor needs while the user types: it
// never fails, an unterminated short string ends at its line break and an
// unterminated long string or comment at the end of the source (Token.Closed
// tells). Comments and whitespace are skipped; offsets stay exact in CRLF
// files.
package luatok

import (
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Kind is a token kind.
type Kind uint8

// Token kinds.
const (
	Name   Kind = iota // identifiers and keywords
	String             // quoted or long-bracket strings
	Number
	Op
)

// Token is one lexed token. Its fields are ordered so that it packs into
// 40 bytes: a chunk's tokens stay in memory while its document is open.
type Token struct {
	// Value is the identifier, the decoded string, the number or operator
	// text.
	Value string
	// Span is the token's file range, as Lex's base or AppendLex's line starts
	// place it (strings include quotes).
	Span source.Span
	// Line is the file line where the token starts (counted from Lex's or
	// AppendLex's first line).
	Line int32
	Kind Kind
	// Open is the length of a string's opening delimiter: 1 for a quote,
	// level+2 for a long bracket; 0 for other tokens.
	Open uint8
	// Closed is false for a string whose closing delimiter is missing.
	Closed bool
}

// Inner returns a string token's contents span, without its delimiters
// (a missing closing delimiter leaves the end where the token ends). For
// other tokens it is the token's span.
func (t Token) Inner() source.Span {
	if t.Kind != String {
		return t.Span
	}
	s := source.Span{Start: t.Span.Start + int(t.Open), End: t.Span.End}
	if t.Closed {
		s.End -= int(t.Open)
	}
	if s.End < s.Start {
		s.End = s.Start
	}
	return s
}

// Lex tokenises src, whose first byte is at file offset base and on file
// line firstLine, when src is a verbatim slice of the file. It never
// fails: unterminated constructs end at the end of src.
func Lex(src string, base, firstLine int) []Token {
	starts := []int{base}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			starts = append(starts, base+i+1)
		}
	}
	return AppendLex(make([]Token, 0, len(src)/5), src, firstLine, func(line int) int {
		if k := line - firstLine; k >= 0 && k < len(starts) {
			return starts[k]
		}
		return base + len(src)
	})
}

// AppendLex tokenises src, whose line k (0-based) is file line
// firstLine+k starting at file offset lineStart(firstLine+k), appending
// to toks so that many chunks can share one allocation. Offsets are
// computed per line, so they stay exact when the file has CRLF line
// breaks that src (the parser's chunk text) no longer has.
func AppendLex(toks []Token, src string, firstLine int, lineStart func(line int) int) []Token {
	l := lexer{src: src, line: firstLine, lineStart: lineStart}
	for {
		t, ok := l.next()
		if !ok {
			return toks
		}
		toks = append(toks, t)
	}
}

type lexer struct {
	src  string
	pos  int
	line int
	// lineOff is the src offset where the current line starts.
	lineOff   int
	lineStart func(int) int
}

func (l *lexer) advance(n int) {
	end := l.pos + n
	if end > len(l.src) {
		end = len(l.src)
	}
	seg := l.src[l.pos:end]
	if k := strings.Count(seg, "\n"); k > 0 {
		l.line += k
		l.lineOff = l.pos + strings.LastIndexByte(seg, '\n') + 1
	}
	l.pos = end
}

// fileOff converts the current position to a file offset.
func (l *lexer) fileOff(line, lineOff, pos int) int {
	return l.lineStart(line) + pos - lineOff
}

// longBracket returns the level of a long bracket opening at pos
// ("[[" is 0, "[==[" is 2) or -1.
func (l *lexer) longBracket(pos int) int {
	if pos >= len(l.src) || l.src[pos] != '[' {
		return -1
	}
	i := pos + 1
	for i < len(l.src) && l.src[i] == '=' {
		i++
	}
	if i < len(l.src) && l.src[i] == '[' {
		return i - pos - 1
	}
	return -1
}

func (l *lexer) skipLong(level int) (body string, closed bool) {
	open := level + 2
	closer := "]" + strings.Repeat("=", level) + "]"
	start := l.pos + open
	j := strings.Index(l.src[start:], closer)
	if j < 0 {
		body = l.src[start:]
		l.advance(len(l.src) - l.pos)
	} else {
		body, closed = l.src[start:start+j], true
		l.advance(open + j + len(closer))
	}
	// A newline right after the opening bracket is not part of the string.
	if strings.HasPrefix(body, "\r\n") {
		body = body[2:]
	} else if strings.HasPrefix(body, "\n") {
		body = body[1:]
	}
	return body, closed
}

func (l *lexer) next() (Token, bool) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.pos++
			l.line++
			l.lineOff = l.pos
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
			continue
		case c == '-' && strings.HasPrefix(l.src[l.pos:], "--"):
			if lv := l.longBracket(l.pos + 2); lv >= 0 {
				l.advance(2)
				l.skipLong(lv)
				continue
			}
			j := strings.IndexByte(l.src[l.pos:], '\n')
			if j < 0 {
				l.advance(len(l.src) - l.pos)
			} else {
				l.advance(j)
			}
			continue
		}
		break
	}
	if l.pos >= len(l.src) {
		return Token{}, false
	}
	start, line, lineOff := l.pos, l.line, l.lineOff
	mk := func(k Kind, v string) (Token, bool) {
		span := source.Span{Start: l.fileOff(line, lineOff, start), End: l.fileOff(l.line, l.lineOff, l.pos)}
		return Token{Kind: k, Value: v, Span: span, Line: int32(line)}, true
	}
	c := l.src[l.pos]
	switch {
	case isIdentStart(c):
		i := l.pos + 1
		for i < len(l.src) && isIdent(l.src[i]) {
			i++
		}
		l.pos = i // identifiers never span lines
		return mk(Name, l.src[start:l.pos])
	case isDigit(c) || (c == '.' && l.pos+1 < len(l.src) && isDigit(l.src[l.pos+1])):
		i := l.pos + 1
		for i < len(l.src) {
			d := l.src[i]
			if isIdent(d) || d == '.' || ((d == '+' || d == '-') && (l.src[i-1] == 'e' || l.src[i-1] == 'E' || l.src[i-1] == 'p' || l.src[i-1] == 'P')) {
				i++
				continue
			}
			break
		}
		l.advance(i - l.pos)
		return mk(Number, l.src[start:l.pos])
	case c == '"' || c == '\'':
		v, closed := l.quoted(c)
		t, ok := mk(String, v)
		t.Open, t.Closed = 1, closed
		return t, ok
	case c == '[':
		if lv := l.longBracket(l.pos); lv >= 0 {
			v, closed := l.skipLong(lv)
			t, ok := mk(String, v)
			t.Open, t.Closed = uint8(min(lv+2, 255)), closed
			return t, ok
		}
	}
	switch c {
	case '.', '=', '~', '<', '>', ':', '/': // the first bytes of multiOps
		for _, op := range multiOps {
			if strings.HasPrefix(l.src[l.pos:], op) {
				l.advance(len(op))
				return mk(Op, op)
			}
		}
	}
	l.advance(1)
	return mk(Op, l.src[start:l.pos])
}

// quoted scans a short string starting at the quote and returns its
// decoded value; closed is false when the line or the source ends first.
func (l *lexer) quoted(q byte) (v string, closed bool) {
	// Most strings hold no escape: their value is the source between the
	// quotes, not a copy.
	for i := l.pos + 1; i < len(l.src); i++ {
		c := l.src[i]
		if c == q {
			v = l.src[l.pos+1 : i]
			l.pos = i + 1 // no line break inside
			return v, true
		}
		if c == '\\' || c == '\n' {
			break
		}
	}
	var b strings.Builder
	i := l.pos + 1
	for i < len(l.src) {
		c := l.src[i]
		if c == q {
			i++
			closed = true
			break
		}
		if c == '\n' { // unterminated; the parser already reported it
			break
		}
		if c != '\\' || i+1 >= len(l.src) {
			b.WriteByte(c)
			i++
			continue
		}
		e := l.src[i+1]
		i += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\n':
			b.WriteByte('\n')
		default:
			if isDigit(e) {
				n := int(e - '0')
				for k := 0; k < 2 && i < len(l.src) && isDigit(l.src[i]); k++ {
					n = n*10 + int(l.src[i]-'0')
					i++
				}
				b.WriteByte(byte(n))
			} else {
				b.WriteByte(e)
			}
		}
	}
	l.advance(i - l.pos)
	return b.String(), closed
}

var multiOps = []string{"...", "..", "==", "~=", "<=", ">=", "::", "//", "<<", ">>"}

func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdent(c byte) bool      { return isIdentStart(c) || isDigit(c) }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

// Index finds tokens by line. Lookups consume tokens in order per line, so
// that the k-th occurrence of a name on a line maps to the k-th AST node
// visited in source order.
type Index struct {
	toks []Token
	// first[l-base] is the index of the first token on line l (tokens are
	// in line order), or -1.
	first []int32
	// last[l-base] is one past the last token on line l.
	last []int32
	base int
	used []bool
	// queues holds per-value token queues for long lines (see Take).
	queues map[int]map[queueKey][]int
}

// NewIndex indexes toks, which must be in source order (as Lex returns
// them).
func NewIndex(toks []Token) *Index {
	ix := &Index{}
	ix.Reset(toks)
	return ix
}

// Reset makes ix an index of toks, reusing its memory: a caller that
// indexes many token lists one after another (a chunk at a time)
// allocates only when a list outgrows the ones before.
func (ix *Index) Reset(toks []Token) {
	ix.toks, ix.base, ix.queues = toks, 0, nil
	ix.used = grow(ix.used, len(toks))
	clear(ix.used)
	ix.first, ix.last = ix.first[:0], ix.last[:0]
	if len(toks) == 0 {
		return
	}
	ix.base = int(toks[0].Line)
	n := int(toks[len(toks)-1].Line) - ix.base + 1
	ix.first = grow(ix.first, n)
	ix.last = grow(ix.last, n)
	clear(ix.last)
	for i := range ix.first {
		ix.first[i] = -1
	}
	for i := len(toks) - 1; i >= 0; i-- {
		ix.first[int(toks[i].Line)-ix.base] = int32(i)
	}
	for i := range toks {
		ix.last[int(toks[i].Line)-ix.base] = int32(i + 1)
	}
}

// grow returns s with length n, reallocated only when its capacity is
// short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Tokens returns all tokens.
func (ix *Index) Tokens() []Token { return ix.toks }

// Take finds the first unused token of kind k and value v on line, marks
// it used and returns it. When every match is used it returns the first
// match anyway, so a span is always found when the text is there.
//
// Lines with many tokens (minified code) get a per-value queue so that a
// line of n tokens costs O(n), not O(n²).
func (ix *Index) Take(line int, k Kind, v string) (Token, bool) {
	l := line - ix.base
	if l < 0 || l >= len(ix.first) || ix.first[l] < 0 {
		return Token{}, false
	}
	start, end := int(ix.first[l]), int(ix.last[l])
	if end-start > 64 {
		return ix.takeQueued(line, start, end, k, v)
	}
	fallback := -1
	for i := start; i < end; i++ {
		t := &ix.toks[i]
		if t.Kind != k || t.Value != v {
			continue
		}
		if !ix.used[i] {
			ix.used[i] = true
			return *t, true
		}
		if fallback < 0 {
			fallback = i
		}
	}
	if fallback >= 0 {
		return ix.toks[fallback], true
	}
	return Token{}, false
}

type queueKey struct {
	k Kind
	v string
}

func (ix *Index) takeQueued(line, start, end int, k Kind, v string) (Token, bool) {
	if ix.queues == nil {
		ix.queues = map[int]map[queueKey][]int{}
	}
	q := ix.queues[line]
	if q == nil {
		q = map[queueKey][]int{}
		for i := start; i < end; i++ {
			key := queueKey{ix.toks[i].Kind, ix.toks[i].Value}
			q[key] = append(q[key], i)
		}
		ix.queues[line] = q
	}
	key := queueKey{k, v}
	list := q[key]
	for len(list) > 0 && ix.used[list[0]] {
		list = list[1:]
	}
	if len(list) == 0 {
		// Every match is used: fall back to the first one, if any.
		for i := start; i < end; i++ {
			if ix.toks[i].Kind == k && ix.toks[i].Value == v {
				return ix.toks[i], true
			}
		}
		q[key] = list
		return Token{}, false
	}
	i := list[0]
	ix.used[i] = true
	q[key] = list[1:]
	return ix.toks[i], true
}

// At returns the index of the first token that starts at or after file
// offset off in toks (in source order), or len(toks).
func At(toks []Token, off int) int {
	return sort.Search(len(toks), func(i int) bool { return toks[i].Span.Start >= off })
}

// After returns the first token after offset off, if any.
func (ix *Index) After(off int) (Token, bool) {
	if lo := At(ix.toks, off); lo < len(ix.toks) {
		return ix.toks[lo], true
	}
	return Token{}, false
}

// CallEnd returns the end offset of the argument list that starts with
// the first token at or after off: the matching ")" of a "(", the "}" of
// a table argument, or a string argument's end. ok is false when no
// argument list starts there.
func (ix *Index) CallEnd(off int) (end int, ok bool) {
	lo := At(ix.toks, off)
	if lo >= len(ix.toks) {
		return 0, false
	}
	first := ix.toks[lo]
	if first.Kind == String {
		return first.Span.End, true
	}
	if first.Kind != Op || (first.Value != "(" && first.Value != "{") {
		return 0, false
	}
	open, close := first.Value, ")"
	if open == "{" {
		close = "}"
	}
	depth := 0
	for i := lo; i < len(ix.toks); i++ {
		t := ix.toks[i]
		if t.Kind != Op {
			continue
		}
		switch t.Value {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return t.Span.End, true
			}
		}
	}
	return 0, false
}
