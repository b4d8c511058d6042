// Package program builds the analyzer's model of a prompt once, for all
// passes: every Lua chunk with its execution context, every call with the
// host API entry it names (engine/api) and where it runs (H1, section,
// add_local handler, shared-library load), every global read and write,
// every local, and byte spans for AST nodes (gopher-lua's AST has lines
// only; spans come from re-lexing each line with engine/luatok). Each
// chunk's part of the model is memoised on the parser's chunk and reused
// while it stays valid (model.go), so a rebuild after an edit walks only
// the chunks that changed; and a build takes what it can from the last
// build of the same file without looking the memos up (prev.go).
package program

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// Analyzer builds the *Program; it reports nothing.
var Analyzer = &analysis.Analyzer{
	Name: "program",
	Doc:  "build the prompt's program model (chunks, calls, globals, locals, spans) shared by the other analyzers",
	Run: func(pass *analysis.Pass) (any, error) {
		p := Of(pass.Prompt)
		p.StartFacts()
		return p, nil
	},
	ResultType: reflect.TypeOf((*Program)(nil)),
}

// ChunkKind tells where a chunk lives.
type ChunkKind uint8

// Chunk kinds.
const (
	H1Chunk ChunkKind = iota
	SectionChunk
	SharedChunk
)

// Chunk is a compiled Lua chunk with its place in the prompt.
type Chunk struct {
	*parse.Chunk
	Kind ChunkKind
	// idx is the chunk's index in its Program's Chunks (beside Kind: a
	// build makes a Chunk per Lua block, each edit).
	idx int32
	// Section is the owning section (nil for H1 and shared chunks).
	Section *parse.Section
	// Block is the chunk's index in its section's (or H1's) blocks; -1
	// for the shared chunk.
	Block int

	// model is the chunk's walked model (nil without an AST); its spans
	// are relative to the start of the chunk's first line (base).
	model *chunkModel
	// calls are the chunk's records: p.Calls[callsAt:callsAt+nCalls];
	// likewise its global accesses and locals.
	callsAt, nCalls     int32
	globalsAt, nGlobals int32
	localsAt, nLocals   int32
}

// Index returns the chunk's index in its Program's Chunks (file
// order), for analyses that keep a value per chunk in a slice.
func (c *Chunk) Index() int { return int(c.idx) }

// Call is one function call in Lua source.
//
// Records (Call, Global, Local) belong to their chunk's memoised model
// (see chunkModel), not to a Program: a rebuild after an edit reuses the
// records of every chunk whose model still fits, and Programs of
// different parses, which the language server may read concurrently,
// share them. So a record holds nothing that is per build: not its
// *Chunk (whose Section and parse.Chunk belong to one parse), not
// absolute spans (a chunk moves when text before it changes), not the
// *Call of its handler. The Program resolves those for its own build:
// ChunkOf, NameSpan, CallSpan, GlobalSpan, PathSpan, LocalSpan and
// HandlerOf. Records are immutable; callers must not modify them.
type Call struct {
	Expr *ast.FuncCallExpr
	// Path is the callee as written when it is a global name path
	// ("tools.need", "jump"); "" otherwise (locals, methods, computed).
	Path string
	// Entry is the host or standard API entry Path names, if any.
	Entry *api.Entry
	// Where is the context the call runs in: api.H1, api.Section,
	// api.Handler or api.SharedLoad.
	Where api.Where
	// InFunc is true when the call is inside a function body (it runs only
	// if the function is called).
	InFunc bool

	// m is the model holding the record; the Program maps it to the
	// record's chunk (one chunk per model in a build).
	m *chunkModel
	// handler is the tools.add_local call expression whose handler
	// (directly, in a nested function, or through a named function it
	// calls) contains this call, or nil (see HandlerOf).
	handler *ast.FuncCallExpr
	// nameSpan covers the callee; span the callee through the closing
	// parenthesis when found. Both are relative to the chunk's base.
	nameSpan, span source.Span

	branch *branch
}

// branch is one arm of an if statement, linked to the arms around it.
type branch struct {
	parent *branch
	ifs    *ast.IfStmt
	arm    int
}

