package dap

import (
	"context"
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
	godap "github.com/google/go-dap"
	lua "github.com/yuin/gopher-lua"
)

// mainThread is the walk's thread; fanout arms get threads of their own.
const mainThread = 1

type stepKind int

const (
	stepNone stepKind = iota
	stepOver
	stepIn
	stepOut
)

// step is a pending next/stepIn/stepOut.
type step struct {
	kind   stepKind
	thread int
	depth  int
	// luaDepth is the number of Lua functions running in the chunk at a
	// statement stop (0 at the other points).
	luaDepth int
}

// debugRun is one run under the debugger; it is the run's run.Hook. Its
// fields are guarded by server.mu.
type debugRun struct {
	s      *server
	args   LaunchArgs
	src    *godap.Source
	cancel context.CancelFunc
	done   chan struct{}
	quiet  bool
	ended  bool

	threads        map[int]*thread
	armThreads     map[any]*thread
	sectionThreads map[int64]*thread
	nextThread     int

	// stopped holds every thread at its next pause point until resumed;
	// resumeCh is closed to resume.
	stopped  bool
	resumeCh chan struct{}
	pauseReq bool
	entered  bool
	pending  *step

	// refs are the variable references handed out at this stop;
	// refThread is the thread new ones belong to, expanding the reference
	// being expanded (its children's paths extend its own).
	refs      []varRef
	refThread *thread
	expanding *varRef

	// The what-if state (whatif.go). seen counts each point's
	// occurrences, seq all points; first is the run's first point.
	seen  map[string]int
	names map[nameKey]string
	seq   int
	first pointID
	// plan, when set, fast-forwards a re-run to its target without
	// stopping; applyAt are edits to make at points on the way.
	plan    *plan
	applyAt map[pointID][]*edit
	// history is this run's stops, oldest first; edits the changes made at
	// them, in order.
	history []stopRec
	edits   []*edit
	// runNo is the run's number in its launch, from 1; sess is its
	// session once open; replaced is set when a re-run took its place.
	runNo    int
	sess     *session.Session
	replaced bool
	// text is the prompt the run read; prior, when set, the tape it is
	// answered from (else the server's); ahead is set while it is a run
	// started ahead of a step back (ahead.go).
	text  []byte
	prior *gateway.Tape
	ahead *aheadState
	// arrival is a run ahead's history once at its target (ahead.go).
	arrival []stopRec
}

// thread is the walk or one fanout arm.
type thread struct {
	id   int
	name string
	// levels are the frames of the thread, one per execute/fanout depth;
	// nil where the thread has no frame at that depth.
	levels []*level
	// held is true while the thread waits at a pause point.
	held bool
	// jobs are work the request loop hands to the thread's goroutine
	// while it is held: everything that reads or runs its VMs
	// (variables, evaluate), since a gopher-lua state belongs to one
	// goroutine. A job gets false when the thread went on before it ran.
	jobs chan func(held bool)
}

func newThread(id int, name string) *thread {
	return &thread{id: id, name: name, jobs: make(chan func(bool), 64)}
}

// post hands job to t's goroutine; it fails when t is not held at a pause
// point, or has too much work queued. Needs s.mu.
func (t *thread) post(job func(held bool)) error {
	if !t.held {
		return fmt.Errorf("thread %d (%s) is not stopped: its VM is running, or waiting for the fanout arms it started; pick a frame of a stopped thread", t.id, t.name)
	}
	select {
	case t.jobs <- job:
		return nil
	default:
		return fmt.Errorf("thread %d has too many requests waiting; try again", t.id)
	}
}

// serve runs t's jobs until ch is closed or ctx ends, then answers the
// jobs left with held false. It runs on t's goroutine, in Pause.
func (d *debugRun) serve(t *thread, ch <-chan struct{}, done <-chan struct{}) {
	for waiting := true; waiting; {
		select {
		case <-ch:
			waiting = false
		case <-done:
			waiting = false
		case job := <-t.jobs:
			job(true)
		}
	}
	d.s.mu.Lock()
	t.held = false
	d.s.mu.Unlock()
	for {
		select {
		case job := <-t.jobs:
			job(false)
		default:
			return
		}
	}
}

