package run

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/loop"
	"github.com/forge-lsp/forge-lsp/engine/luaast"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/tools"
	lua "github.com/yuin/gopher-lua"
)

// Hook is an Observer that also sees every block before it runs and every
// store write, and can hold the run at those points: run traces and the
// debugger are Hooks. The engine looks for it once, when the run starts
// (a type assertion on Config.Observer), so a run whose observer is not a
// Hook pays one nil check per block and nothing else.
type Hook interface {
	Observer
	// Pause is called on the goroutine running the VM, before the VM's
	// first block (PointSection), before each Lua block (PointLua) and
	// before each prose block's model round, after substitution
	// (PointProse). The VM is idle while Pause runs, so the hook may read
	// it (PausePoint.VM). A non-nil error ends the run with it.
	Pause(p *PausePoint) error
	// StoreWrite is called after each successful store change.
	StoreWrite(ev StoreEvent)
}

// VarHook is a Hook that also sees every change of `var`: run traces
// record them, so that two runs compare by their var changes too.
type VarHook interface {
	Hook
	// VarWrite is called after each change of a var key (an assignment,
	// a deletion, table.insert/remove/sort on a var array).
	VarWrite(ev VarEvent)
}

// VarEvent is one change of `var`.
type VarEvent struct {
	SectionID int64
	Section   string
	// Path is the key changed, as Lua writes it (`var.notes`,
	// `var.items[2]`); Value its new value as compact JSON, at most
	// MaxVarEventValue bytes (cut with "…"); Deleted is set when the key
	// was removed.
	Path    string
	Value   string
	Deleted bool
	Line    int
}

// MaxVarEventValue bounds the JSON a VarEvent carries.
const MaxVarEventValue = 4096

// varEvent reports a var change to a VarHook, if the run has one.
func (vm *VM) varEvent(L *lua.LState, path string, x any, del bool) {
	h, ok := vm.r.hook.(VarHook)
	if !ok {
		return
	}
	ev := VarEvent{SectionID: vm.ID, Section: vm.Name(), Path: path, Deleted: del, Line: vm.callerLine(L)}
	if !del {
		ev.Value = compactJSON(x)
		if len(ev.Value) > MaxVarEventValue {
			cut := MaxVarEventValue
			for cut > 0 && !utf8.RuneStart(ev.Value[cut]) {
				cut--
			}
			ev.Value = ev.Value[:cut] + "…"
		}
	}
	h.VarWrite(ev)
}

// LineHook is a Hook that also stops before Lua statements. Before each
// Lua block runs, the engine asks it for the file lines to stop at in that
// chunk; for none, the block runs its normal bytecode, so a run pays
// nothing (and its instruction count does not change) unless a chunk has
// line stops. Otherwise the chunk is compiled with a call of a hidden
// function before those statements (luaast.InstrumentLines), which calls
// Pause with PointLine.
type LineHook interface {
	Hook
	// BreakLines returns the file lines of c to stop at when vm runs it
	// (lines from c.StmtLines), nil for none.
	BreakLines(vm *VM, c *parse.Chunk) []int
}

// PointKind says where a run is held.
type PointKind int

// The pause points.
const (
	PointSection PointKind = iota
	PointLua
	PointProse
	// PointTool is before a tool call the model asked for runs.
	PointTool
	// PointLine is before a Lua statement, in a chunk a LineHook asked
	// to stop in.
	PointLine
	// PointReply is after a prose block's model rounds, before the rest
	// of the section sees the reply. Text is the reply; a hook may change
	// it (a debugger's "what if the model had answered this").
	PointReply
)

func (k PointKind) String() string {
	switch k {
	case PointSection:
		return "section"
	case PointLua:
		return "lua"
	case PointProse:
		return "prose"
	case PointTool:
		return "tool"
	case PointLine:
		return "line"
	case PointReply:
		return "reply"
	}
	return "unknown"
}

// PausePoint describes where the run is about to go on.
type PausePoint struct {
	Kind PointKind
	// VM is the VM the point belongs to; valid only during Pause. A hook
	// must not keep the point itself past Pause either: the statement
	// points of a chunk (PointLine) share one.
	VM *VM
	// Line and EndLine are the 1-based file lines of the heading
	// (PointSection) or the block.
	Line, EndLine int
	// Chunk is the Lua block (PointLua); Prose the prose block and Text
	// its substituted text, the user message about to be sent (PointProse),
	// or the model's reply (PointReply: the hook may replace it, and the
	// run goes on with the new text).
	Chunk *parse.Chunk
	Prose *parse.Prose
	Text  string
	// Alias and Args are the tool call (PointTool): the alias the model
	// called and its JSON arguments. Line is then the prose block's.
	Alias, Args string
}

