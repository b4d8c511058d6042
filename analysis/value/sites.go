// Call sites and chunk results: what the rules judge beyond a call's own
// arguments. A host call inside a function body (a local helper, a
// shared-library function) evaluated at a call of the chunk is recorded
// with that call (a Site), so a rule that fails on the actual arguments
// is reported where the chunk calls the helper; a chunk's results (its
// return value, what it assigns to reply) are recorded with their values.

package value

import "github.com/yuin/gopher-lua/ast"

// Site is one evaluation of a host call in a function body, run by a
// call of the chunk itself: whenever Call runs, Inner runs with Args.
type Site struct {
	// Call is the chunk's own call (at its top level) through which the
	// body ran; Name names its function ("heading", "M.path"), or "".
	Call *ast.FuncCallExpr
	Name string
	// Inner is the host call in the body, and Args its argument values
	// in this evaluation.
	Inner *ast.FuncCallExpr
	Args  []Value
}

// Sites returns the host calls that the chunk's top-level calls of Lua
// functions certainly run (no unknown branch or loop between the call
// and the host call), with their arguments, in evaluation order.
func (f *Facts) Sites() []Site {
	if f == nil {
		return nil
	}
	return f.sites
}

// SiteView returns facts whose Arg gives the arguments of s.Inner in
// the evaluation s.
func SiteView(s Site) *Facts {
	return &Facts{args: map[*ast.FuncCallExpr]*argRec{s.Inner: {exact: s.Args, hasExact: true}}}
}

// maxSites bounds the sites one chunk records.
const maxSites = 256

// outerCall is the chunk's top-level call whose function body is being
// evaluated, and the condition depth it was made at.
type outerCall struct {
	call *ast.FuncCallExpr
	cond int
}

// enterOuter notes that call e of a Lua function starts being
// evaluated; leave restores what it returns.
func (in *interp) enterOuter(e *ast.FuncCallExpr) (leave func()) {
	if in.outer.call != nil || in.inFunc > 0 || !in.record {
		return func() {}
	}
	in.outer = outerCall{call: e, cond: in.cond}
	return func() { in.outer = outerCall{} }
}

// recordSite records an evaluation of host call e with vals, when a
// top-level call of the chunk certainly runs it.
func (in *interp) recordSite(e *ast.FuncCallExpr, vals []Value) {
	o := in.outer
	if o.call == nil || o.call == e || in.cond != o.cond || len(in.f.sites) >= maxSites {
		return
	}
	for _, fr := range in.frames {
		if fr.early {
			return
		}
	}
	name := calleeName(o.call.Func)
	if o.call.Receiver != nil {
		name = ""
		if r := calleeName(o.call.Receiver); r != "" {
			name = r + ":" + o.call.Method
		}
	}
	in.f.sites = append(in.f.sites, Site{Call: o.call, Name: name, Inner: e, Args: clone(vals)})
}

// Result is a value a chunk hands the run when it ends: a top-level
// return's first value (Expr is the returned expression), or a value
// assigned to reply (Reply is set; Expr is the assigned expression).
type Result struct {
	Expr  ast.Expr
	V     Value
	Reply bool
}

// Results returns the chunk's top-level returns and reply assignments
// with their values, one per evaluation (a loop unrolled gives one per
// iteration), in evaluation order.
func (f *Facts) Results() []Result {
	if f == nil {
		return nil
	}
	return f.results
}

// maxResults bounds the results one chunk records.
const maxResults = 256

// topLevel reports whether code runs at the chunk's own level: not in a
// function body (evaluated where defined or at a call site).
func (in *interp) topLevel() bool {
	return in.record && in.inFunc == 0 && len(in.frames) == 0 && in.site == nil
}

// recordResult records a top-level result.
func (in *interp) recordResult(e ast.Expr, v Value, reply bool) {
	if !in.topLevel() || len(in.f.results) >= maxResults {
		return
	}
	in.f.results = append(in.f.results, Result{Expr: e, V: v, Reply: reply})
}
