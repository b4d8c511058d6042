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
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/literal"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
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
	Entered map[*parse.Section]bool
	// Arm holds the sections entered as fanout workers; Walked those
	// entered any other way (where item and sys.index do not exist).
	Arm, Walked map[*parse.Section]bool
	// Any is true when a computed target may enter any section (May
	// only).
	Any bool
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
	// Straight holds the calls that run whenever their chunk reaches
	// their statement: top level, outside conditions, loops, functions
	// and the right side of and/or.
	Straight map[*ast.FuncCallExpr]bool
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

	ends   map[*parse.Chunk]End
	dead   []source.Span
	caught []source.Span
	// places numbers the sections (see index).
	places map[*parse.Section]place
	// targets are the control calls of each section (by place.n) that
	// run on the May view.
	targets [][]target
	// callsOf groups the program's calls by chunk, built on first use.
	callsOf map[*parse.Chunk][]*program.Call
}

// EndOf returns how chunk c ends.
func (r *Result) EndOf(c *parse.Chunk) End { return r.ends[c] }

// BlockRuns reports whether block i of section s runs on an entry that
// the Known view makes: no earlier Lua block surely or possibly ends the
// section.
func (r *Result) BlockRuns(s *parse.Section, i int) bool {
	if !r.Known.Entered[s] {
		return false
	}
	for j := 0; j < i && j < len(s.Blocks); j++ {
		if b := s.Blocks[j]; b.Kind == parse.LuaBlock && b.Chunk != nil && r.ends[b.Chunk] != Continues {
			return false
		}
	}
	return true
}

// Reached reports whether a call of a section unit can run on the Known
// view: its section is entered and no earlier block ends it.
func (r *Result) Reached(c *program.Call) bool {
	switch r.Prog.ChunkOf(c).Kind {
	case program.H1Chunk:
		for _, b := range r.Prog.Prompt.H1Blocks[:r.Prog.ChunkOf(c).Block] {
			if b.Kind == parse.LuaBlock && b.Chunk != nil && r.ends[b.Chunk] != Continues {
				return false
			}
		}
		return true
	case program.SectionChunk:
		return r.BlockRuns(r.Prog.ChunkOf(c).Section, r.Prog.ChunkOf(c).Block)
	}
	return false
}

// Analyze runs the abstract walk.
func Analyze(prog *program.Program) *Result {
	r := &Result{
		Prog:        prog,
		StoreWrites: map[string]bool{},
		ends:        make(map[*parse.Chunk]End, len(prog.Chunks)),
	}
	facts := make([]*chunkFacts, len(prog.Chunks))
	straight := 0
	for i, c := range prog.Chunks {
		if len(c.AST) == 0 {
			continue
		}
		f := factsOf(c.Chunk)
		facts[i] = f
		straight += len(f.calls)
		// The ending: f.end unless a pcall(jump, ...) before it is not
		// caught.
		end := f.end
		for _, call := range f.pcalls {
			if !r.pcallCaught(c, call) {
				end = Ends
				break
			}
		}
		r.ends[c.Chunk] = end
	}
	r.Straight = make(map[*ast.FuncCallExpr]bool, straight)
	for _, f := range facts {
		if f != nil {
			for _, call := range f.calls {
				r.Straight[call] = true
			}
		}
	}
	for _, c := range prog.H1.Calls {
		if c.Canonical() == "models.default" {
			r.DefaultModel = true
		}
	}
	for _, c := range prog.Calls {
		switch c.Canonical() {
		case "store.write", "store.append":
			if p, ok := literal.String(c.Arg(0)); ok {
				r.StoreWrites[p] = true
			} else if pre := literal.Prefix(c.Arg(0)); pre != "" {
				r.StorePrefixes = append(r.StorePrefixes, pre)
			} else {
				r.StoreDynamic = true
			}
		}
	}
	h1 := Continues
	for _, b := range prog.Prompt.H1Blocks {
		if b.Kind == parse.LuaBlock && b.Chunk != nil && r.ends[b.Chunk] > h1 {
			h1 = r.ends[b.Chunk]
		}
	}
	r.H1Ends = h1 == Ends
	r.index()
	r.targets = make([][]target, len(r.places))
	for _, u := range prog.Sections {
		if p, ok := r.places[u.Section]; ok {
			r.targets[p.n] = r.targetsOf(u)
		}
	}
	r.Known = r.walk(true, h1 != Continues)
	r.May = r.walk(false, h1 == Ends)
	r.deadSpans(facts)
	r.caughtSpans()
	r.cycle()
	r.recursion()
	return r
}

