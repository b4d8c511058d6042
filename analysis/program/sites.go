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
	p.sitesOnce.Do(func() { p.sites = p.IndexSites(p.Facts) })
	return p.sites[c.Expr]
}

// IndexSites indexes by inner call the sites of every chunk's facts as
// facts gives them (the program's own, or the flow walk's with var
// values: flow.Result.SitesOf); nil when there are none.
func (p *Program) IndexSites(facts func(*Chunk) *value.Facts) map[*ast.FuncCallExpr][]CallSite {
	var sites map[*ast.FuncCallExpr][]CallSite
	for _, ch := range p.Chunks {
		if len(ch.AST) == 0 {
			continue
		}
		for _, s := range facts(ch).Sites() {
			if sites == nil {
				sites = map[*ast.FuncCallExpr][]CallSite{}
			}
			sites[s.Inner] = append(sites[s.Inner], CallSite{Chunk: ch, Site: s, Facts: value.SiteView(s)})
		}
	}
	return sites
}
