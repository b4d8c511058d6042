package parse

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/template"
)

// Placeholder parses are memoised by prose text, as compiled chunks are
// by source (cache.go): the analyzers read every prose block's
// placeholders after each keystroke while usually no prose changed. The
// parse is cached with offsets into the text, which stay valid wherever
// the block moves.

type textTemplate struct {
	key string // the cache key, owned: every string of t is a substring of it or its own copy
	t   *template.Template
	err *template.Error
}

// templates holds up to 4096 parsed prose texts or 2 MiB weighed per
// generation (a 10,000-line prompt's placeholders weigh about 200 KiB).
var templates = newGenCache(4096, 2<<20, templateWeight,
	func(r *textTemplate) string { return r.key })

// templateWeight estimates an entry's heap: the text, a literal copy of
// it at worst (escapes), and a node plus a segment or two per "{{".
func templateWeight(text string) int {
	return 128 + 2*len(text) + 192*strings.Count(text, "{{")
}

// TextTemplate is Template with spans that are byte indexes into Text
// (map them with FileOffset). The result may be shared with other parses
// and goroutines: treat it as immutable.
func (pr *Prose) TextTemplate() (*template.Template, *template.Error) {
	if !strings.Contains(pr.Text, "{{") {
		// Only literal text (and escapes): cheaper to parse than to
		// look up, and not worth a cache entry.
		return template.Parse(pr.Text, 0)
	}
	if r := pr.tmpl.Load(); r != nil {
		return r.t, r.err
	}
	if r, ok := templates.get(pr.Text); ok {
		pr.tmpl.Store(r)
		return r.t, r.err
	}
	if !templates.on() {
		return template.Parse(pr.Text, 0)
	}
	// Parse an owned copy so that the entry never pins the file's text.
	r := &textTemplate{key: strings.Clone(pr.Text)}
	r.t, r.err = template.Parse(r.key, 0)
	templates.put(r)
	pr.tmpl.Store(r)
	return r.t, r.err
}

// textTemplateCopy returns a copy of TextTemplate's result that the
// caller may change (Template maps its spans in place).
func (pr *Prose) textTemplateCopy() (*template.Template, *template.Error) {
	if !strings.Contains(pr.Text, "{{") {
		return template.Parse(pr.Text, 0) // not cached: already a fresh parse
	}
	t, err := pr.TextTemplate()
	c := &template.Template{Nodes: make([]template.Node, len(t.Nodes))}
	copy(c.Nodes, t.Nodes)
	segs := 0
	for i := range c.Nodes {
		segs += len(c.Nodes[i].Segments)
	}
	all := make([]template.Segment, 0, segs)
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Segments != nil {
			k := len(all)
			all = append(all, n.Segments...)
			n.Segments = all[k:len(all):len(all)]
		}
	}
	if err != nil {
		e := *err
		err = &e
	}
	return c, err
}
