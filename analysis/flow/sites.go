package flow

import "github.com/forge-lsp/forge-lsp/analysis/program"

// SitesOf is program.SitesOf with each section chunk evaluated from the
// var values and store contents the walk brings (Facts): a helper called
// with a value an earlier section handed on in var is judged with that
// value at its call.
func (r *Result) SitesOf(c *program.Call) []program.CallSite {
	r.sitesOnce.Do(func() { r.sites = r.Prog.IndexSites(r.Facts) })
	return r.sites[c.Expr]
}