// Exclusive reports whether two calls sit in different arms of the same
// if statement, so that at most one of them runs (a bind in the then-arm
// and the same bind in the else-arm is not a duplicate).
func Exclusive(a, b *Call) bool {
	if a.branch == nil || b.branch == nil {
		return false
	}
	arms := map[*ast.IfStmt]int{}
	for x := a.branch; x != nil; x = x.parent {
		arms[x.ifs] = x.arm
	}
	for x := b.branch; x != nil; x = x.parent {
		if arm, ok := arms[x.ifs]; ok && arm != x.arm {
			return true
		}
	}
	return false
}

// Arg returns argument i or nil.
func (c *Call) Arg(i int) ast.Expr {
	if i < len(c.Expr.Args) {
		return c.Expr.Args[i]
	}
	return nil
}

// Global is one access to a global name. Like Call, it is shared
// between Programs: its chunk, spans and handler come from the Program
// (ChunkOf, GlobalSpan, PathSpan, HandlerOf).
type Global struct {
	Expr *ast.IdentExpr
	// Path is the longest static dotted path rooted here ("tools.add"
	// for tools.add(...)); PathSpan is its span. FieldWrite (below) is
	// true when that path (not the bare global) is assigned (sys.x = 1).
	Path  string
	Where api.Where
	// Write is true for an assignment target (x = ..., function x() end).
	Write bool
	// InFunc is true inside a function body.
	InFunc     bool
	FieldWrite bool

	m *chunkModel
	// handler is the tools.add_local call expression whose handler
	// contains this access, as for Call.
	handler *ast.FuncCallExpr
	// span and pathSpan are relative to the chunk's base.
	span, pathSpan source.Span
}

// Local is one local variable, parameter or local function. Like Call,
// it is shared between Programs (see ChunkOf and LocalSpan).
type Local struct {
	Name  string
	Param bool
	// Reads counts the uses that read the variable.
	Reads int

	m *chunkModel
	// span is relative to the chunk's base; noSpan for the implicit self.
	span source.Span
}

// Record is a *Call, *Global or *Local.
type Record interface{ model() *chunkModel }

func (c *Call) model() *chunkModel   { return c.m }
func (g *Global) model() *chunkModel { return g.m }
func (l *Local) model() *chunkModel  { return l.m }

// ChunkOf returns the chunk of a record of this program. (A model is
// memoised on the parser's chunk, which the parse cache keeps across
// edits: it must point at nothing of one build, or every edit would keep
// its whole Program alive. It holds a number instead: the build that
// used it last and its chunk's index there, so the latest build finds
// the chunk without a lookup; an earlier build, whose models a later
// one has taken over, looks them up in a map it makes on first need.)
func (p *Program) ChunkOf(r Record) *Chunk {
	// A type switch rather than r.model(): the interface call would make
	// every record passed here escape.
	var m *chunkModel
	switch r := r.(type) {
	case *Call:
		m = r.m
	case *Global:
		m = r.m
	case *Local:
		m = r.m
	}
	if m == nil {
		return nil
	}
	if s := m.slot.Load(); s>>slotBits == p.seq {
		return p.Chunks[s&(1<<slotBits-1)]
	}
	return p.chunkOf.chunkOf(p.Chunks, m)
}

// LatestChunkOf is ChunkOf for a record of any build of p's file,
// when p is the last build that took the record's model over (so the
// record is p's too): the record's chunk in p, found without the map an
// earlier build makes; nil otherwise.
func (p *Program) LatestChunkOf(c *Call) *Chunk {
	if c == nil || c.m == nil {
		return nil
	}
	if s := c.m.slot.Load(); s>>slotBits == p.seq {
		return p.Chunks[s&(1<<slotBits-1)]
	}
	return nil
}

// chunkIndex maps each chunk's model to the chunk, made on first use
// (ChunkOf for a model a later build has taken over). It is a Program's
// own allocation, so that the slow path makes no caller's record
// escape to the heap, as a sync.Once on the Program would.
type chunkIndex struct {
	once sync.Once
	of   map[*chunkModel]*Chunk
}

func (x *chunkIndex) chunkOf(chunks []*Chunk, m *chunkModel) *Chunk {
	x.once.Do(func() {
		x.of = make(map[*chunkModel]*Chunk, len(chunks))
		for _, c := range chunks {
			if c.model != nil {
				x.of[c.model] = c
			}
		}
	})
	return x.of[m]
}

