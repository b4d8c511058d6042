package program

import (
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/yuin/gopher-lua/ast"
)

// CallSite is one evaluation of a host call in a function body (a local
// helper, a shared-library function) that a top-level call of a chunk
// certainly runs: Chunk holds Site.Call, and Facts gives the inner
// call's arguments in that evaluation.
type CallSite struct {
	Chunk *Chunk
	Site  value.Site
	Facts *value.Facts
}

// SitesOf returns the evaluations of call c run by top-level calls of
// the prompt's chunks (docs/architecture.md#the-evaluator): a rule that
// fails on one of them fails at that chunk's call.
func (p *Program) SitesOf(c *Call) []CallSite {
	p.sitesOnce.Do(func() {
		for _, ch := range p.Chunks {
			if len(ch.AST) == 0 {
				continue
			}
			for _, s := range p.Facts(ch).Sites() {
				if p.sites == nil {
					p.sites = map[*ast.FuncCallExpr][]CallSite{}
				}
				p.sites[s.Inner] = append(p.sites[s.Inner], CallSite{Chunk: ch, Site: s, Facts: value.SiteView(s)})
			}
		}
	})
	return p.sites[c.Expr]
}
