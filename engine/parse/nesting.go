package parse

import "bytes"

// MaxNesting is the deepest block nesting a line may open or continue
// (docs/language.md#limits). goldmark re-examines every open list item
// and block quote on every line, so a body nested N levels deep costs N
// per line; lines past the cap are reported and hidden from the Markdown
// scan, which keeps the scan linear in the body.
const MaxNesting = 64

// nestingBound returns an upper bound on the number of block containers
// (list items, block quotes) a line opens or continues. Every level
// consumes its own marker (`>`, `-`, `+`, `*`, `1.`, `1)`) or, when a list
// item is continued, at least two columns of indentation; so the bound is
// the markers at the start of the line plus half the columns of the
// whitespace among them. Lazy continuation lines open nothing.
func nestingBound(line []byte) int {
	markers, ws, col := 0, 0, 0
	isEnd := func(i int) bool {
		return i >= len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r'
	}
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == ' ':
			ws++
			col++
			i++
		case c == '\t':
			w := 4 - col%4
			ws += w
			col += w
			i++
		case c == '>':
			markers++
			col++
			i++
		case (c == '-' || c == '+' || c == '*') && isEnd(i+1):
			markers++
			col++
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j < len(line) && (line[j] == '.' || line[j] == ')') && isEnd(j+1) {
				markers++
				col += j + 1 - i
				i = j + 1
				continue
			}
			return markers + ws/2
		default:
			return markers + ws/2
		}
	}
	return markers + ws/2
}

// capNesting reports each body line nested deeper than MaxNesting and
// returns a copy of the body in which those lines are blank (same length,
// so offsets stay valid), for the Markdown scan; it returns nil when no
// line is too deep.
func (ps *parser) capNesting() []byte {
	var out []byte
	reported := 0
	n := ps.bodyLines.len()
	k0, k1 := 0, n
	if r := ps.prev; r != nil && r.deep == 0 {
		// No line of the previous version was too deep: only the edited
		// lines can be.
		k0, k1 = ps.editedLines()
	}
	defer func() {
		if r := ps.prompt.reuse; r != nil {
			r.deep = reported
		}
	}()
	for k := k0; k < k1; k++ {
		ls := ps.bodyLines.at(k)
		if ls >= len(ps.body) {
			break
		}
		end := len(ps.body)
		if k+1 < n {
			end = ps.bodyLines.at(k + 1)
		}
		line := ps.body[ls:end]
		if 2*len(line) <= MaxNesting || nestingBound(line) <= MaxNesting {
			continue
		}
		if out == nil {
			// A copy, so neither the file nor the text the sections are
			// cut from changes.
			out = []byte(ps.bodyStr)
		}
		for i := ls; i < end; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
		if reported < 10 {
			ps.errorf(CodeStructure, ps.span(ls, ls+len(bytes.TrimRight(line, "\r\n"))),
				"line nests lists or block quotes more than %d levels deep (each `>`, list marker or two columns of indentation counts as a level): flatten the nesting or put the text in a fenced code block without deep indentation", MaxNesting)
		}
		reported++
	}
	return out
}