// StoreEvent is one store change.
type StoreEvent struct {
	SectionID int64
	Section   string
	// Op is write, append, replace or delete.
	Op, Path string
	// Bytes is the file's size after the change (0 after delete).
	Bytes int
	// Line is the prompt file line of the call, 0 when unknown.
	Line int
}

// pause calls the hook, if any, at a point of vm.
func (vm *VM) pause(kind PointKind, b *parse.Block, text string) error {
	_, err := vm.pauseText(kind, b, text)
	return err
}

// pauseText is pause, returning the point's Text as the hook left it
// (PointReply lets the hook change the reply).
func (vm *VM) pauseText(kind PointKind, b *parse.Block, text string) (string, error) {
	h := vm.r.hook
	if h == nil {
		return text, nil
	}
	pp := &PausePoint{Kind: kind, VM: vm, Text: text}
	f := vm.r.p.File
	switch kind {
	case PointSection:
		if vm.Section != nil {
			pp.Line = vm.r.sectionLine(vm.Section)
		} else if vm.r.p.H1 != nil && f != nil {
			pp.Line = f.Line(vm.r.p.H1.Span.Start)
		}
		pp.EndLine = pp.Line
	default:
		if b != nil && f != nil {
			sp := b.Span()
			pp.Line, pp.EndLine = f.Line(sp.Start), f.Line(max(sp.Start, sp.End-1))
		}
		pp.Chunk, pp.Prose = b.Chunk, b.Prose
	}
	if err := h.Pause(pp); err != nil {
		return text, AsRunError(err)
	}
	return pp.Text, nil
}

// chunkProto is the bytecode vm runs for c: the instrumented one when a
// LineHook wants line stops in it. restore undoes the set-up.
//
// The instrumented chunk binds the line function when it starts
// (luaast.InstrumentLines), so the functions it defines (a global helper
// the next block calls, a local tool handler the model calls later) keep
// a valid line function after the block ends: it maps their lines with c
// and asks the hook, which stops only where a breakpoint or a step says
// so.
func (vm *VM) chunkProto(c *parse.Chunk, proto *lua.FunctionProto) (_ *lua.FunctionProto, restore func()) {
	lh, ok := vm.r.hook.(LineHook)
	if !ok {
		return proto, nil
	}
	lines := lh.BreakLines(vm, c)
	if len(lines) == 0 {
		return proto, nil
	}
	p, err := compileLines(c, lines)
	if err != nil {
		return proto, nil
	}
	g := vm.L.G.Global
	// One point serves every statement of the chunk (a re-run
	// fast-forwarding through a loop passes thousands): the hook does not
	// keep it past Pause. busy covers a Pause that runs Lua reaching the
	// line function again; that one gets a point of its own.
	pp, busy := &PausePoint{}, false
	g.RawSetString(luaast.LineFunc, vm.L.NewFunction(func(L *lua.LState) int {
		if vm.evaluating {
			// Code the debug console runs (or a breakpoint condition)
			// does not stop: the VM is already held.
			return 0
		}
		line := c.FirstLine + L.CheckInt(1) - 1
		p := pp
		if busy {
			p = &PausePoint{}
		} else {
			busy = true
		}
		*p = PausePoint{Kind: PointLine, VM: vm, Line: line, EndLine: line, Chunk: c}
		err := lh.Pause(p)
		if p == pp {
			*p, busy = PausePoint{}, false
		}
		if err != nil {
			vm.RaiseError(err)
		}
		return 0
	}))
	return p, func() { g.RawSetString(luaast.LineFunc, lua.LNil) }
}

// LuaFrame is a Lua function running in the chunk a VM is stopped in.
type LuaFrame struct {
	// Name is the function's name ("" for the chunk itself).
	Name string
	// Line is the file line it is at.
	Line int
	// Level is its call-stack level, for Locals.
	Level int
}

