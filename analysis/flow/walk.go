package flow

import (
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

type walker struct {
	r     *Result
	known bool
	v     View
	// started holds the (section, forced) starting points already walked,
	// by place.n.
	started []uint8
	// preds, on the May walk, records for each section (by place.n) the
	// sections whose `var` can flow into an entry of it (see varFlow);
	// h1 is the pseudo-section -1.
	preds [][]int32
	// chain is set while the next edge is the start of an execute chain
	// or a fanout arm; predChain parallels preds with it (nil when no
	// edge starts one; shorter, or nil, where the rest are false).
	chain     bool
	predChain [][]bool
	// via is set while the next edge is made by a control call (a jump,
	// execute or fanout) of its caller's own straight code; predVia
	// parallels preds with it (nil when no edge has one; shorter, or
	// nil, where the rest have none): var flows along such an edge only
	// from the code that may run before the call.
	via     *program.Call
	predVia [][]*program.Call
	// jumpers are the May walk's jumps to a computed target.
	jumpers []anyJumper
}

// edge records that var can flow from the sections from into section
// number n.
func (w *walker) edge(from []int32, n int) {
	if w.preds == nil {
		return
	}
	for _, f := range from {
		w.preds[n] = append(w.preds[n], f)
		if w.chain {
			if w.predChain == nil {
				w.predChain = make([][]bool, len(w.preds))
			}
			pc := w.predChain[n]
			for len(pc) < len(w.preds[n])-1 {
				pc = append(pc, false)
			}
			w.predChain[n] = append(pc, true)
		}
		if w.via != nil {
			if w.predVia == nil {
				w.predVia = make([][]*program.Call, len(w.preds))
			}
			pv := w.predVia[n]
			for len(pv) < len(w.preds[n])-1 {
				pv = append(pv, nil)
			}
			w.predVia[n] = append(pv, w.via)
		}
	}
}

// anyJumper is a jump of section n whose target the walk does not know
// (call: the jump, nil when it is not in the section's own straight
// code).
type anyJumper struct {
	n    int32
	call *program.Call
}

// maxAnyJumpEdges bounds the var edges the computed jumps add (jumps
// times sections); past it the var flow stays off (anyJumpWalked false).
const maxAnyJumpEdges = 1 << 16

// anyJumps adds the var edges of the May walk's computed jumps: such a
// jump may enter any section, which then falls through its siblings as
// the walk does, so each jumper becomes a var source of every section
// (from the code before the jump, as a literal jump's edge), and every
// section is walked from as a jump's target. The sections walked this
// way may make computed jumps of their own; they join the list.
func (w *walker) anyJumps() {
	if len(w.jumpers) == 0 || w.preds == nil {
		return
	}
	if len(w.jumpers)*w.r.places.len() > maxAnyJumpEdges {
		return
	}
	seen := map[anyJumper]bool{}
	for i := 0; i < len(w.jumpers); i++ {
		j := w.jumpers[i]
		if seen[j] {
			continue
		}
		seen[j] = true
		if len(seen)*w.r.places.len() > maxAnyJumpEdges {
			return
		}
		from := [1]int32{j.n}
		var all func(slice []*parse.Section)
		all = func(slice []*parse.Section) {
			for k, s := range slice {
				w.via = j.call
				w.from(slice, k, true, from[:])
				w.via = nil
				all(s.Children)
			}
		}
		all(w.r.Prog.Prompt.Sections)
	}
	w.r.anyJumpWalked = true
}

// subtree lists a section and its descendants by place.n.
func (w *walker) subtree(s *parse.Section, out []int32) []int32 {
	out = append(out, int32(w.r.places.at(s).n))
	for _, c := range s.Children {
		out = w.subtree(c, out)
	}
	return out
}

type target struct {
	kind string
	sec  *parse.Section // nil: computed or unresolved
	// sure is true when the call is straight-line code of its chunk.
	sure bool
	// mayOnly is true when an earlier block of the section may end it, so
	// the Known view does not run the call.
	mayOnly bool
	// call is the control call when it is in the section's own code
	// outside functions (nil otherwise).
	call *program.Call
}

func (r *Result) walk(known, h1Stops bool) View {
	n := r.places.len()
	in := make([]bool, 3*n)
	w := &walker{r: r, known: known, v: View{Entered: SectionSet{r.places, in[:n:n]}, Arm: SectionSet{r.places, in[n : 2*n : 2*n]}, Walked: SectionSet{r.places, in[2*n:]}},
		started: make([]uint8, n)}
	if known {
		r.knownIn = make([]bool, n)
	}
	if !known {
		// Most sections have one pred: each starts with room for one in
		// a shared array, and only a section with more grows its own.
		w.preds = make([][]int32, n)
		one := make([]int32, n)
		for i := range w.preds {
			w.preds[i] = one[i : i : i+1]
		}
	}
	if !h1Stops {
		w.from(r.Prog.Prompt.Sections, 0, false, []int32{-1})
	}
	if !known {
		w.anyJumps()
	}
	r.preds, r.predChain, r.predVia = w.preds, w.predChain, w.predVia
	if w.v.Any {
		for i := range n {
			w.v.Entered.in[i] = true
			w.v.Walked.in[i] = true
		}
	}
	return w.v
}

// targetsOf lists the control calls of a unit that can run on the May
// view: jump, execute and fanout, also when pcall makes them
// (pcall(jump, "## X") jumps, pcall(execute, ...) executes:
// docs/language.md#errors-across-calls). A target is a literal or a constant the
// chunk's values fold (a local holding the address).
// They are appended to out.
func (r *Result) targetsOf(u *program.Unit, out []target) []target {
	for _, c := range u.Calls {
		name, at := Control(c)
		if name == "" {
			continue
		}
		if c.InFunc && r.Prog.ChunkOf(c).Kind == program.SharedChunk && !r.callsShared(u) {
			continue // a shared-library function this section never calls
		}
		if c.Where == api.Handler && name == "jump" {
			continue // jump is nil inside handlers
		}
		t := target{kind: name, sure: r.Straight(c) && !c.InFunc,
			mayOnly: r.Prog.ChunkOf(c).Kind == program.SectionChunk && !r.blockMayRun(u.Section, r.Prog.ChunkOf(c).Block)}
		if !c.InFunc && r.Prog.ChunkOf(c).Kind == program.SectionChunk {
			t.call = c
		}
		if _, lit := c.Arg(at).(*ast.StringExpr); !lit {
			r.walkReads(r.Prog.ChunkOf(c)) // address reads the chunk's facts
		}
		if addr, ok := r.address(c, at); ok {
			sec, err := parse.Resolve(r.Prog.Prompt, u.Section, addr)
			if err != nil && at == 1 {
				continue // the call fails inside pcall: it enters nothing
			}
			t.sec = sec
		}
		out = append(out, t)
	}
	return out
}

// Control returns the control function a call makes (jump, execute or
// fanout, directly or through pcall) and the index of its section
// address argument; "" when it makes none.
func Control(c *program.Call) (name string, at int) {
	switch n := c.Canonical(); n {
	case "jump", "execute", "fanout":
		return n, 0
	case "pcall":
		if id, ok := c.Arg(0).(*ast.IdentExpr); ok && (id.Value == "jump" || id.Value == "execute") {
			return id.Value, 1
		}
	}
	return "", 0
}

// address returns argument i of a call when its value is a known
// string.
func (r *Result) address(c *program.Call, i int) (string, bool) {
	if s, ok := c.Arg(i).(*ast.StringExpr); ok {
		return s.Value, true
	}
	v := r.Prog.Facts(r.Prog.ChunkOf(c)).Arg(c.Expr, i)
	if v.T == value.String && v.Const {
		return v.Str, true
	}
	return "", false
}

// blockMayRun is BlockRuns without the entry condition.
func (r *Result) blockMayRun(s *parse.Section, i int) bool {
	p, ok := r.places.of(s)
	if !ok {
		for j := 0; j < i && j < len(s.Blocks); j++ {
			if b := s.Blocks[j]; b.Kind == parse.LuaBlock && b.Chunk != nil && r.endOf(b.Chunk) != Continues {
				return false
			}
		}
		return true
	}
	return p.firstEnds < 0 || int(p.firstEnds) >= i
}

// falls reports whether an entry of the section at p can fall through
// to the next section of its slice.
func (w *walker) falls(p place) bool {
	if w.known {
		return p.firstEnds < 0 // an unknown return is taken to end the run
	}
	return p.firstEnd < 0
}

// from walks slice from index i with fall-through, like the engine's walk;
// forced runs the first section even when it is off-walk.
// preds are the sections var flows from into the first section entered.
func (w *walker) from(slice []*parse.Section, i int, forced bool, preds []int32) {
	var self [1]int32
	for ; i < len(slice); i++ {
		s := slice[i]
		if s.OffWalk && !forced {
			continue
		}
		p := w.r.places.at(s)
		w.edge(preds, p.n)
		w.chain = false
		w.via = nil
		self[0] = int32(p.n)
		preds = self[:]
		bit := uint8(1)
		if forced {
			bit = 2
		}
		if w.started[p.n]&bit != 0 {
			return
		}
		w.started[p.n] |= bit
		forced = false
		w.v.Walked.in[p.n] = true
		w.enter(s, p.n, slice, i)
		if !w.falls(p) {
			return
		}
	}
}

// enter runs the control calls of an entered section.
func (w *walker) enter(s *parse.Section, n int, slice []*parse.Section, i int) {
	w.v.Entered.in[n] = true
	if w.known {
		w.r.knownIn[n] = true
	}
	for _, t := range w.r.targets.of(n) {
		if w.known && t.mayOnly {
			continue
		}
		if t.sec == nil {
			if !w.known {
				w.v.Any = true
				if t.kind == "jump" {
					w.r.anyJump = true
					w.jumpers = append(w.jumpers, anyJumper{int32(n), t.call})
				} else {
					// A chain or an arm of any section: it starts from a
					// copy of this section's var.
					w.r.anyCallers = append(w.r.anyCallers, int32(n))
					w.r.anyVia = append(w.r.anyVia, t.call)
				}
			}
			continue
		}
		self := [1]int32{int32(n)}
		w.via = t.call
		switch t.kind {
		case "jump":
			if t.sec.Parent == s {
				w.from(s.Children, w.r.indexOf(s.Children, t.sec), true, self[:])
				w.via = nil
				if slice != nil {
					// The child walk returns to the next sibling, with the
					// var its sections left.
					w.from(slice, i+1, false, w.subtree(s, nil))
				}
			} else {
				sl := siblings(w.r.Prog.Prompt, t.sec)
				w.from(sl, w.r.indexOf(sl, t.sec), true, self[:])
			}
		case "execute":
			// The chain starts with a copy of the caller's var; its writes
			// are dropped when it returns, so nothing flows back.
			sl := siblings(w.r.Prog.Prompt, t.sec)
			w.chain = true
			w.from(sl, w.r.indexOf(sl, t.sec), true, self[:])
		case "fanout":
			w.chain = true
			tn := w.r.places.at(t.sec).n
			w.edge(self[:], tn)
			w.chain = false
			w.via = nil
			if !w.v.Arm.in[tn] {
				w.v.Arm.in[tn] = true
				w.enter(t.sec, tn, nil, 0)
			}
		}
		w.via = nil
	}
}

func siblings(p *parse.Prompt, s *parse.Section) []*parse.Section {
	if s.Parent != nil {
		return s.Parent.Children
	}
	return p.Sections
}

// place is a section's index in its list of siblings (pos) and in the
// section tree in pre-order (n), its unit, the first of its blocks whose
// chunk surely ends the section (firstEnd) and the first whose chunk
// may end it (firstEnds), -1 when none (blockEnds).
type place struct {
	pos, n              int
	firstEnd, firstEnds int32
	// unit is the section's unit (Program.UnitOf).
	unit *program.Unit
}

// places numbers the sections as the walk does, in pre-order: by their
// units' index in Program.Sections (which lists them in that order),
// found through Program.UnitOf, which the program makes anyway: an
// analysis makes no map of the sections.
type places struct {
	units map[*parse.Section]*program.Unit
	list  []place
}

// of returns section s's place; ok is false when s is not a section of
// the program.
func (ps *places) of(s *parse.Section) (p place, ok bool) {
	if ps == nil {
		return place{}, false
	}
	u := ps.units[s]
	if u == nil || u.Index() < 0 || u.Index() >= len(ps.list) || ps.list[u.Index()].unit != u {
		return place{}, false
	}
	return ps.list[u.Index()], true
}

// at is of without ok (the zero place for a section not in the program).
func (ps *places) at(s *parse.Section) place {
	p, _ := ps.of(s)
	return p
}

// len returns the number of sections.
func (ps *places) len() int {
	if ps == nil {
		return 0
	}
	return len(ps.list)
}

// index numbers the sections of the tree (places), once per analysis,
// once the chunks' endings are known.
func (r *Result) index() {
	if r.places != nil {
		return
	}
	ps := &places{units: r.Prog.UnitOf, list: make([]place, 0, len(r.Prog.Sections))}
	var walk func([]*parse.Section)
	walk = func(list []*parse.Section) {
		for i, x := range list {
			p := place{pos: i, n: len(ps.list)}
			// The program lists its section units in the same order.
			if p.n < len(r.Prog.Sections) && r.Prog.Sections[p.n].Section == x {
				p.unit = r.Prog.Sections[p.n]
			} else {
				p.unit = r.Prog.UnitOf[x]
			}
			p.firstEnd, p.firstEnds = r.unitEnds(p.unit)
			ps.list = append(ps.list, p)
			walk(x.Children)
		}
	}
	walk(r.Prog.Prompt.Sections)
	r.places = ps
}

// indexOf returns s's index in ss (len(ss) when absent). ss is s's list
// of siblings, so the index comes from a map of the tree built once: a
// search per jump made the walk quadratic in the sections.
func (r *Result) indexOf(ss []*parse.Section, s *parse.Section) int {
	r.index()
	if p, ok := r.places.of(s); ok && p.pos < len(ss) && ss[p.pos] == s {
		return p.pos
	}
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return len(ss)
}

// callsShared reports whether a section's own chunks call a global the
// shared library assigns, or a computed function (so a function of the
// library may run there).
func (r *Result) callsShared(u *program.Unit) bool {
	if r.Prog.Shared == nil {
		return false
	}
	if r.sharedNames == nil {
		r.sharedNames = map[string]bool{}
		for _, g := range r.Prog.Globals {
			if g.Write && !g.FieldWrite && r.Prog.ChunkOf(g).Kind == program.SharedChunk {
				r.sharedNames[g.Expr.Value] = true
			}
		}
	}
	for _, c := range u.Calls {
		if r.Prog.ChunkOf(c).Kind != program.SharedChunk && (r.sharedNames[c.Path] || c.Path == "") {
			return true
		}
	}
	return false
}
