package flow

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// Cycle is a jump cycle the walk enters on every run and can leave only
// through the section-entry cap.
type Cycle struct {
	// Sections are the cycle's sections in entry order.
	Sections []*parse.Section
	// Close is the jump call that re-enters the first of them.
	Close *program.Call
	// Via, when set, is the execute call whose chain runs the cycle
	// (a jump in a chain stays in it); the cycle then fails whenever
	// that call runs.
	Via *program.Call
}

// cycle simulates the walk while every step is certain (no condition
// that could change where control goes, no call that could leave, no
// prose that fails for want of a model) and records a cycle when the walk
// comes back to a section: the run then loops until the entry cap.
func (r *Result) cycle() {
	p := r.Prog.Prompt
	// Without a top-level jump in some section there is no cycle.
	topJump := false
	for _, c := range r.Prog.Calls {
		if name, _ := Control(c); name == "jump" && r.Prog.ChunkOf(c).Kind == program.SectionChunk && !c.InFunc && r.Straight(c) {
			topJump = true
			break
		}
	}
	if !topJump {
		return
	}
	for _, b := range p.H1Blocks {
		if b.Kind == parse.LuaBlock && (b.Chunk == nil || !r.plain(b.Chunk)) {
			return
		}
		if b.Kind == parse.ProseBlock && r.needsModel(b) {
			return
		}
	}
	callsOf := r.callsByChunk()
	slice, i, forced := p.Sections, 0, false
	seen := map[*parse.Section]int{}
	var path []*parse.Section
	var jumps []*program.Call // jumps[k] is the jump section path[k] took, or nil
	for steps := 0; steps < 100000; steps++ {
		for i < len(slice) && slice[i].OffWalk && !forced {
			i++
		}
		if i >= len(slice) {
			return
		}
		s := slice[i]
		if at, ok := seen[s]; ok {
			var closing *program.Call
			for _, j := range jumps[at:] {
				if j != nil {
					closing = j
				}
			}
			if closing != nil {
				r.Cycles = append(r.Cycles, Cycle{Sections: append([]*parse.Section(nil), path[at:]...), Close: closing})
			}
			return
		}
		seen[s] = len(path)
		path = append(path, s)
		next, j, ok := r.step(s, callsOf)
		if !ok {
			return
		}
		jumps = append(jumps, j)
		if next == nil {
			i, forced = i+1, false
			continue
		}
		slice = siblings(p, next)
		i, forced = r.indexOf(slice, next), true
	}
}

// needsModel reports whether prose block b would make a model call that
// fails for want of a model: it has text and the prompt sets no default.
func (r *Result) needsModel(b *parse.Block) bool {
	return !r.DefaultModel && strings.TrimSpace(b.Prose.Text) != ""
}

// callsByChunk groups the program's calls by the chunk that makes them.
// It is made once per analysis, on the first look-up (most prompts'
// chunks are plain, and none is looked up), and shared by its callers
// (read-only).
func (r *Result) callsByChunk() *callIndex {
	if r.callsOf == nil {
		r.callsOf = &callIndex{prog: r.Prog}
	}
	return r.callsOf
}

// callIndex is callsByChunk's index.
type callIndex struct {
	prog *program.Program
	m    map[*parse.Chunk][]*program.Call
}

// of returns the calls parsed chunk c makes.
func (x *callIndex) of(c *parse.Chunk) []*program.Call {
	if x.m == nil {
		x.m = make(map[*parse.Chunk][]*program.Call, len(x.prog.Chunks))
		for _, ch := range x.prog.Chunks {
			// Each chunk's part of the program's calls, shared
			// (capacity-limited, so an append by a caller copies).
			if calls := x.prog.CallsIn(ch); len(calls) > 0 {
				x.m[ch.Chunk] = calls
			}
		}
	}
	return x.m[c]
}

