package features

import (
	"sort"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/luatok"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Completion is one completion item: Edit replaces the partial text
// with the label (or, in the frontmatter, the key and its colon).
type Completion struct {
	Label  string
	Kind   CompletionKind
	Detail string
	// Doc is Markdown documentation ("" when none).
	Doc  string
	Edit Edit
}

// CompletionKind says what an item completes.
type CompletionKind int

const (
	KindVariable  CompletionKind = iota // an alias, a placeholder root or key
	KindProperty                        // a frontmatter key
	KindReference                       // a section address
	KindField                           // a table member that is a value
	KindFunction                        // a function or method
	KindModule                          // a table of the API
)

// CompleteAt returns the completion items at off: frontmatter keys, API
// members and globals, tool and model aliases and section addresses in
// string arguments, and placeholder paths in prose.
func CompleteAt(snap *Snapshot, off int) []Completion {
	f := snap.File
	if fm := snap.Prompt.Frontmatter; fm != nil && off >= fm.YAML.Start && off <= fm.YAML.End {
		return completeFrontmatter(f, fm, off)
	}
	ix := snap.Symbols()
	ci := ix.ChunkAt(off)
	if ci == nil {
		items, _ := completePlaceholder(snap, ix, off)
		return items
	}
	toks := ci.Tokens()
	// The token under (or just before) the cursor.
	i := sort.Search(len(toks), func(i int) bool { return toks[i].Span.End >= off })
	if i < len(toks) && toks[i].Kind == luatok.String && off >= toks[i].Inner().Start && off <= toks[i].Inner().End && off > toks[i].Span.Start {
		return completeString(snap, ix, ci, toks, i)
	}
	// Member completion: `lib.` or `lib.par|`.
	j := i
	partial := source.Span{Start: off, End: off}
	if j < len(toks) && toks[j].Kind == luatok.Name && toks[j].Span.Start <= off && off <= toks[j].Span.End && off > toks[j].Span.Start {
		partial = source.Span{Start: toks[j].Span.Start, End: off}
		j--
	} else {
		j = i - 1
		if i < len(toks) && toks[i].Span.Start < off {
			j = i
		}
	}
	if j < 1 || j >= len(toks) || (toks[j].Value != "." && toks[j].Value != ":") || toks[j].Span.End > off {
		if partial.End > partial.Start {
			// A bare name being typed: globals of this context.
			return completeGlobals(f, ix, ci, partial)
		}
		return nil
	}
	recv, _, ok := dottedNameAt(toks, toks[j-1].Span.End)
	if !ok {
		return nil
	}
	return completeMembers(f, ix, ci, recv, toks[j].Value, partial)
}

func completeFrontmatter(f *source.File, fm *parse.Frontmatter, off int) []Completion {
	line := f.Line(off)
	prefix := string(f.Content[f.LineStart(line):off])
	word := strings.TrimLeft(prefix, " \t")
	if strings.ContainsAny(word, ": ") {
		return nil // in a value
	}
	keys, present := parse.FrontmatterKeys, map[string]bool{}
	if word != prefix { // indented: a key of input/output
		keys = parse.IOKeys
	} else {
		for _, fd := range fm.Fields {
			if fd.KeySpan.Start != f.LineStart(line) {
				present[fd.Key] = true
			}
		}
	}
	sp := source.Span{Start: off - len(word), End: off}
	var out []Completion
	for _, k := range keys {
		if present[k] {
			continue
		}
		out = append(out, Completion{Label: k, Kind: KindProperty, Detail: "frontmatter", Doc: frontmatterDocs()[k],
			Edit: Edit{Span: sp, NewText: k + ": "}})
	}
	return out
}

// enclosingCall finds the call whose argument list contains toks[i]: the
// callee's dotted name, the argument index and the index of the opening
// parenthesis. A table constructor in between (tools.add({ ... })) is
// looked through; `x[` reports "x[".
func enclosingCall(toks []luatok.Token, i int) (name string, argIdx, open int) {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		switch toks[j].Value {
		case ")", "}", "]":
			depth++
		case "(", "[":
			if depth > 0 {
				depth--
				continue
			}
			if j == 0 {
				return "", 0, -1
			}
			name, _, ok := dottedNameAt(toks, toks[j-1].Span.End)
			if !ok {
				return "", 0, -1
			}
			if toks[j].Value == "[" {
				return name + "[", 0, j
			}
			return name, argIdx, j
		case "{":
			if depth > 0 {
				depth--
				continue
			}
			// A table argument: keep looking for the call; commas seen so
			// far separated table fields, not call arguments.
			argIdx = 0
		case ",":
			if depth == 0 {
				argIdx++
			}
		}
	}
	return "", 0, -1
}

