package aliases

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/yuin/gopher-lua/ast"
)

// Codes.
const (
	CodeUndeclared  = "undeclared-alias"
	CodeDuplicate   = "duplicate-alias"
	CodeCalledTwice = "called-twice"
)

// Analyzer checks alias declarations.
var Analyzer = &analysis.Analyzer{
	Name: "aliases",
	Doc:  "check that tool and model aliases are declared before use and only once",
	Codes: []*analysis.Code{
		{Name: CodeUndeclared, Severity: analysis.Error, Summary: "A tool or model alias is used but never declared, or is outside the section's tool scope."},
		{Name: CodeDuplicate, Severity: analysis.Error, Summary: "A tool or model alias is declared twice, or a local tool collides with another alias."},
		{Name: CodeCalledTwice, Severity: analysis.Error, Summary: "models.default is called twice in the prompt, or models.use twice in one section."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

// decl is a declaration or first call: the call, and the literal that
// names the alias (nil: the declaration is at the callee's name). Its
// span is looked up only when a report needs it.
type decl struct {
	call *program.Call
	lit  *ast.StringExpr
	// id numbers the tools.bind aliases (k.tools), for the per-section
	// scope stamps.
	id int
}

// checker holds the prompt's literal H1 declarations while walking.
type checker struct {
	pass  *analysis.Pass
	prog  *program.Program
	tools map[string]decl // tools.bind aliases in H1
	model map[string]decl // model aliases
	// always holds the tools.always aliases.
	always map[string]decl
	// keys are the tools.calls keys of the prompt's chunks, in file
	// order.
	keys []program.CallsKey

	// Per-section state, reused from section to section (gen numbers
	// the sections): the local tools, in order (indexed by localIdx
	// when there are many), and added[id] == gen for a bound tool the
	// section added.
	locals   []localDecl
	localIdx map[string]int
	added    []int
	gen      int
	lits     []*ast.StringExpr
	bound    []bool
	// globalIdent holds the identifiers that read a global (not a
	// local), built on first use: tools.add(search) passes the section's
	// alias global, a Tool.
	globalIdent map[*ast.IdentExpr]bool
	// toolsOpen and modelsOpen are set when an H1 declaration's alias is
	// computed and its value is not known in every evaluation: the
	// declared set is then not known, so no alias is reported as
	// undeclared (docs/architecture.md#the-evaluator: no finding from
	// not knowing).
	toolsOpen, modelsOpen bool
	// volatile is set while judging a section when its findings depend
	// on more than its memo's fingerprint (sectionFP) holds: a value the
	// evaluator computed, or a message naming an absolute line.
	volatile bool
}

// computed returns the aliases a declaration whose alias is not a
// literal declares: one per evaluation of the call (a loop unrolled,
// each call of the helper it is in), when every one is a known string;
// none when the evaluator followed the chunk and the call never runs.
func (k *checker) computed(c *program.Call) ([]string, bool) {
	if c.InFunc {
		return nil, false
	}
	facts := k.prog.Facts(k.prog.ChunkOf(c))
	if _, ok := facts.Args(c.Expr); !ok && facts.Exit != nil {
		return nil, true // never runs (a loop over an empty list)
	}
	var out []string
	for _, f := range facts.Views(c.Expr) {
		v := f.Arg(c.Expr, 0)
		s, ok := v.StrConst()
		if !ok || v.T != value.String {
			return nil, false
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, len(out) > 0
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	k := &checker{pass: pass, prog: prog, tools: map[string]decl{}, model: map[string]decl{}, keys: prog.CallsKeys}
	k.h1()
	k.added = make([]int, len(k.tools))
	// A section's findings depend on its own chunks (the region's text),
	// the shared library's calls (its parse identity), whether it is the
	// first section (which reports the shared library's) and what the
	// H1 declares (h1Key): memoised on the section's first own chunk,
	// unless judging it read a computed value or named a line (volatile).
	fp := sectionFP{h1: chunkmemo.Stable(&lastH1, k.h1Key()), first: true}
	if prog.Shared != nil {
		fp.shared = prog.Shared.Key()
	}
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[sectionFP](ix, sectionKey)
	defer run.Done()
	for i, u := range prog.Sections {
		fp.first = i == 0
		first, last := u.OwnChunks()
		if first == nil {
			k.section(u, nil, nil)
			continue
		}
		part := chunkmemo.Part[sectionFP]{Table: ix.Table(first.Index()), File: pass.File, FP: fp, Chunks: ix.Chunks(first.Index(), last.Index()),
			Region: source.Span{Start: first.Span.Start, End: last.Span.End}}
		run.ReportIf(pass, part, func() bool {
			k.volatile = false
			k.section(u, first, last)
			return !k.volatile
		})
	}
	return nil, nil
}

// lastH1 is the last h1Key (chunkmemo.Stable).
var lastH1 atomic.Pointer[string]

// sectionKey is the memo of a section's findings.
var sectionKey = chunkmemo.NewKey("aliases")

// sectionFP is what a section's findings depend on besides its own
// chunks' text.
type sectionFP struct {
	h1     string
	shared any
	first  bool
}

// h1Key is what the H1 declares, as a section's findings see it: the
// bound tool and model aliases, the always tools, and whether either
// set is open.
func (k *checker) h1Key() string {
	var b strings.Builder
	for _, m := range []map[string]decl{k.tools, k.model, k.always} {
		for _, a := range slices.Sorted(maps.Keys(m)) {
			b.WriteString(a)
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	if k.toolsOpen {
		b.WriteByte('t')
	}
	if k.modelsOpen {
		b.WriteByte('m')
	}
	return b.String()
}

// keysIn returns the tools.calls keys of the chunks first to last (in
// Program.Chunks' order), in file order.
func (k *checker) keysIn(first, last *program.Chunk) []program.CallsKey {
	lo, _ := slices.BinarySearchFunc(k.keys, first.Index(), func(ck program.CallsKey, i int) int { return ck.Chunk.Index() - i })
	hi := lo
	for hi < len(k.keys) && k.keys[hi].Chunk.Index() <= last.Index() {
		hi++
	}
	return k.keys[lo:hi]
}

// strArg returns a call argument's value and literal when it is a string
// literal (program.Program.StringArg without the span lookup).
func strArg(c *program.Call, i int) (string, *ast.StringExpr, bool) {
	s, ok := c.Arg(i).(*ast.StringExpr)
	if !ok {
		return "", nil, false
	}
	return s.Value, s, true
}

// span returns a declaration's span.
func (k *checker) span(d decl) source.Span {
	if d.lit == nil {
		return k.prog.NameSpan(d.call)
	}
	return k.prog.SpanOf(d.call, d.lit)
}

func (k *checker) related(d decl, what string) []analysis.RelatedInformation {
	return []analysis.RelatedInformation{{Span: k.span(d), Message: what}}
}

// line returns the file line of a declaration.
func (k *checker) line(d decl) int {
	k.volatile = true // a message naming it is not memoised (it moves)
	l, _ := k.pass.File.Position(k.span(d).Start)
	return l
}

// h1 walks H1 calls in run order: binds, always, default.
func (k *checker) h1() {
	// Pre-collect all H1 declarations so that use-before-declare can say
	// where the declaration is.
	allTools := map[string]decl{}
	allModels := map[string]decl{}
	for _, c := range k.prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind":
			if a, lit, ok := strArg(c, 0); ok {
				if _, dup := allTools[a]; !dup {
					allTools[a] = decl{call: c, lit: lit}
				}
			}
		case "models.bind", "models.default":
			if a, lit, ok := strArg(c, 0); ok && (c.Canonical() == "models.bind" || len(c.Expr.Args) > 1) {
				if _, dup := allModels[a]; !dup {
					allModels[a] = decl{call: c, lit: lit}
				}
			}
		}
	}
	always := map[string]decl{}
	var firstDefault *decl
	for _, c := range k.prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind":
			a, lit, ok := strArg(c, 0)
			if !ok {
				// A computed alias: each value it takes is declared; when
				// one is not known, the declared set is not.
				as, known := k.computed(c)
				if !known {
					k.toolsOpen = true
				}
				for _, a := range as {
					if _, dup := k.tools[a]; !dup {
						k.tools[a] = decl{call: c, id: len(k.tools)}
					}
				}
				continue
			}
			d := decl{call: c, lit: lit}
			s := k.span(d)
			if prev, dup := k.tools[a]; dup {
				if program.Exclusive(prev.call, c) {
					continue // if/else arms: only one runs
				}
				k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeDuplicate,
					Message: fmt.Sprintf("tool alias %q was declared more than once (first at line %d); use another alias", a, k.line(prev)),
					Related: k.related(prev, "first declaration")})
				continue
			}
			d.id = len(k.tools)
			k.tools[a] = d
		case "tools.always":
			a, lit, ok := strArg(c, 0)
			if !ok {
				continue
			}
			d := decl{call: c, lit: lit}
			s := k.span(d)
			if _, bound := k.tools[a]; !bound {
				if later, ok := allTools[a]; ok {
					k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeUndeclared,
						Message: fmt.Sprintf("tools.always alias %q is declared by tools.bind only later (line %d); move tools.always after it", a, k.line(later)),
						Related: k.related(later, "the declaration")})
				} else {
					k.undeclaredTool(s, "tools.always", a, false)
				}
				continue
			}
			if prev, dup := always[a]; dup && !program.Exclusive(prev.call, c) {
				k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeDuplicate,
					Message: fmt.Sprintf("tools.always alias %q was recorded more than once (first at line %d)", a, k.line(prev)),
					Related: k.related(prev, "first tools.always")})
				continue
			}
			always[a] = d
		case "models.bind", "models.default":
			isDefault := c.Canonical() == "models.default"
			if isDefault {
				if firstDefault != nil && !program.Exclusive(firstDefault.call, c) {
					k.pass.Report(analysis.Diagnostic{Span: k.prog.NameSpan(c), Code: CodeCalledTwice,
						Message: fmt.Sprintf("models.default may be called at most once per prompt (first at line %d)", k.line(*firstDefault)),
						Related: k.related(*firstDefault, "first models.default")})
				} else if firstDefault == nil {
					firstDefault = &decl{call: c}
				}
			}
			a, lit, ok := strArg(c, 0)
			if !ok {
				as, known := k.computed(c)
				if !known && (!isDefault || len(c.Expr.Args) > 1) {
					k.modelsOpen = true
				}
				if !isDefault || len(c.Expr.Args) > 1 {
					for _, a := range as {
						if _, dup := k.model[a]; !dup {
							k.model[a] = decl{call: c}
						}
					}
				}
				continue
			}
			d := decl{call: c, lit: lit}
			s := k.span(d)
			if isDefault && len(c.Expr.Args) == 1 {
				if _, bound := k.model[a]; !bound {
					k.undeclaredModel(s, "models.default", a, allModels)
				}
				continue
			}
			if prev, dup := k.model[a]; dup && !program.Exclusive(prev.call, c) {
				k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeDuplicate,
					Message: fmt.Sprintf("model alias %q was declared more than once (first at line %d); use another alias", a, k.line(prev)),
					Related: k.related(prev, "first declaration")})
				continue
			}
			k.model[a] = d
		}
	}
	k.always = always
}

