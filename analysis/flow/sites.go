package flow

import (
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/yuin/gopher-lua/ast"
)

// SitesOf is program.SitesOf with each section chunk evaluated from the
// var values and store contents the walk brings (Facts): a helper called
// with a value an earlier section handed on in var is judged with that
// value at its call.
func (r *Result) SitesOf(c *program.Call) []program.CallSite {
	r.sitesOnce.Do(func() {
		prog := r.Prog
		for _, ch := range prog.Chunks {
			if len(ch.AST) == 0 {
				continue
			}
			f := r.Facts(ch)
			for _, s := range f.Sites() {
				if r.sites == nil {
					r.sites = map[*ast.FuncCallExpr][]program.CallSite{}
				}
				r.sites[s.Inner] = append(r.sites[s.Inner], program.CallSite{Chunk: ch, Site: s, Facts: value.SiteView(s)})
			}
		}
	})
	return r.sites[c.Expr]
}