// level is the latest pause point of a VM on a thread's stack.
type level struct {
	point run.PausePoint
	name  string
	// lua are the chunk's Lua frames at a statement stop, innermost first.
	lua []run.LuaFrame
	// builtins are the globals the VM had at its section entry, hidden from
	// the Globals scope.
	builtins map[string]bool
	// pp is the point itself while the thread is held there (a reply
	// edit changes its Text); at is its occurrence, entry the level's
	// section entry's.
	pp        *run.PausePoint
	at, entry pointID
	entrySeq  int
}

// threadFor returns the thread of vm, creating an arm's on first sight;
// needs s.mu.
func (d *debugRun) threadFor(vm *run.VM) (*thread, bool) {
	key := vm.ArmKey()
	if key == nil {
		return d.threads[mainThread], false
	}
	if t, ok := d.armThreads[key]; ok {
		return t, false
	}
	t := newThread(d.nextThread, fmt.Sprintf("arm %d: %s", vm.ArmIndex(), vm.ArmItem()))
	d.nextThread++
	d.threads[t.id] = t
	d.armThreads[key] = t
	d.sectionThreads[vm.ID] = t
	return t, true
}

func (d *debugRun) errStopped() error {
	return &run.RunError{Kind: run.KindCancelled, Msg: "the run was terminated by the debugger"}
}

// Pause implements run.Hook: it decides whether the point stops the run
// and, if so (or while another thread is stopped), holds the goroutine.
func (d *debugRun) Pause(p *run.PausePoint) error {
	s := d.s
	s.mu.Lock()
	if d.ended || d.args.NoDebug {
		s.mu.Unlock()
		return nil
	}
	t, isNew := d.threadFor(p.VM)
	depth := p.VM.Depth()
	for len(t.levels) <= depth {
		t.levels = append(t.levels, nil)
	}
	t.levels = t.levels[:depth+1]
	lv := t.levels[depth]
	if p.Kind == run.PointSection || lv == nil || lv.point.VM != p.VM {
		lv = &level{name: frameName(p.VM), builtins: globalNames(p.VM.L)}
		t.levels[depth] = lv
	}
	lv.point = *p
	lv.pp = p
	lv.lua = nil
	id := d.count(p)
	lv.at = id
	if p.Kind == run.PointSection {
		lv.entry, lv.entrySeq = id, d.seq
	}
	es := d.applyAt[id]
	// A re-run fast-forwarding past this point reads no frames: stepping
	// back costs a replay, not a stop per point.
	if p.Kind == run.PointLine && (d.plan == nil || id == d.plan.target || len(es) > 0) {
		lv.lua = p.VM.LuaFrames()
	}
	if len(es) > 0 {
		delete(d.applyAt, id)
		s.mu.Unlock()
		d.applyEdits(p, lv, es)
		s.mu.Lock()
	}
	var reason string
	var hits []int
	back := false
	if d.plan != nil {
		if id != d.plan.target {
			// Points are not kept past Pause (a chunk's statements share
			// one).
			lv.pp = nil
			s.mu.Unlock()
			if isNew {
				d.emit(&godap.ThreadEvent{Event: event("thread"), Body: godap.ThreadEventBody{Reason: "started", ThreadId: t.id}})
			}
			return nil
		}
		reason, back = d.plan.reason, d.plan.back
		d.plan = nil
		if d.ahead != nil {
			s.tell("ready")
		}
		d.entered = true
	} else {
		reason, hits = d.stopReason(t, p, depth, luaDepth(lv))
	}
	if reason == "" && !d.stopped {
		lv.pp = nil
		s.mu.Unlock()
		if isNew {
			d.emit(&godap.ThreadEvent{Event: event("thread"), Body: godap.ThreadEventBody{Reason: "started", ThreadId: t.id}})
		}
		return nil
	}
	if reason != "" {
		d.stopped, d.pending, d.pauseReq = true, nil, false
		rec := stopRec{id: id, seq: d.seq, reason: reason}
		if h := d.arrival; len(h) == len(d.history)+1 && h[len(h)-1] == rec {
			// A run ahead at the stop it was started for: its history is
			// the one planned for it, already built.
			d.history = h
		} else {
			d.history = append(d.history, rec)
		}
		d.arrival = nil
	}
	t.held = true
	ch := d.resumeCh
	ctx := p.VM.Context()
	s.mu.Unlock()
	if isNew {
		d.emit(&godap.ThreadEvent{Event: event("thread"), Body: godap.ThreadEventBody{Reason: "started", ThreadId: t.id}})
	}
	if back {
		// Stepped back here: the next step back's run starts now, before
		// the client hears of the stop and can ask for it.
		s.speculate(d)
	}
	if reason != "" {
		d.emit(&godap.StoppedEvent{Event: event("stopped"), Body: godap.StoppedEventBody{Reason: reason, ThreadId: t.id,
			AllThreadsStopped: true, HitBreakpointIds: hits, Description: describe(p)}})
	}
	d.serve(t, ch, ctx.Done())
	s.mu.Lock()
	lv.pp = nil
	s.mu.Unlock()
	if ctx.Err() != nil {
		return d.errStopped()
	}
	return nil
}

