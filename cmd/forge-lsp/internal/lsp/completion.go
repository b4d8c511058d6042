package lsp

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

func (s *server) completion(ctx context.Context, p *protocol.CompletionParams) (any, error) {
	list := &protocol.CompletionList{Items: []protocol.CompletionItem{}}
	snap := s.promptAt(p.TextDocument.URI)
	if snap == nil {
		return list, nil
	}
	off := offsetOf(snap.file, p.Position)
	list.Items = append(list.Items, completeAt(snap, off)...)
	return list, nil
}

// completeAt returns the completion items at off.
func completeAt(snap *snapshot, off int) []protocol.CompletionItem {
	f := snap.file
	if fm := snap.prompt.Frontmatter; fm != nil && off >= fm.YAML.Start && off <= fm.YAML.End {
		return completeFrontmatter(f, fm, off)
	}
	ix := snap.index()
	ci := ix.chunkAt(off)
	if ci == nil {
		items, _ := completePlaceholder(snap, ix, off)
		return items
	}
	toks := ci.toks
	// The token under (or just before) the cursor.
	i := sort.Search(len(toks), func(i int) bool { return toks[i].end >= off })
	if i < len(toks) && toks[i].kind == tokString && off >= toks[i].innerStart && off <= toks[i].innerEnd && off > toks[i].start {
		return completeString(snap, ix, ci, i)
	}
	// Member completion: `lib.` or `lib.par|`.
	j := i
	partial := source.Span{Start: off, End: off}
	if j < len(toks) && toks[j].kind == tokName && toks[j].start <= off && off <= toks[j].end && off > toks[j].start {
		partial = source.Span{Start: toks[j].start, End: off}
		j--
	} else {
		j = i - 1
		if i < len(toks) && toks[i].start < off {
			j = i
		}
	}
	if j < 1 || j >= len(toks) || (toks[j].text != "." && toks[j].text != ":") || toks[j].end > off {
		if partial.End > partial.Start {
			// A bare name being typed: globals of this context.
			return completeGlobals(f, ix, ci, partial)
		}
		return nil
	}
	recv, _, ok := dottedNameAt(toks, toks[j-1].end)
	if !ok {
		return nil
	}
	return completeMembers(f, ix, ci, recv, toks[j].text, partial)
}

func completeFrontmatter(f *source.File, fm *parse.Frontmatter, off int) []protocol.CompletionItem {
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
	var out []protocol.CompletionItem
	for _, k := range keys {
		if present[k] {
			continue
		}
		out = append(out, protocol.CompletionItem{
			Label: k, Kind: protocol.CompletionItemKindProperty, Detail: "frontmatter",
			Documentation: protocol.MarkupContent{Kind: protocol.Markdown, Value: frontmatterDocs[k]},
			TextEdit:      &protocol.TextEdit{Range: lspRange(f, sp), NewText: k + ": "},
		})
	}
	return out
}

