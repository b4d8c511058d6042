package features

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/docs"
	"github.com/forge-lsp/forge-lsp/engine/luatok"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// frontmatterDocs documents the keys of parse.FrontmatterKeys for hover
// and completion, from docs/language.md#frontmatter-keys (what `forge-lsp
// mcp`'s lookup_docs answers too), and `path`, the key inside `input` and
// `output`.
var frontmatterDocs = sync.OnceValue(func() map[string]string {
	link := regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	out := map[string]string{"path": "Store path of the input/output file."}
	for _, k := range docs.FrontmatterKeys() {
		out[k.Name] = fmt.Sprintf("%s Required: %s. Value: %s.", link.ReplaceAllString(k.Meaning, "$1"), k.Required, k.Value)
	}
	return out
})

// Hover is what hover shows: Markdown and the span it describes.
type Hover struct {
	Markdown string
	Span     source.Span
}

// HoverAt returns the hover for the thing at off, with the context
// budget of the prose there (below a section heading's hover, and as the
// hover of prose that has no other).
func HoverAt(snap *Snapshot, off int) (Hover, bool) {
	text, sp, ok := hoverAt(snap, off)
	text, sp, ok = withBudgetHover(snap, off, text, sp, ok)
	return Hover{Markdown: text, Span: sp}, ok
}

// hoverAt returns Markdown for the thing at off.
func hoverAt(snap *Snapshot, off int) (string, source.Span, bool) {
	ix := snap.Symbols()
	if fm := snap.Prompt.Frontmatter; fm != nil && off >= fm.Span.Start && off < fm.Span.End {
		for _, f := range fm.Fields {
			if f.KeySpan.Contains(off) {
				return keyHover(f.Key), f.KeySpan, true
			}
			for _, c := range f.Children {
				if c.KeySpan.Contains(off) {
					return keyHover(c.Key), c.KeySpan, true
				}
			}
		}
		return "", source.Span{}, false
	}
	if r := ix.RefAt(off); r != nil {
		switch r.Kind {
		case program.RefSection:
			return sectionRefHover(snap, ix, r), r.Span, true
		case program.RefTool:
			return toolHover(snap, ix, ix.Tools[r.Name], r.Name), r.Span, true
		case program.RefModel:
			return modelHover(snap, ix, r.Name), r.Span, true
		case program.RefLocal:
			return localHover(snap, ix, r.Name, r.Section), r.Span, true
		}
	}
	if sec := ix.HeadingAt(off); sec != nil {
		return sectionHover(snap, ix, sec), sec.Heading.NameSpan, true
	}
	if n, ok := placeholderAt(snap, ix, off); ok {
		return placeholderHover(snap, ix, n), n.Span, true
	}
	if ci := ix.ChunkAt(off); ci != nil {
		if name, sp, ok := dottedNameAt(ci.Tokens(), off); ok {
			if e := lookupAPI(ix, name); e != nil {
				return apiHover(e), sp, true
			}
			if o, ok := api.LookupOld(name); ok && (o.Kind == api.OldMember || o.Kind == api.OldGlobal) {
				return oldFormHover(o), sp, true
			}
			// A bare alias in a section that add_local declared there.
			for _, lt := range ix.Locals {
				if lt.Alias == name && lt.Section == ci.Section {
					return localHover(snap, ix, name, ci.Section), sp, true
				}
			}
			if text, ok := valueHover(snap, ci, name, sp); ok {
				return text, sp, true
			}
		}
	}
	return "", source.Span{}, false
}

func keyHover(key string) string {
	doc, ok := frontmatterDocs()[key]
	if o, old := api.LookupOld(key); !ok && old {
		return oldFormHover(o)
	}
	if !ok {
		return fmt.Sprintf("**frontmatter** `%s`\n\nUnknown key: PromptForge reads only %s.", key, strings.Join(parse.FrontmatterKeys, ", "))
	}
	return fmt.Sprintf("**frontmatter** `%s`\n\n%s", key, doc)
}