// luaDepth is the number of Lua functions running in the chunk at a
// statement stop, 0 at the other points.
func luaDepth(lv *level) int {
	if lv.point.Kind == run.PointLine {
		return len(lv.lua)
	}
	return 0
}

// stopReason says why p stops the run ("" when it does not); needs s.mu.
func (d *debugRun) stopReason(t *thread, p *run.PausePoint, depth, luaDepth int) (string, []int) {
	// stopOnEntry stops at the H1, or with a section at that section's
	// entry (the H1 pass before it runs through).
	if d.args.StopOnEntry && !d.entered && (d.args.Section == "" || p.VM.Section != nil) {
		d.entered = true
		return "entry", nil
	}
	if d.args.Section == "" || p.VM.Section != nil {
		d.entered = true
	}
	if d.pauseReq {
		return "pause", nil
	}
	if st := d.pending; st != nil {
		switch st.kind {
		case stepOver:
			// The next point of this section (statements of the chunk's
			// own level, not of functions it calls), or of a caller.
			if t.id == st.thread && (depth < st.depth || depth == st.depth && (p.Kind != run.PointLine || luaDepth <= max(st.luaDepth, 1))) {
				return "step", nil
			}
		case stepIn:
			if t.id == st.thread || depth > st.depth {
				return "step", nil
			}
		case stepOut:
			// Out of the Lua function, or out of the section (a chunk's
			// own statements are the section's frame).
			if t.id == st.thread && (depth < st.depth || st.luaDepth > 1 && depth == st.depth && (p.Kind != run.PointLine || luaDepth < st.luaDepth)) {
				return "step", nil
			}
		}
	}
	if p.Kind == run.PointTool {
		if b := d.s.funcBps[p.Alias]; b != nil && d.condition(p, b.condition) {
			return "function breakpoint", []int{b.id}
		}
		return "", nil
	}
	for _, b := range d.s.bps[absPath(d.args.Program)] {
		if b.kind == p.Kind && b.line == p.Line && d.condition(p, b.condition) {
			return "breakpoint", []int{b.id}
		}
	}
	return "", nil
}

// BreakLines implements run.LineHook: every statement of a chunk that has
// statement breakpoints, or that runs while its thread is stepping (so
// that next and step out can stop inside it); nil for the others, which
// run their normal bytecode.
func (d *debugRun) BreakLines(vm *run.VM, c *parse.Chunk) []int {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.ended || d.args.NoDebug {
		return nil
	}
	if st := d.pending; st != nil {
		if t, _ := d.threadFor(vm); st.kind == stepIn || t.id == st.thread {
			return s.stmtLinesOf(c)
		}
	}
	last := c.FirstLine + strings.Count(c.Source, "\n")
	for _, b := range s.bps[absPath(d.args.Program)] {
		if b.kind == run.PointLine && b.line >= c.FirstLine && b.line <= last {
			return s.stmtLinesOf(c)
		}
	}
	return nil
}

// stmtLinesOf is c.StmtLines, worked out once per chunk: re-runs of an
// unchanged prompt share its parse (session.Options.Parsed), so a step
// back asks again for the same chunks. Needs s.mu; the lines are only
// read.
func (s *server) stmtLinesOf(c *parse.Chunk) []int {
	if ls, ok := s.stmtLines[c]; ok {
		return ls
	}
	if s.stmtLines == nil || len(s.stmtLines) >= maxStmtLines {
		s.stmtLines = map[*parse.Chunk][]int{}
	}
	ls := c.StmtLines()
	s.stmtLines[c] = ls
	return ls
}

