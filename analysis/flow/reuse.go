package flow

// Reusing the walk of the last build of the same file: an editor asks
// for the flow after every keystroke, and a keystroke usually changes
// one chunk in a way the walk does not see (a space, a number, a local
// renamed). The walk reads, of each chunk, how it ends, its control
// calls (jump, execute, fanout, pcall of them) and their targets, its
// store writes and models.default calls, whether it is plain (cycle.go);
// of the prompt, the section tree (names, levels, off-walk markers,
// blocks, whether a prose block has text). When the Program was built
// from the last analysed one (program.EditedFrom), every chunk the edit
// replaced had none of those acts before the edit and has none after,
// and the tree is the same, the walk is the last one: its views, edges
// and targets are taken as they are, with the sections and calls in
// them mapped to this build's (by the section's number in the tree and
// the call's expression in its paired chunk). What holds positions (the
// dead and caught spans) is computed anew, and so is everything that
// reads the chunks' values (the var and store flow, built on first use
// from the edges). Where the walk read some chunk's values (a computed
// target or store path, which an edit elsewhere may change through a
// global), the new build's facts of that chunk must be the ones it read.
// TestReuseMatchesCold holds the reused walk to a cold one over edits of
// the test prompts.

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/internal/lastbyfile"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// lastResult holds, by file name, the last Result analysed for that
// file, without keeping it alive.
var lastResult lastbyfile.Map[Result]

// rememberResult makes r the last Result of its file.
func rememberResult(r *Result) {
	if f := r.Prog.Prompt.File; f != nil {
		lastResult.Store(f.Name, r)
	}
}

// reuse returns the walk of prog taken from the last Result of its
// file, or nil when it cannot be (see above).
func reuse(prog *program.Program) *Result {
	f := prog.Prompt.File
	if f == nil {
		return nil
	}
	q := lastResult.Load(f.Name)
	if q == nil || q.Prog == prog {
		return nil
	}
	qp := q.Prog
	lo, hi, qhi, ok := prog.EditedFrom(qp)
	if !ok || hi-lo != qhi-lo || len(prog.Chunks) != len(qp.Chunks) || len(q.endAt) != len(qp.Chunks) {
		return nil
	}
	if !sameTree(prog.Prompt, qp.Prompt, !q.DefaultModel) || !quietShared(prog) {
		return nil
	}
	// The value facts the last walk read must be this build's: the
	// same chunk, evaluated from the same entry (the program takes a
	// paired chunk's facts then, and the memo gives the same facts).
	for _, rf := range q.factsRead {
		if i := int(rf.i); i >= lo && i < hi || i >= len(prog.Chunks) || prog.Facts(prog.Chunks[i]) != rf.f {
			return nil
		}
	}
	facts := make([]*chunkFacts, len(prog.Chunks))
	copy(facts, q.facts)
	for i := lo; i < hi; i++ {
		c, d := prog.Chunks[i], qp.Chunks[i]
		if c.Kind != d.Kind || c.Block != d.Block || !quiet(prog, c) || !quiet(qp, d) {
			return nil
		}
		facts[i] = factsOf(c.Chunk)
	}
	r := &Result{
		Prog:          prog,
		writesFrom:    q.writes.Load(),
		writesLo:      int32(lo),
		writesHi:      int32(hi),
		H1Ends:        q.H1Ends,
		DefaultModel:  q.DefaultModel,
		StoreWrites:   q.StoreWrites,
		StoreDynamic:  q.StoreDynamic,
		StorePrefixes: q.StorePrefixes,
		endAt:         q.endAt,
		facts:         facts,
		knownIn:       q.knownIn,
		preds:         q.preds,
		predChain:     q.predChain,
		anyJump:       q.anyJump,
		anyJumpWalked: q.anyJumpWalked,
		anyCallers:    q.anyCallers,
		factsRead:     q.factsRead,
		fanouts:       q.fanouts,
		storeWrites:   q.storeWrites,
	}
	// The places are the last walk's: the same tree, the same endings
	// (the replaced chunks end no section), this build's units.
	if q.places.len() != len(prog.Sections) {
		return nil
	}
	r.places = &places{units: prog.UnitOf, list: make([]place, len(prog.Sections))}
	for n, p := range q.places.list {
		p.unit = prog.Sections[n]
		r.places.list[n] = p
	}
	m := mapper{r: r, q: q}
	r.Known, r.May = m.view(q.Known), m.view(q.May)
	r.targets.span = q.targets.span
	r.targets.all = make([]target, len(q.targets.all))
	for k, t := range q.targets.all {
		t.sec, t.call = m.section(t.sec), m.call(t.call)
		r.targets.all[k] = t
	}
	if q.predVia != nil {
		r.predVia = make([][]*program.Call, len(q.predVia))
		for n, vs := range q.predVia {
			r.predVia[n] = m.calls(vs)
		}
	}
	r.anyVia = m.calls(q.anyVia)
	for _, c := range q.Cycles {
		r.Cycles = append(r.Cycles, Cycle{Sections: m.sections(c.Sections), Close: m.call(c.Close), Via: m.call(c.Via)})
	}
	for _, x := range q.Recursions {
		x.Sections, x.Call = m.sections(x.Sections), m.call(x.Call)
		r.Recursions = append(r.Recursions, x)
	}
	if m.lost {
		return nil
	}
	r.deadSpans(facts)
	r.caughtSpans()
	return r
}

