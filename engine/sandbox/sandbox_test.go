package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

func run(t *testing.T, s *State, src string) error {
	t.Helper()
	fn, err := s.Load(src, "<string>")
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	s.L.Push(fn)
	return s.L.PCall(0, lua.MultRet, nil)
}

func TestRemovedGlobals(t *testing.T) {
	s := New(context.Background(), Options{})
	defer s.Close()
	for _, g := range []string{"io", "os", "package", "coroutine", "debug", "utf8", "load", "loadstring", "dofile",
		"loadfile", "collectgarbage", "require", "getfenv", "setfenv", "rawget", "rawset", "rawequal", "rawlen",
		"print", "warn", "module", "newproxy", "_printregs"} {
		if v := s.L.GetGlobal(g); v != lua.LNil {
			t.Errorf("global %s is present (%s)", g, v.Type())
		}
	}
	for _, g := range []string{"string", "table", "math", "pairs", "ipairs", "pcall", "error", "tostring", "select", "unpack"} {
		if v := s.L.GetGlobal(g); v == lua.LNil {
			t.Errorf("global %s is missing", g)
		}
	}
}

func TestInstructionBudgetExact(t *testing.T) {
	s := New(context.Background(), Options{Instructions: 3 * HookEvery})
	defer s.Close()
	start := time.Now()
	err := run(t, s, "while true do end")
	if err == nil || s.Quota() == nil || s.Quota().Resource != ResInstruction {
		t.Fatalf("want instruction quota, got %v / %v", err, s.Quota())
	}
	if !strings.Contains(err.Error(), "lua instruction budget exceeded") {
		t.Errorf("message %q", err)
	}
	// The hook fires every HookEvery instructions; the budget is exceeded
	// at the first firing past it.
	if got := s.Instructions(); got != 4*HookEvery {
		t.Errorf("executed %d instructions, want %d", got, 4*HookEvery)
	}
	_ = start
}

func TestDefaultBudgetWhileTrue(t *testing.T) {
	s := New(context.Background(), Options{})
	defer s.Close()
	err := run(t, s, "while true do end")
	if s.Quota() == nil {
		t.Fatalf("want quota, got %v", err)
	}
}

