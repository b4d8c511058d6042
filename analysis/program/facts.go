package program

import (
	"sort"

	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// Facts returns the abstract interpreter's facts of chunk c, evaluated
// in the VM it runs in (docs/language.md#vm-setup): a section chunk
// starts from what the shared library leaves (its globals, minus the
// tool and model aliases the engine installs after it) and what the
// section's earlier chunks leave; an H1 chunk from what the H1's
// earlier chunks leave; the shared library from nothing. Each chunk's
// facts are memoised on its text and its entry environment, so an edit
// re-evaluates the chunk edited and the chunks whose entry it changed.
func (p *Program) Facts(c *Chunk) *value.Facts {
	p.factsOnce.Do(p.buildFacts)
	if f, ok := p.facts[c]; ok {
		return f
	}
	return value.Of(c.Chunk)
}

// Entry returns the environment parsed chunk c starts from in its VM
// (see Facts), or nil when nothing is known.
func (p *Program) Entry(c *parse.Chunk) *value.Env {
	p.factsOnce.Do(p.buildFacts)
	return p.entry[c]
}

func (p *Program) buildFacts() {
	p.facts = make(map[*Chunk]*value.Facts, len(p.Chunks))
	p.entry = map[*parse.Chunk]*value.Env{}
	var shared *value.Env
	if p.Shared != nil && len(p.Shared.AST) > 0 {
		f := value.Of(p.Shared.Chunk)
		p.facts[p.Shared] = f
		if aliases, ok := p.aliases(); ok {
			shared = f.Exit.Without(aliases)
		}
	}
	chain := func(u *Unit, entry *value.Env) {
		for _, c := range u.Chunks {
			if c.Kind == SharedChunk {
				continue
			}
			if len(c.AST) == 0 {
				continue
			}
			if entry != nil {
				p.entry[c.Chunk] = entry
			}
			f := value.OfIn(c.Chunk, entry)
			p.facts[c] = f
			entry = f.Exit
		}
	}
	if p.H1 != nil {
		chain(p.H1, nil)
	}
	for _, u := range p.Sections {
		chain(u, shared)
	}
}

// aliases returns the tool and model aliases the H1 declares, which the
// engine installs as globals after the shared library; ok is false when
// one is not a literal (any global may be hidden).
func (p *Program) aliases() ([]string, bool) {
	var out []string
	for _, c := range p.Calls {
		switch c.Canonical() {
		case "tools.bind", "tools.always", "models.bind":
		default:
			continue
		}
		if len(c.Expr.Args) == 0 {
			continue
		}
		s, ok := c.Expr.Args[0].(*ast.StringExpr)
		if !ok {
			return nil, false
		}
		out = append(out, s.Value)
	}
	sort.Strings(out)
	return out, true
}
