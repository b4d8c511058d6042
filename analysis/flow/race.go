package flow

import (
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// Race is a store write that every arm of a fanout makes to the same
// path: the store lets the first arm to write a path own it for the
// rest of the call, so the second arm's write fails (a write-write
// race, docs/language.md#store).
type Race struct {
	// Fanout is the fanout call, Write the worker's write and Path the
	// path every arm writes.
	Fanout, Write *program.Call
	Path          string
	// Arms is the fanout's member count (at least two).
	Arms int
}

// Races returns the fanout calls whose every arm surely writes one
// constant path: the fanout has a known collection of two or more
// members and a known worker; the write is top-level code of the
// worker's own chunks, with no code before it in the worker that may
// end the arm (a return, a jump, a goto, a chunk that may end the
// section), and its path is the same constant in every arm.
func (r *Result) Races() []Race {
	if !r.fanouts {
		return nil
	}
	var out []Race
	for _, c := range r.Prog.Calls {
		if c.Canonical() != "fanout" || r.Prog.ChunkOf(c).Kind != program.SectionChunk {
			continue
		}
		from := r.Prog.ChunkOf(c).Section
		members := r.Facts(r.Prog.ChunkOf(c)).Arg(c.Expr, 1)
		if members.Shape == nil || len(members.Shape.Fields) > 0 || len(members.Shape.Array) < 2 {
			continue
		}
		addr, ok := r.address(c, 0)
		if !ok {
			continue
		}
		worker, err := parse.Resolve(r.Prog.Prompt, from, addr)
		if err != nil || worker == nil {
			continue
		}
		if w, p, ok := r.sureWrite(worker); ok {
			out = append(out, Race{Fanout: c, Write: w, Path: p, Arms: len(members.Shape.Array)})
		}
	}
	return out
}

// sureWrite returns the first store.write of constant path that every
// entry of section s reaches.
func (r *Result) sureWrite(s *parse.Section) (*program.Call, string, bool) {
	u := r.Prog.UnitOf[s]
	if u == nil {
		return nil, "", false
	}
	writes := map[*ast.FuncCallExpr]*program.Call{}
	for _, c := range u.Calls {
		if c.Canonical() == "store.write" && !c.InFunc && r.Prog.ChunkOf(c).Kind == program.SectionChunk {
			writes[c.Expr] = c
		}
	}
	if len(writes) == 0 {
		return nil, "", false
	}
	for _, ch := range u.Chunks {
		if ch.Kind != program.SectionChunk || len(ch.AST) == 0 {
			continue
		}
		for _, st := range ch.AST {
			// The write, when it is this statement's first call.
			if call := stmtCall(st); call != nil {
				if w, ok := writes[call]; ok && r.StraightIn(ch, call) {
					if p, ok := r.Facts(ch).Arg(call, 0).StrConst(); ok {
						return w, p, true
					}
				}
			}
			if mayLeave(st) {
				return nil, "", false
			}
		}
		if r.endAt[ch.Index()] != Continues {
			return nil, "", false
		}
	}
	return nil, "", false
}

// stmtCall is the call a statement makes: a call statement, or a local
// assigned from one call.
func stmtCall(st ast.Stmt) *ast.FuncCallExpr {
	switch st := st.(type) {
	case *ast.FuncCallStmt:
		c, _ := st.Expr.(*ast.FuncCallExpr)
		return c
	case *ast.LocalAssignStmt:
		if len(st.Exprs) == 1 {
			c, _ := st.Exprs[0].(*ast.FuncCallExpr)
			return c
		}
	}
	return nil
}

// mayLeave reports whether a statement may end its chunk or section
// (outside function bodies): a return, break, goto or label, or a call
// of jump, pcall, xpcall or error anywhere in it.
func mayLeave(st ast.Stmt) bool {
	leave := false
	program.Inspect([]ast.Stmt{st}, func(n any) bool {
		switch n := n.(type) {
		case *ast.FunctionExpr:
			return false
		case *ast.ReturnStmt, *ast.BreakStmt, *ast.GotoStmt, *ast.LabelStmt:
			leave = true
		case *ast.FuncCallExpr:
			if p, ok := program.Path(n.Func); ok && (p == "jump" || p == "pcall" || p == "xpcall" || p == "error") {
				leave = true
			}
		}
		return !leave
	})
	return leave
}
