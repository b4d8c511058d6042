package luahygiene

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
	"github.com/yuin/gopher-lua/ast"
)

// Codes.
const (
	CodeUndefinedGlobal = "undefined-global"
	CodeUndefinedField  = "undefined-field"
	CodeReadOnly        = "readonly-global"
	CodeRemoved         = "sandbox-removed"
	CodeUnusedLocal     = "unused-local"
	CodeUnreachable     = "unreachable-code"
)

// Analyzer checks Lua hygiene.
var Analyzer = &analysis.Analyzer{
	Name: "luahygiene",
	Doc:  "check Lua chunks against the engine's environment: undefined and read-only globals, removed sandbox functions, unused locals, unreachable code",
	Codes: []*analysis.Code{
		{Name: CodeUndefinedGlobal, Severity: analysis.Warning, Summary: "A global is read but never defined by the engine or the prompt (often a typo such as tool.add)."},
		{Name: CodeUndefinedField, Severity: analysis.Error, Summary: "A host or library table has no such member (tools.ad, store.reed, sys.nmae)."},
		{Name: CodeReadOnly, Severity: analysis.Error, Summary: "Code writes to a read-only host global or table (sys.x = ..., var = {...}, tools.calls.x = ...)."},
		{Name: CodeRemoved, Severity: analysis.Error, Summary: "Code uses a standard function or library the sandbox removes (print, require, io, os, ...)."},
		{Name: CodeUnusedLocal, Severity: analysis.Warning, Summary: "A local variable or local function is never read."},
		{Name: CodeUnreachable, Severity: analysis.Warning, Summary: "A statement follows return, break, jump(...) or error(...) and can never run."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer, flow.Analyzer},
	Run:      run,
}

var hints = map[string]string{
	"print":      "use log(message) to emit a line",
	"require":    "put shared code in the H1's ```lua shared block; it is loaded into every section",
	"dofile":     "put shared code in the H1's ```lua shared block",
	"loadfile":   "put shared code in the H1's ```lua shared block",
	"load":       "code cannot be compiled at run time in the sandbox",
	"loadstring": "code cannot be compiled at run time in the sandbox",
	"io":         "use store.read/store.write for files",
	"os":         "use sys.now or sys.when for the time, and store.* for files",
	"rawget":     "index the table directly",
	"rawset":     "assign to the table directly",
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	fl := pass.ResultOf[flow.Analyzer].(*flow.Result)
	// An undefined global that straight-line code calls or indexes fails
	// the run there, unless globals are created dynamically (_G, rawset).
	dynamicGlobals := false
	for _, g := range prog.Globals {
		if g.Expr.Value == "_G" || g.Expr.Value == "rawset" || g.Expr.Value == "setfenv" {
			dynamicGlobals = true
		}
	}
	// fails is built on first use: only an undefined global needs it.
	var fails map[*ast.IdentExpr]string
	failsOf := func() map[*ast.IdentExpr]string {
		if fails != nil {
			return fails
		}
		fails = map[*ast.IdentExpr]string{}
		for _, c := range prog.Calls {
			if c.InFunc || !fl.Straight(c) {
				continue
			}
			if root := program.Root(c.Expr.Func); root != nil {
				if _, isIdent := c.Expr.Func.(*ast.IdentExpr); isIdent {
					fails[root] = "call"
				} else {
					fails[root] = "index"
				}
			}
		}
		return fails
	}
	certain := func(d *analysis.Diagnostic, g *program.Global) {
		if how, ok := failsOf()[g.Expr]; ok && !dynamicGlobals {
			d.Severity = analysis.Error
			d.Message += fmt.Sprintf(" (the run fails here: attempt to %s a nil value)", how)
		}
	}
	h1Globals := api.GlobalSet(api.H1)
	secGlobals := api.GlobalSet(api.SectionLike)
	// Section VMs get one global per bound tool and model alias.
	aliasGlobals := map[string]bool{}
	for _, c := range prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind", "models.bind", "models.default":
			if a, ok := c.Arg(0).(*ast.StringExpr); ok {
				aliasGlobals[a.Value] = true
			}
		}
	}
	// Globals written by the prompt, per chunk's VM. The shared
	// library's are built on first use: only a name that is not an
	// engine global needs them.
	var sharedWrites map[string]bool
	sharedWritesOf := func() map[string]bool {
		if sharedWrites != nil {
			return sharedWrites
		}
		sharedWrites = map[string]bool{}
		for _, u := range prog.Sections {
			for g := range u.GlobalWrites {
				sharedWrites[g] = true
			}
		}
		if len(prog.Sections) == 0 && prog.Shared != nil {
			for _, g := range prog.Globals {
				if prog.ChunkOf(g) == prog.Shared && g.Write && !g.FieldWrite {
					sharedWrites[g.Expr.Value] = true
				}
			}
		}
		return sharedWrites
	}
	writesFor := func(c *program.Chunk) map[string]bool {
		switch c.Kind {
		case program.H1Chunk:
			return prog.H1.GlobalWrites
		case program.SharedChunk:
			return sharedWritesOf()
		}
		return prog.UnitOf[c.Section].GlobalWrites
	}
	candidates := func(c *program.Chunk) []string {
		var out []string
		base := secGlobals
		if c.Kind == program.H1Chunk {
			base = h1Globals
		} else {
			for a := range aliasGlobals {
				out = append(out, a)
			}
		}
		for g := range base {
			out = append(out, g)
		}
		for g := range writesFor(c) {
			out = append(out, g)
		}
		sort.Strings(out)
		// Engine names first so that ties prefer them.
		sort.SliceStable(out, func(i, j int) bool { return base[out[i]] && !base[out[j]] })
		return out
	}
	// Locals per section (and H1), to explain a name that is a local of
	// another chunk: every ```lua block is its own Lua function. Built on
	// first use: only an undefined global needs it.
	var localsIn map[*program.Chunk]map[string]bool
	otherChunkLocal := func(c *program.Chunk, name string) bool {
		if localsIn == nil {
			localsIn = map[*program.Chunk]map[string]bool{}
			for _, l := range prog.Locals {
				if localsIn[prog.ChunkOf(l)] == nil {
					localsIn[prog.ChunkOf(l)] = map[string]bool{}
				}
				localsIn[prog.ChunkOf(l)][l.Name] = true
			}
		}
		for other, names := range localsIn {
			if other != c && names[name] && other.Kind == c.Kind && other.Section == c.Section {
				return true
			}
		}
		return false
	}
	membersOf := map[string][]string{}
	infos := engineNames()
	global := func(g *program.Global) {
		if g.Write {
			checkWrite(pass, prog, g)
			return
		}
		name := g.Expr.Value
		c := prog.ChunkOf(g)
		info := infos[name]
		var known bool
		if c.Kind == program.H1Chunk {
			known = info != nil && info.h1
		} else {
			known = info != nil && info.sec || aliasGlobals[name]
		}
		defined := known || writesFor(c)[name]
		if g.FieldWrite {
			checkWrite(pass, prog, g)
		}
		switch {
		case defined:
			if known && !g.FieldWrite && !info.hasMember(g) {
				checkField(pass, g, prog.PathSpan(g), membersOf)
			}
		case api.IsRemoved(name):
			reportRemoved(pass, prog, g)
		case isOldGlobal(name):
			// The dropped tasks table: the oldforms pass reports it.
		default:
			d := analysis.Diagnostic{Span: prog.GlobalSpan(g), Code: CodeUndefinedGlobal,
				Message: fmt.Sprintf("undefined global %q", name)}
			if otherChunkLocal(c, name) {
				d.Message += " here: it is a local of another ```lua block, and each block has its own locals; make it a global (drop `local`) or store it in var"
				pass.Report(d)
				return
			}
			if c.Kind == program.H1Chunk && sharedWritesOf()[name] {
				d.Message += " in H1: the `lua shared` library is loaded only into section VMs, not into the H1"
				certain(&d, g)
				pass.Report(d)
				return
			}
			if to := suggest.Closest(name, candidates(c)); to != "" {
				d.Message += fmt.Sprintf("; did you mean %q?", to)
				d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Change to " + to,
					Edits: []analysis.TextEdit{{Span: prog.GlobalSpan(g), NewText: to}}}}
			}
			certain(&d, g)
			pass.Report(d)
		}
	}
	local := func(l *program.Local) {
		if l.Param || l.Reads > 0 || strings.HasPrefix(l.Name, "_") || prog.LocalSpan(l).Len() == 0 {
			return
		}
		pass.Reportf(prog.LocalSpan(l), CodeUnusedLocal, "unused local %q; remove it, or name it _%s if it is intentional", l.Name, l.Name)
	}
	// Each chunk's globals and locals.
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[unitFP](ix, unitKey)
	defer run.Done()
	chunkRecords := func(ch *program.Chunk) ([]*program.Global, []*program.Local) {
		return ix.Globals(ch.Index()), ix.Locals(ch.Index())
	}
	judge := func(gs []*program.Global, ls []*program.Local) {
		for _, g := range gs {
			global(g)
		}
		for _, l := range ls {
			local(l)
		}
	}
	// A section's own chunks are judged together, memoised on its first
	// one (chunkmemo): their findings depend on their text, the shared
	// library (whose globals the section's VM has), the H1's tool and
	// model aliases and whether any code makes globals by computed name.
	// The H1's and the shared library's depend on every section's.
	fp := unitFP{aliases: chunkmemo.Stable(&lastAliases, strings.Join(slices.Sorted(maps.Keys(aliasGlobals)), "\x00")), dynamic: dynamicGlobals}
	if prog.Shared != nil {
		fp.shared = prog.Shared.Key()
	}
	for i := 0; i < len(prog.Chunks); {
		ch := prog.Chunks[i]
		if ch.Kind != program.SectionChunk {
			judge(chunkRecords(ch))
			i++
			continue
		}
		j := i + 1
		for j < len(prog.Chunks) && prog.Chunks[j].Kind == program.SectionChunk && prog.Chunks[j].Section == ch.Section {
			j++
		}
		own := prog.Chunks[i:j]
		i = j
		lo, hi := own[0].Index(), own[len(own)-1].Index()
		part := chunkmemo.Part[unitFP]{Table: ix.Table(lo), File: pass.File, FP: fp, Chunks: ix.Chunks(lo, hi),
			Region: source.Span{Start: own[0].Span.Start, End: own[len(own)-1].Span.End}}
		run.Report(pass, part, func() {
			for _, c := range own {
				judge(chunkRecords(c))
			}
		})
	}
	for _, u := range prog.Unreachable {
		span := prog.LineSpan(u.Chunk, u.Stmt.Line())
		pass.Reportf(span, CodeUnreachable, "unreachable code: the statement on line %d (%s) ends this block", u.Chunk.FirstLine+u.After.Line()-1, describe(u.After))
	}
	return nil, nil
}

