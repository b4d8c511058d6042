package dap

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/run"
	godap "github.com/google/go-dap"
	lua "github.com/yuin/gopher-lua"
)

// hiddenGlobals are run values the Run scope shows, kept out of Globals
// even when the VM sets them after its section entry (reply, after a
// prose block).
var hiddenGlobals = map[string]bool{"args": true, "reply": true, "item": true, "sys": true, "var": true}

var errRunning = errors.New("the run is not paused: pause it or wait for a breakpoint")

// threads lists the run's threads: the walk and the live fanout arms.
func (s *server) threads() []godap.Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []godap.Thread{{Id: mainThread, Name: "main"}}
	if d := s.cur; d != nil {
		var ids []int
		for id := range d.threads {
			if id != mainThread {
				ids = append(ids, id)
			}
		}
		sort.Ints(ids)
		for _, id := range ids {
			out = append(out, godap.Thread{Id: id, Name: d.threads[id].name})
		}
	}
	return out
}

// frameID numbers a thread's frame by its depth and, at a statement stop,
// the Lua function (0 innermost).
func frameID(thread, depth, lua int) int { return (thread*1000+depth)*100 + lua + 1 }

// splitFrameID undoes frameID.
func splitFrameID(id int) (thread, depth, lua int) {
	x := id - 1
	return x / 100 / 1000, x / 100 % 1000, x % 100
}

// stackTrace is the thread's chain of sections, innermost first.
func (s *server) stackTrace(threadID int) []godap.StackFrame {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.cur
	if d == nil || !d.stopped {
		return nil
	}
	t := d.threads[threadID]
	if t == nil {
		return nil
	}
	var out []godap.StackFrame
	for depth := len(t.levels) - 1; depth >= 0; depth-- {
		lv := t.levels[depth]
		if lv == nil {
			continue
		}
		p := lv.point
		name := lv.name
		if p.Kind == run.PointLine && len(lv.lua) > 0 {
			for i, f := range lv.lua {
				n := name + " (lua)"
				if f.Name != "" {
					n = f.Name + " in " + name
				}
				out = append(out, godap.StackFrame{Id: frameID(t.id, depth, i), Name: n, Source: d.src, Line: f.Line, Column: 1})
			}
			continue
		}
		switch p.Kind {
		case run.PointProse:
			name += " (prose)"
		case run.PointTool:
			name += " (tool " + p.Alias + ")"
		case run.PointLua:
			name += " (lua)"
		}
		out = append(out, godap.StackFrame{Id: frameID(t.id, depth, 0), Name: name, Source: d.src, Line: p.Line, Column: 1, EndLine: p.EndLine})
	}
	return out
}