// slotBits is how many low bits of chunkModel.slot hold the chunk's
// index; the bits above hold the build's number (Program.seq).
const slotBits = 24

// builds numbers the Programs built (Program.seq), from 1.
var builds atomic.Uint64

// base returns the base of the chunk of a record of this program.
func (p *Program) base(r Record) int { return p.chunkBase(p.ChunkOf(r)) }

// chunkBase is the file offset chunk c's model's spans are relative to:
// the start of its first line. (Computed, not kept: a build makes a
// Chunk per Lua block.)
func (p *Program) chunkBase(c *Chunk) int { return p.Prompt.File.LineStart(c.FirstLine) }

// NameSpan returns the span of a call's callee.
func (p *Program) NameSpan(c *Call) source.Span { return shift(c.nameSpan, p.base(c)) }

// CallSpan returns the span of a call from its callee through the
// closing parenthesis when found (else the callee's span).
func (p *Program) CallSpan(c *Call) source.Span { return shift(c.span, p.base(c)) }

// GlobalSpan returns the span of a global access's name.
func (p *Program) GlobalSpan(g *Global) source.Span { return shift(g.span, p.base(g)) }

// PathSpan returns the span of a global access's Path.
func (p *Program) PathSpan(g *Global) source.Span { return shift(g.pathSpan, p.base(g)) }

// LocalSpan returns the span of a local's name (the zero span for the
// implicit self).
func (p *Program) LocalSpan(l *Local) source.Span { return shift(l.span, p.base(l)) }

// HandlerOf returns the tools.add_local call whose handler (directly, in
// a nested function, or through a named function it calls) contains a
// call or global access, or nil.
func (p *Program) HandlerOf(r Record) *Call {
	var h *ast.FuncCallExpr
	switch r := r.(type) {
	case *Call:
		h = r.handler
	case *Global:
		h = r.handler
	}
	if h == nil {
		return nil
	}
	return p.rootCall[h]
}

// Unit is one Lua VM's worth of code: the H1 chunks, or a section's own
// chunks plus the shared library replayed into it.
type Unit struct {
	// Section is nil for the H1 unit.
	Section *parse.Section
	// Chunks are the unit's chunks in run order (shared first).
	Chunks []*Chunk
	// Calls are the calls in the unit's chunks, in run order.
	Calls []*Call
	// GlobalWrites holds the globals the unit's code assigns (nil when
	// none). It is read-only: it may be shared with other units and with
	// later programs of the same chunk text.
	GlobalWrites map[string]bool
	// idx is the unit's index in Program.Sections (-1 for the H1).
	idx int32
}

// Index returns the unit's index in its Program's Sections, -1 for the
// H1 unit.
func (u *Unit) Index() int { return int(u.idx) }

// OwnChunks returns the first and last of the unit's own chunks (not the
// shared library), nil when it has none. They are consecutive in
// Program.Chunks: a section's blocks come before its children's.
func (u *Unit) OwnChunks() (first, last *Chunk) {
	for _, c := range u.Chunks {
		if c.Kind == SectionChunk {
			if first == nil {
				first = c
			}
			last = c
		}
	}
	return first, last
}

