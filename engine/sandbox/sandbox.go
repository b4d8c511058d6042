// Package sandbox builds the sandboxed gopher-lua states PromptForge runs
// prompts in (docs/language.md#budgets,
// docs/language.md#sandbox): only the
// base, string, table and math libraries, unsafe base functions removed,
// an exact deterministic instruction budget, and memory guards.
//
// The package is named sandbox so that importers can keep the usual name
// lua for gopher-lua itself.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/luaast"
	lua "github.com/yuin/gopher-lua"
	luaparse "github.com/yuin/gopher-lua/parse"
)

// HookEvery is how often (in instructions) the budget hook "fires": it
// checks cancellation and counts towards the instruction budget. Upstream
// uses an mlua hook with the same period.
const HookEvery = 10000

// DefaultInstructions is the per-VM budget: 1,000 firings.
const DefaultInstructions = 1000 * HookEvery

// DefaultMaxString caps one string created by a host function.
const DefaultMaxString = 16 << 20

// Resource names of quota errors (docs/language.md#errors, Quota).
const (
	ResInstruction = "instruction"
	ResLogEvent    = "log event"
	ResLogByte     = "log byte"
	ResMemory      = "memory"
)

// QuotaError is a typed budget failure. Quotas are never detected by
// matching message text (docs/language.md#budgets).
type QuotaError struct {
	Resource string
	// Limit is the budget's value as the user would set it ("10000000",
	// "30s"); empty when Detail says it.
	Limit string
	// Detail explains a memory quota (what was being allocated).
	Detail string
}

func (q *QuotaError) Error() string {
	msg := "lua " + q.Resource + " quota exceeded"
	if q.Limit != "" {
		msg += " (limit " + q.Limit + ")"
	}
	if q.Detail != "" {
		msg += ": " + q.Detail
	}
	return msg
}

// Phrase is the upstream in-VM message for the resource, the text a chunk
// sees when the budget hook raises.
func (q *QuotaError) Phrase() string {
	switch q.Resource {
	case ResInstruction:
		return "lua instruction budget exceeded"
	case ResLogEvent:
		return "lua log event budget exceeded"
	case ResLogByte:
		return "lua log cumulative byte budget exceeded"
	}
	return q.Error()
}

// ErrCancelled is what the VM raises when its parent context ends.
var ErrCancelled = errors.New("lua execution cancelled")

// Options configure a State.
type Options struct {
	// Instructions is the budget; <= 0 means DefaultInstructions.
	Instructions int64
	// MaxString caps strings made by host functions; <= 0 means default.
	MaxString int
	// Heap is the run's heap guard; nil means none (or the Budget's).
	Heap *HeapGuard
	// Budget is the run's budget, shared by all VMs of the run; nil means
	// the VM is on its own.
	Budget *Budget
	// TableArg, when set, reads a table argument for table.concat; the
	// runtime uses it to accept var proxies as plain tables.
	TableArg func(L *lua.LState, n int) *lua.LTable
	// Caught, when set, sees the error value of every error pcall or
	// xpcall catches and returns the value Lua code gets instead; rethrow
	// true lets the error unwind on instead of being caught (the runtime
	// uses it to give caught messages file lines and to let a jump end
	// its chunk even under pcall).
	Caught func(v lua.LValue) (out lua.LValue, rethrow bool)
	// Unwinding, when set, sees the error value of every error pcall
	// catches and of every call run with ErrorHandler, while the frames
	// that raised it are still on the stack: the runtime reads the failing
	// function's locals there to name them in the message.
	Unwinding func(L *lua.LState, v lua.LValue)
}

// State is one sandboxed VM. It is not safe for concurrent use (gopher-lua
// states are single-goroutine).
type State struct {
	L         *lua.LState
	ctx       *budgetCtx
	opts      Options
	stopWatch func() bool
	unwind    *lua.LFunction
}

