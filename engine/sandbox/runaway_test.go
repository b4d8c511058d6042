package sandbox

import (
	"context"
	"github.com/forge-lsp/forge-lsp/engine/testflag"
	"runtime"
	"testing"
	"time"
)

// runaways are the CPU and memory runaways of the library functions and
// the VM: each must end with a Quota (at a scaled-down budget) with the
// work charged, never by running to completion.
var runaways = map[string]struct {
	src      string
	resource string
}{
	"backtracking find":  {`return string.rep("a", 5000):find(".-.-.-.-.-.-b")`, ResInstruction},
	"gsub empty":         {`local s = string.rep("x", 4e6) return #s:gsub("", "")`, ResInstruction},
	"gmatch empty":       {`local s = string.rep("x", 4e6) for m in s:gmatch("") do end`, ResInstruction},
	"gsub growth":        {`local s = string.rep("x", 1e6) return #s:gsub("x", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy")`, ResMemory},
	"format":             {`local s = string.rep("x", 4e6) return #string.format(string.rep("%s", 64), s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s)`, ResMemory},
	"concat 32":          {`local s = string.rep("x", 4e6) return #(s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s)`, ResMemory},
	"quadratic concat":   {`local s = "" while true do s = s .. "abcdefghij" end`, ResInstruction},
	"pcall recursion":    {`local function f() pcall(f) pcall(f) end f()`, ResInstruction},
	"tail recursion":     {`local function f(n) return f(n + 1) end return f(1)`, ResInstruction},
	"unpack loop":        {`while true do pcall(unpack, {}, 1, 7999) end`, ResInstruction},
	"table.insert front": {`local t = {} while true do table.insert(t, 1, 0) end`, ResInstruction},
	"upper":              {`local s = string.rep("x", 1e6) while true do s:upper() end`, ResInstruction},
}

// TestRunaways: every runaway stops with its quota, and the library work
// was charged (the VM never ran far past its budget).
func TestRunaways(t *testing.T) {
	const budget = 1000 * HookEvery / 10
	for name, rw := range runaways {
		t.Run(name, func(t *testing.T) {
			s := New(context.Background(), Options{Instructions: budget, MaxString: 8 << 20})
			defer s.Close()
			err := run(t, s, rw.src)
			q := s.Quota()
			if err == nil || q == nil || q.Resource != rw.resource {
				t.Fatalf("want %s quota, got %v (quota %v)", rw.resource, err, q)
			}
			if n := s.Instructions(); rw.resource == ResInstruction && n > budget+HookEvery+1<<20 {
				t.Errorf("ran %d instructions past a budget of %d", n, budget)
			}
		})
	}
}

// TestRunBudgetSharedByVMs: the run's instruction budget counts the
// instructions of all its VMs.
func TestRunBudgetSharedByVMs(t *testing.T) {
	b := NewBudget(Limits{Instructions: 100 * HookEvery, RunInstructions: 50 * HookEvery})
	defer b.Stop()
	ctx := b.Bind(context.Background())
	var errs []error
	for i := 0; i < 3; i++ {
		s := New(ctx, Options{Budget: b})
		errs = append(errs, run(t, s, `local i = 0 while i < 100000 do i = i + 1 end`))
		s.Close()
	}
	if errs[0] != nil || errs[1] == nil {
		t.Fatalf("want the second VM to exhaust the run's budget: %v", errs)
	}
	if q := b.Quota(); q == nil || q.Resource != ResRunInstruction || q.Limit != "500000" {
		t.Fatalf("run quota = %v", q)
	}
	if errs[2] == nil {
		t.Error("a VM started after the run's budget tripped ran")
	}
}

func TestFanoutArmCap(t *testing.T) {
	b := NewBudget(Limits{FanoutArms: 3})
	defer b.Stop()
	for i := 0; i < 3; i++ {
		if q := b.EnterArm(); q != nil {
			t.Fatalf("arm %d refused: %v", i+1, q)
		}
	}
	if q := b.EnterArm(); q == nil || q.Resource != ResFanoutArm || q.Error() != "lua fanout arm quota exceeded (limit 3)" {
		t.Fatalf("fourth arm: %v", q)
	}
}

