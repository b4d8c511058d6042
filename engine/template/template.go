// Package template parses `{{ ... }}` placeholders in prose
// (docs/language.md#placeholders). Parsing depends only on the text; resolving paths
// against run-time values is the runtime's job (engine/run).
package template

import (
	"strings"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/engine/source"
)

// NodeKind tells literal text from placeholders.
type NodeKind int

const (
	Text NodeKind = iota
	Placeholder
)

// Node is literal text (escapes already resolved) or a placeholder.
type Node struct {
	Kind NodeKind
	// Text is the literal output for Text nodes, and the trimmed path for
	// placeholders.
	Text string
	// Span is the node's source range (for placeholders, "{{" to "}}").
	Span source.Span
	// PathSpan covers the trimmed path inside the braces.
	PathSpan source.Span
	// Segments are the path's "."-separated parts (placeholders only).
	Segments []Segment
}

// Segment is one path segment.
type Segment struct {
	Name string
	Span source.Span
}

// Template is a parsed prose block.
type Template struct {
	Nodes []Node
}

// Error kinds that depend only on the text (docs/language.md#placeholder-errors).
const (
	ErrUnclosed     = "Unclosed"
	ErrBadPath      = "BadPath"
	ErrEmptySegment = "EmptySegment"
	ErrNotATable    = "NotATable"
)

// Error is a placeholder problem found from the text alone. Span covers the
// placeholder (from "{{").
type Error struct {
	Kind    string
	Span    source.Span
	Message string
}

func (e *Error) Error() string { return e.Message }

// Parse scans text, whose first byte is at file offset base. It returns the
// nodes and the first Unclosed error, if any (text after an unclosed "{{"
// is one literal node). Path errors are reported by Check.
func Parse(text string, base int) (*Template, *Error) {
	t := &Template{Nodes: make([]Node, 0, 2*strings.Count(text, "{{")+1)}
	// A literal is a substring of text unless it holds an escape; then it
	// is built in lit.
	var lit strings.Builder
	litStart, open, escaped := 0, false, false
	flush := func(end int) {
		if !open {
			return
		}
		s := text[litStart:end]
		if escaped {
			s = lit.String()
			lit.Reset()
		}
		t.Nodes = append(t.Nodes, Node{Kind: Text, Text: s, Span: source.Span{Start: base + litStart, End: base + end}})
		open, escaped = false, false
	}
	i := 0
	for i < len(text) {
		c := text[i]
		if c == '\\' && i+1 < len(text) && (text[i+1] == '{' || text[i+1] == '}' || text[i+1] == '\\') {
			if !open {
				litStart, open = i, true
			}
			if !escaped {
				lit.WriteString(text[litStart:i])
				escaped = true
			}
			lit.WriteByte(text[i+1])
			i += 2
			continue
		}
		if c == '{' && i+1 < len(text) && text[i+1] == '{' {
			end := strings.Index(text[i+2:], "}}")
			if end < 0 {
				flush(i)
				// The rest is literal, so a renderer that ignores the error
				// still produces the author's text.
				t.Nodes = append(t.Nodes, Node{Kind: Text, Text: text[i:], Span: source.Span{Start: base + i, End: base + len(text)}})
				return t, &Error{Kind: ErrUnclosed, Span: source.Span{Start: base + i, End: base + i + 2},
					Message: "unclosed placeholder: `{{` has no matching `}}` (write `\\{{` for literal braces)"}
			}
			flush(i)
			inner := text[i+2 : i+2+end]
			lead := len(inner) - len(strings.TrimLeftFunc(inner, isSpace))
			path := strings.TrimFunc(inner, isSpace)
			ps := base + i + 2 + lead
			n := Node{Kind: Placeholder, Text: path,
				Span:     source.Span{Start: base + i, End: base + i + 2 + end + 2},
				PathSpan: source.Span{Start: ps, End: ps + len(path)},
				Segments: make([]Segment, 0, strings.Count(path, ".")+1)}
			off := 0
			for rest := path; ; {
				seg, after, more := strings.Cut(rest, ".")
				n.Segments = append(n.Segments, Segment{Name: seg, Span: source.Span{Start: ps + off, End: ps + off + len(seg)}})
				off += len(seg) + 1
				if !more {
					break
				}
				rest = after
			}
			t.Nodes = append(t.Nodes, n)
			i += 2 + end + 2
			continue
		}
		if !open {
			litStart, open = i, true
		}
		if escaped {
			lit.WriteByte(c)
		}
		i++
	}
	flush(len(text))
	return t, nil
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x85 || r == 0xA0 ||
		(r >= 0x2000 && r <= 0x200A) || r == 0x1680 || r == 0x2028 || r == 0x2029 || r == 0x202F || r == 0x205F || r == 0x3000
}

// spacePadded reports whether s starts or ends with a space (isSpace):
// whether strings.TrimFunc(s, isSpace) would change it, reading only its
// first and last runes (Check runs for every placeholder of a prompt on
// each analysis).
func spacePadded(s string) bool {
	if s == "" {
		return false
	}
	if a, z := s[0], s[len(s)-1]; a > ' ' && a < utf8.RuneSelf && z > ' ' && z < utf8.RuneSelf {
		return false // printable ASCII at both ends, the usual case
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	return isSpace(first) || isSpace(last)
}

// Check reports the path errors of one placeholder that depend only on the
// text (rules 2-4 of
// docs/language.md#placeholder-paths), or nil.
func Check(n *Node) *Error {
	if n.Kind != Placeholder {
		return nil
	}
	switch n.Text {
	case "args", "reply", "item":
		return nil
	}
	for _, s := range n.Segments {
		if s.Name == "" || spacePadded(s.Name) {
			return &Error{Kind: ErrEmptySegment, Span: n.Span,
				Message: "placeholder `{{ " + n.Text + " }}` has an empty or space-padded path segment; write `a.b` with no spaces around dots"}
		}
	}
	root := n.Segments[0].Name
	switch root {
	case "args", "reply", "item":
		return &Error{Kind: ErrNotATable, Span: n.Span,
			Message: "placeholder `{{ " + n.Text + " }}`: `" + root + "` cannot be indexed in a placeholder, even when it holds a table; copy the field into a global or into `var` in Lua and use `{{ name }}`"}
	case "var", "sys":
		if len(n.Segments) == 1 {
			return &Error{Kind: ErrBadPath, Span: n.Span,
				Message: "placeholder `{{ " + root + " }}` needs a key, e.g. `{{ " + root + ".name }}`"}
		}
	}
	return nil
}
