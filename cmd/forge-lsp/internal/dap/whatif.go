package dap

// What if: edits at a stop, re-running a frame, stepping back
// (docs/debugging.md#what-if).
//
// Every run of a debug session records its model and tool calls on a tape
// (gateway.Tape), and its clock, nonce and execution id are pinned for the
// session, so a re-run sends the same requests and is answered from the
// tape without calling anything, until a request changes. A re-run starts
// from the top and fast-forwards, without stopping, to a target point: the
// entry of the frame to restart, or the stop to step back to. Points are
// named by their frame, kind and line and counted, so the n-th occurrence
// of a point is the same place in every re-run.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/run"
	godap "github.com/google/go-dap"
	lua "github.com/yuin/gopher-lua"
)

// pointID is the n-th occurrence of a pause point in a run.
type pointID struct {
	key string
	n   int
}

// count names and counts p; needs s.mu. Section entries are named without
// their line, so that a prompt edited above a section still finds it.
// A re-run fast-forwards through every point before its target, so the
// name of a point is built once per VM and place (names).
func (d *debugRun) count(p *run.PausePoint) pointID {
	nk := nameKey{vm: p.VM.ID, kind: p.Kind, alias: p.Alias}
	if p.Kind != run.PointSection {
		nk.line = p.Line
	}
	key, ok := d.names[nk]
	if !ok {
		key = frameName(p.VM) + "|" + p.Kind.String()
		if p.Kind != run.PointSection {
			key += "|" + strconv.Itoa(p.Line)
			if p.Kind == run.PointTool {
				key += "|" + p.Alias
			}
		}
		if d.names == nil {
			d.names = map[nameKey]string{}
		}
		d.names[nk] = key
	}
	if d.seen == nil {
		d.seen = map[string]int{}
	}
	d.seen[key]++
	d.seq++
	id := pointID{key, d.seen[key]}
	if d.seq == 1 {
		d.first = id
	}
	return id
}

// nameKey is what a point's name depends on: the VM's entry (its id, not
// the VM, which the map would keep alive), the kind and the place.
type nameKey struct {
	vm    int64
	kind  run.PointKind
	line  int
	alias string
}

// plan is where a re-run stops first, and why.
type plan struct {
	target pointID
	reason string
	// back is set for a step back: reaching the target starts the run
	// ahead for the next one (ahead.go).
	back bool
}

// stopRec is one stop of a run.
type stopRec struct {
	id     pointID
	seq    int
	reason string
}

type editKind int

const (
	editVar editKind = iota
	editGlobal
	editLocal
	editStore
	editReply
	editExpr
)

// edit is one change made at a stop: target (a Lua lvalue, a store path)
// set to value (Lua source, or text for a reply or a store file).
type edit struct {
	kind   editKind
	target string
	value  string
	// at is the stop it was made at, seq its order in the run.
	at  pointID
	seq int
	// name and lua locate a local (editLocal).
	name string
	lua  int
}

func (e *edit) String() string {
	switch e.kind {
	case editReply:
		return "reply = " + strconv.Quote(e.value)
	case editStore:
		return "store " + e.target + " = " + strconv.Quote(e.value)
	}
	return e.target + " = " + e.value
}

// applyEdits makes es at p, on the run's goroutine (the VM is idle in
// Pause); failures go to the console.
func (d *debugRun) applyEdits(p *run.PausePoint, lv *level, es []*edit) {
	for _, e := range es {
		if err := d.apply(p, lv, e); err != nil {
			d.output("stderr", fmt.Sprintf("re-run: could not re-apply %s: %v\n", e, err), p.Line)
		}
	}
}

// apply makes one edit in p's VM.
func (d *debugRun) apply(p *run.PausePoint, lv *level, e *edit) error {
	vm := p.VM
	switch e.kind {
	case editReply:
		if p.Kind != run.PointReply {
			return fmt.Errorf("the run is not stopped after a model reply")
		}
		p.Text = e.value
		vm.L.SetGlobal("reply", lua.LString(e.value))
		return nil
	case editStore:
		return vm.Store().Write(e.target, e.value)
	case editLocal:
		if lv == nil || e.lua >= len(lv.lua) {
			return fmt.Errorf("the Lua frame has returned")
		}
		names, vals := lv.locals(e.lua)
		v, err := vm.Eval(e.value, names, vals)
		if err != nil {
			return err
		}
		return vm.SetLocal(lv.lua[e.lua].Level, e.name, v)
	}
	var names []string
	var vals []lua.LValue
	if lv != nil && p.Kind == run.PointLine && len(lv.lua) > 0 {
		names, vals = lv.locals(e.lua)
	}
	_, err := vm.Eval(e.target+" = ("+e.value+")", names, vals)
	return err
}

