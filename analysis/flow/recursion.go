package flow

import (
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/internal/literal"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// Recursion is a cycle of execute (or fanout) calls that every entry of
// its sections makes before anything could stop it, so the run fails at
// the depth cap.
type Recursion struct {
	// Sections are the cycle's sections, starting with the one whose call
	// is Call.
	Sections []*parse.Section
	Call     *program.Call
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
					ordered := append(append([]*parse.Section(nil), cyc[k:]...), cyc[:k]...)
					r.Recursions = append(r.Recursions, Recursion{Sections: ordered, Call: edges[first].call})
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

// nestedEdge is a section's first nested call and its target.
type nestedEdge struct {
	to   *parse.Section
	call *program.Call
}

// firstNested returns the nested call that every entry of s makes before
// anything else could end it, if there is one.
func (r *Result) firstNested(s *parse.Section, callsOf map[*parse.Chunk][]*program.Call) (nestedEdge, bool) {
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
			if call, ok := e.(*ast.FuncCallExpr); ok {
				name, _ := program.Path(call.Func)
				nestedCall := name == "execute"
				if name == "fanout" && len(call.Args) > 1 {
					v, ok := literal.Value(call.Args[1])
					nestedCall = ok && v.Type == "table" && v.Len > 0
				}
				if nestedCall && len(call.Args) > 0 {
					t, ok := call.Args[0].(*ast.StringExpr)
					if !ok {
						return zero, false
					}
					to, err := parse.Resolve(r.Prog.Prompt, s, t.Value)
					if err != nil {
						return zero, false
					}
					for _, pc := range callsOf[b.Chunk] {
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
