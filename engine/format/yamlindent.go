package format

import (
	"regexp"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// reindentYAML re-indents the block structure of a frontmatter's YAML
// (lines without their line breaks): two spaces per level of nested
// mapping, a sequence two spaces under its key (`key:` then `  - item`),
// the keys of a mapping inside a sequence item after `- `, one space
// after each key's colon and after each `-`. Values, key order and
// comments stay as written: a block scalar's lines move with their key,
// keeping their indentation relative to it, and a comment line takes the
// indentation of the line after it when it was indented as that line was.
//
// It is conservative: a line it does not recognise (a flow collection or a
// quoted or plain scalar continued on the next line, a key that is not a
// plain word, a tab in the indentation, a sequence inside a sequence
// item) leaves the whole YAML to the caller, and so does a result that
// does not parse to the same YAML nodes (values, styles, comments) as
// the original. ok is false then.
func reindentYAML(lines []string) (out []string, ok bool) {
	r := &yamlReindent{}
	for _, line := range lines {
		if !r.line(line) {
			return nil, false
		}
	}
	r.flush(-1, 0)
	if !sameYAMLText(strings.Join(lines, "\n"), strings.Join(r.out, "\n")) {
		return nil, false
	}
	return r.out, true
}

// yamlFrame is a block mapping or sequence: the column of its keys (or
// dashes) in the original and in the result.
type yamlFrame struct {
	old, new int
	seq      bool
}

type yamlReindent struct {
	out   []string
	stack []yamlFrame
	// open is the result column of a block opened by the last line (a key
	// or `-` with no value), -1 when that line opened none.
	open int
	// held are blank and comment lines waiting for the next content line,
	// whose indentation the comments take.
	held []string
	// A block scalar's lines: those indented more than scalarParent in
	// the original. Its first non-blank line, indented scalarIndent (-1
	// before it), goes to column scalarCol; every line moves by the same
	// scalarDelta.
	inScalar                  bool
	scalarParent, scalarDelta int
	scalarIndent, scalarCol   int
}

func (r *yamlReindent) line(line string) bool {
	if r.inScalar {
		if r.scalarLine(line) {
			return true
		}
		r.inScalar = false
	}
	ind := len(line) - len(strings.TrimLeft(line, " "))
	if ind < len(line) && line[ind] == '\t' {
		return false
	}
	rest := strings.TrimRight(line[ind:], " \t")
	if rest == "" || strings.HasPrefix(rest, "#") {
		r.held = append(r.held, line)
		return true
	}
	if rest == "-" || strings.HasPrefix(rest, "- ") || strings.HasPrefix(rest, "-\t") {
		return r.item(ind, rest)
	}
	m := yamlKey().FindStringSubmatch(rest)
	if m == nil {
		return false
	}
	col, ok := r.place(ind, false)
	if !ok {
		return false
	}
	return r.key(ind, col, "", m)
}

// place finds the result column of a key (seq false) or a `-` (seq true)
// at column ind of the original, opening or closing blocks.
func (r *yamlReindent) place(ind int, seq bool) (int, bool) {
	open := r.open
	r.open = -1
	if len(r.stack) == 0 {
		r.stack = append(r.stack, yamlFrame{old: ind, new: 0, seq: seq})
		r.flush(ind, 0)
		return 0, true
	}
	top := r.stack[len(r.stack)-1]
	if open >= 0 && (ind > top.old || ind == top.old && seq && !top.seq) {
		// The first line of the block the previous line opened (a sequence
		// may sit at its key's column: it goes two spaces under it).
		r.stack = append(r.stack, yamlFrame{old: ind, new: open, seq: seq})
		r.flush(ind, open)
		return open, true
	}
	for len(r.stack) > 0 && r.stack[len(r.stack)-1].old > ind {
		r.stack = r.stack[:len(r.stack)-1]
	}
	if n := len(r.stack); n > 0 && r.stack[n-1].old == ind && r.stack[n-1].seq && !seq {
		// A key after a sequence at its key's column ends the sequence.
		r.stack = r.stack[:n-1]
	}
	n := len(r.stack)
	if n == 0 || r.stack[n-1].old != ind || r.stack[n-1].seq != seq {
		return 0, false
	}
	r.flush(ind, r.stack[n-1].new)
	return r.stack[n-1].new, true
}

// key writes a key line at column col (after prefix, `- ` for the first
// key of a mapping in a sequence item); ind is the key's original column.
func (r *yamlReindent) key(ind, col int, prefix string, m []string) bool {
	v := m[2]
	line := strings.Repeat(" ", col-len(prefix)) + prefix + m[1] + ":"
	if v != "" {
		line += " " + v
	}
	r.out = append(r.out, line)
	switch {
	case v == "" || strings.HasPrefix(v, "#"):
		r.open = col + 2
	case yamlBlockScalar().MatchString(v):
		return r.startScalar(v, ind, col)
	}
	return true
}

// item writes a sequence item `- ...` found at column ind.
func (r *yamlReindent) item(ind int, rest string) bool {
	col, ok := r.place(ind, true)
	if !ok {
		return false
	}
	after := strings.TrimLeft(rest[1:], " \t")
	if strings.ContainsRune(rest[1:len(rest)-len(after)], '\t') {
		return false
	}
	switch {
	case after == "" || strings.HasPrefix(after, "#"):
		r.out = append(r.out, strings.TrimRight(strings.Repeat(" ", col)+"- "+after, " "))
		r.open = col + 2
		return true
	case after == "-" || strings.HasPrefix(after, "- "):
		return false
	}
	if m := yamlKey().FindStringSubmatch(after); m != nil {
		// A mapping in the item: its keys go after `- `.
		old := ind + len(rest) - len(after)
		r.stack = append(r.stack, yamlFrame{old: old, new: col + 2})
		return r.key(old, col+2, "- ", m)
	}
	r.out = append(r.out, strings.Repeat(" ", col)+"- "+after)
	if yamlBlockScalar().MatchString(after) {
		return r.startScalar(after, ind, col)
	}
	return true
}

// startScalar begins a block scalar whose header (`|`, `>-`, …) ends the
// line of the key or `-` at column ind, written at column col: its lines
// go two spaces under col, keeping their indentation relative to the
// first one.
func (r *yamlReindent) startScalar(header string, ind, col int) bool {
	r.inScalar, r.scalarParent, r.scalarCol, r.scalarIndent = true, ind, col+2, -1
	if strings.ContainsAny(strings.Fields(header)[0], "123456789") {
		// An explicit indentation indicator counts from the parent: the
		// lines move with it.
		r.scalarIndent, r.scalarDelta = 0, col-ind
	}
	return true
}

// scalarLine writes a line of the current block scalar, or reports that
// the line ends it.
func (r *yamlReindent) scalarLine(line string) bool {
	sp := len(line) - len(strings.TrimLeft(line, " "))
	if strings.TrimSpace(line) == "" {
		switch {
		case strings.ContainsRune(line, '\t'):
			r.out = append(r.out, line)
		case r.scalarIndent >= 0 && sp >= r.scalarIndent && sp+r.scalarDelta > 0:
			// White space past the indentation is part of the value.
			r.out = append(r.out, strings.Repeat(" ", sp+r.scalarDelta))
		default:
			r.out = append(r.out, "")
		}
		return true
	}
	if sp <= r.scalarParent {
		return false
	}
	if r.scalarIndent < 0 {
		r.scalarIndent, r.scalarDelta = sp, r.scalarCol-sp
	}
	r.out = append(r.out, strings.Repeat(" ", max(sp+r.scalarDelta, 0))+line[sp:])
	return true
}

// flush writes the held blank and comment lines before a content line
// at original column ind and result column col (ind -1: the end). A
// comment indented as that line is moves with it; one indented as an
// enclosing block's lines moves with that block; others stay.
func (r *yamlReindent) flush(ind, col int) {
	for _, h := range r.held {
		t := strings.TrimLeft(h, " ")
		if t = strings.TrimRight(t, " \t"); t == "" {
			r.out = append(r.out, "")
			continue
		}
		c := len(h) - len(strings.TrimLeft(h, " "))
		to := c
		if c == ind {
			to = col
		} else {
			for _, f := range r.stack {
				if f.old == c {
					to = f.new
				}
			}
		}
		r.out = append(r.out, strings.Repeat(" ", to)+t)
	}
	r.held = r.held[:0]
}

// sameYAMLText reports whether two YAML texts parse to the same nodes
// (values, tags, styles apart from flow, comments).
func sameYAMLText(a, b string) bool {
	if a == b {
		return true
	}
	var na, nb yaml.Node
	if yaml.Unmarshal([]byte(a), &na) != nil || yaml.Unmarshal([]byte(b), &nb) != nil {
		return false
	}
	return sameYAML(&na, &nb)
}

// yamlKey matches `key:` and `key: value` (1 the key, 2 the value as
// written, with any comment after it).
var yamlKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_.-]*):(?:[ \t]+(.*))?$`)
})

// yamlBlockScalar matches a block scalar header, with an optional comment.
var yamlBlockScalar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[|>][-+0-9]*(?:[ \t]+#.*)?$`)
})