type walker struct {
	r     *Result
	known bool
	v     View
	// started holds the (section, forced) starting points already walked,
	// by place.n.
	started []uint8
}

type target struct {
	kind string
	sec  *parse.Section // nil: computed or unresolved
	// sure is true when the call is straight-line code of its chunk.
	sure bool
	// mayOnly is true when an earlier block of the section may end it, so
	// the Known view does not run the call.
	mayOnly bool
}

func (r *Result) walk(known, h1Stops bool) View {
	n := len(r.Prog.Sections)
	w := &walker{r: r, known: known, v: View{Entered: make(map[*parse.Section]bool, n), Arm: map[*parse.Section]bool{}, Walked: make(map[*parse.Section]bool, n)},
		started: make([]uint8, len(r.places))}
	if !h1Stops {
		w.from(r.Prog.Prompt.Sections, 0, false)
	}
	if w.v.Any {
		var all func([]*parse.Section)
		all = func(ss []*parse.Section) {
			for _, s := range ss {
				w.v.Entered[s] = true
				w.v.Walked[s] = true
				all(s.Children)
			}
		}
		all(r.Prog.Prompt.Sections)
	}
	return w.v
}

// targetsOf lists the control calls of a unit that can run on the May
// view.
func (r *Result) targetsOf(u *program.Unit) []target {
	var out []target
	for _, c := range u.Calls {
		name := c.Canonical()
		if name != "jump" && name != "execute" && name != "fanout" {
			continue
		}
		if c.Where == api.Handler && name == "jump" {
			continue // jump is nil inside handlers
		}
		t := target{kind: name, sure: r.Straight[c.Expr] && !c.InFunc,
			mayOnly: r.Prog.ChunkOf(c).Kind == program.SectionChunk && !r.blockMayRun(u.Section, r.Prog.ChunkOf(c).Block)}
		if s, ok := c.Arg(0).(*ast.StringExpr); ok {
			if sec, err := parse.Resolve(r.Prog.Prompt, u.Section, s.Value); err == nil {
				t.sec = sec
			}
		}
		out = append(out, t)
	}
	return out
}

// blockMayRun is BlockRuns without the entry condition.
func (r *Result) blockMayRun(s *parse.Section, i int) bool {
	for j := 0; j < i && j < len(s.Blocks); j++ {
		if b := s.Blocks[j]; b.Kind == parse.LuaBlock && b.Chunk != nil && r.ends[b.Chunk] != Continues {
			return false
		}
	}
	return true
}

// falls reports whether an entry of s can fall through to the next
// section of its slice.
func (w *walker) falls(s *parse.Section) bool {
	for _, b := range s.Blocks {
		if b.Kind != parse.LuaBlock || b.Chunk == nil {
			continue
		}
		switch w.r.ends[b.Chunk] {
		case Ends:
			return false
		case MayEnd:
			if w.known {
				return false
			}
		}
	}
	return true
}

// from walks slice from index i with fall-through, like the engine's walk;
// forced runs the first section even when it is off-walk.
func (w *walker) from(slice []*parse.Section, i int, forced bool) {
	for ; i < len(slice); i++ {
		s := slice[i]
		if s.OffWalk && !forced {
			continue
		}
		bit := uint8(1)
		if forced {
			bit = 2
		}
		n := w.r.places[s].n
		if w.started[n]&bit != 0 {
			return
		}
		w.started[n] |= bit
		forced = false
		w.v.Walked[s] = true
		w.enter(s, slice, i)
		if !w.falls(s) {
			return
		}
	}
}

// enter runs the control calls of an entered section.
func (w *walker) enter(s *parse.Section, slice []*parse.Section, i int) {
	w.v.Entered[s] = true
	for _, t := range w.r.targets[w.r.places[s].n] {
		if w.known && t.mayOnly {
			continue
		}
		if t.sec == nil {
			if !w.known {
				w.v.Any = true
			}
			continue
		}
		switch t.kind {
		case "jump":
			if t.sec.Parent == s {
				w.from(s.Children, w.r.indexOf(s.Children, t.sec), true)
				if slice != nil {
					w.from(slice, i+1, false)
				}
			} else {
				sl := siblings(w.r.Prog.Prompt, t.sec)
				w.from(sl, w.r.indexOf(sl, t.sec), true)
			}
		case "execute":
			sl := siblings(w.r.Prog.Prompt, t.sec)
			w.from(sl, w.r.indexOf(sl, t.sec), true)
		case "fanout":
			if !w.v.Arm[t.sec] {
				w.v.Arm[t.sec] = true
				w.enter(t.sec, nil, 0)
			}
		}
	}
}

