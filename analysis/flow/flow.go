// Package flow is an abstract walk over a prompt's section graph, the
// static counterpart of the engine's walk (engine/run): the H1 pass, the
// top-level walk with fall-through, off-walk sections, jump (to a sibling,
// or a child walk that returns to the jumper's slice), execute chains,
// fanout arms and list_from_section reads. It answers, for the analyzers
// that need it, which sections and blocks can run and which straight-line
// calls run whenever their chunk gets that far.
//
// Two views are kept. Known follows only control flow whose targets and
// outcomes are known statically: a section that returns a value the
// analyzer cannot see is taken to end the run, and a computed jump target
// reaches nothing. Findings that say "the run fails" use Known, so an
// unknown value never produces one. May is the widest view: unknown
// returns may fall through and a computed target may reach any section;
// it decides which sections can never be entered.
package flow

import (
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/literal"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// Analyzer computes the *Result; it reports nothing.
var Analyzer = &analysis.Analyzer{
	Name:     "flow",
	Doc:      "walk the section graph abstractly (walk order, off-walk, jump, execute, fanout arms) and record what can run",
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run: func(pass *analysis.Pass) (any, error) {
		return Analyze(pass.ResultOf[program.Analyzer].(*program.Program)), nil
	},
	ResultType: reflect.TypeOf((*Result)(nil)),
}

// End classifies how a Lua chunk ends its section when it runs to the end
// of its top-level statements.
type End uint8

// Chunk endings.
const (
	// Continues: the chunk runs out or returns nil; the next block runs.
	Continues End = iota
	// MayEnd: the chunk returns a value the analyzer cannot see (a scalar
	// ends the section, nil does not).
	MayEnd
	// Ends: the chunk returns a scalar literal, jumps or raises an error
	// at top level, so no later block of the section runs.
	Ends
)

// View is one reachability view.
type View struct {
	// Entered holds the sections some path of this view enters (walked,
	// jumped to, executed, or run as a fanout worker).
	Entered SectionSet
	// Arm holds the sections entered as fanout workers; Walked those
	// entered any other way (where item and sys.index do not exist).
	Arm, Walked SectionSet
	// Any is true when a computed target may enter any section (May
	// only).
	Any bool
}

// targetLists holds the sections' targets in one slice: section n's are
// all[span[n][0]:span[n][1]] (a slice per section cost a header per
// section per analysis, most of them empty).
type targetLists struct {
	all  []target
	span [][2]int32
}

// of returns section n's targets.
func (t targetLists) of(n int) []target {
	s := t.span[n]
	return t.all[s[0]:s[1]:s[1]]
}

// SectionSet is a set of the prompt's sections: a flag per section by
// its number in the tree (place.n), so that a walk makes no map.
type SectionSet struct {
	places *places
	in     []bool
}

// Has reports whether s is in the set.
func (set SectionSet) Has(s *parse.Section) bool {
	p, ok := set.places.of(s)
	return ok && p.n < len(set.in) && set.in[p.n]
}

// SectionAt is one section as the walk numbered it, found once: a pass
// that asks, for each block of every section, whether it runs and which
// views enter its section answers them all from one look-up instead of
// one per question.
type SectionAt struct {
	r  *Result
	p  place
	ok bool
}

// At returns section s as the walk numbered it.
func (r *Result) At(s *parse.Section) SectionAt {
	p, ok := r.places.of(s)
	return SectionAt{r: r, p: p, ok: ok}
}

// In reports whether set, one of the Result's views' sets, has the
// section (set.Has).
func (a SectionAt) In(set SectionSet) bool {
	return a.ok && a.p.n < len(set.in) && set.in[a.p.n]
}

// BlockRuns is the Result's BlockRuns for block i of the section.
func (a SectionAt) BlockRuns(i int) bool {
	return a.ok && a.p.n < len(a.r.knownIn) && a.r.knownIn[a.p.n] && (a.p.firstEnds < 0 || int(a.p.firstEnds) >= i)
}

// Result is the outcome of the abstract walk.
type Result struct {
	Prog *program.Program
	// Known and May are the two views (see the package comment).
	Known, May View
	// H1Ends is true when the H1 pass surely ends the run (a top-level
	// scalar return or error), so no section runs.
	H1Ends bool
	// DefaultModel is true when some H1 code may call models.default.
	DefaultModel bool
	// StoreWrites are the literal store paths some code may create
	// (write, append); StoreDynamic is true when a write's path is not a
	// literal, so any path may exist.
	StoreWrites  map[string]bool
	StoreDynamic bool
	// StorePrefixes are the constant prefixes of computed write paths
	// ("notes/" for "notes/" .. key).
	StorePrefixes []string

	// Cycles are the jump cycles every run enters and can leave only
	// through the section-entry cap.
	Cycles []Cycle
	// Recursions are the execute/fanout cycles that fail at the depth cap.
	Recursions []Recursion

	// endAt are the chunks' endings by program chunk index (Continues
	// for a chunk without an AST). The walk finds a section's through its
	// unit; ends maps the parsed chunks to them for the other look-ups
	// (endOf), made on first need.
	endAt    []End
	ends     map[*parse.Chunk]End
	endsOnce sync.Once
	// factsRead lists the chunks whose value facts the walk read (a
	// computed target or store path), with the facts it read: an edit
	// elsewhere may change them through a global, so the Result is
	// reused only by a build whose facts of each are the same (reuse.go).
	factsRead []readFacts
	// fanouts and storeWrites are set when some call of the program
	// (anywhere, dead or not) is a fanout, a store write or append: the
	// race and store-value analyses look at nothing else first.
	fanouts, storeWrites bool
	// facts are the chunks' facts, by program chunk index (nil for a
	// chunk without an AST).
	facts []*chunkFacts
	// knownIn holds, by place.n, whether the Known view enters the
	// section (Known.Entered, without a map look-up).
	knownIn []bool
	dead    []source.Span
	caught  []source.Span
	// places numbers the sections (see index).
	places *places
	// targets are the control calls of each section (by place.n) that
	// run on the May view.
	targets targetLists
	// preds are the May walk's var edges (see walker.preds), and vars the
	// var flow computed from them on first use.
	// Analyzers may ask them from several goroutines (analysis's
	// driver runs independent analyzers concurrently), hence the Onces.
	preds [][]int32
	// predChain marks the preds that start an execute chain or a
	// fanout arm (walker.predChain).
	predChain [][]bool
	// predVia holds the control call that makes each pred, where var
	// flows only from the code before it (walker.predVia).
	predVia    [][]*program.Call
	vars       *varFlow
	varsOnce   sync.Once
	stores     *storeFlow
	storesOnce sync.Once
	// vals are the var values in walk order (varvalues.go).
	vals     *varValues
	valsOnce sync.Once
	// factsAt are Facts' answers by chunk index, made on its first call.
	factsAt     []*value.Facts
	factsAtOnce sync.Once
	// store are the known store contents in walk order (storevalues.go).
	store     *storeValues
	storeOnce sync.Once
	// sites index the chunks' value.Sites with the walk's values by
	// inner call (sites.go).
	sites     map[*ast.FuncCallExpr][]program.CallSite
	sitesOnce sync.Once
	// anyJump is true when a computed jump target may enter any section;
	// anyCallers are the sections whose computed execute or fanout
	// target may be any section (May walk).
	anyJump bool
	// anyJumpWalked is true when the var edges of those jumps were added
	// (walker.anyJumps): the var flow follows them.
	anyJumpWalked bool
	anyCallers    []int32
	// anyVia parallels anyCallers with the call (nil: not in the
	// section's own code outside functions).
	anyVia []*program.Call
	// sharedNames are the globals the shared library assigns (built on
	// first use).
	sharedNames map[string]bool
	// callsOf groups the program's calls by chunk, built on first use.
	callsOf *callIndex
	// writes holds varWritesOf(Prog) once VarSetInUnit has asked (it is
	// asked per placeholder: a prompt memo look-up each time cost more
	// than the answer).
	writes atomic.Pointer[varWrites]
	// writesFrom, when set, are the var writes of the walk this one was
	// reused from, whose build replaced that one's chunks [writesLo,
	// writesHi) (the same number): this build's are made from them
	// (varWrites.splice).
	writesFrom         *varWrites
	writesLo, writesHi int32
}

// Straight reports whether call c runs whenever its chunk reaches its
// statement: it is at top level, outside conditions, loops, functions
// and the right side of and/or.
func (r *Result) Straight(c *program.Call) bool {
	return r.StraightIn(r.Prog.ChunkOf(c), c.Expr)
}

// StraightIn is Straight for a call expression of chunk ch. The calls
// are the chunks' memoised facts (factsOf): an edit makes no set of the
// whole prompt's calls.
func (r *Result) StraightIn(ch *program.Chunk, call *ast.FuncCallExpr) bool {
	if ch == nil || ch.Index() >= len(r.facts) {
		return false
	}
	f := r.facts[ch.Index()]
	return f != nil && f.isStraight(call)
}

// EndOf returns how chunk c ends.
func (r *Result) EndOf(c *parse.Chunk) End { return r.endOf(c) }

// endOf returns how parsed chunk c ends: an H1 chunk's (the H1 has few)
// found in the H1's unit, any other's in the map of all made on first
// need.
func (r *Result) endOf(c *parse.Chunk) End {
	for _, x := range r.Prog.H1.Chunks {
		if x.Chunk == c {
			return r.endAt[x.Index()]
		}
	}
	r.endsOnce.Do(func() {
		r.ends = make(map[*parse.Chunk]End, len(r.Prog.Chunks))
		for i, x := range r.Prog.Chunks {
			if len(x.AST) > 0 {
				r.ends[x.Chunk] = r.endAt[i]
			}
		}
	})
	return r.ends[c]
}

// BlockRuns reports whether block i of section s runs on an entry that
// the Known view makes: no earlier Lua block surely or possibly ends the
// section.
func (r *Result) BlockRuns(s *parse.Section, i int) bool {
	return r.At(s).BlockRuns(i)
}

// unitEnds returns the first block of section unit u whose chunk
// surely ends the section and the first whose chunk may end it, -1 when
// none (see place). A unit's section chunks are its Lua blocks with a
// chunk, in block order.
func (r *Result) unitEnds(u *program.Unit) (firstEnd, firstEnds int32) {
	firstEnd, firstEnds = -1, -1
	for _, c := range u.Chunks {
		if c.Kind != program.SectionChunk {
			continue
		}
		j := c.Block
		switch r.endAt[c.Index()] {
		case Ends:
			if firstEnds < 0 {
				firstEnds = int32(j)
			}
			return int32(j), firstEnds
		case MayEnd:
			if firstEnds < 0 {
				firstEnds = int32(j)
			}
		}
	}
	return firstEnd, firstEnds
}

// Reached reports whether a call of a section unit can run on the Known
// view: its section is entered and no earlier block ends it.
func (r *Result) Reached(c *program.Call) bool {
	switch r.Prog.ChunkOf(c).Kind {
	case program.H1Chunk:
		for _, b := range r.Prog.Prompt.H1Blocks[:r.Prog.ChunkOf(c).Block] {
			if b.Kind == parse.LuaBlock && b.Chunk != nil && r.endOf(b.Chunk) != Continues {
				return false
			}
		}
		return true
	case program.SectionChunk:
		ch := r.Prog.ChunkOf(c)
		return r.BlockRuns(ch.Section, ch.Block)
	}
	return false
}

// Analyze runs the abstract walk, or takes it from the last Result of
// the same file when the edit since changed nothing it reads (reuse.go).
// The Result is kept with the parse (as program.Of keeps the Program),
// so a later call for the same Program returns it, and it stays for the
// next version's analysis while the parse does.
func Analyze(prog *program.Program) *Result {
	pr := prog.Prompt
	if r, ok := pr.Memo(resultKey{}).(*Result); ok && r.Prog == prog {
		return r
	}
	r := reuse(prog)
	if r == nil {
		r = analyze(prog)
	}
	if kept, ok := pr.SetMemo(resultKey{}, r).(*Result); ok && kept.Prog == prog {
		r = kept // a concurrent call stored its walk first
	}
	rememberResult(r)
	return r
}

// resultKey keeps a parse's Result (parse.Prompt.Memo).
type resultKey struct{}

// analyze runs the abstract walk.
func analyze(prog *program.Program) *Result {
	r := &Result{
		Prog:        prog,
		StoreWrites: map[string]bool{},
		endAt:       make([]End, len(prog.Chunks)),
	}
	facts := make([]*chunkFacts, len(prog.Chunks))
	r.facts = facts
	for i, c := range prog.Chunks {
		if len(c.AST) == 0 {
			continue
		}
		f := factsOf(c.Chunk)
		facts[i] = f
		// The ending: f.end unless a pcall(jump, ...) before it is not
		// caught.
		end := f.end
		for _, call := range f.pcalls {
			if !r.pcallCaught(c, call) {
				end = Ends
				break
			}
		}
		r.endAt[i] = end
	}
	for _, c := range prog.H1.Calls {
		if c.Canonical() == "models.default" {
			r.DefaultModel = true
		}
	}
	for _, c := range prog.Calls {
		switch c.Canonical() {
		case "fanout":
			r.fanouts = true
		case "store.write", "store.append":
			r.storeWrites = true
			if deadCall(prog.ChunkOf(c), c) {
				continue
			}
			facts := r.walkReads(prog.ChunkOf(c))
			if !c.InFunc && r.Straight(c) && argFails(facts, c.Arg(0)) {
				continue // the run fails computing the path: the write never happens
			}
			if p, ok := facts.Arg(c.Expr, 0).StrConst(); ok {
				r.StoreWrites[p] = true
			} else if ps, ok := eachConst(facts, c.Expr); ok && !c.InFunc {
				// A loop unrolled: each evaluation writes a known path.
				for _, p := range ps {
					r.StoreWrites[p] = true
				}
			} else if pre := literal.Prefix(c.Arg(0)); pre != "" {
				r.StorePrefixes = append(r.StorePrefixes, pre)
			} else {
				r.StoreDynamic = true
			}
		}
	}
	h1 := Continues
	for _, c := range prog.H1.Chunks {
		h1 = max(h1, r.endAt[c.Index()])
	}
	r.H1Ends = h1 == Ends
	r.index()
	r.targets.span = make([][2]int32, r.places.len())
	for _, u := range prog.Sections {
		if p, ok := r.places.of(u.Section); ok {
			lo := len(r.targets.all)
			r.targets.all = r.targetsOf(u, r.targets.all)
			r.targets.span[p.n] = [2]int32{int32(lo), int32(len(r.targets.all))}
		}
	}
	r.Known = r.walk(true, h1 != Continues)
	r.May = r.walk(false, h1 == Ends)
	r.deadSpans(facts)
	r.caughtSpans()
	r.cycle()
	r.chainCycles()
	r.recursion()
	return r
}

// readFacts is a chunk's facts a walk read, by chunk index.
type readFacts struct {
	i int32
	f *value.Facts
}

// walkReads returns chunk c's facts, noting that the walk read them
// (factsRead).
func (r *Result) walkReads(c *program.Chunk) *value.Facts {
	f := r.Prog.Facts(c)
	if n := len(r.factsRead); n == 0 || r.factsRead[n-1].i != int32(c.Index()) {
		r.factsRead = append(r.factsRead, readFacts{int32(c.Index()), f})
	}
	return f
}

// argFails reports whether evaluating argument a fails whenever it
// runs: it is a call of a helper whose body fails where the evaluator
// runs it with that call's arguments.
func argFails(f *value.Facts, a ast.Expr) bool {
	if a == nil {
		return false
	}
	for _, op := range f.Ops {
		if op.Expr == a && !op.InFunc {
			return true
		}
	}
	return false
}

// eachConst returns the first argument of each evaluation of call
// when the evaluator saw them one by one (a loop it unrolled) and each
// is a known string.
func eachConst(f *value.Facts, call *ast.FuncCallExpr) ([]string, bool) {
	views := f.Views(call)
	if len(views) < 2 {
		return nil, false
	}
	out := make([]string, 0, len(views))
	for _, v := range views {
		p, ok := v.Arg(call, 0).StrConst()
		if !ok {
			return nil, false
		}
		out = append(out, p)
	}
	return out, true
}

// MayWrite reports whether some store write of the prompt can create
// path p.
func (r *Result) MayWrite(p string) bool {
	if r.StoreDynamic || r.StoreWrites[p] {
		return true
	}
	for _, pre := range r.StorePrefixes {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}