// dottedNameAt returns the dotted Lua name ending at the name token under
// off ("store.read" when on `read`), using ':' for method calls.
func dottedNameAt(toks []luatok.Token, off int) (string, source.Span, bool) {
	i := sort.Search(len(toks), func(i int) bool { return toks[i].Span.End >= off })
	// At the boundary between `.` and a name, the name is meant.
	if i+1 < len(toks) && toks[i].Kind != luatok.Name && toks[i+1].Span.Start == off {
		i++
	}
	if i >= len(toks) || toks[i].Kind != luatok.Name || off < toks[i].Span.Start {
		return "", source.Span{}, false
	}
	name := toks[i].Value
	sp := source.Span{Start: toks[i].Span.Start, End: toks[i].Span.End}
	for j := i; j >= 2 && (toks[j-1].Value == "." || toks[j-1].Value == ":") && toks[j-2].Kind == luatok.Name; j -= 2 {
		name = toks[j-2].Value + toks[j-1].Value + name
		sp.Start = toks[j-2].Span.Start
	}
	return name, sp, true
}

// lookupAPI finds an engine API entry for a dotted name; a method call on
// a model handle variable maps to the Model type's entry.
func lookupAPI(ix *program.Symbols, name string) *api.Entry {
	if e, ok := api.Lookup(name); ok {
		return e
	}
	// A member of a handle variable: m:infer, m.name, t.name.
	i := strings.LastIndexAny(name, ".:")
	if i <= 0 || strings.ContainsAny(name[:i], ".:") {
		return nil
	}
	recv, sep, m := name[:i], name[i:i+1], name[i+1:]
	typ := ""
	switch {
	case ix.IsModelHandle(recv):
		typ = "Model"
	case sep == "." && (ix.ToolByHandle(recv) != nil || ix.Tools[recv] != nil):
		typ = "Tool"
	}
	if e, ok := api.Lookup(typ + sep + m); ok && typ != "" {
		return e
	}
	return nil
}

func apiHover(e *api.Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "```lua\n%s\n```\n\n%s", e.Signature, e.Doc)
	if len(e.Synonyms) > 0 {
		fmt.Fprintf(&b, "\n\nAlso spelled: `%s`.", strings.Join(e.Synonyms, "`, `"))
	}
	if e.Host && e.Allowed != api.Anywhere {
		fmt.Fprintf(&b, "\n\nAvailable in: %s.", e.Allowed)
	}
	return b.String()
}

