package aliases

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/suggest"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
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

type decl struct {
	span source.Span
	call *program.Call
}

// checker holds the prompt's literal H1 declarations while walking.
type checker struct {
	pass  *analysis.Pass
	prog  *program.Program
	tools map[string]decl // tools.bind aliases in H1
	model map[string]decl // model aliases
	// always holds the tools.always aliases.
	always map[string]decl
	// keysOf holds the tools.calls keys of each section's own chunks, in
	// file order (grouped once, not scanned per section).
	keysOf map[*parse.Section][]program.CallsKey
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	k := &checker{pass: pass, prog: prog, tools: map[string]decl{}, model: map[string]decl{}}
	k.h1()
	k.keysOf = map[*parse.Section][]program.CallsKey{}
	for _, ck := range prog.CallsKeys {
		if ck.Chunk.Kind == program.SectionChunk {
			k.keysOf[ck.Chunk.Section] = append(k.keysOf[ck.Chunk.Section], ck)
		}
	}
	for _, u := range prog.Sections {
		k.section(u)
	}
	return nil, nil
}

func (k *checker) str(c *program.Call, i int) (string, source.Span, bool) {
	return k.prog.StringArg(c, i)
}

func related(d decl, what string) []analysis.RelatedInformation {
	return []analysis.RelatedInformation{{Span: d.span, Message: what}}
}

func lineOf(k *checker, s source.Span) int {
	l, _ := k.pass.File.Position(s.Start)
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
			if a, s, ok := k.str(c, 0); ok {
				if _, dup := allTools[a]; !dup {
					allTools[a] = decl{s, c}
				}
			}
		case "models.bind", "models.default":
			if a, s, ok := k.str(c, 0); ok && (c.Canonical() == "models.bind" || len(c.Expr.Args) > 1) {
				if _, dup := allModels[a]; !dup {
					allModels[a] = decl{s, c}
				}
			}
		}
	}
	always := map[string]decl{}
	var firstDefault *decl
	for _, c := range k.prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind":
			a, s, ok := k.str(c, 0)
			if !ok {
				continue
			}
			if prev, dup := k.tools[a]; dup {
				if program.Exclusive(prev.call, c) {
					continue // if/else arms: only one runs
				}
				k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeDuplicate,
					Message: fmt.Sprintf("tool alias %q was declared more than once (first at line %d); use another alias", a, lineOf(k, prev.span)),
					Related: related(prev, "first declaration")})
				continue
			}
			k.tools[a] = decl{s, c}
		case "tools.always":
			a, s, ok := k.str(c, 0)
			if !ok {
				continue
			}
			if _, bound := k.tools[a]; !bound {
				if later, ok := allTools[a]; ok {
					k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeUndeclared,
						Message: fmt.Sprintf("tools.always alias %q is declared by tools.bind only later (line %d); move tools.always after it", a, lineOf(k, later.span)),
						Related: related(later, "the declaration")})
				} else {
					k.undeclaredTool(s, "tools.always", a, nil)
				}
				continue
			}
			if prev, dup := always[a]; dup && !program.Exclusive(prev.call, c) {
				k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeDuplicate,
					Message: fmt.Sprintf("tools.always alias %q was recorded more than once (first at line %d)", a, lineOf(k, prev.span)),
					Related: related(prev, "first tools.always")})
				continue
			}
			always[a] = decl{s, c}
		case "models.bind", "models.default":
			isDefault := c.Canonical() == "models.default"
			if isDefault {
				if firstDefault != nil && !program.Exclusive(firstDefault.call, c) {
					k.pass.Report(analysis.Diagnostic{Span: c.NameSpan, Code: CodeCalledTwice,
						Message: fmt.Sprintf("models.default may be called at most once per prompt (first at line %d)", lineOf(k, firstDefault.span)),
						Related: related(*firstDefault, "first models.default")})
				} else if firstDefault == nil {
					firstDefault = &decl{c.NameSpan, c}
				}
			}
			a, s, ok := k.str(c, 0)
			if !ok {
				continue
			}
			if isDefault && len(c.Expr.Args) == 1 {
				if _, bound := k.model[a]; !bound {
					k.undeclaredModel(s, "models.default", a, allModels)
				}
				continue
			}
			if prev, dup := k.model[a]; dup && !program.Exclusive(prev.call, c) {
				k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeDuplicate,
					Message: fmt.Sprintf("model alias %q was declared more than once (first at line %d); use another alias", a, lineOf(k, prev.span)),
					Related: related(prev, "first declaration")})
				continue
			}
			k.model[a] = decl{s, c}
		}
	}
	k.always = always
}

func (k *checker) undeclaredTool(s source.Span, op, alias string, local map[string]decl) {
	if !toolrule.ValidAlias(alias) {
		return // alias-syntax reports it; the runtime checks the grammar first
	}
	if d, ok := local[alias]; ok {
		k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeUndeclared,
			Message: fmt.Sprintf("%s alias %q is a local tool (tools.add_local); local tools are in scope from the next prose block without tools.add", op, alias),
			Related: related(d, "the local tool")})
		return
	}
	k.reportUndeclared(s, fmt.Sprintf("%s alias %q was not declared by tools.bind in H1", op, alias), alias, "tools", k.tools)
}