// lastAliases is the last unitFP.aliases (chunkmemo.Stable).
var lastAliases atomic.Pointer[string]

// unitKey is the memo of a section's own chunks' findings about their
// globals and locals.
var unitKey = chunkmemo.NewKey("luahygiene")

// unitFP is what those findings depend on besides the chunks' text: the
// shared library (its parse identity: what it assigns is the section
// VM's too), the H1's alias globals (sorted, joined) and whether code
// makes globals by computed name.
type unitFP struct {
	shared  any
	aliases string
	dynamic bool
}

func describe(s ast.Stmt) string {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		return "return"
	case *ast.BreakStmt:
		return "break"
	case *ast.DoBlockStmt:
		return "do ... return end"
	case *ast.FuncCallStmt:
		if c, ok := s.Expr.(*ast.FuncCallExpr); ok {
			if p, ok := program.Path(c.Func); ok {
				return p + "(...), which never returns"
			}
		}
	}
	return "a statement that never falls through"
}

func reportRemoved(pass *analysis.Pass, prog *program.Program, g *program.Global) {
	name := g.Expr.Value
	msg := fmt.Sprintf("%s is removed by the PromptForge sandbox (using it fails at run time)", name)
	if h, ok := hints[name]; ok {
		msg += "; " + h
	}
	d := analysis.Diagnostic{Span: prog.GlobalSpan(g), Code: CodeRemoved, Message: msg}
	if name == "print" {
		// print(x) with one argument maps to log(x).
		for _, c := range prog.Calls {
			if id, ok := c.Expr.Func.(*ast.IdentExpr); ok && id == g.Expr && len(c.Expr.Args) == 1 {
				d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Use log",
					Edits: []analysis.TextEdit{{Span: prog.GlobalSpan(g), NewText: "log"}}, Safe: true}}
			}
		}
	}
	pass.Report(d)
}