// localDecl is a section's tools.add_local of alias.
type localDecl struct {
	decl
	alias string
}

// manyLocals is the number of local tools from which they are looked up
// in a map rather than by a scan.
const manyLocals = 8

// local returns the current section's tools.add_local of alias.
func (k *checker) local(alias string) (decl, bool) {
	if len(k.locals) > manyLocals {
		i, ok := k.localIdx[alias]
		if !ok {
			return decl{}, false
		}
		return k.locals[i].decl, true
	}
	for i := range k.locals {
		if k.locals[i].alias == alias {
			return k.locals[i].decl, true
		}
	}
	return decl{}, false
}

// addLocal records the current section's tools.add_local of alias.
func (k *checker) addLocal(alias string, d decl) {
	k.locals = append(k.locals, localDecl{d, alias})
	switch n := len(k.locals); {
	case n == manyLocals+1:
		k.localIdx = make(map[string]int, 2*n)
		for i, l := range k.locals {
			k.localIdx[l.alias] = i
		}
	case n > manyLocals+1:
		k.localIdx[alias] = n - 1
	}
}

func (k *checker) undeclaredTool(s source.Span, op, alias string, inSection bool) {
	if !toolrule.ValidAlias(alias) || k.toolsOpen {
		return // alias-syntax reports it; the runtime checks the grammar first
	}
	if d, ok := k.local(alias); ok && inSection {
		k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeUndeclared,
			Message: fmt.Sprintf("%s alias %q is a local tool (tools.add_local); local tools are in scope from the next prose block without tools.add", op, alias),
			Related: k.related(d, "the local tool")})
		return
	}
	k.reportUndeclared(s, fmt.Sprintf("%s alias %q was not declared by tools.bind in H1", op, alias), alias, "tools", k.tools, true)
}

