package lsp

import (
	"strings"
)

// The gopher-lua AST carries line numbers only (pitfall 6), but hover,
// completion and rename need exact byte ranges of names and string
// literals. This scanner recovers them from the fence text. It is a
// tokenizer, not a parser: the structure (which chunks exist, where they
// are) always comes from engine/parse, and it is tolerant of the half-typed
// code an editor sends (unterminated strings end at the line end).

type tokKind uint8

const (
	tokName tokKind = iota
	tokString
	tokNumber
	tokPunct
	tokEOF
)

// token is one Lua token; offsets are absolute file offsets.
type token struct {
	kind       tokKind
	start, end int
	// text is the raw token text for names, numbers and punctuation, and
	// the decoded value for strings.
	text string
	// inner is the span of a string's contents (without the quotes).
	innerStart, innerEnd int
	// closed is false for a string that runs to the end of its line.
	closed bool
}

// lexLua scans src, which starts at file offset base.
func lexLua(src []byte, base int) []token {
	var toks []token
	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && src[i+1] == '-':
			i += 2
			if lvl, ok := longBracket(src, i); ok {
				i = skipLong(src, i, lvl)
			} else {
				for i < n && src[i] != '\n' {
					i++
				}
			}
		case isNameStart(c):
			j := i + 1
			for j < n && isNameChar(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tokName, start: base + i, end: base + j, text: string(src[i:j])})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < n && (isNameChar(src[j]) || src[j] == '.' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E' || src[j-1] == 'p' || src[j-1] == 'P')) {
				j++
			}
			toks = append(toks, token{kind: tokNumber, start: base + i, end: base + j, text: string(src[i:j])})
			i = j
		case c == '"' || c == '\'':
			t, j := lexQuoted(src, i, base)
			toks = append(toks, t)
			i = j
		case c == '[':
			if lvl, ok := longBracket(src, i); ok {
				open := i + lvl + 2
				j := skipLong(src, i, lvl)
				closeLen := lvl + 2
				closed := true
				if j > n || j-closeLen < open || !strings.HasSuffix(string(src[open:j]), "]"+strings.Repeat("=", lvl)+"]") {
					closed = false
				}
				innerEnd := j
				if closed {
					innerEnd = j - closeLen
				}
				body := string(src[open:innerEnd])
				// Lua drops a newline directly after the opening bracket.
				body = strings.TrimPrefix(strings.TrimPrefix(body, "\r"), "\n")
				toks = append(toks, token{kind: tokString, start: base + i, end: base + j, text: body,
					innerStart: base + open, innerEnd: base + innerEnd, closed: closed})
				i = j
				continue
			}
			toks = append(toks, token{kind: tokPunct, start: base + i, end: base + i + 1, text: "["})
			i++
		default:
			l := 1
			if i+2 < n && string(src[i:i+3]) == "..." {
				l = 3
			} else if i+1 < n {
				switch string(src[i : i+2]) {
				case "..", "==", "~=", "<=", ">=", "::", "//", "<<", ">>":
					l = 2
				}
			}
			toks = append(toks, token{kind: tokPunct, start: base + i, end: base + i + l, text: string(src[i : i+l])})
			i += l
		}
	}
	return toks
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isNameChar(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

// longBracket reports whether src[i:] opens a long bracket [==[ and its level.
func longBracket(src []byte, i int) (int, bool) {
	if i >= len(src) || src[i] != '[' {
		return 0, false
	}
	j := i + 1
	for j < len(src) && src[j] == '=' {
		j++
	}
	if j < len(src) && src[j] == '[' {
		return j - i - 1, true
	}
	return 0, false
}

// skipLong returns the offset after the long bracket opened at i, or len(src).
func skipLong(src []byte, i, lvl int) int {
	closer := "]" + strings.Repeat("=", lvl) + "]"
	start := i + lvl + 2
	if k := strings.Index(string(src[start:]), closer); k >= 0 {
		return start + k + len(closer)
	}
	return len(src)
}

// lexQuoted scans a quoted string starting at src[i]; an unterminated one
// ends at the line break.
func lexQuoted(src []byte, i, base int) (token, int) {
	q := src[i]
	var b strings.Builder
	j := i + 1
	closed := false
	for j < len(src) {
		c := src[j]
		if c == q {
			closed = true
			break
		}
		if c == '\n' {
			break
		}
		if c == '\\' && j+1 < len(src) {
			j++
			switch e := src[j]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '"', '\'':
				b.WriteByte(e)
			case '\n':
				b.WriteByte('\n')
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			j++
			continue
		}
		b.WriteByte(c)
		j++
	}
	end := j
	if closed {
		end = j + 1
	}
	return token{kind: tokString, start: base + i, end: base + end, text: b.String(),
		innerStart: base + i + 1, innerEnd: base + j, closed: closed}, end
}