func completeString(snap *Snapshot, ix *program.Symbols, ci *program.ChunkTokens, toks []luatok.Token, i int) []Completion {
	f := snap.File
	t := toks[i]
	sp := source.Span{Start: t.Inner().Start, End: t.Inner().End}
	call, argIdx, _ := enclosingCall(toks, i)
	if name, ok := canonicalCall(call); ok {
		call = name
	}
	var out []Completion
	item := func(label, detail string, kind CompletionKind) {
		out = append(out, Completion{Label: label, Kind: kind, Detail: detail, Edit: Edit{Span: sp, NewText: label}})
	}
	switch {
	case (call == "tools.add" || call == "tools.always") && argIdx == 0, call == "tools.calls[":
		for _, d := range ix.ToolList {
			item(d.Alias, "tool: "+d.Capability, KindVariable)
		}
	case (call == "models.use" || call == "models.get") && argIdx == 0:
		var names []string
		for a := range ix.Models {
			names = append(names, a)
		}
		sort.Strings(names)
		for _, a := range names {
			item(a, "model: "+ix.Models[a].Capability, KindVariable)
		}
	case program.ControlCalls()[call] && argIdx == 0:
		for _, sec := range program.Visible(snap.Prompt, ci.Section) {
			detail := "line " + strconv.Itoa(f.Line(sec.Heading.Span.Start))
			if lines := firstLines(f, sec.Content, 1); len(lines) > 0 {
				detail += ": " + lines[0]
			}
			item(sec.Address(), detail, KindReference)
		}
	}
	return out
}

// canonicalCall maps upstream spellings onto the API table's names.
func canonicalCall(name string) (string, bool) {
	if e, ok := api.Lookup(name); ok && e.Name != name {
		return e.Name, true
	}
	return name, false
}

func completeMembers(f *source.File, ix *program.Symbols, ci *program.ChunkTokens, recv, sep string, partial source.Span) []Completion {
	where := api.Section
	if ci.Section == nil {
		where = api.H1
	}
	var out []Completion
	add := func(label, detail string, kind CompletionKind, doc string) {
		out = append(out, replaceItem(f, partial, label, detail, kind, doc))
	}
	if recv == "tools.calls" && sep == "." {
		for _, d := range ix.ToolList {
			add(d.Alias, "call count", KindField, "")
		}
		return out
	}
	table := recv
	switch {
	case ix.ToolByHandle(recv) != nil || (ci.Section != nil && ix.Tools[recv] != nil):
		table = "Tool"
	case ix.IsModelHandle(recv):
		table = "Model"
	}
	if table == recv && !api.IsTable(recv) {
		return nil
	}
	members := api.Members(table, api.Anywhere)
	if sep == ":" {
		members = nil
		for _, e := range api.All() {
			if m, ok := strings.CutPrefix(e.Name, table+":"); ok {
				members = append(members, m)
			}
		}
	}
	for _, m := range members {
		e, ok := api.Lookup(table + "." + m)
		if !ok {
			e, ok = api.Lookup(table + ":" + m)
		}
		if !ok {
			continue
		}
		if sep == ":" && e.Kind != api.Method {
			continue
		}
		if e.Defined&where == 0 && table != "Tool" && table != "Model" {
			continue
		}
		add(m, e.Signature, entryKind(e, KindField), e.Doc)
	}
	return out
}

// completeGlobals offers the API's globals for the chunk's context plus,
// in sections, the declared tool aliases (alias globals) and local tools.
func completeGlobals(f *source.File, ix *program.Symbols, ci *program.ChunkTokens, partial source.Span) []Completion {
	where := api.Section
	if ci.Section == nil {
		where = api.H1
	}
	prefix := f.Text(partial)
	var out []Completion
	add := func(label, detail string, kind CompletionKind, doc string) {
		if strings.HasPrefix(label, prefix) {
			out = append(out, replaceItem(f, partial, label, detail, kind, doc))
		}
	}
	for _, g := range api.Globals(where) {
		e, ok := api.Lookup(g)
		if !ok {
			continue
		}
		add(g, e.Signature, entryKind(e, KindVariable), e.Doc)
	}
	if ci.Section != nil {
		for _, d := range ix.ToolList {
			add(d.Alias, "tool alias: "+d.Capability, KindVariable, "")
		}
	}
	return out
}

// replaceItem is a completion item that replaces the partial name.
func replaceItem(f *source.File, partial source.Span, label, detail string, kind CompletionKind, doc string) Completion {
	return Completion{Label: label, Kind: kind, Detail: detail, Doc: doc, Edit: Edit{Span: partial, NewText: label}}
}

// entryKind is the completion kind of an API entry: functions and tables
// get their own, values the given one.
func entryKind(e *api.Entry, value CompletionKind) CompletionKind {
	switch e.Kind {
	case api.Func, api.Method:
		return KindFunction
	case api.Table:
		return KindModule
	}
	return value
}
