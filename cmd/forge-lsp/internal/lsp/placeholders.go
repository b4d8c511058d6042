package lsp

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// placeholderAt finds the `{{ path }}` placeholder of a prose block that
// contains off, using the engine's template parser.
func placeholderAt(snap *snapshot, ix *index, off int) (*template.Node, bool) {
	f := snap.file
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
	if n, ok := check(snap.prompt.H1Blocks); ok {
		return n, true
	}
	if sec := ix.sectionAt(off); sec != nil {
		return check(sec.Blocks)
	}
	return nil, false
}

// varAssignments returns the spans of `var.<key> =` assignments (the key
// token) in every chunk, in file order.
func varAssignments(ix *index, key string) []source.Span {
	var out []source.Span
	for _, ci := range ix.chunks {
		t := ci.toks
		for i := 0; i+3 < len(t); i++ {
			if t[i].kind == tokName && t[i].text == "var" && t[i+1].text == "." && t[i+2].kind == tokName &&
				t[i+2].text == key && t[i+3].text == "=" && (i == 0 || (t[i-1].text != "." && t[i-1].text != ":")) {
				out = append(out, source.Span{Start: t[i+2].start, End: t[i+2].end})
			}
		}
	}
	return out
}

// placeholderHover describes a placeholder's root from the API table and,
// for var paths, where the walk data is assigned.
func placeholderHover(snap *snapshot, ix *index, n *template.Node) string {
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
				lines[i] = fmt.Sprint(snap.file.Line(sp.Start))
			}
			fmt.Fprintf(&b, "\n\n`var.%s` is assigned at line %s.", key, strings.Join(lines, ", "))
		}
	}
	return b.String()
}