func siblings(p *parse.Prompt, s *parse.Section) []*parse.Section {
	if s.Parent != nil {
		return s.Parent.Children
	}
	return p.Sections
}

// place is a section's index in its list of siblings (pos) and in the
// section tree in pre-order (n).
type place struct{ pos, n int }

// index numbers the sections of the tree (places), once per analysis.
func (r *Result) index() {
	if r.places != nil {
		return
	}
	r.places = make(map[*parse.Section]place, len(r.Prog.Sections))
	var walk func([]*parse.Section)
	walk = func(list []*parse.Section) {
		for i, x := range list {
			r.places[x] = place{pos: i, n: len(r.places)}
			walk(x.Children)
		}
	}
	walk(r.Prog.Prompt.Sections)
}

// indexOf returns s's index in ss (len(ss) when absent). ss is s's list
// of siblings, so the index comes from a map of the tree built once: a
// search per jump made the walk quadratic in the sections.
func (r *Result) indexOf(ss []*parse.Section, s *parse.Section) int {
	r.index()
	if p, ok := r.places[s]; ok && p.pos < len(ss) && ss[p.pos] == s {
		return p.pos
	}
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return len(ss)
}

// pcallCaught reports whether a top-level pcall(jump, ...) call of
// chunk c only catches an error, so it does not end the chunk: in the H1,
// where jump just raises, or with a literal target that does not resolve.
func (r *Result) pcallCaught(c *program.Chunk, call *ast.FuncCallExpr) bool {
	switch c.Kind {
	case program.H1Chunk:
		return true
	case program.SectionChunk:
		if len(call.Args) < 2 {
			return true
		}
		t, ok := call.Args[1].(*ast.StringExpr)
		if !ok {
			return false
		}
		_, err := parse.Resolve(r.Prog.Prompt, c.Section, t.Value)
		return err != nil
	}
	return false
}

// endFacts classifies a chunk's top-level ending as far as its AST
// alone tells: it returns the top-level pcall(jump, ...) calls, in order,
// each of which ends the chunk unless its error is caught (pcallCaught),
// and the ending when every one of them is caught.
func endFacts(stmts []ast.Stmt) (pcalls []*ast.FuncCallExpr, end End) {
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.ReturnStmt:
			if len(st.Exprs) == 0 {
				return pcalls, Continues
			}
			switch e := st.Exprs[0].(type) {
			case *ast.NilExpr:
				return pcalls, Continues
			case *ast.StringExpr, *ast.NumberExpr, *ast.TrueExpr, *ast.FalseExpr,
				*ast.StringConcatOpExpr, *ast.ArithmeticOpExpr, *ast.TableExpr, *ast.FunctionExpr:
				// Scalars end the section; a table or function fails the
				// run (a non-scalar return), which ends it too.
				return pcalls, Ends
			case *ast.IdentExpr:
				if e.Value == "args" { // the run input: always a string
					return pcalls, Ends
				}
				return pcalls, MayEnd
			case *ast.FuncCallExpr:
				if p, ok := program.Path(e.Func); ok && (p == "table.concat" || p == "tostring" || p == "string.format") {
					return pcalls, Ends
				}
				return pcalls, MayEnd
			default:
				return pcalls, MayEnd
			}
		case *ast.FuncCallStmt:
			if isEnd(st.Expr) {
				if !isPcallJump(st.Expr) {
					return pcalls, Ends
				}
				pcalls = append(pcalls, st.Expr.(*ast.FuncCallExpr))
			}
		case *ast.LocalAssignStmt:
			for _, e := range st.Exprs {
				if isEnd(e) {
					if !isPcallJump(e) {
						return pcalls, Ends
					}
					pcalls = append(pcalls, e.(*ast.FuncCallExpr))
				}
			}
		}
	}
	return pcalls, Continues
}

// globalName returns the name of an identifier expression, or "". A
// dotted path never equals the plain names the callers compare it with,
// so this is program.Path for them without building the path's string.
func globalName(e ast.Expr) string {
	if id, ok := e.(*ast.IdentExpr); ok {
		return id.Value
	}
	return ""
}