// ErrorHandler is the error function to pass to L.PCall so that
// Options.Unwinding sees the error before the stack unwinds; nil when
// Unwinding is not set. It raises the same value again (which also closes
// the upvalues of the failed frames, as an error without a handler does),
// so the caller gets the original error; in a cancelled VM, which runs
// nothing more, it hands the value back instead, and Unwinding does not
// see it.
func (s *State) ErrorHandler() *lua.LFunction {
	if s.opts.Unwinding == nil {
		return nil
	}
	if s.unwind == nil {
		s.unwind = s.L.NewFunction(func(L *lua.LState) int {
			v := L.Get(1)
			if s.ctx.cancelled.Load() || s.ctx.parent.Err() != nil && s.ctx.quota.Load() == nil && (s.ctx.run == nil || s.ctx.run.Quota() == nil) {
				// A cancelled VM runs nothing more, and its error is
				// the cancellation: handing the value back spares
				// gopher-lua the stack trace it builds for an error
				// raised in a handler (a debugger cancels a replaced
				// run at every step back).
				L.Push(v)
				return 1
			}
			s.opts.Unwinding(L, v)
			L.Error(v, 0)
			return 0
		})
	}
	return s.unwind
}

// New creates a sandboxed VM whose execution stops when ctx ends.
func New(ctx context.Context, opts Options) *State {
	if opts.Budget != nil {
		lim := opts.Budget.Limits()
		if opts.Instructions <= 0 {
			opts.Instructions = lim.Instructions
		}
		if opts.MaxString <= 0 {
			opts.MaxString = lim.MaxString
		}
	}
	if opts.Instructions <= 0 {
		opts.Instructions = DefaultInstructions
	}
	if opts.MaxString <= 0 {
		opts.MaxString = DefaultMaxString
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 200, MinimizeStackMemory: true,
		RegistrySize: 256, RegistryGrowStep: 256, RegistryMaxSize: 256 * 1024})
	if opts.Heap == nil && opts.Budget != nil {
		opts.Heap = opts.Budget.Heap()
	}
	s := &State{L: L, opts: opts}
	s.ctx = &budgetCtx{parent: ctx, budget: opts.Instructions, heap: opts.Heap, run: opts.Budget, nextFire: HookEvery}
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.StringLibName, lua.OpenString}, {lua.TabLibName, lua.OpenTable}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	s.harden()
	L.SetContext(s.ctx)
	// Stop at the next instruction once ctx ends, not at the next firing
	// of the hook: one instruction can be slow (hashing a long string).
	s.stopWatch = context.AfterFunc(ctx, s.ctx.stopNow)
	return s
}

// Close releases the VM. It must be called on the goroutine that ran the
// VM (the VM's OS thread is locked to it while the VM is in use).
func (s *State) Close() {
	s.stopWatch()
	if s.ctx.entered {
		s.ctx.entered = false
		s.ctx.run.leaveThread(s.ctx.thread)
	}
	s.L.Close()
}

// Quota returns the quota that stopped this VM or its run, or nil.
func (s *State) Quota() *QuotaError {
	if v := s.ctx.quota.Load(); v != nil {
		return v
	}
	if q := s.opts.Budget.Quota(); q != nil {
		return q
	}
	return nil
}

// Cancelled reports whether the VM stopped because its context ended.
func (s *State) Cancelled() bool { return s.ctx.cancelled.Load() }

// Trip stops the VM with q: the current host function should raise, and
// every later instruction raises too, so pcall cannot swallow a quota.
func (s *State) Trip(q *QuotaError) { s.ctx.trip(q) }

// Instructions returns how many instructions the VM has executed.
func (s *State) Instructions() int64 { return s.ctx.count }

// Reserve checks that a host function may allocate n more bytes: n must
// fit the string cap and the run's heap guard. On failure the VM is
// tripped and the quota returned; the caller raises it.
func (s *State) Reserve(what string, n int64) *QuotaError {
	if n > int64(s.opts.MaxString) {
		q := &QuotaError{Resource: ResMemory, Detail: fmt.Sprintf("%s would create %d bytes (cap %d)", what, n, s.opts.MaxString)}
		s.Trip(q)
		return q
	}
	if s.opts.Heap != nil {
		if q := s.opts.Heap.Check(n); q != nil {
			s.Trip(q)
			return q
		}
	}
	return nil
}