// reportUndeclared reports an undeclared alias with a did-you-mean quick
// fix when one declared alias is close, else the list of declared ones.
func (k *checker) reportUndeclared(s source.Span, msg, alias, what string, declared map[string]decl) {
	d := analysis.Diagnostic{Span: s, Code: CodeUndeclared}
	if to := suggest.Closest(alias, slices.Sorted(maps.Keys(declared))); to != "" {
		msg += fmt.Sprintf("; did you mean %q?", to)
		d.SuggestedFixes = []analysis.SuggestedFix{{Message: fmt.Sprintf("Change to %q", to),
			Edits: []analysis.TextEdit{{Span: s, NewText: fmt.Sprintf("%q", to)}}}}
	} else if len(declared) > 0 {
		msg += "; declared " + what + ": " + strings.Join(slices.Sorted(maps.Keys(declared)), ", ")
	}
	d.Message = msg
	k.pass.Report(d)
}

func (k *checker) undeclaredModel(s source.Span, op, alias string, later map[string]decl) {
	if !toolrule.ValidAlias(alias) {
		return // alias-syntax reports it
	}
	if l, ok := later[alias]; ok {
		k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeUndeclared,
			Message: fmt.Sprintf("%s alias %q is declared only later (line %d); move it after the declaration", op, alias, lineOf(k, l.span)),
			Related: related(l, "the declaration")})
		return
	}
	k.reportUndeclared(s, fmt.Sprintf("%s alias %q was not declared by models.bind or models.default in H1", op, alias), alias, "models", k.model)
}

// section checks one section VM: adds, local tools, calls, use/get.
func (k *checker) section(u *program.Unit) {
	locals := map[string]decl{}
	for _, c := range u.Calls {
		if c.Canonical() != "tools.add_local" || c.Where == api.H1 {
			continue
		}
		a, s, ok := k.str(c, 0)
		if !ok {
			continue
		}
		// Shared code runs in every section; report it once.
		report := c.Chunk.Kind != program.SharedChunk || u == k.prog.Sections[0]
		if b, bound := k.tools[a]; bound {
			if report {
				k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeDuplicate,
					Message: fmt.Sprintf("tools.add_local alias %q duplicates a declared tool alias (tools.bind at line %d); choose another alias", a, lineOf(k, b.span)),
					Related: related(b, "the tools.bind declaration")})
			}
			continue
		}
		if prev, dup := locals[a]; dup {
			if report && !program.Exclusive(prev.call, c) {
				k.pass.Report(analysis.Diagnostic{Span: s, Code: CodeDuplicate,
					Message: fmt.Sprintf("tools.add_local alias %q is already registered in this section (line %d)", a, lineOf(k, prev.span)),
					Related: related(prev, "first registration")})
			}
			continue
		}
		locals[a] = decl{s, c}
	}
	scope := map[string]bool{}
	for a := range k.always {
		scope[a] = true
	}
	for a := range locals {
		scope[a] = true
	}
	var firstUse *decl
	for _, c := range u.Calls {
		if c.Where == api.H1 {
			continue
		}
		switch c.Canonical() {
		case "tools.add":
			lits := c.AddAliases()
			// tools.add is atomic: when one alias is bad, none is added.
			ok := true
			for _, lit := range lits {
				if _, bound := k.tools[lit.Value]; !bound {
					ok = false
				}
			}
			for _, lit := range lits {
				if ok {
					scope[lit.Value] = true
				}
				if c.Chunk.Kind == program.SharedChunk && u != k.prog.Sections[0] {
					continue // shared code: reported with the first section only
				}
				if _, bound := k.tools[lit.Value]; !bound {
					k.undeclaredTool(k.prog.Span(c.Chunk, lit), "tools.add", lit.Value, locals)
				}
			}
		case "models.use", "models.get":
			if c.Canonical() == "models.use" {
				if firstUse != nil && c.Chunk.Kind == program.SectionChunk && !program.Exclusive(firstUse.call, c) {
					k.pass.Report(analysis.Diagnostic{Span: c.NameSpan, Code: CodeCalledTwice,
						Message: fmt.Sprintf("models.use may be called at most once per section (first at line %d)", lineOf(k, firstUse.span)),
						Related: related(*firstUse, "first models.use")})
				} else if firstUse == nil {
					firstUse = &decl{c.NameSpan, c}
				}
			}
			if c.Chunk.Kind == program.SharedChunk && u != k.prog.Sections[0] {
				continue
			}
			if a, s, ok := k.str(c, 0); ok {
				if _, bound := k.model[a]; !bound {
					k.undeclaredModel(s, c.Path, a, nil)
				}
			}
		}
	}
	// tools.calls.x in this section's own chunks.
	for _, ck := range k.keysOf[u.Section] {
		key := ck.Key
		if scope[key.Value] || !toolrule.ValidAlias(key.Value) {
			continue
		}
		in := slices.Sorted(maps.Keys(scope))
		msg := fmt.Sprintf("tools.calls: %q is not in this section's tool scope; in-scope aliases: [%s]", key.Value, strings.Join(quoteAll(in), ", "))
		if _, bound := k.tools[key.Value]; bound {
			msg += " (alias was declared by tools.bind but not added to this section's scope; add it with tools.add)"
		} else if to := suggest.Closest(key.Value, in); to != "" {
			msg += fmt.Sprintf("; did you mean %q?", to)
		}
		k.pass.Reportf(k.prog.Span(ck.Chunk, key), CodeUndeclared, "%s", msg)
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
