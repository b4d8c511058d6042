package program

import (
	"cmp"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// chunkModel is everything the walker learns from one chunk: its calls,
// global accesses, locals, tools.calls keys, unreachable statements and
// node spans, with every span relative to the chunk's base (the file
// offset of its first Lua line) and no pointer to a per-build object.
//
// It depends only on the chunk's AST and kind, on where its lines start
// relative to the base, and on which of its functions run as add_local
// handlers. The parser shares one AST between parses of the same chunk
// text, so the model is memoised on the chunk (parse.Chunk.Memo) and
// reused by later builds while those inputs are unchanged: after a
// keystroke an editor re-analyses a prompt in which usually one chunk
// changed, and only that chunk is lexed (lexOf) and walked again. Models are
// immutable once stored, and so are their records (calls, globals,
// locals): every Program built from the model shares them (see Call).
type chunkModel struct {
	ast0 ast.Stmt
	kind ChunkKind
	// slot is the number of the build that used the model last and its
	// chunk's index there (see Program.ChunkOf): a number, so the model
	// keeps no build alive.
	slot atomic.Uint64
	// lines[k] is the start of the chunk's line k+1 relative to the base,
	// for every line of the source and the one after it (so line ends and
	// CRLF breaks are fixed too).
	lines []int32
	// fns are the function expressions walked, and handlers the add_local
	// call each ran under at walk time (nil when none).
	fns      []*ast.FunctionExpr
	handlers []*ast.FuncCallExpr

	calls       []Call
	globals     []Global
	locals      []Local
	callsKeys   []*ast.StringExpr
	unreachable []Unreachable
	spans       nodeSpans
	// roots are the indices in calls of the tools.add_local calls that
	// may own a handler (handlerFinder's roots); a record's handler is
	// the add_local call expression whose handler it runs in, which
	// Program.HandlerOf resolves to that call's record.
	roots []int32
	// writes are the globals the chunk assigns (not fields), in record
	// order, and writeSet the same as a set (nil when none).
	writes   []string
	writeSet map[string]bool
	// vars are the indices in globals of the accesses of var
	// (Program.VarGlobals).
	vars []int32
}

type modelKey struct{}

// nodeSpans are the exact spans of the nodes analyzers ask for: string
// literals, calls and function expressions, sorted by the node's
// address. Every open document keeps them, and the garbage collector
// marks what it keeps: entries of plain numbers (16 bytes, which it
// does not scan) in one exact-size slice per chunk cost it nothing,
// where three maps keyed by node pointers cost a third of a model's
// allocations and a scan of every entry in every collection. An address
// stands for its node while the chunk's syntax tree lives, which it
// does for as long as anything asks the model about its nodes (a model
// serves only the chunk whose tree it was walked from: chunkModel.fits).
// Spans are relative to the chunk's base, so 32 bits hold them.
type nodeSpans []nodeSpan

// nodeSpan is one node's span relative to its chunk's base.
type nodeSpan struct {
	node       uintptr
	start, end int32
}

// addr is the address of an AST node that may have a span (0 for
// others).
func addr(n any) uintptr {
	switch n := n.(type) {
	case *ast.StringExpr:
		return uintptr(unsafe.Pointer(n))
	case *ast.FuncCallExpr:
		return uintptr(unsafe.Pointer(n))
	case *ast.FunctionExpr:
		return uintptr(unsafe.Pointer(n))
	}
	return 0
}

// makeNodeSpans returns the spans recorded by a walk, in walk order, as
// a model keeps them: sorted by node, one per node (the last recorded).
func makeNodeSpans(walked []nodeSpan) nodeSpans {
	slices.SortStableFunc(walked, func(a, b nodeSpan) int { return cmp.Compare(a.node, b.node) })
	out := make(nodeSpans, 0, len(walked))
	for i, s := range walked {
		if i+1 < len(walked) && walked[i+1].node == s.node {
			continue
		}
		out = append(out, s)
	}
	return out
}

// get returns node n's span, if recorded.
func (ns nodeSpans) get(n any) (source.Span, bool) {
	a := addr(n)
	if a == 0 {
		return source.Span{}, false
	}
	i, ok := slices.BinarySearchFunc(ns, a, func(s nodeSpan, a uintptr) int { return cmp.Compare(s.node, a) })
	if !ok {
		return source.Span{}, false
	}
	return source.Span{Start: int(ns[i].start), End: int(ns[i].end)}, true
}

// noSpan marks a record with no source position (the implicit self);
// shifting keeps it the zero span.
var noSpan = source.Span{Start: -1, End: -1}

func shift(s source.Span, base int) source.Span {
	if s.Start < 0 {
		return source.Span{}
	}
	return source.Span{Start: s.Start + base, End: s.End + base}
}

// scratch holds the walker's growing records for one build; they are
// copied into exact-size model slices when a chunk is done.
type scratch struct {
	calls      []Call
	globals    []Global
	locals     []Local
	callList   []*Call
	globalList []*Global
	localList  []*Local
	// callHandler and globalHandler parallel callList and globalList:
	// the add_local call whose handler holds the record, or nil.
	callHandler, globalHandler []*ast.FuncCallExpr
	globalOf                   map[*ast.IdentExpr]*Global
	// toks are the walked chunk's tokens, relative to its base and first
	// line (chunkLex.appendTokens).
	toks []luatok.Token
	// spans are the node spans recorded, in walk order (makeNodeSpans).
	spans []nodeSpan
	// index indexes toks for the walk.
	index luatok.Index
}

// alloc returns a new zero record from a slab, starting a new block when
// the current one is full (earlier pointers stay valid). Blocks start
// small and double up to 256 records, as a rebuild after an edit usually
// walks one small chunk.
func alloc[T any](slab *[]T) *T {
	if len(*slab) == cap(*slab) {
		*slab = make([]T, 0, min(max(2*cap(*slab), 16), 256))
	}
	*slab = (*slab)[:len(*slab)+1]
	return &(*slab)[len(*slab)-1]
}

// lineCount is the number of lines of the chunk's source.
func lineCount(c *parse.Chunk) int { return strings.Count(c.Source, "\n") + 1 }

// fits reports whether a memoised model is valid for chunk c at base in
// this build, given the chunk's tokens there (lexOf, which checked where
// the chunk's lines start when it reused them).
func (m *chunkModel) fits(c *Chunk, f *source.File, base int, lex *chunkLex, handlerOf map[*ast.FunctionExpr]*ast.FuncCallExpr) bool {
	if m.kind != c.Kind || len(c.AST) == 0 || m.ast0 != c.AST[0] {
		return false
	}
	if len(m.lines) != len(lex.lines) || len(m.lines) > 0 && &m.lines[0] != &lex.lines[0] {
		for k, rel := range m.lines {
			if f.LineStart(c.FirstLine+k)-base != int(rel) {
				return false
			}
		}
	}
	for i, fe := range m.fns {
		if handlerOf[fe] != m.handlers[i] {
			return false
		}
	}
	return true
}

// modelOf returns chunk c's model, from the memo when it fits, otherwise
// by lexing and walking the chunk. private is set for a chunk whose AST
// is a per-build copy, whose model must not replace the shared one.
func modelOf(c *Chunk, f *source.File, base int, handlerOf map[*ast.FunctionExpr]*ast.FuncCallExpr, sc *scratch, private bool) *chunkModel {
	lex, toks, fresh := lexInto(c.Chunk, f, sc.toks[:0])
	sc.toks = toks
	if !private {
		if m, ok := c.Memo(modelKey{}).(*chunkModel); ok && m.fits(c, f, base, lex, handlerOf) {
			return m
		}
	}
	m := &chunkModel{ast0: c.AST[0], kind: c.Kind, lines: lex.lines}
	if !fresh {
		sc.toks = lex.appendTokens(sc.toks[:0], 0, 0)
	}
	sc.index.Reset(sc.toks)
	sc.calls, sc.globals, sc.locals = sc.calls[:0], sc.globals[:0], sc.locals[:0]
	sc.callList, sc.globalList, sc.localList = sc.callList[:0], sc.globalList[:0], sc.localList[:0]
	sc.callHandler, sc.globalHandler = sc.callHandler[:0], sc.globalHandler[:0]
	sc.spans = sc.spans[:0]
	clear(sc.globalOf)
	w := &walker{m: m, c: c, file: f, tokens: &sc.index, base: base, scratch: sc, handlerOf: handlerOf, globalOf: sc.globalOf}
	w.openScope()
	w.block(c.AST)
	w.closeScope()
	m.spans = makeNodeSpans(sc.spans)
	m.calls = make([]Call, len(sc.callList))
	for i, r := range sc.callList {
		m.calls[i] = *r
		m.calls[i].m, m.calls[i].handler = m, sc.callHandler[i]
	}
	m.globals = make([]Global, len(sc.globalList))
	for i, r := range sc.globalList {
		m.globals[i] = *r
		m.globals[i].m, m.globals[i].handler = m, sc.globalHandler[i]
		if r.Write && !r.FieldWrite {
			m.writes = append(m.writes, r.Expr.Value)
		}
		if r.Expr.Value == "var" {
			m.vars = append(m.vars, int32(i))
		}
	}
	if len(m.writes) > 0 {
		m.writeSet = make(map[string]bool, len(m.writes))
		for _, w := range m.writes {
			m.writeSet[w] = true
		}
	}
	m.locals = make([]Local, len(sc.localList))
	for i, r := range sc.localList {
		m.locals[i] = *r
		m.locals[i].m = m
	}
	if !private {
		c.SetMemo(modelKey{}, m)
	}
	return m
}

// lineSpan returns the span of chunk line n's text (1-based, chunk
// relative) without its leading indentation.
func lineSpan(f *source.File, c *parse.Chunk, n int) source.Span {
	fl := c.FirstLine + n - 1
	if n <= 0 {
		fl = c.FirstLine
	}
	s, e := f.LineStart(fl), f.LineEnd(fl)
	for s < e && (f.Content[s] == ' ' || f.Content[s] == '\t') {
		s++
	}
	return source.Span{Start: s, End: e}
}