// Program is the model of one prompt.
type Program struct {
	Prompt *parse.Prompt
	H1     *Unit
	// Sections are all section units, depth-first in file order.
	Sections []*Unit
	UnitOf   map[*parse.Section]*Unit
	// Shared is the shared-library chunk, or nil.
	Shared *Chunk
	// Chunks are all chunks in file order.
	Chunks  []*Chunk
	Calls   []*Call
	Globals []*Global
	// VarGlobals are the Globals whose name is var (var.<key> and var
	// as a whole), in the same order: the analyses of var read them
	// without going through every global access.
	VarGlobals []*Global
	Locals     []*Local
	// CallsKeys are the literal keys of tools.calls.<name> and
	// tools.calls["name"], in file order.
	CallsKeys []CallsKey
	// Returns are statements that end a block's control flow, mapped to
	// the statements after them in the same block (unreachable code).
	Unreachable []Unreachable

	// seq numbers the build (see ChunkOf); chunkOf maps each chunk's
	// model to the chunk, made on the first ChunkOf of a model that a
	// later build has taken over.
	seq     uint64
	chunkOf *chunkIndex
	// edit is how the build paired its chunks with the last build of
	// its file (pairPrev): that build's seq (0: none) and the bounds of
	// the chunks between the paired runs (fromPrev.lo, hi, qhi). Unlike
	// prev it is kept: it holds no pointer to that build.
	edit struct {
		seq         uint64
		lo, hi, qhi int32
	}
	// rootCall holds the add_local calls that may own a handler, by
	// expression (see HandlerOf).
	rootCall map[*ast.FuncCallExpr]*Call
	// callOf indexes Calls by expression, built on the first CallOf.
	callOfOnce sync.Once
	callOf     map[*ast.FuncCallExpr]*Call
	// boundTools holds the aliases H1's tools.bind calls declare, built on
	// the first OldMultiAdd.
	boundOnce  sync.Once
	boundTools map[string]bool
	// facts holds each chunk's abstract facts in its VM, built on the
	// first Facts.
	factsOnce sync.Once
	// factsAhead is set when StartFacts has started the evaluation on a
	// goroutine of its own, which closes factsDone when it ends.
	factsAhead atomic.Bool
	factsDone  chan struct{}
	// factsPanic holds what a panic of the evaluation raised (loadFacts).
	factsPanic *any
	// facts and entry are each chunk's facts and entry environment, by
	// Chunk.idx (nil: none).
	facts []*value.Facts
	entry []*value.Env
	// sectionBase is the environment every section's first chunk
	// starts from before the walk's var values; h1Exit what the H1
	// leaves (see SectionBase, H1Exit).
	sectionBase, h1Exit *value.Env
	// factsReady is set once facts and entry are complete (a later
	// build of the file may then take them: fromPrev).
	factsReady atomic.Bool
	// prev is what the build took from the last build of the file, kept
	// until the facts are built (fromPrev), then dropped.
	prev *fromPrev
	// hfacts are the chunks' handler-detection facts and marked the
	// chunks with a handler function, by Chunk.idx (handlerFinder),
	// for the next build of the file.
	hfacts []*chunkFacts
	marked []bool
	// handlerOf maps each handler function to its add_local call (read
	// only; a later build of the file may share it: sameHandlers).
	handlerOf map[*ast.FunctionExpr]*ast.FuncCallExpr
	// sites indexes the chunks' value.Sites by inner call (sites.go).
	sitesOnce sync.Once
	sites     map[*ast.FuncCallExpr][]CallSite
}

// CallsKey is one literal tools.calls key.
type CallsKey struct {
	Chunk *Chunk
	Key   *ast.StringExpr
}

// Unreachable is a statement that can never run, with the statement that
// ends the flow before it.
type Unreachable struct {
	Chunk *Chunk
	Stmt  ast.Stmt
	// After is the jump/error/return that ends the flow.
	After ast.Stmt
}

// Span returns the recorded byte span of an AST node of chunk c, or the
// span of its line when no exact span was found.
func (p *Program) Span(c *Chunk, n ast.PositionHolder) source.Span {
	if s, ok := p.exact(c, n); ok {
		return s
	}
	return p.LineSpan(c, n.Line())
}

// SpanOf is Span for node n of the chunk of record r.
func (p *Program) SpanOf(r Record, n ast.PositionHolder) source.Span {
	return p.Span(p.ChunkOf(r), n)
}

func (p *Program) exact(c *Chunk, n any) (source.Span, bool) {
	if c == nil || c.model == nil {
		return source.Span{}, false
	}
	s, ok := c.model.spans.get(n)
	if !ok {
		return source.Span{}, false
	}
	return shift(s, p.chunkBase(c)), true
}

// HasSpan reports whether node n of chunk c has an exact recorded span.
func (p *Program) HasSpan(c *Chunk, n any) bool {
	_, ok := p.exact(c, n)
	return ok
}

// LineSpan returns the span of chunk line n's text without its leading
// indentation.
func (p *Program) LineSpan(c *Chunk, n int) source.Span {
	return lineSpan(p.Prompt.File, c.Chunk, n)
}

