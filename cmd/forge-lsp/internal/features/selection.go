package features

import (
	"sort"

	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// SelectionSpans returns the syntactic spans around off, innermost first,
// each strictly inside the next: a token or reference, a placeholder,
// the Lua line, the Lua text, the fence, the prose block, frontmatter
// fields, sections from the innermost out, and the whole file.
func SelectionSpans(snap *Snapshot, off int) []source.Span {
	f := snap.File
	pr := snap.Prompt
	ix := snap.Symbols()
	var cands []source.Span
	add := func(sp source.Span) {
		if sp.Start <= off && off <= sp.End && sp.End > sp.Start {
			cands = append(cands, sp)
		}
	}
	if r := ix.RefAt(off); r != nil {
		add(r.Span)
	}
	for _, ct := range ix.Chunks {
		c := ct.Chunk
		if !c.Span.Contains(off) {
			continue
		}
		for _, t := range ct.Tokens() {
			add(t.Span)
			if t.Kind == luatok.String {
				add(t.Inner())
			}
		}
		if c.SourceSpan.Contains(off) {
			l := f.Line(off)
			ls := f.LineStart(l)
			for ls < f.LineEnd(l) && (f.Content[ls] == ' ' || f.Content[ls] == '\t') {
				ls++
			}
			add(source.Span{Start: ls, End: f.LineEnd(l)})
		}
		add(c.SourceSpan)
		add(c.Span)
	}
	blocks := func(bs []*parse.Block) {
		for _, b := range bs {
			if b.Kind != parse.ProseBlock || !b.Prose.Span.Contains(off) {
				continue
			}
			add(b.Prose.Span)
			if t, _ := b.Prose.Template(); t != nil {
				for _, n := range t.Nodes {
					if n.Kind == template.Placeholder {
						add(n.Span)
						add(n.PathSpan)
						for _, sg := range n.Segments {
							add(sg.Span)
						}
					}
				}
			}
		}
	}
	blocks(pr.H1Blocks)
	if fm := pr.Frontmatter; fm != nil {
		add(fm.Span)
		add(fm.YAML)
		for _, fd := range fm.Fields {
			add(fd.KeySpan)
			add(fd.ValueSpan)
			add(source.Span{Start: fd.KeySpan.Start, End: max(fd.ValueSpan.End, fd.KeySpan.End)})
			for _, c := range fd.Children {
				add(c.KeySpan)
				add(c.ValueSpan)
				add(source.Span{Start: c.KeySpan.Start, End: max(c.ValueSpan.End, c.KeySpan.End)})
			}
		}
	}
	if pr.H1 != nil {
		add(pr.H1.NameSpan)
		add(source.Span{Start: pr.H1.Span.Start, End: pr.H1Region.End})
	}
	for _, sec := range ix.Sections {
		if sec.Heading == nil {
			continue
		}
		whole := SectionSpan(sec)
		if !whole.Contains(off) {
			continue
		}
		add(sec.Heading.NameSpan)
		add(sec.Heading.Span)
		add(whole)
		blocks(sec.Blocks)
	}
	add(source.Span{Start: 0, End: len(f.Content)})
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Len() < cands[j].Len() })
	var out []source.Span
	for _, c := range cands {
		if n := len(out); n > 0 {
			last := out[n-1]
			if c == last || c.Start > last.Start || c.End < last.End {
				continue // equal, or not around the previous one
			}
		}
		out = append(out, c)
	}
	return out
}

// SectionSpan covers a section's heading, content and subsections.
func SectionSpan(sec *parse.Section) source.Span {
	start, end := sec.Heading.Span.Start, sec.Content.End
	for last := sec; len(last.Children) > 0; {
		last = last.Children[len(last.Children)-1]
		end = max(end, last.Content.End)
	}
	return source.Span{Start: start, End: end}
}