// checkField reports an unknown member of an engine table; pathSpan is
// the span of g.Path.
func checkField(pass *analysis.Pass, g *program.Global, pathSpan source.Span, membersOf map[string][]string) {
	root, rest, ok := strings.Cut(g.Path, ".")
	if !ok || !api.IsTable(root) {
		return
	}
	member, _, _ := strings.Cut(rest, ".")
	if _, old := api.LookupOld(root + "." + member); old {
		return // an old form (models.always): the oldforms pass reports it
	}
	members, ok := membersOf[root]
	if !ok {
		members = api.Members(root, api.Anywhere)
		membersOf[root] = members
	}
	for _, m := range members {
		if m == member {
			return
		}
	}
	// The member's span is the segment right after "root.".
	text := pass.File.Text(pathSpan)
	span := pathSpan
	if i := strings.Index(text, member); i > 0 && strings.HasPrefix(text, root) {
		span = source.Span{Start: pathSpan.Start + i, End: pathSpan.Start + i + len(member)}
	}
	d := analysis.Diagnostic{Span: span, Code: CodeUndefinedField,
		Message: fmt.Sprintf("%s has no member %q", root, member)}
	if root == "sys" {
		d.Message = fmt.Sprintf("unknown sys field %q (reading it fails at run time)", member)
	}
	if to := suggest.Closest(member, members); to != "" {
		d.Message += fmt.Sprintf("; did you mean %s.%s?", root, to)
		if span != pathSpan {
			d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Change to " + root + "." + to,
				Edits: []analysis.TextEdit{{Span: span, NewText: to}}}}
		}
	} else {
		d.Message += "; members: " + strings.Join(members, ", ")
	}
	pass.Report(d)
}