// maxStmtLines bounds the chunks stmtLinesOf remembers; when full it
// starts again.
const maxStmtLines = 1024

// condition evaluates a breakpoint condition in the VM: empty is true;
// an error stops (and says so on the console).
func (d *debugRun) condition(p *run.PausePoint, cond string) bool {
	if cond == "" {
		return true
	}
	var names []string
	var vals []lua.LValue
	if fs := p.VM.LuaFrames(); p.Kind == run.PointLine && len(fs) > 0 {
		names, vals = p.VM.Locals(fs[0].Level)
	}
	v, err := p.VM.Eval(cond, names, vals)
	if err != nil {
		d.output("stderr", fmt.Sprintf("breakpoint condition %q failed: %v\n", cond, err), 0)
		return true
	}
	return lua.LVAsBool(v)
}

func describe(p *run.PausePoint) string {
	switch p.Kind {
	case run.PointSection:
		return "entering " + frameName(p.VM)
	case run.PointLua:
		return "before the Lua block"
	case run.PointProse:
		return "before the model round"
	case run.PointTool:
		return "before tool " + p.Alias
	case run.PointLine:
		return "before the statement"
	case run.PointReply:
		return "after the model's reply (set `reply` in the Run scope to change what the rest of the run sees)"
	}
	return ""
}

func frameName(vm *run.VM) string {
	if vm.Section == nil {
		return "# " + vm.Name()
	}
	name := vm.Section.Address()
	if i := vm.ArmIndex(); i > 0 && vm.Kind == run.VMArm {
		name += fmt.Sprintf(" [arm %d]", i)
	}
	return name
}

func globalNames(L *lua.LState) map[string]bool {
	m := map[string]bool{}
	L.G.Global.ForEach(func(k, _ lua.LValue) {
		if ks, ok := k.(lua.LString); ok {
			m[string(ks)] = true
		}
	})
	return m
}

// resume lets every held thread go on, with a step for thread when kind
// is not stepNone.
func (s *server) resume(threadID int, kind stepKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.cur
	if d == nil || !d.stopped {
		return
	}
	d.pending = nil
	// The run ahead was for a step back from this stop.
	s.dropAheadLocked()
	if kind != stepNone {
		if t := d.threads[threadID]; t != nil && len(t.levels) > 0 {
			st := &step{kind: kind, thread: t.id, depth: len(t.levels) - 1}
			if lv := t.levels[st.depth]; lv != nil {
				st.luaDepth = luaDepth(lv)
			}
			d.pending = st
		}
	}
	d.stopped = false
	d.refs = nil
	close(d.resumeCh)
	d.resumeCh = make(chan struct{})
}

// The run.Observer side: log lines go to the console, arm threads end
// with their arm.

// SectionEnter implements run.Observer.
func (d *debugRun) SectionEnter(run.SectionEvent) {}

// SectionExit implements run.Observer.
func (d *debugRun) SectionExit(ev run.SectionEvent) {
	if ev.Index == 0 {
		return
	}
	s := d.s
	s.mu.Lock()
	t := d.sectionThreads[ev.ID]
	if t != nil {
		delete(d.sectionThreads, ev.ID)
		delete(d.threads, t.id)
		for k, v := range d.armThreads {
			if v == t {
				delete(d.armThreads, k)
			}
		}
		if d.pending != nil && d.pending.thread == t.id {
			d.pending = nil
		}
	}
	s.mu.Unlock()
	if t != nil {
		d.emit(&godap.ThreadEvent{Event: event("thread"), Body: godap.ThreadEventBody{Reason: "exited", ThreadId: t.id}})
	}
}

// ModelRound implements run.Observer.
func (d *debugRun) ModelRound(run.ModelRoundEvent) {}

// ToolCall implements run.Observer.
func (d *debugRun) ToolCall(run.ToolCallEvent) {}

// Log implements run.Observer.
func (d *debugRun) Log(ev run.LogEvent) { d.output("console", ev.Message+"\n", ev.Line) }

// StoreWrite implements run.Hook.
func (d *debugRun) StoreWrite(run.StoreEvent) {}