// RaiseQuota trips the VM and raises the quota's in-VM phrase.
func (s *State) RaiseQuota(q *QuotaError) {
	s.Trip(q)
	s.L.RaiseError("%s", q.Phrase())
}

// Isolated runs f (which runs Lua in this VM) under a budget of its own:
// n instructions, counted apart from the VM's and the run's, so what f
// runs is charged to neither, and a quota it trips ends f and nothing
// else. The run's cancellation and heap guard still apply. It returns
// the quota f tripped, or nil. A debugger's console evaluates with it.
func (s *State) Isolated(n int64, f func()) *QuotaError {
	old := s.ctx
	c := &budgetCtx{parent: old.parent, budget: n, heap: old.heap, nextFire: HookEvery}
	stop := context.AfterFunc(old.parent, c.stopNow)
	s.ctx = c
	s.L.SetContext(c)
	defer func() {
		stop()
		s.ctx = old
		s.L.SetContext(old)
	}()
	f()
	if c.cancelled.Load() {
		return nil
	}
	return c.quota.Load()
}

// budgetCtx is the context gopher-lua checks before every instruction
// (Done is called once per instruction), which makes it an exact counter.
// Library functions implemented in Go charge their work to the same
// counter (charge), so that no loop escapes it.
type budgetCtx struct {
	parent context.Context
	count  int64
	budget int64
	// nextFire is the count at which the hook fires next; flushed is the
	// part of count already charged to the run's budget.
	nextFire int64
	flushed  int64
	firings  int64
	// largest is the largest single charge (a test's tolerance).
	largest int64
	// thread is the OS thread the VM runs on, once entered (its CPU
	// counts towards the run's CPU budget).
	thread    int
	entered   bool
	heap      *HeapGuard
	run       *Budget
	quota     atomic.Pointer[QuotaError]
	cancelled atomic.Bool
	tripped   atomic.Bool
}

func (c *budgetCtx) Deadline() (deadline time.Time, ok bool) { return c.parent.Deadline() }
func (c *budgetCtx) Value(key any) any                       { return c.parent.Value(key) }

// closedCh is returned once the VM must stop.
var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *budgetCtx) Done() <-chan struct{} {
	if !c.entered && c.run != nil {
		c.entered = true
		c.thread = c.run.enterThread()
	}
	if c.tripped.Load() {
		return closedCh
	}
	if c.heap != nil {
		if q := c.heap.tripped.Load(); q != nil {
			c.trip(q)
			return closedCh
		}
	}
	if c.run != nil {
		if q := c.run.tripped.Load(); q != nil {
			c.trip(q)
			return closedCh
		}
	}
	c.count++
	if c.count >= c.nextFire && c.fire() {
		return closedCh
	}
	if c.heap != nil && c.count%c.heap.every() == 0 {
		if q := c.heap.Check(0); q != nil {
			c.trip(q)
			return closedCh
		}
	}
	return nil
}

// fire is the budget hook: cancellation first, as upstream's hook does,
// then the VM's budget, then the run's. It reports whether the VM must
// stop.
func (c *budgetCtx) fire() bool {
	for c.nextFire <= c.count {
		c.nextFire += HookEvery
		c.firings++
	}
	if c.parent.Err() != nil {
		if c.run != nil {
			if q := c.run.Quota(); q != nil {
				c.trip(q)
				return true
			}
		}
		c.cancelled.Store(true)
		c.tripped.Store(true)
		return true
	}
	if c.count > c.budget {
		c.trip(&QuotaError{Resource: ResInstruction, Limit: fmt.Sprint(c.budget)})
		return true
	}
	if c.run != nil {
		n := c.count - c.flushed
		c.flushed = c.count
		if q := c.run.charge(n); q != nil {
			c.trip(q)
			return true
		}
	}
	return false
}

// charge counts n instructions' worth of work done by a library function
// and reports whether the VM must stop (the caller raises).
func (c *budgetCtx) charge(n int64) bool {
	if c.tripped.Load() {
		return true
	}
	c.count += n
	if n > c.largest {
		c.largest = n
	}
	if c.count >= c.nextFire {
		return c.fire()
	}
	return false
}