// reportUndeclared reports an undeclared alias with a did-you-mean (and,
// when s is the alias's literal, a quick fix replacing it) when one
// declared alias is close, else the list of declared ones.
func (k *checker) reportUndeclared(s source.Span, msg, alias, what string, declared map[string]decl, literal bool) {
	d := analysis.Diagnostic{Span: s, Code: CodeUndeclared}
	names := slices.Sorted(maps.Keys(declared))
	switch to := suggest.Closest(alias, names); {
	case to != "":
		msg += fmt.Sprintf("; did you mean %q?", to)
		if literal {
			d.SuggestedFixes = []analysis.SuggestedFix{{Message: fmt.Sprintf("Change to %q", to),
				Edits: []analysis.TextEdit{{Span: s, NewText: fmt.Sprintf("%q", to)}}}}
		}
	case len(names) > 0:
		msg += "; declared " + what + ": " + strings.Join(names, ", ")
	}
	d.Message = msg
	k.pass.Report(d)
}

func (k *checker) undeclaredModel(s source.Span, op, alias string, later map[string]decl) {
	if !toolrule.ValidAlias(alias) || k.modelsOpen {
		return // alias-syntax reports it
	}
	if l, ok := later[alias]; ok {
		k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeUndeclared,
			Message: fmt.Sprintf("%s alias %q is declared only later (line %d); move it after the declaration", op, alias, k.line(l)),
			Related: k.related(l, "the declaration")})
		return
	}
	k.reportUndeclared(s, fmt.Sprintf("%s alias %q was not declared by models.bind or models.default in H1", op, alias), alias, "models", k.model, true)
}

