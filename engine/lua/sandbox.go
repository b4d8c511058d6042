// Package sandbox (directory engine/lua) builds the sandboxed gopher-lua
// states PromptForge runs prompts in (docs/language.md#budgets,
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

	lua "github.com/yuin/gopher-lua"
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
	// Detail explains a memory quota (what was being allocated).
	Detail string
}

func (q *QuotaError) Error() string {
	if q.Detail != "" {
		return "lua " + q.Resource + " quota exceeded: " + q.Detail
	}
	return "lua " + q.Resource + " quota exceeded"
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
	// Heap is the run's heap guard; nil means none.
	Heap *HeapGuard
	// TableArg, when set, reads a table argument for table.concat; the
	// runtime uses it to accept var proxies as plain tables.
	TableArg func(L *lua.LState, n int) *lua.LTable
}

// State is one sandboxed VM. It is not safe for concurrent use (gopher-lua
// states are single-goroutine).
type State struct {
	L    *lua.LState
	ctx  *budgetCtx
	opts Options
}

// New creates a sandboxed VM whose execution stops when ctx ends.
func New(ctx context.Context, opts Options) *State {
	if opts.Instructions <= 0 {
		opts.Instructions = DefaultInstructions
	}
	if opts.MaxString <= 0 {
		opts.MaxString = DefaultMaxString
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 200, MinimizeStackMemory: true,
		RegistrySize: 256, RegistryGrowStep: 256, RegistryMaxSize: 256 * 1024})
	s := &State{L: L, opts: opts}
	s.ctx = &budgetCtx{parent: ctx, budget: opts.Instructions, heap: opts.Heap}
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
	return s
}

// Close releases the VM.
func (s *State) Close() { s.L.Close() }

// Quota returns the quota that stopped this VM, or nil.
func (s *State) Quota() *QuotaError {
	if v := s.ctx.quota.Load(); v != nil {
		return v
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

// budgetCtx is the context gopher-lua checks before every instruction
// (Done is called once per instruction), which makes it an exact counter.
type budgetCtx struct {
	parent    context.Context
	count     int64
	budget    int64
	firings   int64
	heap      *HeapGuard
	quota     atomic.Pointer[QuotaError]
	cancelled atomic.Bool
	tripped   atomic.Bool
}

func (c *budgetCtx) Deadline() (deadline time.Time, ok bool) { return c.parent.Deadline() }
func (c *budgetCtx) Value(key any) any                       { return c.parent.Value(key) }

// closedCh is returned once the VM must stop.
var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *budgetCtx) Done() <-chan struct{} {
	if c.tripped.Load() {
		return closedCh
	}
	if c.heap != nil {
		if q := c.heap.tripped.Load(); q != nil {
			c.trip(q)
			return closedCh
		}
	}
	c.count++
	if c.count%HookEvery == 0 {
		c.firings++
		// Cancellation first, as upstream's hook does.
		if c.parent.Err() != nil {
			c.cancelled.Store(true)
			c.tripped.Store(true)
			return closedCh
		}
		if c.count > c.budget {
			c.trip(&QuotaError{Resource: ResInstruction})
			return closedCh
		}
	}
	if c.heap != nil && c.count%c.heap.every() == 0 {
		if q := c.heap.Check(0); q != nil {
			c.trip(q)
			return closedCh
		}
	}
	return nil
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
	strT := L.GetGlobal("string").(*lua.LTable)
	strT.RawSetString("rep", L.NewFunction(s.strRep))
	origFormat := strT.RawGetString("format").(*lua.LFunction)
	strT.RawSetString("format", L.NewFunction(func(L *lua.LState) int { return s.strFormat(L, origFormat) }))
	origGsub := strT.RawGetString("gsub").(*lua.LFunction)
	strT.RawSetString("gsub", L.NewFunction(func(L *lua.LState) int { return s.strGsub(L, origGsub) }))
	tabT := L.GetGlobal("table").(*lua.LTable)
	tabT.RawSetString("concat", L.NewFunction(s.tableConcat))
	tabT.RawSetString("unpack", L.GetGlobal("unpack"))
	mathT := L.GetGlobal("math").(*lua.LTable)
	mathT.RawSetString("type", L.NewFunction(mathType))
}

func (s *State) raiseMem(what string, n int64) {
	if q := s.Reserve(what, n); q != nil {
		s.L.RaiseError("%s", q.Error())
	}
}

func (s *State) strRep(L *lua.LState) int {
	str := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || str == "" {
		L.Push(lua.LString(""))
		return 1
	}
	total := int64(len(str)) * int64(n)
	if total/int64(n) != int64(len(str)) {
		total = math.MaxInt64
	}
	s.raiseMem("string.rep", total)
	L.Push(lua.LString(strings.Repeat(str, n)))
	return 1
}

// strFormat refuses widths and precisions over two digits (as Lua does):
// Go's fmt would otherwise pad to any width.
func (s *State) strFormat(L *lua.LState, orig *lua.LFunction) int {
	f := L.CheckString(1)
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		j := i
		for j < len(f) && strings.IndexByte("-+ #0", f[j]) >= 0 {
			j++
		}
		digits := 0
		for j < len(f) && (f[j] >= '0' && f[j] <= '9' || f[j] == '.') {
			if f[j] != '.' {
				digits++
			} else {
				digits = 0
			}
			if digits > 2 {
				L.RaiseError("invalid format (width or precision too long)")
			}
			j++
		}
	}
	top := L.GetTop()
	L.Push(orig)
	for i := 1; i <= top; i++ {
		L.Push(L.Get(i))
	}
	L.Call(top, lua.MultRet)
	if str, ok := L.Get(-1).(lua.LString); ok {
		s.raiseMem("string.format", int64(len(str)))
	}
	return L.GetTop() - top
}

