package program

// Handler detection: which add_local calls' handler arguments are
// functions the program defines (Program.HandlerOf), from facts computed
// once per chunk.

import (
	"slices"

	"github.com/forge-lsp/forge-lsp/engine/luaast"
	"github.com/yuin/gopher-lua/ast"
)

// isAddLocalRoot reports whether call n, whose callee has the static path
// path, is a tools.add_local call with a handler argument: a root of
// handlerFinder (and so a possible Program.HandlerOf).
func isAddLocalRoot(path string, n *ast.FuncCallExpr) bool {
	return path == "tools.add_local" && len(n.Args) >= 4
}

// chunkFacts are the per-chunk inputs of handler detection, computed once
// per chunk (the shared chunk belongs to every section unit).
type chunkFacts struct {
	ast0 ast.Stmt
	// events are what handler marking looks at, in Inspect order: every
	// function expression, and the static paths of each call's callee
	// and arguments. A function's body is the events after it up to its
	// end, so marking a body replays a range instead of walking the AST.
	events []handlerEvent
	// funcs are the events of the functions assigned to each name.
	funcs map[string][]int32
	roots []handlerRoot
}

// handlerEvent is a function expression (fn, with its body's end) or a
// name path a call uses.
type handlerEvent struct {
	fn   *ast.FunctionExpr
	end  int32
	path string
}

// handlerRoot is a tools.add_local call with its handler argument: a
// function (the event fn) or a name path.
type handlerRoot struct {
	call  *ast.FuncCallExpr
	fn    int32
	path  string
	named bool
}

type factsKey struct{}

// factsOf returns a chunk's handler-detection facts. They depend on the
// AST alone, so they are memoised on the parser's chunk (not for a
// private AST copy). fb is the caller's scratch: a build walks its
// chunks with one per worker, and only the facts' own slices are
// allocated per chunk.
func factsOf(c *Chunk, private map[*Chunk]bool, fb *factsBuilder) *chunkFacts {
	if len(c.AST) == 0 {
		return &chunkFacts{}
	}
	if !private[c] {
		if f, ok := c.Memo(factsKey{}).(*chunkFacts); ok && f.ast0 == c.AST[0] {
			return f
		}
	}
	fb.reset()
	luaast.WalkStmts(fb, c.AST)
	f := &chunkFacts{ast0: c.AST[0], events: slices.Clone(fb.events), roots: slices.Clone(fb.roots)}
	if len(fb.names) > 0 {
		f.funcs = make(map[string][]int32, len(fb.names))
		for _, name := range fb.names {
			fes := fb.funcs[name]
			is := make([]int32, 0, len(fes))
			for _, fe := range fes {
				if i, ok := fb.at[fe]; ok {
					is = append(is, i)
				}
			}
			f.funcs[name] = is
		}
	}
	for k := range f.roots {
		if fe, ok := fb.rootArg[k].(*ast.FunctionExpr); ok {
			f.roots[k].fn = fb.at[fe]
		}
	}
	if !private[c] {
		c.SetMemo(factsKey{}, f)
	}
	return f
}

// factsBuilder collects a chunk's facts in one walk (a luaast.Visitor).
// It is scratch, reused chunk after chunk (reset).
type factsBuilder struct {
	events []handlerEvent
	funcs  map[string][]*ast.FunctionExpr
	// names are funcs' keys, in the order first assigned.
	names   []string
	at      map[*ast.FunctionExpr]int32
	roots   []handlerRoot
	rootArg []ast.Expr
	// open holds, per node being walked, its function event or -1.
	open []int32
}

func newFactsBuilder() *factsBuilder {
	return &factsBuilder{funcs: map[string][]*ast.FunctionExpr{}, at: map[*ast.FunctionExpr]int32{}}
}

// reset empties the builder for the next chunk, deleting only the map
// entries the last chunk made (clearing a map costs its capacity, which
// one large chunk would leave to every small one after it).
func (b *factsBuilder) reset() {
	for _, e := range b.events {
		if e.fn != nil {
			delete(b.at, e.fn)
		}
	}
	for _, name := range b.names {
		delete(b.funcs, name)
	}
	clear(b.rootArg)
	b.events, b.names, b.roots, b.rootArg, b.open = b.events[:0], b.names[:0], b.roots[:0], b.rootArg[:0], b.open[:0]
}

// addFunc notes that fe is assigned to name.
func (b *factsBuilder) addFunc(name string, fe *ast.FunctionExpr) {
	fes, ok := b.funcs[name]
	if !ok {
		b.names = append(b.names, name)
	}
	b.funcs[name] = append(fes, fe)
}

