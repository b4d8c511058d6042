package features

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/luatok"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// placeholderAt finds the `{{ path }}` placeholder of a prose block that
// contains off, using the engine's template parser.
func placeholderAt(snap *Snapshot, ix *program.Symbols, off int) (*template.Node, bool) {
	f := snap.File
	check := func(blocks []*parse.Block) (*template.Node, bool) {
		for _, b := range blocks {
			if b.Kind != parse.ProseBlock || b.Prose == nil || !b.Prose.Span.Contains(off) {
				continue
			}
			t, _ := template.Parse(f.Text(b.Prose.Span), b.Prose.Span.Start)
			if t == nil {
				return nil, false
			}
			for i := range t.Nodes {
				n := &t.Nodes[i]
				if n.Kind == template.Placeholder && n.Span.Contains(off) {
					return n, true
				}
			}
		}
		return nil, false
	}
	if n, ok := check(snap.Prompt.H1Blocks); ok {
		return n, true
	}
	if sec := ix.SectionAt(off); sec != nil {
		return check(sec.Blocks)
	}
	return nil, false
}

// varAssignments returns the spans of `var.<key> =` assignments (the key
// token) in every chunk, in file order.
func varAssignments(ix *program.Symbols, key string) []source.Span {
	var out []source.Span
	for _, ci := range ix.Chunks {
		t := ci.Tokens()
		for i := 0; i+3 < len(t); i++ {
			if t[i].Kind == luatok.Name && t[i].Value == "var" && t[i+1].Value == "." && t[i+2].Kind == luatok.Name &&
				t[i+2].Value == key && t[i+3].Value == "=" && (i == 0 || (t[i-1].Value != "." && t[i-1].Value != ":")) {
				out = append(out, source.Span{Start: t[i+2].Span.Start, End: t[i+2].Span.End})
			}
		}
	}
	return out
}

// placeholderHover describes a placeholder's root from the API table and,
// for var paths, where the walk data is assigned.
func placeholderHover(snap *Snapshot, ix *program.Symbols, n *template.Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**placeholder** `{{ %s }}`", n.Text)
	if len(n.Segments) == 0 {
		return b.String()
	}
	root := n.Segments[0].Name
	name := root
	if root == "sys" && len(n.Segments) > 1 {
		name = "sys." + n.Segments[1].Name
	}
	if e, ok := api.Lookup(name); ok && e.Host {
		fmt.Fprintf(&b, "\n\n`%s`: %s", e.Signature, e.Doc)
	}
	if root == "var" && len(n.Segments) > 1 {
		key := n.Segments[1].Name
		as := varAssignments(ix, key)
		if len(as) == 0 {
			fmt.Fprintf(&b, "\n\n`var.%s` is never assigned in this prompt's Lua; the placeholder fails unless another run step sets it.", key)
		} else {
			lines := make([]string, len(as))
			for i, sp := range as {
				lines[i] = fmt.Sprint(snap.File.Line(sp.Start))
			}
			fmt.Fprintf(&b, "\n\n`var.%s` is assigned at line %s.", key, strings.Join(lines, ", "))
		}
	}
	return b.String()
}

// placeholderRoots are the roots a prose placeholder may start with
// (docs/language.md#placeholder-paths).
var placeholderRoots = []string{"args", "reply", "item", "var", "sys"}

// completePlaceholder completes a `{{ path` being typed in prose: roots,
// then var keys assigned anywhere in the prompt, or sys fields.
func completePlaceholder(snap *Snapshot, ix *program.Symbols, off int) ([]Completion, bool) {
	f := snap.File
	var prose *parse.Prose
	find := func(blocks []*parse.Block) {
		for _, b := range blocks {
			if b.Kind == parse.ProseBlock && b.Prose != nil && b.Prose.Span.Contains(off) {
				prose = b.Prose
			}
		}
	}
	find(snap.Prompt.H1Blocks)
	sec := ix.SectionAt(off)
	if sec != nil {
		find(sec.Blocks)
	}
	if prose == nil {
		return nil, false
	}
	before := string(f.Content[prose.Span.Start:off])
	open := strings.LastIndex(before, "{{")
	if open < 0 || strings.Contains(before[open:], "}}") {
		return nil, false
	}
	path := strings.TrimLeft(before[open+2:], " \t")
	for _, c := range path {
		if !(c == '.' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return nil, false
		}
	}
	segStart := strings.LastIndexByte(path, '.') + 1
	prefix := path[segStart:]
	sp := source.Span{Start: off - len(prefix), End: off}
	var out []Completion
	add := func(label, detail string) {
		if strings.HasPrefix(label, prefix) {
			out = append(out, Completion{Label: label, Kind: KindVariable, Detail: detail, Edit: Edit{Span: sp, NewText: label}})
		}
	}
	switch parent := strings.TrimSuffix(path[:segStart], "."); parent {
	case "":
		for _, r := range placeholderRoots {
			detail := ""
			if e, ok := api.Lookup(r); ok {
				detail = e.Signature
			}
			add(r, detail)
		}
	case "var":
		seen := map[string]bool{}
		for _, ci := range ix.Chunks {
			t := ci.Tokens()
			for i := 0; i+3 < len(t); i++ {
				if t[i].Value == "var" && t[i+1].Value == "." && t[i+2].Kind == luatok.Name && t[i+3].Value == "=" && !seen[t[i+2].Value] {
					seen[t[i+2].Value] = true
					add(t[i+2].Value, fmt.Sprintf("var key, assigned at line %d", f.Line(t[i+2].Span.Start)))
				}
			}
		}
	case "sys":
		where := api.Section
		if sec == nil {
			where = api.H1
		}
		for _, m := range api.Members("sys", where) {
			if e, ok := api.Lookup("sys." + m); ok {
				add(m, e.Signature)
			}
		}
	}
	return out, true
}