// luaIndex is k as a Lua index: [n] for an integer key, ["k"] otherwise.
func luaIndex(k string) string {
	if _, err := strconv.Atoi(k); err == nil {
		return "[" + k + "]"
	}
	return "[" + strconv.Quote(k) + "]"
}

// lvalue is the Lua lvalue of a variable shown under ref.
func lvalue(root string, path []string, name string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, k := range append(append([]string(nil), path...), name) {
		b.WriteString(luaIndex(k))
	}
	return b.String()
}

// textValue is a value for a text target (a reply, a store file): a Lua
// string literal or expression when it is one, else the text as typed.
func textValue(vm *run.VM, names []string, vals []lua.LValue, value string) (string, error) {
	if _, err := vm.L.LoadString("return " + value); err != nil {
		return value, nil
	}
	v, err := vm.Eval(value, names, vals)
	if err != nil {
		return "", err
	}
	if s, ok := v.(lua.LString); ok {
		return string(s), nil
	}
	if n, ok := v.(lua.LNumber); ok {
		return n.String(), nil
	}
	return "", fmt.Errorf("a %s is not text: give a string", v.Type())
}

// setVariable answers setVariable: the variable named name under ref gets
// value, now, and again at the same point of every re-run.
func (s *server) setVariable(a godap.SetVariableArguments, reply func(godap.Variable, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.cur
	if d == nil || !d.stopped {
		reply(godap.Variable{}, errRunning)
		return
	}
	if a.VariablesReference < 1 || a.VariablesReference > len(d.refs) {
		reply(godap.Variable{}, fmt.Errorf("unknown variables reference %d (references last until the run goes on)", a.VariablesReference))
		return
	}
	r := d.refs[a.VariablesReference-1]
	e := &edit{value: a.Value}
	switch r.scope {
	case scopeVar:
		e.kind, e.target = editVar, lvalue("var", r.path, a.Name)
	case scopeGlobals:
		if len(r.path) == 0 {
			e.kind, e.target = editGlobal, a.Name
		} else {
			e.kind, e.target = editGlobal, lvalue(r.path[0], r.path[1:], a.Name)
		}
	case scopeLocals:
		if len(r.path) == 0 {
			e.kind, e.name, e.lua = editLocal, a.Name, r.lua
		} else {
			e.kind, e.target, e.lua = editExpr, lvalue(r.path[0], r.path[1:], a.Name), r.lua
		}
	case scopeStore:
		e.kind, e.target = editStore, a.Name
	case scopeRun:
		if a.Name != "reply" || len(r.path) > 0 {
			reply(godap.Variable{}, fmt.Errorf("%s cannot be changed: in the Run scope only `reply` can, at a stop after a model reply", a.Name))
			return
		}
		e.kind = editReply
	default:
		reply(godap.Variable{}, fmt.Errorf("%s cannot be changed here: change locals, globals, var keys, store files, or the reply at a stop after a model round", a.Name))
		return
	}
	s.change(d, r.t, r.lv, e, func(v godap.Variable, err error) {
		if err == nil {
			v.Name = a.Name
		}
		reply(v, err)
	})
}

// setExpression answers setExpression: expression (an lvalue) gets value.
func (s *server) setExpression(a godap.SetExpressionArguments, reply func(godap.Variable, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.cur
	if d == nil || !d.stopped {
		reply(godap.Variable{}, errRunning)
		return
	}
	lv, luaIdx, t := d.level(a.FrameId)
	if lv == nil {
		reply(godap.Variable{}, fmt.Errorf("no frame %d", a.FrameId))
		return
	}
	e := &edit{kind: editExpr, target: strings.TrimSpace(a.Expression), value: a.Value, lua: luaIdx}
	if e.target == "reply" && lv.point.Kind == run.PointReply {
		e.kind = editReply
	} else if names, _ := lv.locals(luaIdx); lv.point.Kind == run.PointLine && slices.Contains(names, e.target) {
		e.kind, e.name = editLocal, e.target
	}
	s.change(d, t, lv, e, reply)
}

// change makes e on t's goroutine and records it; needs s.mu.
func (s *server) change(d *debugRun, t *thread, lv *level, e *edit, reply func(godap.Variable, error)) {
	if t == nil || lv == nil {
		reply(godap.Variable{}, fmt.Errorf("the frame is gone"))
		return
	}
	err := t.post(func(held bool) {
		if !held {
			reply(godap.Variable{}, errRunning)
			return
		}
		s.mu.Lock()
		p := lv.pp
		s.mu.Unlock()
		if p == nil {
			reply(godap.Variable{}, errRunning)
			return
		}
		var names []string
		var vals []lua.LValue
		if p.Kind == run.PointLine && len(lv.lua) > 0 {
			names, vals = lv.locals(e.lua)
		}
		if e.kind == editReply || e.kind == editStore {
			text, err := textValue(p.VM, names, vals, e.value)
			if err != nil {
				reply(godap.Variable{}, err)
				return
			}
			e.value = text
		}
		if err := d.apply(p, lv, e); err != nil {
			reply(godap.Variable{}, err)
			return
		}
		var v lua.LValue
		switch e.kind {
		case editReply:
			v = lua.LString(e.value)
		case editStore:
			text, _ := p.VM.Store().Read(e.target)
			v = lua.LString(text)
		case editLocal:
			names, vals := lv.locals(e.lua)
			for i, n := range names {
				if n == e.name {
					v = vals[i]
				}
			}
		default:
			v, _ = p.VM.Eval(e.target, names, vals)
		}
		s.mu.Lock()
		e.at, e.seq = lv.at, d.seq
		d.edits = append(d.edits, e)
		d.refThread = t
		out := d.luaVar(e.target, v)
		s.mu.Unlock()
		reply(out, nil)
	})
	if err != nil {
		reply(godap.Variable{}, err)
	}
}

// rerun restarts the run from the top and fast-forwards it to target,
// answering every call the last run made from its tape; edits are made
// at their points on the way (applyAt) and history is the stops the new
// run starts with. Needs s.mu not held.
func (s *server) rerun(pl *plan, applyAt map[pointID][]*edit, history []stopRec, edits []*edit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropAheadLocked()
	if old := s.cur; old != nil {
		if old.sess == nil {
			// Still setting up: let it end first.
			s.mu.Unlock()
			s.stopRun(true)
			s.mu.Lock()
		} else {
			// The stopped run hands its tape over and is cancelled; the
			// re-run starts at once, while it unwinds.
			s.tape = old.sess.Carry()
			old.replaced, old.quiet = true, true
			old.cancel()
			s.cur = nil
		}
	}
	if s.launch == nil || s.cur != nil {
		return
	}
	s.startLocked()
	d := s.cur
	d.plan = pl
	d.applyAt = applyAt
	d.history = history
	d.edits = edits
}

// errNoWhatIf is the answer when the run cannot be re-run.
func errNoWhatIf(what string) error {
	return fmt.Errorf("%s needs a stopped run", what)
}

// restartFrame re-runs the selected frame from its section's entry, with
// the state it had there plus the edits made since (var keys, globals and
// store files at the entry; replies at their own round).
func (s *server) restartFrame(frame int) error {
	s.mu.Lock()
	d := s.cur
	if d == nil || !d.stopped {
		s.mu.Unlock()
		return errNoWhatIf("restartFrame")
	}
	lv, _, _ := d.level(frame)
	if lv == nil || lv.entry.key == "" {
		s.mu.Unlock()
		return fmt.Errorf("no frame %d", frame)
	}
	target, tseq := lv.entry, lv.entrySeq
	applyAt := map[pointID][]*edit{}
	var kept []*edit
	for _, e := range d.edits {
		switch {
		case e.seq < tseq || e.kind == editReply:
			applyAt[e.at] = append(applyAt[e.at], e)
		case e.kind == editLocal:
			d.output("console", fmt.Sprintf("re-run: the local %s does not exist at the entry of %s; its edit is dropped\n", e.name, lv.name), 0)
			continue
		default:
			// Made again at the entry, which is where the new run has it.
			moved := *e
			moved.at, moved.seq = target, tseq
			e = &moved
			applyAt[target] = append(applyAt[target], e)
		}
		kept = append(kept, e)
	}
	var history []stopRec
	for _, h := range d.history {
		if h.seq < tseq {
			history = append(history, h)
		}
	}
	s.mu.Unlock()
	s.rerun(&plan{target: target, reason: "restart"}, applyAt, history, kept)
	return nil
}

// stepBack re-runs to the stop before the current one (back), or to the
// last stop before it at a breakpoint, else the run's first point
// (reverseContinue). Edits made after that stop are undone. The run ahead
// (ahead.go) is adopted when it was started for this step; then the
// returned function, called after the response, shows its stop.
func (s *server) stepBack(toBreakpoint bool) (func(), error) {
	s.mu.Lock()
	d := s.cur
	if d == nil || !d.stopped || len(d.history) == 0 {
		s.mu.Unlock()
		return nil, errNoWhatIf("step back")
	}
	p := d.backPlan(toBreakpoint)
	s.mu.Unlock()
	if a := s.takeAhead(p); a != nil {
		return s.adopt(a), nil
	}
	s.rerun(&plan{target: p.target, reason: p.reason, back: true}, p.applyAt, p.history, p.kept)
	return nil, nil
}

// diverged tells the console where a re-run's requests left the last
// run's.
func (d *debugRun) diverged(div *gateway.Divergence) {
	d.output("console", "re-run: the run diverged from the previous one here: "+div.String()+"\n", 0)
}