func (b *factsBuilder) Visit(n any) luaast.Visitor {
	if n == nil {
		i := b.open[len(b.open)-1]
		b.open = b.open[:len(b.open)-1]
		if i >= 0 {
			b.events[i].end = int32(len(b.events))
		}
		return nil
	}
	ev := int32(-1)
	switch n := n.(type) {
	case *ast.FunctionExpr:
		ev = int32(len(b.events))
		b.at[n] = ev
		b.events = append(b.events, handlerEvent{fn: n})
	case *ast.FuncDefStmt:
		if n.Name != nil && n.Name.Func != nil {
			if path, ok := Path(n.Name.Func); ok {
				b.addFunc(path, n.Func)
			}
		}
	case *ast.LocalAssignStmt:
		for i, name := range n.Names {
			if i < len(n.Exprs) {
				if fe, ok := n.Exprs[i].(*ast.FunctionExpr); ok {
					b.addFunc(name, fe)
				}
			}
		}
	case *ast.AssignStmt:
		for i, l := range n.Lhs {
			if i < len(n.Rhs) {
				if fe, ok := n.Rhs[i].(*ast.FunctionExpr); ok {
					if path, ok := Path(l); ok {
						b.addFunc(path, fe)
					}
				}
			}
		}
	case *ast.FuncCallExpr:
		path, ok := Path(n.Func)
		if ok && isAddLocalRoot(path, n) {
			r := handlerRoot{call: n, fn: -1}
			if _, fn := n.Args[3].(*ast.FunctionExpr); !fn {
				r.path, r.named = Path(n.Args[3])
			}
			b.roots = append(b.roots, r)
			b.rootArg = append(b.rootArg, n.Args[3])
		}
		// A called name, and a function passed as an argument (pcall(f),
		// table.sort(t, f)), run where the call runs.
		if ok {
			b.events = append(b.events, handlerEvent{path: path})
		}
		for _, a := range n.Args {
			if path, ok := Path(a); ok {
				b.events = append(b.events, handlerEvent{path: path})
			}
		}
	}
	b.open = append(b.open, ev)
	return b
}

// handlerFinder marks the function bodies that run as add_local
// handlers (see find). One finder serves every VM of a build.
type handlerFinder struct {
	handlerOf map[*ast.FunctionExpr]*ast.FuncCallExpr
	// chunkFacts are every chunk's facts, by Chunk.idx.
	chunkFacts []*chunkFacts
	// facts are the current VM's chunk facts, and call the add_local call
	// whose handler is being marked.
	facts []*chunkFacts
	call  *ast.FuncCallExpr
	// idx are the chunk indices of facts, and marked, by Chunk.idx, tells
	// the chunks one of whose functions got marked: a chunk marked in
	// neither of two builds has no handler in either (builder.models).
	idx    []int32
	marked []bool
}

// find marks the function bodies that run as add_local handlers in one
// VM: the handler argument itself when it is a function, a named
// function passed by name, and every function such a body calls or
// passes by name, transitively. Nested function expressions are covered
// by the walker, which looks at every enclosing function.
func (h *handlerFinder) find(chunks []*Chunk) {
	h.facts, h.idx = h.facts[:0], h.idx[:0]
	roots := false
	for _, c := range chunks {
		f := h.chunkFacts[c.idx]
		h.facts = append(h.facts, f)
		h.idx = append(h.idx, c.idx)
		roots = roots || len(f.roots) > 0
	}
	if !roots {
		return
	}
	for k, f := range h.facts {
		for _, r := range f.roots {
			h.call = r.call
			if r.fn >= 0 {
				h.mark(k, r.fn)
			} else if r.named {
				h.markNamed(r.path)
			}
		}
	}
}

// markNamed marks the functions of a name in the VM: those of each
// chunk, in chunk order.
func (h *handlerFinder) markNamed(path string) {
	for k, f := range h.facts {
		for _, i := range f.funcs[path] {
			h.mark(k, i)
		}
	}
}

// mark marks function event i of the VM's chunk k (h.facts[k]) and
// what its body calls or passes, as Inspect of the body would find them
// (nested functions included).
func (h *handlerFinder) mark(k int, i int32) {
	f := h.facts[k]
	fe := f.events[i].fn
	if _, done := h.handlerOf[fe]; done {
		return
	}
	h.handlerOf[fe] = h.call
	h.marked[h.idx[k]] = true
	for j := i + 1; j < f.events[i].end; j++ {
		if e := &f.events[j]; e.fn != nil {
			h.mark(k, j)
		} else {
			h.markNamed(e.path)
		}
	}
}