func isPcallJump(e ast.Expr) bool {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return false
	}
	return globalName(c.Func) == "pcall"
}

// isEnd reports whether a top-level call always ends the section: jump,
// error, or pcall(jump, ...) (a recorded jump wins even under pcall).
func isEnd(e ast.Expr) bool {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return false
	}
	switch globalName(c.Func) {
	case "jump", "error":
		return true
	case "pcall":
		if len(c.Args) > 0 {
			return globalName(c.Args[0]) == "jump"
		}
	}
	return false
}

// chunkFacts are the facts of the chunk whose AST starts with ast0 that
// depend on its AST alone.
type chunkFacts struct {
	ast0 ast.Stmt
	// calls are the chunk's straight-line calls (see straight).
	calls []*ast.FuncCallExpr
	// pcalls and end are endFacts'.
	pcalls []*ast.FuncCallExpr
	end    End
	// deadLine is the chunk line of the first statement after one that
	// terminates the chunk, when dead is true.
	dead     bool
	deadLine int
}

type factsKey struct{}

// factsOf returns the facts of chunk c, which has an AST. They are
// memoised on the parser's chunk, so an edit re-walks only the chunks
// that changed; everything that depends on the chunk's place (spans,
// section targets) is computed from them on use.
func factsOf(c *parse.Chunk) *chunkFacts {
	if m, ok := c.Memo(factsKey{}).(*chunkFacts); ok && m.ast0 == c.AST[0] {
		return m
	}
	m := computeFacts(c)
	c.SetMemo(factsKey{}, m)
	return m
}

// computeFacts computes the facts of chunk c, which has an AST.
func computeFacts(c *parse.Chunk) *chunkFacts {
	m := &chunkFacts{ast0: c.AST[0]}
	out := map[*ast.FuncCallExpr]bool{}
	straight(c.AST, out)
	m.calls = make([]*ast.FuncCallExpr, 0, len(out))
	for call := range out {
		m.calls = append(m.calls, call)
	}
	m.pcalls, m.end = endFacts(c.AST)
	for i, st := range c.AST {
		if i+1 < len(c.AST) && terminates(st) {
			m.dead, m.deadLine = true, c.AST[i+1].Line()
			break
		}
	}
	return m
}

// straight records the calls of a chunk that run whenever control reaches
// their top-level statement.
func straight(stmts []ast.Stmt, out map[*ast.FuncCallExpr]bool) {
	var expr func(e ast.Expr)
	expr = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.FuncCallExpr:
			out[e] = true
			if e.Receiver != nil {
				expr(e.Receiver)
			} else {
				expr(e.Func)
			}
			for _, a := range e.Args {
				expr(a)
			}
		case *ast.AttrGetExpr:
			expr(e.Object)
			expr(e.Key)
		case *ast.LogicalOpExpr:
			expr(e.Lhs) // the right side may not run
		case *ast.StringConcatOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.ArithmeticOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.RelationalOpExpr:
			expr(e.Lhs)
			expr(e.Rhs)
		case *ast.UnaryMinusOpExpr:
			expr(e.Expr)
		case *ast.UnaryNotOpExpr:
			expr(e.Expr)
		case *ast.UnaryLenOpExpr:
			expr(e.Expr)
		case *ast.TableExpr:
			for _, f := range e.Fields {
				if f.Key != nil {
					expr(f.Key)
				}
				expr(f.Value)
			}
		}
	}
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.FuncCallStmt:
			expr(st.Expr)
		case *ast.LocalAssignStmt:
			for _, e := range st.Exprs {
				expr(e)
			}
		case *ast.AssignStmt:
			for _, e := range st.Rhs {
				expr(e)
			}
		case *ast.ReturnStmt:
			for _, e := range st.Exprs {
				expr(e)
			}
			return
		case *ast.IfStmt:
			expr(st.Condition)
		case *ast.BreakStmt:
			return
		}
	}
}