// enclosingCall finds the call whose argument list contains toks[i]: the
// callee's dotted name and the argument index. A table constructor in
// between (tools.add({ ... })) is looked through; `x[` reports "x[".
func enclosingCall(toks []token, i int) (string, int) {
	depth, argIdx := 0, 0
	for j := i - 1; j >= 0; j-- {
		switch toks[j].text {
		case ")", "}", "]":
			depth++
		case "(", "[":
			if depth > 0 {
				depth--
				continue
			}
			if j == 0 {
				return "", 0
			}
			name, _, ok := dottedNameAt(toks, toks[j-1].end)
			if !ok {
				return "", 0
			}
			if toks[j].text == "[" {
				return name + "[", 0
			}
			return name, argIdx
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
	return "", 0
}

func completeString(snap *snapshot, ix *index, ci *chunkInfo, i int) []protocol.CompletionItem {
	f := snap.file
	t := ci.toks[i]
	sp := source.Span{Start: t.innerStart, End: t.innerEnd}
	call, argIdx := enclosingCall(ci.toks, i)
	if name, ok := canonicalCall(call); ok {
		call = name
	}
	var out []protocol.CompletionItem
	item := func(label, detail string, kind protocol.CompletionItemKind) {
		out = append(out, protocol.CompletionItem{Label: label, Kind: kind, Detail: detail,
			TextEdit: &protocol.TextEdit{Range: lspRange(f, sp), NewText: label}})
	}
	switch {
	case (call == "tools.add" || call == "tools.always") && argIdx == 0, call == "tools.calls[":
		for _, d := range ix.toolList {
			item(d.alias, "tool: "+d.capability, protocol.CompletionItemKindVariable)
		}
	case (call == "models.use" || call == "models.get") && argIdx == 0:
		var names []string
		for a := range ix.models {
			names = append(names, a)
		}
		sort.Strings(names)
		for _, a := range names {
			item(a, "model: "+ix.models[a].capability, protocol.CompletionItemKindVariable)
		}
	case controlCalls[call] && argIdx == 0:
		for _, sec := range visibleSet(snap.prompt, ci.owner) {
			detail := "line " + strconv.Itoa(f.Line(sec.Heading.Span.Start))
			if lines := firstLines(f, sec.Content, 1); len(lines) > 0 {
				detail += ": " + lines[0]
			}
			item(sec.Address(), detail, protocol.CompletionItemKindReference)
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

func completeMembers(f *source.File, ix *index, ci *chunkInfo, recv, sep string, partial source.Span) []protocol.CompletionItem {
	where := api.Section
	if ci.owner == nil {
		where = api.H1
	}
	var out []protocol.CompletionItem
	add := func(label, detail string, kind protocol.CompletionItemKind, doc string) {
		it := protocol.CompletionItem{Label: label, Kind: kind, Detail: detail,
			TextEdit: &protocol.TextEdit{Range: lspRange(f, partial), NewText: label}}
		if doc != "" {
			it.Documentation = protocol.MarkupContent{Kind: protocol.Markdown, Value: doc}
		}
		out = append(out, it)
	}
	if recv == "tools.calls" && sep == "." {
		for _, d := range ix.toolList {
			add(d.alias, "call count", protocol.CompletionItemKindField, "")
		}
		return out
	}
	table := recv
	if sep == ":" || ix.toolByHandle(recv) != nil || ix.models[recv] != nil {
		switch {
		case ix.toolByHandle(recv) != nil || (ci.owner != nil && ix.tools[recv] != nil):
			table = "Tool"
		default:
			for _, d := range ix.models {
				if d.handle == recv {
					table = "Model"
				}
			}
		}
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
		kind := protocol.CompletionItemKindField
		switch e.Kind {
		case api.Func, api.Method:
			kind = protocol.CompletionItemKindFunction
		case api.Table:
			kind = protocol.CompletionItemKindModule
		}
		if e.Defined&where == 0 && table != "Tool" && table != "Model" {
			continue
		}
		add(m, e.Signature, kind, e.Doc)
	}
	return out
}

// completeGlobals offers the API's globals for the chunk's context plus,
// in sections, the declared tool aliases (alias globals) and local tools.
func completeGlobals(f *source.File, ix *index, ci *chunkInfo, partial source.Span) []protocol.CompletionItem {
	where := api.Section
	if ci.owner == nil {
		where = api.H1
	}
	prefix := f.Text(partial)
	var out []protocol.CompletionItem
	add := func(label, detail string, kind protocol.CompletionItemKind, doc string) {
		if !strings.HasPrefix(label, prefix) {
			return
		}
		it := protocol.CompletionItem{Label: label, Kind: kind, Detail: detail,
			TextEdit: &protocol.TextEdit{Range: lspRange(f, partial), NewText: label}}
		if doc != "" {
			it.Documentation = protocol.MarkupContent{Kind: protocol.Markdown, Value: doc}
		}
		out = append(out, it)
	}
	for _, g := range api.Globals(where) {
		e, ok := api.Lookup(g)
		if !ok {
			continue
		}
		kind := protocol.CompletionItemKindVariable
		switch e.Kind {
		case api.Func, api.Method:
			kind = protocol.CompletionItemKindFunction
		case api.Table:
			kind = protocol.CompletionItemKindModule
		}
		add(g, e.Signature, kind, e.Doc)
	}
	if ci.owner != nil {
		for _, d := range ix.toolList {
			add(d.alias, "tool alias: "+d.capability, protocol.CompletionItemKindVariable, "")
		}
	}
	return out
}
