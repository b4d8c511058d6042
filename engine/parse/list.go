package parse

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/source"
)

func spanOf(a, b int) source.Span { return source.Span{Start: a, End: b} }

// markerItem classifies a trimmed line
// (docs/language.md#list-sections). isMarker is false for "not a
// marker"; empty is true for an empty marker; text is the item.
func markerItem(t string) (text string, isMarker, empty bool) {
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") {
		rest := t[2:]
		if strings.TrimSpace(rest) == "" {
			return "", true, true
		}
		return rest, true, false
	}
	if t == "-" || t == "*" {
		return "", true, true
	}
	j := 0
	for j < len(t) && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	if j == 0 || j >= len(t) || (t[j] != '.' && t[j] != ')') {
		return "", false, false
	}
	rest := t[j+1:]
	if rest == "" {
		return "", true, true
	}
	if rest[0] != ' ' {
		return "", false, false
	}
	rest = rest[1:]
	if strings.TrimSpace(rest) == "" {
		return "", true, true
	}
	return rest, true, false
}

// listCheck decides whether a section is a list section
// (docs/language.md#list-sections).
func (ps *parser) listCheck(s *Section) {
	if len(s.Blocks) != 1 || s.Blocks[0].Kind != ProseBlock || s.Blocks[0].Prose.Text == "" {
		return
	}
	pr := s.Blocks[0].Prose
	txt := pr.Text
	var items []*Item
	var emptyAt []source.Span
	off := 0
	for off <= len(txt) {
		e := strings.IndexByte(txt[off:], '\n')
		line := txt[off:]
		if e >= 0 {
			line = line[:e]
		}
		t := strings.TrimFunc(line, isUnicodeSpace)
		if t != "" {
			item, ok, empty := markerItem(t)
			if !ok {
				return
			}
			lead := strings.Index(line, t)
			start := pr.bodyStart + off + lead
			if empty {
				emptyAt = append(emptyAt, ps.span(start, start+len(t)))
			} else {
				it := start + len(t) - len(item)
				items = append(items, &Item{Text: item, Span: ps.span(it, it+len(item))})
			}
		}
		if e < 0 {
			break
		}
		off += e + 1
	}
	if len(items) == 0 && len(emptyAt) == 0 {
		return
	}
	s.IsList = true
	s.Items = items
	for _, sp := range emptyAt {
		ps.errorf(CodeList, sp, "empty bullet item in list section `%s`: write the item's text after the marker or delete the line", s.Name)
	}
}