// firstLines returns up to n non-blank lines of a span, scanning only as
// far as it needs to.
func firstLines(f *source.File, sp source.Span, n int) []string {
	var out []string
	text := f.Text(sp)
	for len(text) > 0 && len(out) < n {
		l, rest, _ := strings.Cut(text, "\n")
		text = rest
		if l = strings.TrimRight(l, "\r \t"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func sectionHover(snap *Snapshot, ix *program.Symbols, sec *parse.Section) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**section** `%s` (line %d)", sec.Address(), snap.File.Line(sec.Heading.Span.Start))
	var notes []string
	if sec.OffWalk {
		notes = append(notes, "off-walk: runs only when addressed")
	}
	if sec.IsList {
		notes = append(notes, fmt.Sprintf("list section with %d items", len(sec.Items)))
	}
	if len(sec.Children) > 0 {
		notes = append(notes, fmt.Sprintf("%d child sections", len(sec.Children)))
	}
	n := len(refsTo(ix, target{section: sec, kind: program.RefSection}, false))
	notes = append(notes, fmt.Sprintf("%d references", n))
	fmt.Fprintf(&b, "\n\n%s", strings.Join(notes, "; "))
	if lines := firstLines(snap.File, sec.Content, 6); len(lines) > 0 {
		fmt.Fprintf(&b, "\n\n```markdown\n%s\n```", strings.Join(lines, "\n"))
	}
	return b.String()
}

func sectionRefHover(snap *Snapshot, ix *program.Symbols, r *program.Ref) string {
	if r.Target != nil {
		return sectionHover(snap, ix, r.Target)
	}
	vis := program.Visible(snap.Prompt, r.Section)
	names := make([]string, 0, len(vis))
	for _, s := range vis {
		names = append(names, "`"+s.Address()+"`")
	}
	if _, _, ok := program.SplitAddress(r.Name); !ok {
		return fmt.Sprintf("**section address** `%s` is malformed: write `## Name` (one to six `#`, a space, the heading text).", r.Name)
	}
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return fmt.Sprintf("**section** `%s` does not resolve from here.\n\nVisible sections: %s", strings.TrimSpace(r.Name), list)
}

func toolHover(snap *Snapshot, ix *program.Symbols, d *program.ToolDecl, alias string) string {
	var b strings.Builder
	if d == nil {
		fmt.Fprintf(&b, "**tool** `%s`\n\nNot declared: no `tools.bind(%q, ...)` in the H1.", alias, alias)
		return b.String()
	}
	fmt.Fprintf(&b, "**tool** `%s`\n\nCapability: %q", d.Alias, d.Capability)
	fmt.Fprintf(&b, "\n\nDeclared at line %d (`%s`)", snap.File.Line(d.Span.Start), d.Call)
	if d.Handle != "" {
		fmt.Fprintf(&b, ", handle `%s`", d.Handle)
	}
	b.WriteString(".")
	switch {
	case d.Always:
		b.WriteString("\n\nAvailable: always (every section, `tools.always`).")
	case len(d.AddedIn) > 0:
		var names []string
		for _, sec := range d.AddedIn {
			names = append(names, "`"+sec.Address()+"`")
		}
		fmt.Fprintf(&b, "\n\nAvailable in: %s (`tools.add`).", strings.Join(names, ", "))
	default:
		b.WriteString("\n\nAvailable: nowhere yet: declared but never passed to `tools.always` or `tools.add`, so the model cannot see it.")
	}
	cat := snap.Catalog()
	ct, why := ResolveTool(cat, d.Capability)
	desc := d.Override
	if d.AlwaysOver != "" {
		desc = d.AlwaysOver
	}
	if ct == nil {
		fmt.Fprintf(&b, "\n\nCatalog: %s.", why)
		if cat.Err != nil {
			fmt.Fprintf(&b, " (workspace tools file: %s)", cat.Err)
		}
		return b.String()
	}
	if desc == "" {
		desc = ct.Description
	}
	fmt.Fprintf(&b, "\n\nResolves to `%s` (wire name `%s`)", ct.ID, ct.Wire)
	if ct.Untrusted {
		b.WriteString(", **untrusted** output (wrapped in the nonce envelope)")
	}
	fmt.Fprintf(&b, ".\n\nModel-facing description: %s", desc)
	for _, sec := range d.AddedIn { // file order, not map order
		if o := d.AddOver[sec]; o != "" {
			fmt.Fprintf(&b, "\n\n(in `%s` overridden by `tools.add`: %s)", sec.Address(), o)
		}
	}
	if len(ct.Schema) > 0 {
		fmt.Fprintf(&b, "\n\nParameters:\n```json\n%s\n```", indentJSON(ct.Schema))
	}
	return b.String()
}

func indentJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}

func modelHover(snap *Snapshot, ix *program.Symbols, alias string) string {
	d := ix.Models[alias]
	if d == nil {
		return fmt.Sprintf("**model** `%s`\n\nNot declared: no `models.bind(%q, ...)` or `models.default` in the H1.", alias, alias)
	}
	s := fmt.Sprintf("**model** `%s`\n\nCapability: %q\n\nDeclared at line %d (`%s`)", d.Alias, d.Capability, snap.File.Line(d.Span.Start), d.Call)
	if d.Handle != "" {
		s += fmt.Sprintf(", handle `%s`", d.Handle)
	}
	return s + "."
}

// localSchema is the JSON Schema the engine generates for add_local
// params (docs/language.md#local-tools): every parameter required.
func localSchema(lt *program.LocalTool) string {
	props := map[string]any{}
	req := []string{}
	for _, p := range lt.Params {
		prop := map[string]any{"type": p.Type}
		if p.Description != "" {
			prop["description"] = p.Description
		}
		props[p.Name] = prop
		req = append(req, p.Name)
	}
	sort.Strings(req)
	b, _ := json.MarshalIndent(map[string]any{"type": "object", "properties": props, "required": req}, "", "  ")
	return string(b)
}

func localHover(snap *Snapshot, ix *program.Symbols, alias string, owner *parse.Section) string {
	var lt *program.LocalTool
	for _, l := range ix.Locals {
		if l.Alias == alias && (owner == nil || l.Section == owner) {
			lt = l
			break
		}
	}
	if lt == nil {
		return fmt.Sprintf("**local tool** `%s`", alias)
	}
	where := "H1"
	if lt.Section != nil {
		where = "`" + lt.Section.Address() + "`"
	}
	s := fmt.Sprintf("**local tool** `%s` (in %s)\n\n%s\n\nParameters:\n```json\n%s\n```", lt.Alias, where, lt.Description, localSchema(lt))
	if lt.Handler.End > 0 {
		s += fmt.Sprintf("\n\nHandler at line %d; output is trusted.", snap.File.Line(lt.Handler.Start))
	}
	return s
}

// oldFormHover explains a spelling upstream renamed or removed
// (docs/migration.md).
func oldFormHover(o *api.OldForm) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**old form** `%s`\n\nReplaced by `%s` in upstream %s (%s): %s.", o.Display(), o.New, o.Commit, o.Date, o.Why)
	if o.Via != "" {
		fmt.Fprintf(&b, " Before that, %s.", o.Via)
	}
	switch {
	case o.Safe:
		fmt.Fprintf(&b, "\n\n`forge-lsp check --fix` rewrites it: %s.", o.Rewrite)
	case o.Rewrite != "":
		fmt.Fprintf(&b, "\n\nThe quick fix offers: %s.", o.Rewrite)
	}
	b.WriteString(" See docs/migration.md.")
	return b.String()
}

