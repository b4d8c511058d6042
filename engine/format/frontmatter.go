package format

import (
	"regexp"
	"strings"
	"sync"
)

// formatFrontmatter normalises the YAML between the --- lines: its block
// structure re-indented, two spaces a level (reindentYAML). When that
// cannot be done safely, only one space after a key's colon, no trailing
// white space, and two-space indentation for the keys of a top-level
// mapping whose lines are all simple `key: value` lines. Values, key order
// and comments stay as written, and so does every line inside a block
// scalar (| or >) or a line the rules do not recognise.
func formatFrontmatter(fm string) string {
	lines := strings.SplitAfter(fm, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) >= 2 {
		inner := make([]string, len(lines)-2)
		for i, l := range lines[1 : len(lines)-1] {
			inner[i] = strings.TrimSuffix(l, "\n")
		}
		if body, ok := reindentYAML(inner); ok {
			var b strings.Builder
			b.Grow(len(fm))
			b.WriteString(strings.TrimRight(strings.TrimSuffix(lines[0], "\n"), " \t") + "\n")
			for _, l := range body {
				b.WriteString(l + "\n")
			}
			b.WriteString(strings.TrimRight(strings.TrimSuffix(lines[len(lines)-1], "\n"), " \t") + "\n")
			return b.String()
		}
	}
	var b strings.Builder
	b.Grow(len(fm))
	scalarIndent := -1 // inside a block scalar: lines indented more than this
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\n")
		if i == 0 || i == len(lines)-1 {
			b.WriteString(strings.TrimRight(line, " \t"))
			b.WriteByte('\n')
			continue
		}
		ind := indentOf(line)
		if scalarIndent >= 0 {
			if strings.TrimSpace(line) == "" || ind > scalarIndent {
				b.WriteString(line)
				b.WriteByte('\n')
				continue
			}
			scalarIndent = -1
		}
		line = strings.TrimRight(line, " \t")
		if m := simpleKey().FindStringSubmatch(line); m != nil {
			if blockScalar().MatchString(m[3]) {
				scalarIndent = len(m[1])
			}
			if ind == 0 && m[3] == "" && len(m[1]) == 0 {
				// A mapping: re-indent its children when they are all
				// simple keys at one indentation.
				j, n, ok := i+1, -1, true
				for ; j < len(lines)-1; j++ {
					l := strings.TrimRight(lines[j], " \t\n")
					if l == "" {
						ok = false
						break
					}
					ci := indentOf(l)
					if ci == 0 {
						break
					}
					cm := simpleKey().FindStringSubmatch(l)
					if cm == nil || blockScalar().MatchString(cm[3]) || strings.HasPrefix(cm[3], "[") || strings.HasPrefix(cm[3], "{") || strings.ContainsAny(l[:ci], "\t") || (n >= 0 && ci != n) {
						ok = false
						break
					}
					n = ci
				}
				b.WriteString(m[2] + ":\n")
				if ok && n > 0 {
					for k := i + 1; k < j; k++ {
						cm := simpleKey().FindStringSubmatch(strings.TrimRight(lines[k], " \t\n"))
						b.WriteString("  " + keyLine(cm))
						b.WriteByte('\n')
					}
					i = j - 1
				}
				continue
			}
			b.WriteString(m[1] + keyLine(m))
			b.WriteByte('\n')
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// simpleKey matches `key: value` (1 indentation, 2 key, 3 the value as
// written, with any comment after it).
var simpleKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([ ]*)([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*))?$`)
})

var blockScalar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[|>][-+0-9]*$`) })

func keyLine(m []string) string {
	s := m[2] + ":"
	if m[3] != "" {
		s += " " + m[3]
	}
	return s
}

func indentOf(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t"))
}
