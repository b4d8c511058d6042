package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
	"go.lsp.dev/protocol"
)

// Document highlight, selection ranges, document links and the call
// hierarchy over sections: all read the program model's symbols of the
// current parse.

func (s *server) documentHighlight(ctx context.Context, p *protocol.DocumentHighlightParams) (any, error) {
	out := []protocol.DocumentHighlight{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return out, nil
	}
	ix := snap.index()
	off := offsetOf(snap.file, p.Position)
	t, ok := targetAt(ix, off)
	if !ok {
		return out, nil
	}
	decl, hasDecl := declSpan(ix, t, nil)
	for _, sp := range refsTo(ix, t, true) {
		kind := protocol.DocumentHighlightKindRead
		if hasDecl && sp == decl {
			kind = protocol.DocumentHighlightKindWrite
		}
		out = append(out, protocol.DocumentHighlight{Range: lspRange(snap.file, sp), Kind: kind})
	}
	return out, nil
}

// methodSelectionRange is textDocument/selectionRange (not among the
// library's method names).
const methodSelectionRange = "textDocument/selectionRange"

// selectionRangeResult is SelectionRange with a pointer parent (the
// library's is a pointer too; a local type keeps the JSON explicit).
type selectionRangeResult struct {
	Range  protocol.Range        `json:"range"`
	Parent *selectionRangeResult `json:"parent,omitempty"`
}

type selectionRangeParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Positions    []protocol.Position             `json:"positions"`
}