// strGsub bounds the output before the replacement is built when the
// replacement is a string (the only case that can multiply the input).
func (s *State) strGsub(L *lua.LState, orig *lua.LFunction) int {
	str := L.CheckString(1)
	if repl, ok := L.Get(3).(lua.LString); ok {
		bound := int64(len(str)) + int64(len(str)+1)*int64(len(repl))
		if bound > int64(s.opts.MaxString) {
			// Only an upper bound: check the real count first.
			n := L.OptInt(4, len(str)+1)
			bound = int64(len(str)) + int64(n)*int64(len(repl))
			if bound > int64(s.opts.MaxString) {
				s.raiseMem("string.gsub", bound)
			}
		}
	}
	top := L.GetTop()
	L.Push(orig)
	for i := 1; i <= top; i++ {
		L.Push(L.Get(i))
	}
	L.Call(top, lua.MultRet)
	return L.GetTop() - top
}

// tableConcat follows docs/language.md#sandbox: userdata elements go through
// tostring, other non-string, non-number elements raise.
func (s *State) tableConcat(L *lua.LState) int {
	tbl, sep, i, j := s.concatArgs(L)
	var sb strings.Builder
	var size int64
	for k := i; k <= j; k++ {
		v := tbl.RawGetInt(k)
		var piece string
		switch v.Type() {
		case lua.LTString, lua.LTNumber:
			piece = lua.LVAsString(v)
		case lua.LTUserData:
			piece = L.ToStringMeta(v).String()
		default:
			L.RaiseError("invalid value (%s) at index %d in table for 'concat'", v.Type().String(), k)
		}
		size += int64(len(piece))
		if k < j {
			size += int64(len(sep))
		}
		if size > int64(s.opts.MaxString) {
			s.raiseMem("table.concat", size)
		}
		sb.WriteString(piece)
		if k < j {
			sb.WriteString(sep)
		}
	}
	L.Push(lua.LString(sb.String()))
	return 1
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