// section checks one section VM: adds, local tools, calls, use/get;
// first and last are its first and last own chunks (nil when none).
func (k *checker) section(u *program.Unit, first, last *program.Chunk) {
	k.gen++
	k.locals = k.locals[:0]
	// opaque is set when the section adds a tool whose alias the
	// checker cannot determine: it then says nothing about its scope
	// (docs/architecture.md#the-evaluator: no finding from not knowing).
	opaque := false
	for _, c := range u.Calls {
		if c.Canonical() != "tools.add_local" || c.Where == api.H1 {
			continue
		}
		a, lit, ok := strArg(c, 0)
		if !ok {
			opaque = true // an alias computed in code: the scope is not known
			continue
		}
		d := decl{call: c, lit: lit}
		// Shared code runs in every section; report it once.
		report := k.prog.ChunkOf(c).Kind != program.SharedChunk || u == k.prog.Sections[0]
		if b, bound := k.tools[a]; bound {
			if report {
				k.pass.Report(analysis.Diagnostic{Span: k.span(d), Code: CodeDuplicate,
					Message: fmt.Sprintf("tools.add_local alias %q duplicates a declared tool alias (tools.bind at line %d); choose another alias", a, k.line(b)),
					Related: k.related(b, "the tools.bind declaration")})
			}
			continue
		}
		if prev, dup := k.local(a); dup {
			if report && !program.Exclusive(prev.call, c) {
				k.pass.Report(analysis.Diagnostic{Span: k.span(d), Code: CodeDuplicate,
					Message: fmt.Sprintf("tools.add_local alias %q is already registered in this section (line %d)", a, k.line(prev)),
					Related: k.related(prev, "first registration")})
			}
			continue
		}
		k.addLocal(a, d)
	}
	// The section's tool scope is the always tools, the local tools and
	// the bound tools its tools.add calls add (k.added).
	var firstUse decl // firstUse.call is nil before the first models.use
	for _, c := range u.Calls {
		if c.Where == api.H1 {
			continue
		}
		switch c.Canonical() {
		case "tools.add":
			k.lits = k.prog.AppendAddAliases(c, k.lits[:0])
			// tools.add is atomic: when one alias is bad, none is added.
			ok := true
			k.bound = k.bound[:0]
			for _, lit := range k.lits {
				_, bound := k.tools[lit.Value]
				k.bound = append(k.bound, bound)
				ok = ok && bound
			}
			if ok {
				k.addHandles(c)
			}
			known, unbound := k.computedAdd(c)
			if !k.prog.OldMultiAdd(c) && !known {
				opaque = true
			}
			k.undeclaredComputed(c, unbound)
			for i, lit := range k.lits {
				if ok {
					k.added[k.tools[lit.Value].id] = k.gen
				}
				if k.prog.ChunkOf(c).Kind == program.SharedChunk && u != k.prog.Sections[0] {
					continue // shared code: reported with the first section only
				}
				if !k.bound[i] {
					k.undeclaredTool(k.prog.SpanOf(c, lit), "tools.add", lit.Value, true)
				}
			}
		case "models.use", "models.get":
			if c.Canonical() == "models.use" {
				if firstUse.call != nil && k.prog.ChunkOf(c).Kind == program.SectionChunk && !program.Exclusive(firstUse.call, c) {
					k.pass.Report(analysis.Diagnostic{Span: k.prog.NameSpan(c), Code: CodeCalledTwice,
						Message: fmt.Sprintf("models.use may be called at most once per section (first at line %d)", k.line(firstUse)),
						Related: k.related(firstUse, "first models.use")})
				} else if firstUse.call == nil {
					firstUse = decl{call: c}
				}
			}
			if k.prog.ChunkOf(c).Kind == program.SharedChunk && u != k.prog.Sections[0] {
				continue
			}
			if a, lit, ok := strArg(c, 0); ok {
				if _, bound := k.model[a]; !bound {
					k.undeclaredModel(k.prog.SpanOf(c, lit), c.Path, a, nil)
				}
			}
		}
	}
	// tools.calls.x in this section's own chunks.
	if opaque || k.toolsOpen || first == nil {
		return
	}
	for _, ck := range k.keysIn(first, last) {
		if ck.Chunk.Kind != program.SectionChunk || ck.Chunk.Section != u.Section {
			continue
		}
		key := ck.Key
		if k.inScope(key.Value) || !toolrule.ValidAlias(key.Value) {
			continue
		}
		in := k.scope()
		msg := fmt.Sprintf("tools.calls: %q is not in this section's tool scope; in-scope aliases: [%s]", key.Value, strings.Join(quoteAll(in), ", "))
		if _, bound := k.tools[key.Value]; bound {
			msg += " (alias was declared by tools.bind but not added to this section's scope; add it with tools.add)"
		} else if to := suggest.Closest(key.Value, in); to != "" {
			msg += fmt.Sprintf("; did you mean %q?", to)
		}
		k.pass.Reportf(k.prog.Span(ck.Chunk, key), CodeUndeclared, "%s", msg)
	}
}