// level finds a frame of a stopped run, and the index of its Lua function
// (statement stops); needs s.mu.
func (d *debugRun) level(frame int) (*level, int, *thread) {
	if frame == 0 {
		// No frame given: the innermost frame of the first held thread.
		ids := make([]int, 0, len(d.threads))
		for id := range d.threads {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		for _, id := range ids {
			if t := d.threads[id]; t.held && len(t.levels) > 0 && t.levels[len(t.levels)-1] != nil {
				return t.levels[len(t.levels)-1], 0, t
			}
		}
		return nil, 0, nil
	}
	th, depth, lua := splitFrameID(frame)
	t := d.threads[th]
	if t == nil || depth < 0 || lua < 0 || depth >= len(t.levels) || t.levels[depth] == nil {
		return nil, 0, nil
	}
	lv := t.levels[depth]
	if lua > 0 && lua >= len(lv.lua) {
		return nil, 0, nil
	}
	return lv, lua, t
}

// locals are the locals of a level's Lua function (statement stops).
func (lv *level) locals(lua int) ([]string, []lua.LValue) {
	if lua >= len(lv.lua) {
		return nil, nil
	}
	return lv.point.VM.Locals(lv.lua[lua].Level)
}

// varRef is a variables reference: f lists the variables, on the
// goroutine of thread t (f may read its VMs). scope and path say where
// its variables live, for setVariable: the scope it is under and the keys
// from the scope to it; lv and lua are the frame.
type varRef struct {
	t     *thread
	f     func() []godap.Variable
	scope string
	path  []string
	lv    *level
	lua   int
}

// The scopes a stop shows.
const (
	scopeLocals  = "Locals"
	scopeRequest = "Request"
	scopeTool    = "Tool call"
	scopeRun     = "Run"
	scopeVar     = "var"
	scopeGlobals = "Globals"
	scopeStore   = "Store"
	scopeTools   = "Tools"
)

// ref hands out a variables reference of the thread d.refThread: the
// child name of the reference being expanded, if any; needs s.mu.
func (d *debugRun) ref(name string, f func() []godap.Variable) int {
	r := varRef{t: d.refThread, f: f}
	if p := d.expanding; p != nil {
		r.scope, r.lv, r.lua = p.scope, p.lv, p.lua
		r.path = append(append([]string(nil), p.path...), name)
	}
	d.refs = append(d.refs, r)
	return len(d.refs)
}

// scopes are what a frame shows: the run values, var, the VM's own
// globals, the store, the tools in scope and, at a prose stop, the
// request, at a tool stop, the call.
func (s *server) scopes(frame int) ([]godap.Scope, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.cur
	if d == nil || !d.stopped {
		return nil, errRunning
	}
	lv, luaIdx, t := d.level(frame)
	if lv == nil {
		return nil, fmt.Errorf("no frame %d", frame)
	}
	if !t.held {
		return nil, fmt.Errorf("thread %d (%s) is not stopped: its VM is running; pick a frame of a stopped thread", t.id, t.name)
	}
	d.refThread = t
	d.expanding = nil
	p := lv.point
	vm := p.VM
	sc := func(name string, f func() []godap.Variable) godap.Scope {
		d.refs = append(d.refs, varRef{t: t, f: f, scope: name, lv: lv, lua: luaIdx})
		return godap.Scope{Name: name, VariablesReference: len(d.refs)}
	}
	var out []godap.Scope
	if p.Kind == run.PointLine {
		out = append(out, sc(scopeLocals, func() []godap.Variable {
			names, vals := lv.locals(luaIdx)
			out := make([]godap.Variable, len(names))
			for i, n := range names {
				out[i] = d.luaVar(n, vals[i])
			}
			return out
		}))
	}
	if p.Kind == run.PointProse {
		out = append(out, sc(scopeRequest, func() []godap.Variable {
			var vs []godap.Variable
			for i, m := range vm.History() {
				vs = append(vs, d.jsonVar(strconv.Itoa(i+1)+" "+m.Role, m.Content))
			}
			return append(vs, d.jsonVar(strconv.Itoa(len(vs)+1)+" user", p.Text))
		}))
	}
	if p.Kind == run.PointTool {
		out = append(out, sc(scopeTool, func() []godap.Variable {
			var args any
			if json.Unmarshal([]byte(p.Args), &args) != nil {
				args = p.Args
			}
			return []godap.Variable{d.jsonVar("alias", p.Alias), d.jsonVar("args", args)}
		}))
	}
	out = append(out,
		sc(scopeRun, func() []godap.Variable {
			reply := vm.L.GetGlobal("reply")
			if p.Kind == run.PointReply {
				// After a model round: the reply the rest of the run will see.
				reply = lua.LString(p.Text)
				if lv.pp != nil {
					reply = lua.LString(lv.pp.Text)
				}
			}
			vs := []godap.Variable{
				d.luaVar("args", vm.L.GetGlobal("args")),
				d.luaVar("reply", reply),
			}
			if vm.ArmKey() != nil {
				vs = append(vs, d.luaVar("item", vm.L.GetGlobal("item")))
			}
			keys, vals := vm.Sys()
			vs = append(vs, godap.Variable{Name: "sys", Value: fmt.Sprintf("{%d fields}", len(keys)), VariablesReference: d.ref("sys", func() []godap.Variable {
				out := make([]godap.Variable, len(keys))
				for i, k := range keys {
					out[i] = d.luaVar(k, vals[i])
				}
				return out
			})})
			model := vm.BoundModel()
			if model == "" {
				model = "(none bound)"
			}
			return append(vs, godap.Variable{Name: "model", Value: model})
		}),
		sc(scopeVar, func() []godap.Variable {
			var v any
			_ = json.Unmarshal([]byte(vm.VarJSON()), &v)
			return d.children(v)
		}),
		sc(scopeGlobals, func() []godap.Variable {
			var names []string
			vm.L.G.Global.ForEach(func(k, _ lua.LValue) {
				ks, ok := k.(lua.LString)
				if ok && !lv.builtins[string(ks)] && !hiddenGlobals[string(ks)] && !strings.HasPrefix(string(ks), "(") {
					names = append(names, string(ks))
				}
			})
			sort.Strings(names)
			out := make([]godap.Variable, 0, len(names))
			for _, n := range names {
				out = append(out, d.luaVar(n, vm.L.GetGlobal(n)))
			}
			return out
		}),
		sc(scopeStore, func() []godap.Variable {
			snap := vm.Store().Snapshot()
			paths := make([]string, 0, len(snap))
			for p := range snap {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			out := make([]godap.Variable, 0, len(paths))
			for _, p := range paths {
				out = append(out, godap.Variable{Name: p, Value: strconv.Quote(snap[p]), Type: fmt.Sprintf("%d bytes", len(snap[p]))})
			}
			return out
		}),
		sc(scopeTools, func() []godap.Variable {
			var out []godap.Variable
			for _, t := range vm.ToolScope() {
				v := godap.Variable{Name: t.Alias, Value: t.Tool}
				if t.Local {
					v.Type = "local tool"
				}
				out = append(out, v)
			}
			return out
		}),
	)
	return out, nil
}

// variables expands a reference handed out at this stop, on the goroutine
// of the thread it belongs to, and answers with reply there.
func (s *server) variables(ref int, reply func([]godap.Variable, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.cur
	if d == nil || !d.stopped {
		reply(nil, errRunning)
		return
	}
	if ref < 1 || ref > len(d.refs) {
		reply(nil, fmt.Errorf("unknown variables reference %d (references last until the run goes on)", ref))
		return
	}
	r := d.refs[ref-1]
	err := r.t.post(func(held bool) {
		if !held {
			reply(nil, errRunning)
			return
		}
		s.mu.Lock()
		// f may hand out references of its own, of the same thread.
		d.refThread, d.expanding = r.t, &r
		out := r.f()
		d.expanding = nil
		s.mu.Unlock()
		if out == nil {
			out = []godap.Variable{}
		}
		reply(out, nil)
	})
	if err != nil {
		reply(nil, err)
	}
}

// luaVar shows a Lua value; tables expand. Needs s.mu.
func (d *debugRun) luaVar(name string, v lua.LValue) godap.Variable {
	switch x := v.(type) {
	case lua.LString:
		return godap.Variable{Name: name, Value: strconv.Quote(string(x)), Type: "string"}
	case *lua.LTable:
		n := 0
		x.ForEach(func(lua.LValue, lua.LValue) { n++ })
		return godap.Variable{Name: name, Value: fmt.Sprintf("table (%d entries)", n), Type: "table", VariablesReference: d.ref(name, func() []godap.Variable {
			type kv struct {
				k string
				v lua.LValue
			}
			var kvs []kv
			x.ForEach(func(k, v lua.LValue) { kvs = append(kvs, kv{k.String(), v}) })
			sort.Slice(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
			out := make([]godap.Variable, len(kvs))
			for i, e := range kvs {
				out[i] = d.luaVar(e.k, e.v)
			}
			return out
		})}
	case nil:
		return godap.Variable{Name: name, Value: "nil", Type: "nil"}
	}
	return godap.Variable{Name: name, Value: v.String(), Type: v.Type().String()}
}

// jsonVar shows a JSON value; objects and arrays expand. Needs s.mu.
func (d *debugRun) jsonVar(name string, v any) godap.Variable {
	switch x := v.(type) {
	case string:
		return godap.Variable{Name: name, Value: strconv.Quote(x), Type: "string"}
	case map[string]any:
		return godap.Variable{Name: name, Value: fmt.Sprintf("{%d keys}", len(x)), Type: "object", VariablesReference: d.ref(name, func() []godap.Variable { return d.children(x) })}
	case []any:
		return godap.Variable{Name: name, Value: fmt.Sprintf("[%d items]", len(x)), Type: "array", VariablesReference: d.ref(name, func() []godap.Variable { return d.children(x) })}
	case nil:
		return godap.Variable{Name: name, Value: "nil", Type: "nil"}
	}
	b, _ := json.Marshal(v)
	return godap.Variable{Name: name, Value: string(b)}
}

func (d *debugRun) children(v any) []godap.Variable {
	var out []godap.Variable
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, d.jsonVar(k, x[k]))
		}
	case []any:
		for i, e := range x {
			out = append(out, d.jsonVar(strconv.Itoa(i+1), e))
		}
	}
	return out
}

// evaluate runs a Lua expression in a paused VM (the REPL, hovers and
// watches), under the VM's sandbox and a budget of its own (run.VM.Eval),
// on the goroutine of the frame's thread, and answers with reply there.
// The request loop does not wait for it.
func (s *server) evaluate(a godap.EvaluateArguments, reply func(godap.EvaluateResponseBody, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.cur
	if d == nil || !d.stopped {
		reply(godap.EvaluateResponseBody{}, errRunning)
		return
	}
	lv, luaIdx, t := d.level(a.FrameId)
	if lv == nil {
		reply(godap.EvaluateResponseBody{}, fmt.Errorf("no frame %d", a.FrameId))
		return
	}
	err := t.post(func(held bool) {
		if !held {
			reply(godap.EvaluateResponseBody{}, errRunning)
			return
		}
		names, vals := lv.locals(luaIdx)
		v, err := lv.point.VM.Eval(a.Expression, names, vals)
		if err != nil {
			reply(godap.EvaluateResponseBody{}, err)
			return
		}
		s.mu.Lock()
		d.refThread, d.expanding = t, nil
		r := d.luaVar("", v)
		s.mu.Unlock()
		reply(godap.EvaluateResponseBody{Result: r.Value, Type: r.Type, VariablesReference: r.VariablesReference}, nil)
	})
	if err != nil {
		reply(godap.EvaluateResponseBody{}, err)
	}
}