func TestQuotaSurvivesPcall(t *testing.T) {
	s := New(context.Background(), Options{Instructions: HookEvery})
	defer s.Close()
	err := run(t, s, "local ok = pcall(function() while true do end end) x = 1")
	if err == nil || s.Quota() == nil {
		t.Fatalf("pcall swallowed the quota: %v", err)
	}
	if s.L.GetGlobal("x") != lua.LNil {
		t.Error("code after the quota ran")
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := New(ctx, Options{})
	defer s.Close()
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	err := run(t, s, "local i = 0 while true do i = i + 1 if i > 1e6 then i = 0 end end")
	if err == nil || !s.Cancelled() {
		t.Fatalf("want cancellation, got %v", err)
	}
	if s.Quota() != nil {
		t.Fatalf("cancellation reported as quota")
	}
}

func TestStringRepCap(t *testing.T) {
	s := New(context.Background(), Options{})
	defer s.Close()
	err := run(t, s, `local s = string.rep("x", 1e9)`)
	if err == nil || s.Quota() == nil || s.Quota().Resource != ResMemory {
		t.Fatalf("want memory quota, got %v", err)
	}
}

func TestFormatWidth(t *testing.T) {
	s := New(context.Background(), Options{})
	defer s.Close()
	if err := run(t, s, `x = string.format("%5.2f|%-3s|%d", 1.5, "a", 3)`); err != nil {
		t.Fatal(err)
	}
	if got := s.L.GetGlobal("x").String(); got != " 1.50|a  |3" {
		t.Errorf("format gave %q", got)
	}
	if err := run(t, s, `x = string.format("%0999999999d", 1)`); err == nil {
		t.Fatal("huge width accepted")
	}
}

func TestConcat(t *testing.T) {
	s := New(context.Background(), Options{})
	defer s.Close()
	if err := run(t, s, `x = table.concat({"a", 1, "b"}, ",")`); err != nil {
		t.Fatal(err)
	}
	if got := s.L.GetGlobal("x").String(); got != "a,1,b" {
		t.Errorf("concat gave %q", got)
	}
	err := run(t, s, `x = table.concat({"a", true})`)
	if err == nil || !strings.Contains(err.Error(), "invalid value (boolean) at index 2 in table for 'concat'") {
		t.Errorf("got %v", err)
	}
}

func TestUnpackAndMathType(t *testing.T) {
	s := New(context.Background(), Options{})
	defer s.Close()
	if err := run(t, s, `a, b = table.unpack({1, 2}); t1 = math.type(3); t2 = math.type(3.5); t3 = math.type("3")`); err != nil {
		t.Fatal(err)
	}
	for g, want := range map[string]string{"a": "1", "b": "2", "t1": "integer", "t2": "float", "t3": "nil"} {
		if got := s.L.GetGlobal(g).String(); got != want {
			t.Errorf("%s = %q, want %q", g, got, want)
		}
	}
}

func TestHeapGuardTableGrowth(t *testing.T) {
	g := NewHeapGuard(16 << 20)
	s := New(context.Background(), Options{Heap: g, Instructions: 1 << 40})
	defer s.Close()
	err := run(t, s, `local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i} end`)
	var q *QuotaError
	if err == nil || s.Quota() == nil || s.Quota().Resource != ResMemory {
		t.Fatalf("want memory quota, got %v (%v)", err, errors.As(err, &q))
	}
}

// Isolated code runs on its own budget: a runaway stops there, and the
// VM's and the run's counts and quotas are as they were.
func TestIsolatedBudget(t *testing.T) {
	b := NewBudget(Limits{})
	defer b.Stop()
	s := New(context.Background(), Options{Instructions: 10 * HookEvery, Budget: b})
	defer s.Close()
	if err := run(t, s, "x = 0 for i = 1, 100 do x = x + i end"); err != nil {
		t.Fatal(err)
	}
	vmCount, runCount := s.Instructions(), b.Instructions()
	var err error
	q := s.Isolated(20*HookEvery, func() { err = run(t, s, "while true do end") })
	if q == nil || q.Resource != ResInstruction || err == nil {
		t.Fatalf("isolated runaway: quota %v, error %v", q, err)
	}
	if s.Quota() != nil || b.Quota() != nil {
		t.Fatalf("the isolated quota leaked: VM %v, run %v", s.Quota(), b.Quota())
	}
	if s.Instructions() != vmCount || b.Instructions() != runCount {
		t.Errorf("counts changed: VM %d -> %d, run %d -> %d", vmCount, s.Instructions(), runCount, b.Instructions())
	}
	if err := run(t, s, "x = x + 1"); err != nil || s.L.GetGlobal("x").String() != "5051" {
		t.Fatalf("after the isolated runaway: %v, x = %v", err, s.L.GetGlobal("x"))
	}
}

// TestErrorHandlerOnCancel: an error raised in a cancelled VM reaches the
// caller without Unwinding reading its frames and without gopher-lua's
// stack trace; any other error goes through both.
func TestErrorHandlerOnCancel(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		unwound := 0
		s := New(ctx, Options{Unwinding: func(*lua.LState, lua.LValue) { unwound++ }})
		s.L.SetGlobal("stop", s.L.NewFunction(func(L *lua.LState) int {
			if cancelled {
				cancel()
			}
			L.RaiseError("stopped here")
			return 0
		}))
		fn, err := s.Load("local x = 1\nstop()", "<string>")
		if err != nil {
			t.Fatal(err)
		}
		s.L.Push(fn)
		err = s.L.PCall(0, lua.MultRet, s.ErrorHandler())
		cancel()
		s.Close()
		if err == nil || !strings.Contains(err.Error(), "stopped here") {
			t.Fatalf("cancelled %v: error %v", cancelled, err)
		}
		traced := strings.Contains(err.Error(), "stack traceback")
		if cancelled && (unwound != 0 || traced) {
			t.Errorf("cancelled: unwound %d times, stack trace %v: %v", unwound, traced, err)
		}
		if !cancelled && (unwound != 1 || !traced) {
			t.Errorf("not cancelled: unwound %d times, stack trace %v: %v", unwound, traced, err)
		}
	}
}