func (s *server) selectionRange(ctx context.Context, p *selectionRangeParams) (any, error) {
	out := []*selectionRangeResult{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	for _, pos := range p.Positions {
		if snap == nil {
			out = append(out, &selectionRangeResult{Range: protocol.Range{Start: pos, End: pos}})
			continue
		}
		spans := enclosing(snap, offsetOf(snap.file, pos))
		var chain *selectionRangeResult
		for i := len(spans) - 1; i >= 0; i-- {
			chain = &selectionRangeResult{Range: lspRange(snap.file, spans[i]), Parent: chain}
		}
		out = append(out, chain)
	}
	return out, nil
}

// enclosing returns the syntactic spans around off, innermost first,
// each strictly inside the next: a token or reference, a placeholder,
// the Lua line, the Lua text, the fence, the prose block, frontmatter
// fields, sections from the innermost out, and the whole file.
func enclosing(snap *snapshot, off int) []source.Span {
	f := snap.file
	pr := snap.prompt
	ix := snap.index()
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
		for _, t := range ct.Toks {
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
		whole := sectionSpan(sec)
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

// sectionSpan covers a section's heading, content and subsections.
func sectionSpan(sec *parse.Section) source.Span {
	start, end := sec.Heading.Span.Start, sec.Content.End
	for last := sec; len(last.Children) > 0; {
		last = last.Children[len(last.Children)-1]
		end = max(end, last.Content.End)
	}
	return source.Span{Start: start, End: end}
}

// documentLinkResult is DocumentLink with a tooltip.
type documentLinkResult struct {
	Range   protocol.Range `json:"range"`
	Target  string         `json:"target,omitempty"`
	Tooltip string         `json:"tooltip,omitempty"`
}

// storeCalls are the store functions whose first argument is a path.
var storeCalls = map[string]bool{
	"store.read": true, "store.write": true, "store.append": true, "store.read_numbered": true,
	"store.str_replace": true, "store.delete": true, "store.exists": true,
}

// documentLink links section references to their headings, and the
// frontmatter's input/output paths and store paths to the workspace
// files they name, when those exist.
func (s *server) documentLink(ctx context.Context, p *protocol.DocumentLinkParams) (any, error) {
	out := []documentLinkResult{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return out, nil
	}
	f := snap.file
	ix := snap.index()
	for _, r := range ix.Refs {
		if r.Kind != program.RefSection || r.Target == nil || r.Target.Heading == nil {
			continue
		}
		line, _ := f.LSPPosition(r.Target.Heading.Span.Start)
		out = append(out, documentLinkResult{
			Range:   lspRange(f, r.Span),
			Target:  fmt.Sprintf("%s#L%d", snap.uri, line+1),
			Tooltip: "Go to " + r.Target.Address(),
		})
	}
	dirs := s.fileDirs(snap)
	fileLink := func(sp source.Span, rel, what string) {
		if rel == "" || filepath.IsAbs(rel) || strings.Contains(rel, "..") {
			return
		}
		for _, d := range dirs {
			path := filepath.Join(d, filepath.FromSlash(rel))
			if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
				out = append(out, documentLinkResult{Range: lspRange(f, sp), Target: "file://" + filepath.ToSlash(path), Tooltip: what + " " + rel})
				return
			}
		}
	}
	if fm := snap.prompt.Frontmatter; fm != nil {
		for _, key := range []string{"input", "output"} {
			fd := fm.Field(key)
			if fd == nil {
				continue
			}
			for _, c := range fd.Children {
				if c.Key == "path" && c.Scalar {
					fileLink(valueText(f, c), c.Value, "Open "+key)
				}
			}
		}
	}
	prog := snap.program()
	for _, c := range prog.Calls {
		if !storeCalls[c.Canonical()] {
			continue
		}
		if v, sp, ok := prog.StringArg(c, 0); ok && sp.Len() >= 2 {
			fileLink(source.Span{Start: sp.Start + 1, End: sp.End - 1}, v, "Open store file")
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return before(out[i].Range.Start, out[j].Range.Start) })
	return out, nil
}

// valueText is a field value's span without quotes.
func valueText(f *source.File, fd *parse.Field) source.Span {
	sp := fd.ValueSpan
	if fd.Quoted && sp.Len() >= 2 {
		sp = source.Span{Start: sp.Start + 1, End: sp.End - 1}
	}
	return sp
}

// fileDirs are the directories relative paths are looked up in: the
// prompt's directory, then the workspace roots.
func (s *server) fileDirs(snap *snapshot) []string {
	var dirs []string
	if strings.HasPrefix(string(snap.uri), "file:") {
		dirs = append(dirs, filepath.Dir(snap.file.Name))
	}
	return append(dirs, s.roots...)
}

// callItem is CallHierarchyItem with its data kept out (items are found
// again by their position).
type callItem struct {
	Name           string               `json:"name"`
	Kind           protocol.SymbolKind  `json:"kind"`
	Detail         string               `json:"detail,omitempty"`
	URI            protocol.DocumentURI `json:"uri"`
	Range          protocol.Range       `json:"range"`
	SelectionRange protocol.Range       `json:"selectionRange"`
}

type callIncoming struct {
	From       callItem         `json:"from"`
	FromRanges []protocol.Range `json:"fromRanges"`
}

type callOutgoing struct {
	To         callItem         `json:"to"`
	FromRanges []protocol.Range `json:"fromRanges"`
}

// sectionItem is the hierarchy item of a section, or of the H1 (the
// caller of the references in H1 code) when sec is nil.
func sectionItem(snap *snapshot, sec *parse.Section) (callItem, bool) {
	f := snap.file
	if sec == nil {
		h := snap.prompt.H1
		if h == nil {
			return callItem{}, false
		}
		return callItem{Name: "# " + snap.prompt.Title, Kind: protocol.SymbolKindModule, Detail: "preamble", URI: snap.uri,
			Range: lspRange(f, source.Span{Start: h.Span.Start, End: snap.prompt.H1Region.End}), SelectionRange: lspRange(f, h.NameSpan)}, true
	}
	return callItem{Name: sec.Address(), Kind: protocol.SymbolKindNamespace, URI: snap.uri,
		Range: lspRange(f, sectionSpan(sec)), SelectionRange: lspRange(f, sec.Heading.NameSpan)}, true
}

func (s *server) prepareCallHierarchy(ctx context.Context, p *protocol.CallHierarchyPrepareParams) (any, error) {
	out := []callItem{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return out, nil
	}
	off := offsetOf(snap.file, p.Position)
	ix := snap.index()
	if t, ok := targetAt(ix, off); ok && t.kind == program.RefSection {
		it, _ := sectionItem(snap, t.section)
		return append(out, it), nil
	}
	if h := snap.prompt.H1; h != nil && h.Span.Contains(off) && off < h.Span.End {
		it, _ := sectionItem(snap, nil)
		return append(out, it), nil
	}
	return out, nil
}

// itemSection finds an item's section again: nil with ok for the H1.
func (s *server) itemSection(ctx context.Context, it callItem) (*snapshot, *parse.Section, bool) {
	snap := s.promptAt(ctx, it.URI)
	if snap == nil {
		return nil, nil, false
	}
	off := offsetOf(snap.file, it.SelectionRange.Start)
	if sec := snap.index().HeadingAt(off); sec != nil {
		return snap, sec, true
	}
	if h := snap.prompt.H1; h != nil && h.Span.Contains(off) {
		return snap, nil, true
	}
	return nil, nil, false
}

func (s *server) incomingCalls(ctx context.Context, p *struct {
	Item callItem `json:"item"`
}) (any, error) {
	out := []callIncoming{}
	snap, sec, ok := s.itemSection(ctx, p.Item)
	if !ok || sec == nil {
		return out, nil
	}
	byCaller := map[*parse.Section]int{}
	hasH1 := false
	h1 := -1
	for _, r := range snap.index().Refs {
		if r.Kind != program.RefSection || r.Target != sec {
			continue
		}
		idx, seen := byCaller[r.Section]
		if r.Section == nil {
			idx, seen = h1, hasH1
		}
		if !seen {
			it, ok := sectionItem(snap, r.Section)
			if !ok {
				continue
			}
			out = append(out, callIncoming{From: it})
			idx = len(out) - 1
			if r.Section == nil {
				h1, hasH1 = idx, true
			} else {
				byCaller[r.Section] = idx
			}
		}
		out[idx].FromRanges = append(out[idx].FromRanges, lspRange(snap.file, r.Span))
	}
	return out, nil
}

func (s *server) outgoingCalls(ctx context.Context, p *struct {
	Item callItem `json:"item"`
}) (any, error) {
	out := []callOutgoing{}
	snap, sec, ok := s.itemSection(ctx, p.Item)
	if !ok {
		return out, nil
	}
	byTarget := map[*parse.Section]int{}
	for _, r := range snap.index().Refs {
		if r.Kind != program.RefSection || r.Target == nil || r.Section != sec {
			continue
		}
		idx, seen := byTarget[r.Target]
		if !seen {
			it, _ := sectionItem(snap, r.Target)
			out = append(out, callOutgoing{To: it})
			idx = len(out) - 1
			byTarget[r.Target] = idx
		}
		out[idx].FromRanges = append(out[idx].FromRanges, lspRange(snap.file, r.Span))
	}
	return out, nil
}