// checkWrite reports writes to read-only host names.
func checkWrite(pass *analysis.Pass, prog *program.Program, g *program.Global) {
	name := g.Expr.Value
	if g.Write && !g.FieldWrite {
		e, ok := api.Lookup(name)
		if !ok || !e.Host || !e.ReadOnly {
			return
		}
		msg := fmt.Sprintf("%s is a read-only engine global; assigning it breaks the prompt", name)
		if name == "var" {
			msg = "the `var` global must not be reassigned (the run fails when it reads var back); write `var.<field> = ...` instead"
		}
		if name == "sys" {
			msg = "sys is read-only; it cannot be reassigned"
		}
		pass.Reportf(prog.GlobalSpan(g), CodeReadOnly, "%s", msg)
		return
	}
	// A field write through a global: sys.x = ..., tools.calls.x = ...,
	// tools.add = ... (the path's first, second and further segments).
	root, rest, two := strings.Cut(g.Path, ".")
	second, _, three := strings.Cut(rest, ".")
	switch {
	case root == "sys":
		f := ""
		if two {
			f = second
		}
		pass.Reportf(prog.PathSpan(g), CodeReadOnly, "sys is read-only; cannot set '%s'", f)
	case three && root == "tools" && second == "calls":
		pass.Reportf(prog.PathSpan(g), CodeReadOnly, "tools.calls is read-only; the engine counts tool calls itself")
	case two && (root == "tools" || root == "models" || root == "store"):
		pass.Reportf(prog.PathSpan(g), CodeReadOnly, "%s is an engine table; assigning %s replaces an engine function or field", root, g.Path)
	}
}

// nameInfo is what the pass needs to know of an engine global name: the
// contexts it exists in and, for a host or library table, its members
// (as checkField reads them).
type nameInfo struct {
	sec, h1 bool
	table   bool
	members map[string]bool
}

// engineNames maps every engine global (section-like and H1) to its
// nameInfo. The API table is fixed, so it is built once.
var engineNames = sync.OnceValue(func() map[string]*nameInfo {
	out := map[string]*nameInfo{}
	get := func(name string) *nameInfo {
		if out[name] == nil {
			n := &nameInfo{table: api.IsTable(name)}
			if n.table {
				n.members = map[string]bool{}
				for _, m := range api.Members(name, api.Anywhere) {
					n.members[m] = true
				}
			}
			out[name] = n
		}
		return out[name]
	}
	for name := range api.GlobalSet(api.SectionLike) {
		get(name).sec = true
	}
	for name := range api.GlobalSet(api.H1) {
		get(name).h1 = true
	}
	return out
})

// hasMember reports whether checkField would find nothing to report for
// g, a read of the global n describes: its path is not a field of an
// engine table, or names a member of the table. It is false when
// unsure (n nil, or a path not rooted at the name).
func (n *nameInfo) hasMember(g *program.Global) bool {
	if n == nil {
		return false
	}
	name := g.Expr.Value
	if len(g.Path) <= len(name) || g.Path[len(name)] != '.' || g.Path[:len(name)] != name {
		return len(g.Path) == len(name) && g.Path == name // no field
	}
	if !n.table {
		return true
	}
	member, _, _ := strings.Cut(g.Path[len(name)+1:], ".")
	return n.members[member]
}

// isOldGlobal reports a global upstream removed (docs/migration.md).
func isOldGlobal(name string) bool {
	o, ok := api.LookupOld(name)
	return ok && o.Kind == api.OldGlobal
}