// quiet reports whether chunk c of prog has none of the acts the walk
// reads (see above): it parses, runs to its end (no top-level return,
// break, error or jump; plainStmts), and makes no control call, store
// write, pcall or models.default call, nor any call of execute or
// fanout by name.
func quiet(prog *program.Program, c *program.Chunk) bool {
	if c.Kind == program.SharedChunk || len(c.AST) == 0 {
		return false
	}
	if f := factsOf(c.Chunk); f.end != Continues || len(f.pcalls) > 0 || f.dead {
		return false
	}
	for _, call := range prog.CallsIn(c) {
		if name, _ := Control(call); name != "" {
			return false
		}
		switch call.Path {
		case "execute", "fanout", "pcall", "xpcall":
			return false
		}
		switch call.Canonical() {
		case "store.write", "store.append", "models.default":
			return false
		}
	}
	return plainStmts(c.AST)
}

// quietShared reports whether the shared library makes no control
// call: then which sections call into it (callsShared), which an edit
// of a section's calls may change, decides no target.
func quietShared(prog *program.Program) bool {
	if prog.Shared == nil {
		return true
	}
	for _, call := range prog.CallsIn(prog.Shared) {
		if name, _ := Control(call); name != "" {
			return false
		}
	}
	return true
}

// sameTree reports whether two parses have the same section tree as
// the walk reads it: the same sections (name, level, heading, off-walk)
// in the same places, each with the same blocks (kind, whether a Lua
// block compiled and parsed, whether an unparsed one has text, and with
// prose, whether a prose block has text: it fails for want of a model
// only where the prompt sets no default), and the same H1 blocks and
// shared library presence.
func sameTree(p, q *parse.Prompt, prose bool) bool {
	if (p.Shared == nil) != (q.Shared == nil) || !sameBlocks(p.H1Blocks, q.H1Blocks, prose) {
		return false
	}
	var same func(a, b []*parse.Section) bool
	same = func(a, b []*parse.Section) bool {
		if len(a) != len(b) {
			return false
		}
		for i, s := range a {
			t := b[i]
			if s.Name != t.Name || s.Level != t.Level || s.OffWalk != t.OffWalk || (s.Heading == nil) != (t.Heading == nil) ||
				!sameBlocks(s.Blocks, t.Blocks, prose) || !same(s.Children, t.Children) {
				return false
			}
		}
		return true
	}
	return same(p.Sections, q.Sections)
}

// sameBlocks is sameTree for two lists of blocks.
func sameBlocks(a, b []*parse.Block, prose bool) bool {
	if len(a) != len(b) {
		return false
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	for i, x := range a {
		y := b[i]
		if x.Kind != y.Kind {
			return false
		}
		switch x.Kind {
		case parse.LuaBlock:
			if (x.Chunk == nil) != (y.Chunk == nil) {
				return false
			}
			if x.Chunk != nil && ((len(x.Chunk.AST) == 0) != (len(y.Chunk.AST) == 0) ||
				len(x.Chunk.AST) == 0 && blank(x.Chunk.Source) != blank(y.Chunk.Source)) {
				return false
			}
		case parse.ProseBlock:
			if prose && ((x.Prose == nil) != (y.Prose == nil) || x.Prose != nil && blank(x.Prose.Text) != blank(y.Prose.Text)) {
				return false
			}
		}
	}
	return true
}

// mapper maps the sections and calls of q, the last Result, to r's
// build; lost is set when a call has no counterpart.
type mapper struct {
	r, q *Result
	lost bool
}

// section returns the section of r's build numbered as s is in q's.
func (m *mapper) section(s *parse.Section) *parse.Section {
	if s == nil {
		return nil
	}
	p, ok := m.q.places.of(s)
	if !ok || p.n >= len(m.r.Prog.Sections) {
		m.lost = true
		return nil
	}
	return m.r.Prog.Sections[p.n].Section
}

func (m *mapper) sections(ss []*parse.Section) []*parse.Section {
	out := make([]*parse.Section, len(ss))
	for i, s := range ss {
		out[i] = m.section(s)
	}
	return out
}

// call returns c as a call of r's build: the record of a paired chunk
// whose model the build took over is the build's too (the edit replaced
// only quiet chunks, whose calls no Result holds). Any other record is
// lost (a later build took its model over, or this one walked the chunk
// anew).
func (m *mapper) call(c *program.Call) *program.Call {
	if c == nil {
		return nil
	}
	if m.r.Prog.LatestChunkOf(c) == nil {
		m.lost = true
		return nil
	}
	return c
}

func (m *mapper) calls(cs []*program.Call) []*program.Call {
	if cs == nil {
		return nil
	}
	out := make([]*program.Call, len(cs))
	for i, c := range cs {
		out[i] = m.call(c)
	}
	return out
}

// view returns v with r's section numbering (the sets are shared: a
// walk's sets are not written once it is done).
func (m *mapper) view(v View) View {
	v.Entered.places, v.Arm.places, v.Walked.places = m.r.places, m.r.places, m.r.places
	return v
}