// LuaFrames lists the Lua functions of the VM's chunks on its call stack
// (the running chunk, and functions of earlier blocks it or a tool call
// runs), innermost first, when the VM is held at a PointLine.
func (vm *VM) LuaFrames() []LuaFrame {
	var out []LuaFrame
	for level := 1; ; level++ {
		dbg, ok := vm.L.GetStack(level)
		if !ok {
			break
		}
		if _, err := vm.L.GetInfo("nSl", dbg, lua.LNil); err != nil || dbg.CurrentLine <= 0 {
			continue
		}
		c := vm.chunkNamed(dbg.Source)
		if c == nil {
			continue
		}
		name := dbg.Name
		if dbg.What == "main" {
			name = ""
		}
		out = append(out, LuaFrame{Name: name, Line: c.FirstLine + dbg.CurrentLine - 1, Level: level})
	}
	return out
}

// Locals returns the active local variables of the Lua function at level
// (from LuaFrames), in declaration order; internal ones ("(for index)")
// are left out.
func (vm *VM) Locals(level int) (names []string, vals []lua.LValue) {
	dbg, ok := vm.L.GetStack(level)
	if !ok {
		return nil, nil
	}
	for i := 1; ; i++ {
		name, v := vm.L.GetLocal(dbg, i)
		if name == "" {
			break
		}
		if strings.HasPrefix(name, "(") {
			continue
		}
		names = append(names, name)
		vals = append(vals, v)
	}
	return names, vals
}

// SetLocal assigns the local variable name of the Lua function at level
// (from LuaFrames). Only for a VM held in Pause, on the goroutine that
// runs it.
func (vm *VM) SetLocal(level int, name string, v lua.LValue) error {
	dbg, ok := vm.L.GetStack(level)
	if !ok {
		return fmt.Errorf("the Lua frame has returned")
	}
	for i := 1; ; i++ {
		n, _ := vm.L.GetLocal(dbg, i)
		if n == "" {
			break
		}
		if n == name {
			vm.L.SetLocal(dbg, i, v)
			return nil
		}
	}
	return fmt.Errorf("no local %q in this frame", name)
}

// pauseTools wraps the scope's tool calls so that the hook is asked
// before each one runs. Only called when a hook is installed.
func (vm *VM) pauseTools(scope []loop.Binding, prose *parse.Prose) []loop.Binding {
	out := make([]loop.Binding, len(scope))
	line := 0
	if f := vm.r.p.File; f != nil && prose != nil {
		line = f.Line(prose.Span.Start)
	}
	for i, b := range scope {
		call, alias := b.Call, b.Alias
		b.Call = func(ctx context.Context, args string) (tools.Output, error) {
			if err := vm.r.hook.Pause(&PausePoint{Kind: PointTool, VM: vm, Line: line, EndLine: line, Prose: prose, Alias: alias, Args: args}); err != nil {
				return tools.Output{}, err
			}
			return call(ctx, args)
		}
		out[i] = b
	}
	return out
}

// storeEvent reports a store change to the hook.
func (vm *VM) storeEvent(L *lua.LState, op, p string) {
	h := vm.r.hook
	if h == nil {
		return
	}
	n := 0
	if s, err := vm.r.store.Read(p); err == nil {
		n = len(s)
	}
	h.StoreWrite(StoreEvent{SectionID: vm.ID, Section: vm.Name(), Op: op, Path: p, Bytes: n, Line: vm.callerLine(L)})
}

// callerLine is the prompt file line of the Lua code calling a host
// function, 0 when unknown.
// The caller may be a function of an earlier block (a local tool's
// handler the model called): its own chunk maps the line.
func (vm *VM) callerLine(L *lua.LState) int {
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.CurrentLine > 0 {
			if c := vm.chunkNamed(dbg.Source); c != nil {
				return c.FirstLine + dbg.CurrentLine - 1
			}
		}
	}
	return 0
}

// The accessors below are for a hook holding the VM in Pause.

// Store is the run's store.
func (vm *VM) Store() *store.Store { return vm.r.store }

// ArmIndex is the 1-based fanout arm index, 0 outside arms.
func (vm *VM) ArmIndex() int {
	if vm.fr.arm == nil {
		return 0
	}
	return vm.fr.arm.index
}

// Prompt is the running prompt.
func (vm *VM) Prompt() *parse.Prompt { return vm.r.p }

// ScopedTool is one tool in a VM's scope, as the model sees it.
type ScopedTool struct {
	// Alias is the name the model calls; Tool what it runs ("web_search",
	// or the alias itself for a local tool).
	Alias, Tool string
	// Local is true for a tools.add_local tool.
	Local bool
}