// deadSpans computes the code no run can reach: the rest of a chunk after
// a top-level jump, error or return; the blocks of a section after one
// that surely ends it; the sections no walk can enter.
func (r *Result) deadSpans(facts []*chunkFacts) {
	p := r.Prog.Prompt
	f := p.File
	if f == nil {
		return
	}
	add := func(a, b int) {
		if a < b {
			r.dead = append(r.dead, source.Span{Start: a, End: b})
		}
	}
	for i, c := range r.Prog.Chunks {
		if facts[i] != nil && facts[i].dead {
			add(f.LineStart(c.FirstLine+facts[i].deadLine-1), c.Span.End)
		}
	}
	blocks := func(bs []*parse.Block) {
		for i, b := range bs {
			if b.Kind == parse.LuaBlock && b.Chunk != nil && r.ends[b.Chunk] == Ends && i+1 < len(bs) {
				add(bs[i+1].Span().Start, bs[len(bs)-1].Span().End)
				return
			}
		}
	}
	blocks(p.H1Blocks)
	var visit func([]*parse.Section)
	visit = func(ss []*parse.Section) {
		for _, s := range ss {
			if !r.May.Entered[s] && s.Heading != nil {
				add(s.Heading.Span.Start, s.Content.End)
			} else {
				blocks(s.Blocks)
			}
			visit(s.Children)
		}
	}
	visit(p.Sections)
	sort.Slice(r.dead, func(i, j int) bool { return r.dead[i].Start < r.dead[j].Start })
}

// Dead reports whether the start of s lies in code no run can reach.
func (r *Result) Dead(s source.Span) bool {
	i := sort.Search(len(r.dead), func(i int) bool { return r.dead[i].End > s.Start })
	for ; i < len(r.dead) && r.dead[i].Start <= s.Start; i++ {
		if s.Start < r.dead[i].End {
			return true
		}
	}
	return false
}

// terminates reports whether a top-level statement always ends its chunk.
func terminates(st ast.Stmt) bool {
	switch st := st.(type) {
	case *ast.ReturnStmt, *ast.BreakStmt:
		return true
	case *ast.FuncCallStmt:
		return isEnd(st.Expr)
	}
	return false
}

// Cycle is a jump cycle the walk enters on every run and can leave only
// through the section-entry cap.
type Cycle struct {
	// Sections are the cycle's sections in entry order.
	Sections []*parse.Section
	// Close is the jump call that re-enters the first of them.
	Close *program.Call
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
		if c.Path == "jump" && r.Prog.ChunkOf(c).Kind == program.SectionChunk && !c.InFunc && r.Straight[c.Expr] {
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
// It is built once per analysis and shared by its callers (read-only).
func (r *Result) callsByChunk() map[*parse.Chunk][]*program.Call {
	if r.callsOf != nil {
		return r.callsOf
	}
	r.callsOf = make(map[*parse.Chunk][]*program.Call, len(r.Prog.Chunks))
	calls := r.Prog.Calls
	for i := 0; i < len(calls); {
		// Calls are grouped by chunk in file order: take each run whole
		// (capacity-limited, so an append by a caller copies).
		j := i + 1
		for j < len(calls) && r.Prog.ChunkOf(calls[j]) == r.Prog.ChunkOf(calls[i]) {
			j++
		}
		k := r.Prog.ChunkOf(calls[i]).Chunk
		r.callsOf[k] = append(r.callsOf[k], calls[i:j:j]...)
		i = j
	}
	return r.callsOf
}

// step is one certain section entry: it falls through (next == nil) or
// jumps to next with call j; ok is false when the outcome is uncertain.
func (r *Result) step(s *parse.Section, callsOf map[*parse.Chunk][]*program.Call) (next *parse.Section, j *program.Call, ok bool) {
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
		j, t := r.straightJump(b.Chunk, callsOf[b.Chunk])
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
	if r.ends[c] != Continues {
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

// caughtSpans records the function expressions passed directly to pcall
// or xpcall: an error raised in their bodies is caught.
func (r *Result) caughtSpans() {
	for _, c := range r.Prog.Calls {
		if c.Path != "pcall" && c.Path != "xpcall" {
			continue
		}
		if fe, ok := c.Arg(0).(*ast.FunctionExpr); ok && r.Prog.Prompt.File != nil {
			f := r.Prog.Prompt.File
			last := r.Prog.ChunkOf(c).FirstLine + fe.LastLine() - 1
			r.caught = append(r.caught, source.Span{Start: r.Prog.SpanOf(c, fe).Start, End: f.LineEnd(last)})
		}
	}
}

// Caught reports whether the start of s lies in a function body that
// pcall or xpcall runs, where an error does not end the run.
func (r *Result) Caught(s source.Span) bool {
	for _, c := range r.caught {
		if c.Start <= s.Start && s.Start < c.End {
			return true
		}
	}
	return false
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