// inScope reports whether alias is in the current section's tool scope.
func (k *checker) inScope(alias string) bool {
	if _, ok := k.always[alias]; ok {
		return true
	}
	if _, ok := k.local(alias); ok {
		return true
	}
	d, ok := k.tools[alias]
	return ok && k.added[d.id] == k.gen
}

// scope returns the current section's tool scope, sorted.
func (k *checker) scope() []string {
	set := map[string]bool{}
	for a := range k.always {
		set[a] = true
	}
	for _, l := range k.locals {
		set[l.alias] = true
	}
	for a, d := range k.tools {
		if k.added[d.id] == k.gen {
			set[a] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// addHandles adds the bound tools that a tools.add call passes as Tool
// objects through their alias globals: tools.add(search),
// tools.add({search, fetch}) and the older tools.add(search, fetch)
// (docs/migration.md).
func (k *checker) addHandles(c *program.Call) {
	var ids []*ast.IdentExpr
	for i, a := range c.Expr.Args {
		switch a := a.(type) {
		case *ast.IdentExpr:
			if i == 0 || k.prog.OldMultiAdd(c) {
				ids = append(ids, a)
			}
		case *ast.TableExpr:
			if i != 0 {
				continue
			}
			for _, f := range a.Fields {
				if id, ok := f.Value.(*ast.IdentExpr); ok && f.Key == nil {
					ids = append(ids, id)
				}
			}
		}
	}
	if len(ids) == 0 {
		return
	}
	if k.globalIdent == nil {
		k.globalIdent = map[*ast.IdentExpr]bool{}
		for _, g := range k.prog.Globals {
			k.globalIdent[g.Expr] = true
		}
	}
	for _, id := range ids {
		if b, bound := k.tools[id.Value]; bound && k.globalIdent[id] {
			k.added[b.id] = k.gen
		}
	}
}

// computedAdd resolves the aliases of a tools.add whose argument is not
// written as literals or alias globals (a shared-library constant, a
// table field, a loop variable): the evaluator's value of the argument
// names them, in each evaluation of the call. It adds those that are
// bound, reports whether every alias of the call is known, and returns
// the known ones that are not bound.
func (k *checker) computedAdd(c *program.Call) (known bool, unbound []string) {
	literal := func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.StringExpr:
			return true
		case *ast.IdentExpr:
			_, bound := k.tools[e.Value]
			return bound && k.globalIdentOf(e)
		}
		return false
	}
	switch a := c.Arg(0).(type) {
	case nil:
		return true, nil
	case *ast.TableExpr:
		all := true
		for _, f := range a.Fields {
			all = all && f.Key == nil && literal(f.Value)
		}
		if all {
			return true, nil
		}
	default:
		if literal(a) {
			return true, nil
		}
	}
	k.volatile = true // the evaluator's value: not in the memo's fingerprint
	facts := k.prog.Facts(k.prog.ChunkOf(c))
	if _, ok := facts.Args(c.Expr); !ok && facts.Exit != nil {
		return true, nil // never runs (a loop over an empty list)
	}
	known = true
	add := func(m value.Value) {
		s, ok := m.StrConst()
		if !ok || m.T != value.String {
			known = false
			return
		}
		if b, bound := k.tools[s]; bound {
			k.added[b.id] = k.gen
		} else if !slices.Contains(unbound, s) {
			unbound = append(unbound, s)
		}
	}
	// Each evaluation of the call: a loop over a known list unrolled.
	for _, f := range facts.Views(c.Expr) {
		v := f.Arg(c.Expr, 0)
		if v.T == value.Table && v.Shape != nil && len(v.Shape.Fields) == 0 {
			for _, m := range v.Shape.Array {
				add(m)
			}
			continue
		}
		add(v)
	}
	return known, unbound
}

// undeclaredComputed reports the aliases a section's tools.add with a
// computed argument certainly passes (a loop over a constant list, a
// helper's result) that no tools.bind declared: the engine fails there.
func (k *checker) undeclaredComputed(c *program.Call, unbound []string) {
	if k.toolsOpen || len(unbound) == 0 || k.prog.ChunkOf(c).Kind != program.SectionChunk {
		return
	}
	for _, a := range unbound {
		if !toolrule.ValidAlias(a) {
			continue // alias-syntax reports it
		}
		if _, local := k.local(a); local {
			continue
		}
		k.reportUndeclared(k.prog.SpanOf(c, c.Arg(0)), fmt.Sprintf("tools.add alias %q was not declared by tools.bind in H1 (the alias %q is computed before the run)", a, a), a, "tools", k.tools, false)
	}
}

// globalIdentOf reports whether id reads a global (not a local).
func (k *checker) globalIdentOf(id *ast.IdentExpr) bool {
	if k.globalIdent == nil {
		k.globalIdent = map[*ast.IdentExpr]bool{}
		for _, g := range k.prog.Globals {
			k.globalIdent[g.Expr] = true
		}
	}
	return k.globalIdent[id]
}
