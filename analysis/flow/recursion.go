package flow

import (
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/internal/literal"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// Recursion is a cycle of execute (or fanout) calls that every entry of
// its sections makes before anything could stop it, so the run fails at
// the depth cap.
type Recursion struct {
	// Sections are the cycle's sections, starting with the one whose call
	// is Call: each calls the next, or, in an execute chain, falls through
	// to it (docs/language.md#execute).
	Sections []*parse.Section
	Call     *program.Call
	// FallsThrough is set when an execute chain reaches the next call by
	// falling through from its target; Jumps when a section on the way
	// jumps to the next one.
	FallsThrough, Jumps bool
}

// recursion finds certain execute/fanout recursion: each section's first
// effective act is a nested call (execute, or fanout over a literal
// non-empty table) to a literal target.
func (r *Result) recursion() {
	p := r.Prog.Prompt
	nested := false
	for _, c := range r.Prog.Calls {
		if (c.Path == "execute" || c.Path == "fanout") && r.Prog.ChunkOf(c).Kind == program.SectionChunk {
			nested = true
		}
	}
	if !nested {
		return
	}
	callsOf := r.callsByChunk()
	edges := map[*parse.Section]nestedEdge{}
	var visit func([]*parse.Section)
	visit = func(ss []*parse.Section) {
		for _, s := range ss {
			if e, ok := r.firstNested(s, callsOf); ok {
				edges[s] = e
			}
			visit(s.Children)
		}
	}
	visit(p.Sections)
	jumps := r.certainJumps(callsOf)
	// An execute chain that starts at a section without a nested call of
	// its own runs it to the end and falls through to the next sibling
	// (off-walk ones skipped), so the next call certainly made is the
	// first one along that way, if every section before it runs through.
	// A section whose first act is a jump to a sibling continues the
	// chain (or the fanout arm, as a chain) at the jump's target.
	for s, e := range edges {
		var via []*parse.Section
		to := e.to
		jumped := false
		seen := map[*parse.Section]bool{}
		for to != nil {
			if _, ok := edges[to]; ok {
				break
			}
			if seen[to] {
				to = nil
				break
			}
			seen[to] = true
			if j, ok := jumps[to]; ok {
				next := j.to
				if e.call.Path == "fanout" && to == e.to {
					// The worker's arm resolves its jump in the arm's
					// visible set.
					next = armJump(p, s, to, j.target)
				}
				if next == nil {
					to = nil
					break
				}
				via, to, jumped = append(via, to), next, true
				continue
			}
			if e.call.Path != "execute" || !r.runsThrough(to, callsOf) {
				to = nil
				break
			}
			via = append(via, to)
			to = r.nextOnWalk(to)
		}
		switch {
		case to == nil && e.call.Path == "execute":
			delete(edges, s)
			continue
		case to == nil:
			continue // a fanout arm's section: the edge as it is
		}
		e.via, e.to, e.jumped = via, to, jumped
		edges[s] = e
	}
	done := map[*parse.Section]bool{}
	for start := range edges {
		if done[start] {
			continue
		}
		var path []*parse.Section
		at := map[*parse.Section]int{}
		for s := start; ; {
			if i, ok := at[s]; ok {
				cyc := path[i:]
				// Report once, at the call of the cycle's first section in
				// file order.
				first := cyc[0]
				for _, c := range cyc {
					if c.Heading != nil && first.Heading != nil && c.Heading.Span.Start < first.Heading.Span.Start {
						first = c
					}
				}
				if !done[first] {
					k := 0
					for j, c := range cyc {
						if c == first {
							k = j
						}
					}
					var ordered []*parse.Section
					through, jumped := false, false
					for _, c := range append(append([]*parse.Section(nil), cyc[k:]...), cyc[:k]...) {
						ordered = append(append(ordered, c), edges[c].via...)
						through = through || len(edges[c].via) > 0 && !edges[c].jumped
						jumped = jumped || edges[c].jumped
					}
					r.Recursions = append(r.Recursions, Recursion{Sections: ordered, Call: edges[first].call, FallsThrough: through, Jumps: jumped})
				}
				break
			}
			if done[s] {
				break
			}
			e, ok := edges[s]
			if !ok {
				break
			}
			at[s] = len(path)
			path = append(path, s)
			s = e.to
		}
		for _, s := range path {
			done[s] = true
		}
	}
	sort.Slice(r.Recursions, func(i, j int) bool {
		return r.Prog.CallSpan(r.Recursions[i].Call).Start < r.Prog.CallSpan(r.Recursions[j].Call).Start
	})
}

// nestedEdge is a section's first nested call and the section that makes
// the next one: the call's target, or a section the target's execute
// chain falls through to (via are the sections it runs through on the
// way).
type nestedEdge struct {
	to   *parse.Section
	via  []*parse.Section
	call *program.Call
	// jumped is set when a section of via jumps to the next.
	jumped bool
}

// certainJumps maps each section whose every entry jumps to a sibling
// (or any section but its children) before doing anything else to that
// section.
func (r *Result) certainJumps(callsOf *callIndex) map[*parse.Section]certainJump {
	out := map[*parse.Section]certainJump{}
	var visit func([]*parse.Section)
	visit = func(ss []*parse.Section) {
		for _, s := range ss {
			if next, j, ok := r.step(s, callsOf); ok && j != nil && next != nil && next != s {
				for _, b := range s.Blocks {
					if b.Chunk != nil {
						if _, t := r.straightJump(b.Chunk, callsOf.of(b.Chunk)); t != "" {
							out[s] = certainJump{to: next, target: t}
							break
						}
					}
				}
			}
			visit(s.Children)
		}
	}
	visit(r.Prog.Prompt.Sections)
	return out
}

// certainJump is where a section's first act jumps: the section it
// resolves to from its own visible set, and the target as written.
type certainJump struct {
	to     *parse.Section
	target string
}

// armJump resolves a jump target in the visible set of an arm of worker
// started by caller (the caller's set minus the worker plus the worker's
// children; the engine uses the worker's own set when that is empty), or
// returns nil.
func armJump(p *parse.Prompt, caller, worker *parse.Section, target string) *parse.Section {
	var vis []*parse.Section
	for _, s := range parse.Visible(p, caller) {
		if s != worker {
			vis = append(vis, s)
		}
	}
	vis = append(vis, worker.Children...)
	if len(vis) == 0 {
		vis = parse.Visible(p, worker)
	}
	sec, err := parse.ResolveFrom(vis, worker, target)
	if err != nil {
		return nil
	}
	return sec
}

// nextOnWalk is the sibling s falls through to: the next one that is not
// off-walk, or nil at the end of its level.
func (r *Result) nextOnWalk(s *parse.Section) *parse.Section {
	sibs := r.Prog.Prompt.Sections
	if s.Parent != nil {
		sibs = s.Parent.Children
	}
	for i, x := range sibs {
		if x != s {
			continue
		}
		for _, n := range sibs[i+1:] {
			if !n.OffWalk {
				return n
			}
		}
	}
	return nil
}

// runsThrough reports whether every entry of s runs its blocks to the end
// and falls through: no return, no call that may leave (jump, execute,
// fanout, error, ...), and no prose that fails for want of a model.
func (r *Result) runsThrough(s *parse.Section, callsOf *callIndex) bool {
	for _, b := range s.Blocks {
		if b.Kind == parse.ProseBlock {
			if r.needsModel(b) {
				return false
			}
			continue
		}
		if b.Chunk == nil || (len(b.Chunk.AST) == 0 && strings.TrimSpace(b.Chunk.Source) != "") {
			return false // a chunk that does not parse fails
		}
		if !plainStmts(b.Chunk.AST) {
			return false
		}
	}
	return true
}

// firstNested returns the nested call that every entry of s makes before
// anything else could end it, if there is one.
func (r *Result) firstNested(s *parse.Section, callsOf *callIndex) (nestedEdge, bool) {
	var zero nestedEdge
	for _, b := range s.Blocks {
		if b.Kind == parse.ProseBlock {
			if r.needsModel(b) {
				return zero, false
			}
			continue
		}
		if b.Chunk == nil || len(b.Chunk.AST) == 0 {
			if b.Chunk == nil || strings.TrimSpace(b.Chunk.Source) != "" {
				return zero, false
			}
			continue
		}
		for _, st := range b.Chunk.AST {
			var e ast.Expr
			switch st := st.(type) {
			case *ast.FuncCallStmt:
				e = st.Expr
			case *ast.LocalAssignStmt:
				if len(st.Exprs) == 1 {
					e = st.Exprs[0]
				}
			case *ast.AssignStmt:
				if len(st.Rhs) == 1 {
					e = st.Rhs[0]
				}
			case *ast.ReturnStmt:
				if len(st.Exprs) == 1 {
					e = st.Exprs[0]
				}
			}
			if e != nil {
				e = onlyNested(e)
			}
			if call, ok := e.(*ast.FuncCallExpr); ok {
				name, _ := program.Path(call.Func)
				nestedCall := name == "execute"
				if name == "fanout" && len(call.Args) > 1 {
					v, ok := literal.Value(call.Args[1])
					nestedCall = ok && v.Type == "table" && v.Len > 0
				}
				if nestedCall && len(call.Args) > 0 {
					// A literal target, or a local or global that holds
					// one constant heading where the call is made.
					target, ok := "", false
					if t, isStr := call.Args[0].(*ast.StringExpr); isStr {
						target, ok = t.Value, true
					} else {
						target, ok = value.Of(b.Chunk).Arg(call, 0).StrConst()
					}
					if !ok {
						return zero, false
					}
					to, err := parse.Resolve(r.Prog.Prompt, s, target)
					if err != nil {
						return zero, false
					}
					for _, pc := range callsOf.of(b.Chunk) {
						if pc.Expr == call {
							zero.to, zero.call = to, pc
							return zero, true
						}
					}
					return zero, false
				}
			}
			if _, isBreak := st.(*ast.BreakStmt); isBreak || !plainStmts([]ast.Stmt{st}) {
				return zero, false
			}
		}
	}
	return zero, false
}

// onlyNested returns the one call that may leave (execute, fanout, ...)
// an expression certainly evaluates, when it holds exactly one and no
// operator that may skip it (and, or) or function body; otherwise e.
// Lua evaluates a call's arguments and both operands of `..` before the
// operation, so a nested call inside them runs first
// (log("chain " .. execute("## B"))).
func onlyNested(e ast.Expr) ast.Expr {
	if c, ok := e.(*ast.FuncCallExpr); ok && leaves(c) {
		return e
	}
	var found *ast.FuncCallExpr
	n := 0
	skip := false
	program.Inspect([]ast.Stmt{&ast.FuncCallStmt{Expr: e}}, func(x any) bool {
		switch x := x.(type) {
		case *ast.LogicalOpExpr, *ast.FunctionExpr:
			skip = true
		case *ast.FuncCallExpr:
			if x.Func == nil || leaves(x) {
				n++
				found = x
			}
		}
		return !skip
	})
	if skip || n != 1 || found.Func == nil {
		return e
	}
	return found
}