// TestDeadline: the wall-clock deadline stops a VM in the middle of a
// slow library call and ends the bound context, reported as a quota.
func TestDeadline(t *testing.T) {
	b := NewBudget(Limits{Timeout: 50 * time.Millisecond, Instructions: 1 << 50, RunInstructions: 1 << 50})
	defer b.Stop()
	ctx := b.Bind(context.Background())
	s := New(ctx, Options{Budget: b})
	defer s.Close()
	err := run(t, s, `local s = string.rep("a", 5000) while true do s:find(".-.-.-.-.-.-b") end`)
	if q := s.Quota(); err == nil || q == nil || q.Resource != ResTime || s.Cancelled() {
		t.Fatalf("want a time quota, got %v (%v, cancelled %v)", err, q, s.Cancelled())
	}
	if ctx.Err() == nil {
		t.Error("the run's context did not end")
	}
}

// TestCancelInsideLibraryCall: cancellation stops a pattern search.
func TestCancelInsideLibraryCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := New(ctx, Options{Instructions: 1 << 50})
	defer s.Close()
	time.AfterFunc(30*time.Millisecond, cancel)
	err := run(t, s, `return string.rep("a", 5000):find(".-.-.-.-.-.-.-.-.-b")`)
	if err == nil || !s.Cancelled() {
		t.Fatalf("want cancellation, got %v", err)
	}
}

// TestMemoryReturnedAfterQuota: after a run that ended on a quota, Stop
// hands the run's memory back, so the heap is near where it started.
func TestMemoryReturnedAfterQuota(t *testing.T) {
	runtime.GC()
	before := HeapBytes()
	b := NewBudget(Limits{HeapBytes: 64 << 20})
	s := New(b.Bind(context.Background()), Options{Budget: b, Instructions: 1 << 40})
	_ = run(t, s, `local t = {} while true do t[#t + 1] = string.rep("x", 1e6) .. #t end`)
	if q := b.Quota(); q == nil || q.Resource != ResMemory {
		t.Fatalf("want a memory quota, got %v", q)
	}
	s.Close()
	s = nil
	b.Stop()
	var after int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		if after = HeapBytes(); after-before < 16<<20 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("heap still %d MiB above where it started", (after-before)>>20)
}

// TestCPUBudget: single instructions that are slow (hashing a long string
// as a table key, padding a sparse array) in a loop are stopped by the
// CPU budget, which the instruction budget alone would let run for hours.
func TestCPUBudget(t *testing.T) {
	if !cpuClockSupported {
		t.Skip("no per-thread CPU clocks on this platform")
	}
	for name, src := range map[string]string{
		"hashing": `local s = string.rep("x", 4e6) local t = {} while true do t[s] = true end`,
		"padding": `while true do local t = {} t[4194303] = 1 end`,
	} {
		if !testflag.Long() && name != "hashing" {
			continue // one case by default; both under -long
		}
		t.Run(name, func(t *testing.T) {
			b := NewBudget(Limits{CPU: 200 * time.Millisecond, Instructions: 1 << 50, RunInstructions: 1 << 50})
			defer b.Stop()
			s := New(b.Bind(context.Background()), Options{Budget: b})
			defer s.Close()
			err := run(t, s, src)
			q := s.Quota()
			if err == nil || q == nil || q.Resource != ResCPU || q.Limit != "200ms" {
				t.Fatalf("want a CPU quota, got %v (%v)", err, q)
			}
			if used := b.CPU(); used < 200*time.Millisecond {
				t.Errorf("tripped after %v of CPU, before the budget", used)
			}
			t.Logf("stopped after %v of CPU, %d instructions", b.CPU(), s.Instructions())
		})
	}
}
