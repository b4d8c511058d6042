package features

import (
	"maps"
	"slices"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// SymbolKind says what a symbol is.
type SymbolKind int

const (
	SymbolFrontmatter SymbolKind = iota // the frontmatter block
	SymbolProperty                      // a frontmatter key
	SymbolH1                            // the H1 and its preamble
	SymbolSection                       // a section
	SymbolTool                          // a tool alias or local tool
	SymbolModel                         // a model alias
)

// Symbol is one entry of a prompt's outline: Span is what it covers,
// Selection its name.
type Symbol struct {
	Name, Detail    string
	Kind            SymbolKind
	Span, Selection source.Span
	Children        []Symbol
}

// sectionExtent is a section's heading plus its content and all of its
// descendants: what folds and what a document symbol covers.
func sectionExtent(s *parse.Section) source.Span {
	sp := source.Span{Start: s.Heading.Span.Start, End: s.Content.End}
	if n := len(s.Children); n > 0 {
		if e := sectionExtent(s.Children[n-1]).End; e > sp.End {
			sp.End = e
		}
	}
	return sp
}

// trimTrailingSpace shrinks a span so it does not end in blank lines.
func trimTrailingSpace(f *source.File, sp source.Span) source.Span {
	for sp.End > sp.Start && sp.End <= len(f.Content) && strings.ContainsRune(" \t\r\n", rune(f.Content[sp.End-1])) {
		sp.End--
	}
	return sp
}

// DocumentSymbols is the prompt's outline: the frontmatter and its keys,
// the H1 with the tools and models it binds, and the section tree with
// each section's local tools and model bindings.
func DocumentSymbols(snap *Snapshot) []Symbol {
	var out []Symbol
	pr, f, ix := snap.Prompt, snap.File, snap.Symbols()
	if fm := pr.Frontmatter; fm != nil {
		sym := Symbol{Name: "frontmatter", Kind: SymbolFrontmatter, Span: fm.Span, Selection: fm.Span}
		for _, fd := range fm.Fields {
			sp := source.Span{Start: fd.KeySpan.Start, End: max(fd.KeySpan.End, fd.ValueSpan.End)}
			sym.Children = append(sym.Children, Symbol{Name: fd.Key, Detail: fd.Value, Kind: SymbolProperty, Span: sp, Selection: fd.KeySpan})
		}
		out = append(out, sym)
	}
	if pr.H1 != nil {
		sp := source.Span{Start: pr.H1.Span.Start, End: pr.H1Region.End}
		h1 := Symbol{Name: "# " + pr.Title, Detail: "preamble", Kind: SymbolH1, Span: trimTrailingSpace(f, sp), Selection: pr.H1.NameSpan}
		for _, d := range ix.ToolList {
			h1.Children = append(h1.Children, Symbol{Name: d.Alias, Detail: "tool: " + d.Capability, Kind: SymbolTool, Span: d.Span, Selection: d.Span})
		}
		for _, r := range ix.Refs {
			if r.Kind == program.RefModel && r.Decl && r.Section == nil {
				d := ix.Models[r.Name]
				h1.Children = append(h1.Children, Symbol{Name: r.Name, Detail: r.Call + ": " + d.Capability, Kind: SymbolModel, Span: r.Span, Selection: r.Span})
			}
		}
		out = append(out, h1)
	}
	// Group the section-level declarations once, so the tree is built in
	// one pass over them rather than one pass per section.
	localsOf := map[*parse.Section][]Symbol{}
	for _, lt := range ix.Locals {
		localsOf[lt.Section] = append(localsOf[lt.Section], Symbol{Name: lt.Alias, Detail: "local tool: " + lt.Description,
			Kind: SymbolTool, Span: lt.Span, Selection: lt.Span})
	}
	modelsOf := map[*parse.Section][]Symbol{}
	for _, r := range ix.Refs {
		if r.Kind == program.RefModel && r.Decl && r.Section != nil {
			modelsOf[r.Section] = append(modelsOf[r.Section], Symbol{Name: r.Name, Detail: r.Call, Kind: SymbolModel, Span: r.Span, Selection: r.Span})
		}
	}
	var conv func(sec *parse.Section) Symbol
	conv = func(sec *parse.Section) Symbol {
		detail := ""
		switch {
		case sec.OffWalk:
			detail = "off-walk"
		case sec.IsList:
			detail = "list"
		}
		sym := Symbol{Name: sec.Address(), Detail: detail, Kind: SymbolSection,
			Span: trimTrailingSpace(f, sectionExtent(sec)), Selection: sec.Heading.NameSpan}
		sym.Children = append(sym.Children, localsOf[sec]...)
		sym.Children = append(sym.Children, modelsOf[sec]...)
		for _, c := range sec.Children {
			sym.Children = append(sym.Children, conv(c))
		}
		return sym
	}
	for _, sec := range pr.Sections {
		if sec.Heading != nil {
			out = append(out, conv(sec))
		}
	}
	return out
}

// FoldKind says what a fold is.
type FoldKind int

const (
	FoldRegion      FoldKind = iota // the H1, a section, a Lua fence
	FoldFrontmatter                 // the frontmatter
)

// Fold is a foldable span, its trailing blank lines left out.
type Fold struct {
	Span source.Span
	Kind FoldKind
}

// Folds are the prompt's foldable spans: the frontmatter, the H1 with
// its preamble, each section with its subsections, each Lua fence.
func Folds(snap *Snapshot) []Fold {
	f, ix, pr := snap.File, snap.Symbols(), snap.Prompt
	var out []Fold
	add := func(sp source.Span, kind FoldKind) {
		out = append(out, Fold{Span: trimTrailingSpace(f, sp), Kind: kind})
	}
	if pr.Frontmatter != nil {
		add(pr.Frontmatter.Span, FoldFrontmatter)
	}
	if pr.H1 != nil {
		add(source.Span{Start: pr.H1.Span.Start, End: pr.H1Region.End}, FoldRegion)
	}
	for _, sec := range ix.Sections {
		if sec.Heading != nil {
			add(sectionExtent(sec), FoldRegion)
		}
	}
	for _, c := range ix.Chunks {
		add(c.Chunk.Span, FoldRegion)
	}
	return out
}

// WorkspaceSymbol is a prompt's symbol in a workspace-wide search: its
// name, kind, container and where it is declared.
type WorkspaceSymbol struct {
	Name, Container string
	Kind            SymbolKind
	Span            source.Span
}

// WorkspaceSymbols lists a prompt's H1, sections, tools and models.
func WorkspaceSymbols(snap *Snapshot) []WorkspaceSymbol {
	var out []WorkspaceSymbol
	title := ""
	if h := snap.Prompt.H1; h != nil {
		title = "# " + snap.Prompt.Title
		out = append(out, WorkspaceSymbol{Name: title, Kind: SymbolH1, Span: h.NameSpan})
	}
	ix := snap.Symbols()
	for _, sec := range ix.Sections {
		if sec.Heading == nil {
			continue
		}
		container := title
		if sec.Parent != nil {
			container = sec.Parent.Address()
		}
		out = append(out, WorkspaceSymbol{Name: sec.Address(), Kind: SymbolSection, Container: container, Span: sec.Heading.NameSpan})
	}
	for _, t := range ix.ToolList {
		out = append(out, WorkspaceSymbol{Name: t.Alias, Kind: SymbolTool, Container: title + " (tool)", Span: t.Span})
	}
	for _, alias := range slices.Sorted(maps.Keys(ix.Models)) {
		out = append(out, WorkspaceSymbol{Name: alias, Kind: SymbolModel, Container: title + " (model)", Span: ix.Models[alias].Span})
	}
	return out
}