// ToolScope lists the tools in scope, in advertising order. It is empty
// before the first prose block.
func (vm *VM) ToolScope() []ScopedTool {
	out := make([]ScopedTool, 0, len(vm.Tools.scope))
	for _, b := range vm.Tools.scope {
		out = append(out, ScopedTool{Alias: b.Alias, Tool: b.Tool.String(), Local: b.Local})
	}
	return out
}

// BoundModel is the model the VM's prose uses ("" when none is bound
// yet).
func (vm *VM) BoundModel() string {
	if b := vm.Models.frozen; b != nil {
		return b.model.ID
	}
	if b := vm.Models.use; b != nil {
		return b.model.ID
	}
	if b := vm.r.models.def; b != nil {
		return b.model.ID
	}
	return ""
}

// Sys returns the sys fields, sorted by name.
func (vm *VM) Sys() ([]string, []lua.LValue) {
	keys := make([]string, 0, len(vm.sys))
	for k := range vm.sys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]lua.LValue, len(keys))
	for i, k := range keys {
		vals[i] = vm.sys[k]
	}
	return keys, vals
}

// EvalInstructions is the instruction budget of one Eval, apart from
// the VM's and the run's budgets.
const EvalInstructions = 1_000_000

// evalRefused are the host functions Eval refuses: they would run
// sections or call the model (taking a recorded answer from the run)
// while the run is held.
var evalRefused = map[string]bool{"jump": true, "execute": true, "fanout": true, "list_from_section": true, "models.infer": true, "model:infer": true}

// refuseInEval raises when Eval is running and name is one of
// evalRefused.
func (vm *VM) refuseInEval(L *lua.LState, name string) {
	if vm.evaluating && evalRefused[name] {
		L.RaiseError("%s cannot run from the debug console: it would run sections or call the model while the run is held; continue the run to let the prompt call it", name)
	}
}

// Eval evaluates a Lua expression (or, failing that, a statement list) in
// the VM, under its sandbox, and returns its first value. names and vals
// are locals the code sees (a stopped Lua frame's; assigning them changes
// only the copies). It runs on a budget of its own (EvalInstructions), so
// a runaway expression leaves the run's budgets as they were, and it
// refuses the control-flow and model calls (evalRefused). Only for a VM
// held in Pause, on the goroutine that runs it.
func (vm *VM) Eval(src string, names []string, vals []lua.LValue) (lua.LValue, error) {
	L := vm.L
	prefix := ""
	if len(names) > 0 {
		prefix = "local " + strings.Join(names, ", ") + " = ... "
	}
	fn, err := L.LoadString(prefix + "return " + src)
	if err != nil {
		var err2 error
		if fn, err2 = L.LoadString(prefix + src); err2 != nil {
			return lua.LNil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "<string>:"))
		}
	}
	base := L.GetTop()
	v := lua.LValue(lua.LNil)
	vm.evaluating = true
	defer func() { vm.evaluating = false }()
	q := vm.sb.Isolated(EvalInstructions, func() {
		L.Push(fn)
		for _, v := range vals {
			L.Push(v)
		}
		if err = L.PCall(len(vals), 1, nil); err == nil {
			v = L.Get(-1)
		}
	})
	L.SetTop(base)
	if q != nil {
		return lua.LNil, fmt.Errorf("the expression was stopped: %s (the debug console's own budget; the run's budgets are unchanged)", q.Phrase())
	}
	if err != nil {
		return lua.LNil, err
	}
	return v, nil
}

// ArmKey identifies the fanout arm the VM belongs to (the same value for
// the arm's worker VM and the chains it jumps into), nil outside arms.
func (vm *VM) ArmKey() any {
	if vm.fr.arm == nil {
		return nil
	}
	return vm.fr.arm
}

// ArmItem is the arm's item as text (strings as-is, tables as JSON), ""
// outside arms.
func (vm *VM) ArmItem() string {
	if vm.fr.arm == nil {
		return ""
	}
	return itemText(vm.fr.arm.item)
}

// History is the section's conversation so far (the messages sent before
// the next prose block's user message).
func (vm *VM) History() []gateway.Message {
	return append([]gateway.Message(nil), vm.Models.history...)
}

// VarJSON is the VM's `var` tree as compact JSON.
func (vm *VM) VarJSON() string {
	if vm.vars == nil {
		return "{}"
	}
	return compactJSON(vm.vars.root)
}