// stopNow runs when the parent context ends: a tripped run budget is a
// quota, anything else a cancellation.
func (c *budgetCtx) stopNow() {
	if q := c.run.Quota(); q != nil {
		c.trip(q)
		return
	}
	c.cancelled.Store(true)
	c.tripped.Store(true)
}

func (c *budgetCtx) trip(q *QuotaError) {
	c.quota.CompareAndSwap(nil, q)
	c.tripped.Store(true)
}

func (c *budgetCtx) Err() error {
	if c.cancelled.Load() {
		return ErrCancelled
	}
	if q := c.quota.Load(); q != nil {
		return errors.New(q.Phrase())
	}
	return c.parent.Err()
}

// Charge counts n instructions' worth of work done by a host function
// against the VM's and the run's budgets, and checks cancellation. When a
// budget is exhausted or the run was cancelled it raises in the VM (the
// quota survives pcall, as every later instruction raises too).
func (s *State) Charge(n int64) {
	if s.ctx.charge(n) {
		s.raiseStopped()
	}
}

// raiseStopped raises the reason the VM stopped.
func (s *State) raiseStopped() {
	if q := s.Quota(); q != nil && !s.ctx.cancelled.Load() {
		s.L.RaiseError("%s", q.Phrase())
	}
	s.L.RaiseError("%s", ErrCancelled.Error())
}

// harden removes unsafe globals and installs guarded replacements.
func (s *State) harden() {
	L := s.L
	// The one API table says what the sandbox removes; the analyzer and
	// hover read the same list. Libraries never opened are nil already.
	for _, name := range api.Removed {
		L.SetGlobal(name, lua.LNil)
	}
	L.SetGlobal("_GOPHER_LUA_VERSION", lua.LNil)
	L.SetGlobal("_VERSION", lua.LString("Lua 5.1"))
	s.installLibs()
	mathT := L.GetGlobal("math").(*lua.LTable)
	mathT.RawSetString("type", L.NewFunction(mathType))
}

func (s *State) raiseMem(what string, n int64) {
	if q := s.Reserve(what, n); q != nil {
		s.L.RaiseError("%s", q.Error())
	}
}

func (s *State) concatArgs(L *lua.LState) (*lua.LTable, string, int, int) {
	var tbl *lua.LTable
	if s.opts.TableArg != nil {
		tbl = s.opts.TableArg(L, 1)
	} else {
		tbl = L.CheckTable(1)
	}
	sep := L.OptString(2, "")
	n := tbl.Len()
	i := L.OptInt(3, 1)
	j := L.OptInt(4, n)
	return tbl, sep, i, j
}

// mathType is math.type for Lua 5.4 prompts. gopher-lua numbers are all
// float64, so an integral value in the int64 range counts as an integer.
func mathType(L *lua.LState) int {
	n, ok := L.Get(1).(lua.LNumber)
	if !ok {
		L.CheckAny(1)
		L.Push(lua.LNil)
		return 1
	}
	f := float64(n)
	if f == math.Trunc(f) && f >= -9.223372036854775808e18 && f < 9.223372036854775808e18 {
		L.Push(lua.LString("integer"))
	} else {
		L.Push(lua.LString("float"))
	}
	return 1
}

// Load compiles src as a chunk of this sandbox (with `..` budgeted, as
// the runtime compiles prompt chunks) and returns it as a function.
func (s *State) Load(src, name string) (*lua.LFunction, error) {
	stmts, err := luaparse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, err
	}
	proto, err := lua.Compile(luaast.GuardConcat(stmts), name)
	if err != nil {
		return nil, err
	}
	return s.L.NewFunctionFromProto(proto), nil
}

// CallThrough calls orig with the current function's arguments and
// returns all its results: the tail of a wrapper around a standard
// function.
func CallThrough(L *lua.LState, orig *lua.LFunction) int {
	top := L.GetTop()
	L.Push(orig)
	for i := 1; i <= top; i++ {
		L.Push(L.Get(i))
	}
	L.Call(top, lua.MultRet)
	return L.GetTop() - top
}