// valueHover shows the abstract value of a local, a global or a
// `var.<key>` where the checker knows it (analysis/value), as gopls
// shows types: its type, constant or table keys.
func valueHover(snap *Snapshot, ci *program.ChunkTokens, name string, sp source.Span) (string, bool) {
	if len(ci.Chunk.AST) == 0 {
		return "", false
	}
	line := snap.File.Line(sp.Start) - ci.Chunk.FirstLine + 1
	text, ok := nameValueHover(snap, ci, name, line)
	if rs := callsHover(snap, ci, name, line); rs != "" {
		if !ok {
			return "```lua\n" + rs + "```", true
		}
		return strings.TrimSuffix(text, "```") + rs + "```", true
	}
	return text, ok
}

// callsHover describes what the calls of callee on chunk line line
// return there ("f(…) → value", one line per distinct result), or "" when
// the evaluator does not know (value.CallsAt). The chunk starts from the
// var values the walk brings.
func callsHover(snap *Snapshot, ci *program.ChunkTokens, callee string, line int) string {
	if snap.Program() == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range value.CallsAt(ci.Chunk.AST, snap.Flow().Entry(ci.Chunk), line, callee) {
		fmt.Fprintf(&b, "%s(…) → %s\n", callee, r)
	}
	return b.String()
}

// nameValueHover is the abstract value of a name (a local, a global or a
// var key) at chunk line line, or false.
func nameValueHover(snap *Snapshot, ci *program.ChunkTokens, name string, line int) (string, bool) {
	if strings.Contains(name, ".") && !strings.HasPrefix(name, "var.") {
		return "", false
	}
	// The chunk starts from what its VM holds before it (the shared
	// library's globals, the section's earlier chunks).
	var entry *value.Env
	if prog := snap.Program(); prog != nil {
		entry = prog.Entry(ci.Chunk)
		if strings.HasPrefix(name, "var.") {
			// A var key holds what the walk brings to the section
			// (docs/architecture.md#the-evaluator), memoised on the
			// snapshot.
			entry = snap.Flow().Entry(ci.Chunk)
		}
	}
	vs := value.EachAt(ci.Chunk.AST, entry, line, name)
	switch len(vs) {
	case 0:
		return "", false
	case 1:
		return fmt.Sprintf("```lua\n%s: %s\n```", name, vs[0]), true
	}
	// A loop variable per iteration, a parameter per call.
	var b strings.Builder
	fmt.Fprintf(&b, "```lua\n%s: one of\n", name)
	for _, v := range vs {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	b.WriteString("```")
	return b.String(), true
}

// withBudgetHover adds the context budget to a hover: below a section
// heading's hover, and as the hover of prose that has no other.
func withBudgetHover(snap *Snapshot, off int, text string, sp source.Span, ok bool) (string, source.Span, bool) {
	b, found := BudgetAt(snap, off)
	if !found {
		return text, sp, ok
	}
	one := WithModels([]Budget{*b}, snap.Models)
	md := BudgetMarkdown(one[0])
	inProse := b.Prose.Span.Start <= off && off <= b.Prose.Span.End
	switch {
	case ok && !inProse:
		return text + "\n\n---\n\n" + md, sp, true
	case !ok && inProse:
		return md, b.Prose.Span, true
	}
	return text, sp, ok
}