// CallNamedAt returns the call whose callee starts at file offset off, or
// nil (a chunk that does not parse has no calls).
func (p *Program) CallNamedAt(off int) *Call {
	for _, ch := range p.Chunks {
		for _, c := range p.Calls[ch.callsAt : ch.callsAt+ch.nCalls] {
			if shift(c.nameSpan, p.chunkBase(ch)).Start == off {
				return c
			}
		}
	}
	return nil
}

// EditedFrom reports whether p was built from q, the last build of its
// file then (prev.go), and which chunks the edit between them replaced:
// p's chunks before lo are q's chunks of the same index, p's from hi on
// are q's from qhi on, in order (the same syntax tree and kind); those
// between, p's [lo, hi) and q's [lo, qhi), are not paired. Where a
// paired chunk now lies (its section, its block) is not compared.
func (p *Program) EditedFrom(q *Program) (lo, hi, qhi int, ok bool) {
	if q == nil || p.edit.seq == 0 || p.edit.seq != q.seq {
		return 0, 0, 0, false
	}
	return int(p.edit.lo), int(p.edit.hi), int(p.edit.qhi), true
}

// CallsIn returns the calls of chunk c in source order: a part of Calls,
// which callers must not modify (an append copies).
func (p *Program) CallsIn(c *Chunk) []*Call {
	return p.Calls[c.callsAt : c.callsAt+c.nCalls : c.callsAt+c.nCalls]
}

// GlobalsIn returns the global accesses of chunk c in source order: a
// part of Globals, which callers must not modify (an append copies).
func (p *Program) GlobalsIn(c *Chunk) []*Global {
	return p.Globals[c.globalsAt : c.globalsAt+c.nGlobals : c.globalsAt+c.nGlobals]
}

// LocalsIn returns the locals of chunk c in source order: a part of
// Locals, which callers must not modify (an append copies).
func (p *Program) LocalsIn(c *Chunk) []*Local {
	return p.Locals[c.localsAt : c.localsAt+c.nLocals : c.localsAt+c.nLocals]
}

// CallOf returns the Call recorded for a call expression.
func (p *Program) CallOf(e *ast.FuncCallExpr) *Call {
	p.callOfOnce.Do(func() {
		p.callOf = make(map[*ast.FuncCallExpr]*Call, len(p.Calls))
		for _, c := range p.Calls {
			p.callOf[c.Expr] = c
		}
	})
	return p.callOf[e]
}

// StringArg returns a call argument's value when it is a string literal,
// and the literal's span.
func (p *Program) StringArg(c *Call, i int) (string, source.Span, bool) {
	s, ok := c.Arg(i).(*ast.StringExpr)
	if !ok {
		return "", source.Span{}, false
	}
	return s.Value, p.SpanOf(c, s), true
}

// Canonical returns the entry name of a call ("tools.bind" for
// tools.need), or "" when it is not an API call.
func (c *Call) Canonical() string {
	if c.Entry == nil {
		return ""
	}
	return c.Entry.Name
}

type programKey struct{}

// memo is a value built once per parse, kept with it (parse.Prompt.Memo):
// concurrent users of one parse (the debounced analysis and an editor
// request) wait for one build instead of each building their own.
type memo[T any] struct {
	once sync.Once
	v    T
}

func memoised[T any](pr *parse.Prompt, key any, build func(*parse.Prompt) T) T {
	m, ok := pr.Memo(key).(*memo[T])
	if !ok {
		m = pr.SetMemo(key, &memo[T]{}).(*memo[T])
	}
	m.once.Do(func() { m.v = build(pr) })
	return m.v
}

// Of returns the model of pr, building it on first use and keeping it
// with the parse, so that the analysis and the language server share one
// model of one parse.
func Of(pr *parse.Prompt) *Program { return memoised(pr, programKey{}, Build) }

func sortChunks(cs []*Chunk) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].Span.Start < cs[j-1].Span.Start; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// IsIdent reports whether s is a Lua identifier (not a keyword).
func IsIdent(s string) bool {
	if s == "" || isKeyword(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// isKeyword reports whether s is a Lua keyword (goto included).
func isKeyword(s string) bool {
	switch s {
	case "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
		"in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while":
		return true
	}
	return false
}