// step is one certain section entry: it falls through (next == nil) or
// jumps to next with call j; ok is false when the outcome is uncertain.
func (r *Result) step(s *parse.Section, callsOf *callIndex) (next *parse.Section, j *program.Call, ok bool) {
	for _, b := range s.Blocks {
		if b.Kind == parse.ProseBlock {
			if r.needsModel(b) {
				return nil, nil, false
			}
			continue
		}
		if b.Chunk == nil {
			return nil, nil, false
		}
		if r.plain(b.Chunk) {
			continue
		}
		j, t := r.straightJump(b.Chunk, callsOf.of(b.Chunk))
		if j == nil {
			return nil, nil, false
		}
		sec, err := parse.Resolve(r.Prog.Prompt, s, t)
		if err != nil || sec.Parent == s {
			return nil, nil, false
		}
		return sec, j, true
	}
	return nil, nil, true
}

// plain reports whether a chunk surely runs to its end without leaving
// the section: no return, break at top level, and no control, error or
// pcall call anywhere in it.
func (r *Result) plain(c *parse.Chunk) bool {
	if len(c.AST) == 0 {
		return strings.TrimSpace(c.Source) == "" // empty; nil AST otherwise means a syntax error
	}
	if r.endOf(c) != Continues {
		return false
	}
	return plainStmts(c.AST)
}

// plainStmts reports whether statements can neither return nor call
// anything that leaves (function bodies may return; their calls count).
func plainStmts(stmts []ast.Stmt) bool {
	ok := true
	program.Inspect(stmts, func(n any) bool {
		switch n := n.(type) {
		case *ast.ReturnStmt:
			ok = false
		case *ast.FunctionExpr:
			program.Inspect(n.Stmts, func(m any) bool {
				if call, isCall := m.(*ast.FuncCallExpr); isCall && leaves(call) {
					ok = false
				}
				return ok
			})
			return false
		case *ast.FuncCallExpr:
			if leaves(n) {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// leaves reports whether a call may leave the section or end the run on
// purpose: jump, execute, fanout, error, assert, or pcall of jump. Other
// calls (methods, library and prompt functions) are taken to return.
func leaves(n *ast.FuncCallExpr) bool {
	if n.Func == nil {
		return false // a method call
	}
	p, isPath := program.Path(n.Func)
	if !isPath {
		return true
	}
	if p == "pcall" || p == "xpcall" {
		if len(n.Args) > 0 {
			a, _ := program.Path(n.Args[0])
			return controlOrError[a]
		}
		return false
	}
	return controlOrError[p]
}

var controlOrError = map[string]bool{"jump": true, "execute": true, "fanout": true, "error": true, "assert": true}

// straightJump returns the top-level jump (or pcall(jump, ...)) call that
// ends chunk c when every statement before it is plain, with its target,
// or nil.
func (r *Result) straightJump(c *parse.Chunk, calls []*program.Call) (*program.Call, string) {
	for _, st := range c.AST {
		var e ast.Expr
		switch st := st.(type) {
		case *ast.FuncCallStmt:
			e = st.Expr
		case *ast.LocalAssignStmt:
			if len(st.Exprs) == 1 {
				e = st.Exprs[0]
			}
		}
		if call, ok := e.(*ast.FuncCallExpr); ok {
			p, _ := program.Path(call.Func)
			arg := -1
			switch {
			case p == "jump":
				arg = 0
			case p == "pcall" && len(call.Args) > 0:
				if a, _ := program.Path(call.Args[0]); a == "jump" {
					arg = 1 // a recorded jump wins over pcall
				}
			}
			if arg >= 0 {
				if len(call.Args) <= arg {
					return nil, ""
				}
				t, ok := call.Args[arg].(*ast.StringExpr)
				if !ok {
					return nil, ""
				}
				for _, pc := range calls {
					if pc.Expr == call {
						return pc, t.Value
					}
				}
				return nil, ""
			}
		}
		if _, isBreak := st.(*ast.BreakStmt); isBreak || !plainStmts([]ast.Stmt{st}) {
			return nil, ""
		}
	}
	return nil, ""
}
