package features

import (
	"errors"
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// target is what the cursor designates: a section, or an alias of a kind.
type target struct {
	section *parse.Section
	kind    program.RefKind
	name    string
}

// targetAt resolves the cursor to a section (on its heading or on a
// resolved reference) or to a tool/model/local alias.
func targetAt(ix *program.Symbols, off int) (target, bool) {
	if r := ix.RefAt(off); r != nil {
		if r.Kind == program.RefSection {
			if r.Target == nil {
				return target{}, false
			}
			return target{section: r.Target, kind: program.RefSection}, true
		}
		return target{kind: r.Kind, name: r.Name}, true
	}
	if s := ix.HeadingAt(off); s != nil {
		return target{section: s, kind: program.RefSection}, true
	}
	return target{}, false
}

// declSpan is where a target is declared.
func declSpan(ix *program.Symbols, t target, owner *parse.Section) (source.Span, bool) {
	switch t.kind {
	case program.RefSection:
		return t.section.Heading.NameSpan, true
	case program.RefTool:
		if d := ix.Tools[t.name]; d != nil {
			return d.Span, true
		}
	case program.RefModel:
		if d := ix.Models[t.name]; d != nil {
			return d.Span, true
		}
	case program.RefLocal:
		for _, lt := range ix.Locals {
			if lt.Alias == t.name && (owner == nil || lt.Section == owner) {
				return lt.Span, true
			}
		}
	}
	return source.Span{}, false
}

// refsTo lists every mention of t (declarations included when decl).
func refsTo(ix *program.Symbols, t target, decl bool) []source.Span {
	var out []source.Span
	if t.kind == program.RefSection {
		if decl {
			out = append(out, t.section.Heading.NameSpan)
		}
		for _, r := range ix.Refs {
			if r.Kind == program.RefSection && r.Target == t.section {
				out = append(out, r.Span)
			}
		}
		return out
	}
	for _, r := range ix.Refs {
		if r.Kind == t.kind && r.Name == t.name && (decl || !r.Decl) {
			out = append(out, r.Span)
		}
	}
	return out
}

// Definition returns where the thing at off is declared: a section's
// heading, a tool, model or local tool's declaration, or for a
// `{{ var.x }}` placeholder the first `var.x =` in the prompt's Lua.
func Definition(snap *Snapshot, off int) []source.Span {
	ix := snap.Symbols()
	t, ok := targetAt(ix, off)
	if !ok {
		if n, ok := placeholderAt(snap, ix, off); ok && len(n.Segments) > 1 && n.Segments[0].Name == "var" {
			if as := varAssignments(ix, n.Segments[1].Name); len(as) > 0 {
				return as[:1]
			}
		}
		return nil
	}
	if sp, ok := declSpan(ix, t, ix.SectionAt(off)); ok {
		return []source.Span{sp}
	}
	return nil
}

// References returns every mention of the thing at off, its declaration
// too when decl.
func References(snap *Snapshot, off int, decl bool) []source.Span {
	ix := snap.Symbols()
	t, ok := targetAt(ix, off)
	if !ok {
		return nil
	}
	return refsTo(ix, t, decl)
}

// Highlight is one occurrence of the symbol at the cursor; Write marks
// its declaration.
type Highlight struct {
	Span  source.Span
	Write bool
}

// Highlights returns the occurrences of the symbol at off.
func Highlights(snap *Snapshot, off int) []Highlight {
	ix := snap.Symbols()
	t, ok := targetAt(ix, off)
	if !ok {
		return nil
	}
	decl, hasDecl := declSpan(ix, t, nil)
	var out []Highlight
	for _, sp := range refsTo(ix, t, true) {
		out = append(out, Highlight{Span: sp, Write: hasDecl && sp == decl})
	}
	return out
}

// ErrNotRenamable is Rename's and PrepareRename's answer away from a
// section heading or a reference to one.
var ErrNotRenamable = errors.New("only section headings and references to them can be renamed")

// BadNameError is Rename's answer for a new name it cannot use.
type BadNameError struct{ msg string }

func (e *BadNameError) Error() string { return e.msg }

// PrepareRename returns the span a rename at off would edit and the
// section's current name.
func PrepareRename(snap *Snapshot, off int) (source.Span, string, error) {
	ix := snap.Symbols()
	t, ok := targetAt(ix, off)
	if !ok || t.kind != program.RefSection {
		return source.Span{}, "", ErrNotRenamable
	}
	sp := t.section.Heading.NameSpan
	if r := ix.RefAt(off); r != nil {
		sp = r.Span
	}
	return sp, t.section.Name, nil
}

// Edit replaces Span of the document with NewText.
type Edit struct {
	Span    source.Span
	NewText string
}

// Rename renames the section at off: its heading text and every literal
// reference that resolves to it (a reference elsewhere that spells the
// same address but resolves to another section is left alone).
func Rename(snap *Snapshot, off int, newName string) ([]Edit, error) {
	ix := snap.Symbols()
	t, ok := targetAt(ix, off)
	if !ok || t.kind != program.RefSection {
		return nil, ErrNotRenamable
	}
	name := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(newName), "#"))
	if name == "" || strings.ContainsAny(name, "\r\n") {
		return nil, &BadNameError{"the new section name must be non-empty and on one line"}
	}
	sec := t.section
	siblings := snap.Prompt.Sections
	if sec.Parent != nil {
		siblings = sec.Parent.Children
	}
	for _, o := range siblings {
		if o != sec && o.Name == name {
			return nil, &BadNameError{fmt.Sprintf("a sibling section is already named %q (line %d)", name, snap.File.Line(o.Heading.Span.Start))}
		}
	}
	f := snap.File
	edits := []Edit{{Span: sec.Heading.NameSpan, NewText: name}}
	for _, r := range ix.Refs {
		if r.Kind != program.RefSection || r.Target != sec {
			continue
		}
		// Keep the reference's own spelling of the level and spacing.
		old := f.Text(r.Span)
		lead := len(old) - len(strings.TrimLeft(old, " \t"))
		hashes := strings.IndexFunc(old[lead:], func(c rune) bool { return c != '#' })
		if hashes < 0 {
			continue
		}
		quote := byte('"')
		if r.Span.Start > 0 {
			quote = f.Content[r.Span.Start-1]
		}
		newText := old[:lead] + strings.Repeat("#", hashes) + " " + luaEscape(name, quote)
		edits = append(edits, Edit{Span: r.Span, NewText: newText})
	}
	return edits, nil
}

// luaEscape escapes s for a Lua string delimited by quote (long brackets
// need no escaping).
func luaEscape(s string, quote byte) string {
	if quote != '"' && quote != '\'' {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, string(quote), `\`+string(quote))
	return r.Replace(s)
}

// SectionTarget returns the section the cursor designates: on its
// heading or on a reference that resolves to it; nil elsewhere.
func SectionTarget(snap *Snapshot, off int) *parse.Section {
	if t, ok := targetAt(snap.Symbols(), off); ok && t.kind == program.RefSection {
		return t.section
	}
	return nil
}
