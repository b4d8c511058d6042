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
	return &Facts{args: callRecs{{call: s.Inner, argRec: argRec{exact: s.Args, hasExact: true}}}}
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

// certain reports whether the code being evaluated runs whenever the
// chunk's top-level call being evaluated (in.outer) runs.
func (in *interp) certain() bool {
	o := in.outer
	if o.call == nil || in.cond != o.cond || len(in.frames) == 0 {
		return false
	}
	for _, fr := range in.frames {
		if fr.early {
			return false
		}
	}
	return true
}

// outerName names the function of the top-level call being evaluated.
func (in *interp) outerName() string {
	o := in.outer
	name := calleeName(o.call.Func)
	if o.call.Receiver != nil {
		name = ""
		if r := calleeName(o.call.Receiver); r != "" {
			name = r + ":" + o.call.Method
		}
	}
	return name
}

// SysRead is a read of sys.<Field> (Expr) in a function body that the
// chunk's top-level call Call certainly runs (Name names its function).
type SysRead struct {
	Call  *ast.FuncCallExpr
	Name  string
	Field string
	Expr  ast.Expr
}

// SysReads returns the reads of sys fields in function bodies that the
// chunk's top-level calls certainly run, each read once per call.
func (f *Facts) SysReads() []SysRead {
	if f == nil {
		return nil
	}
	return f.sysReads
}

// recordSysRead records a read of sys.field (e) in a function body run
// by a top-level call of the chunk.
func (in *interp) recordSysRead(e ast.Expr, field string) {
	if !in.record || !in.certain() || len(in.f.sysReads) >= maxSites {
		return
	}
	for _, r := range in.f.sysReads {
		if r.Call == in.outer.call && r.Expr == e {
			return
		}
	}
	in.f.sysReads = append(in.f.sysReads, SysRead{Call: in.outer.call, Name: in.outerName(), Field: field, Expr: e})
}

// recordSite records an evaluation of host call e with vals, when a
// top-level call of the chunk certainly runs it.
func (in *interp) recordSite(e *ast.FuncCallExpr, vals []Value) {
	o := in.outer
	if o.call == e || !in.certain() || len(in.f.sites) >= maxSites {
		return
	}
	name := in.outerName()
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
