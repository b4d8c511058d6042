package sandbox

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Run-wide resource names of quota errors.
const (
	// ResRunInstruction is the instruction budget of a whole run: every VM
	// of the run (H1, sections, fanout arms, tool handlers, execute
	// chains) draws from it.
	ResRunInstruction = "run instruction"
	// ResFanoutArm caps the fanout arms a run starts, nested ones included.
	ResFanoutArm = "fanout arm"
	// ResTime is the run's wall-clock deadline.
	ResTime = "wall-clock time"
	// ResCPU is the CPU time of the run's VMs (on Linux).
	ResCPU = "CPU time"
)

// Default run-wide limits.
const (
	// DefaultRunInstructions is ten VMs' worth of instructions.
	DefaultRunInstructions = 10 * DefaultInstructions
	// DefaultFanoutArms caps the arms of all fanouts of a run.
	DefaultFanoutArms = 100_000
	// DefaultCPU caps the CPU time of a run's VMs. The instruction budgets
	// end runaway Lua within seconds (the run's 100,000,000 instructions
	// take a few seconds); this catches single instructions that are slow
	// (hashing a long string, growing a sparse array) when a loop repeats
	// them.
	DefaultCPU = 20 * time.Second
)

// Limits are the budgets of one run. Zero fields take the defaults;
// Timeout zero means no deadline.
type Limits struct {
	// Instructions is the budget of each VM.
	Instructions int64
	// RunInstructions is the budget of all VMs of the run together.
	RunInstructions int64
	// FanoutArms caps the fanout arms of the run.
	FanoutArms int64
	// HeapBytes is how far the process heap may grow during the run.
	HeapBytes int64
	// MaxString caps one string made by a library function.
	MaxString int
	// Timeout is the run's wall-clock deadline; zero means none.
	Timeout time.Duration
	// CPU caps the CPU time the run's VMs use, host functions included
	// (enforced on Linux, where threads have CPU clocks).
	CPU time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.Instructions <= 0 {
		l.Instructions = DefaultInstructions
	}
	if l.RunInstructions <= 0 {
		l.RunInstructions = DefaultRunInstructions
	}
	if l.FanoutArms <= 0 {
		l.FanoutArms = DefaultFanoutArms
	}
	if l.MaxString <= 0 {
		l.MaxString = DefaultMaxString
	}
	if l.CPU <= 0 {
		l.CPU = DefaultCPU
	}
	return l
}

// maxArrayIndex bounds gopher-lua's array part: assigning t[i] pads the
// array with nils up to i in one instruction, which at gopher-lua's
// default (2^26) made `t[6e7] = 1` allocate gigabytes for tens of seconds.
// Larger integer keys live in the hash part, where `#` does not see them
// (as past 2^26 before); a VM cannot fill an array this long by index
// within its instruction budget.
const maxArrayIndex = 1 << 22

func init() {
	if lua.MaxArrayIndex > maxArrayIndex {
		lua.MaxArrayIndex = maxArrayIndex
	}
}

// Budget is the budget of one run, shared by all its VMs: nothing the run
// does escapes it. It trips once; every VM of the run then stops at its
// next instruction with the same Quota, and the context from Bind ends so
// that blocking host calls (model requests) return.
type Budget struct {
	lim     Limits
	heap    *HeapGuard
	instr   atomic.Int64
	arms    atomic.Int64
	tripped atomic.Pointer[QuotaError]

	mu     sync.Mutex
	cancel context.CancelFunc
	timer  *time.Timer
	once   sync.Once

	// CPU accounting: the OS threads the run's VMs are locked to, each
	// with its CPU clock when the run started using it, and the CPU of
	// the threads the run has left.
	cpuMu    sync.Mutex
	threads  map[int]*runThread
	cpuDone  time.Duration
	cpuWatch sync.Once
	stop     chan struct{}
}

type runThread struct {
	base time.Duration
	refs int
}

// NewBudget starts a run's budget: its heap watchdog runs (when
// lim.HeapBytes > 0) until Stop.
func NewBudget(lim Limits) *Budget {
	lim = lim.withDefaults()
	b := &Budget{lim: lim, threads: map[int]*runThread{}, stop: make(chan struct{})}
	if lim.HeapBytes > 0 {
		b.heap = NewHeapGuard(lim.HeapBytes)
		b.heap.Start()
	}
	return b
}

// Limits returns the budget's limits with defaults applied.
func (b *Budget) Limits() Limits { return b.lim }

// Heap returns the run's heap guard (nil without a heap limit).
func (b *Budget) Heap() *HeapGuard { return b.heap }

// Bind returns a context that ends with parent, when the budget trips, or
// at the deadline. The run must use it for everything it starts.
func (b *Budget) Bind(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	b.mu.Lock()
	defer b.mu.Unlock()
	prev := b.cancel
	b.cancel = func() {
		if prev != nil {
			prev()
		}
		cancel()
	}
	if b.tripped.Load() != nil {
		cancel()
	}
	if b.lim.Timeout > 0 && b.timer == nil {
		b.timer = time.AfterFunc(b.lim.Timeout, func() {
			b.Trip(&QuotaError{Resource: ResTime, Limit: b.lim.Timeout.String()})
		})
	}
	return ctx
}

// Quota returns the quota that tripped the budget (its heap guard
// included), or nil.
func (b *Budget) Quota() *QuotaError {
	if b == nil {
		return nil
	}
	if q := b.tripped.Load(); q != nil {
		return q
	}
	if b.heap != nil {
		if q := b.heap.Tripped(); q != nil {
			b.Trip(q)
			return q
		}
	}
	return nil
}

// Trip stops the run with q (the first quota wins).
func (b *Budget) Trip(q *QuotaError) {
	if !b.tripped.CompareAndSwap(nil, q) {
		return
	}
	b.mu.Lock()
	c := b.cancel
	b.mu.Unlock()
	if c != nil {
		c()
	}
}

// charge adds n instructions to the run's count and trips the budget
// when it passes the run limit.
func (b *Budget) charge(n int64) *QuotaError {
	if b.instr.Add(n) > b.lim.RunInstructions {
		b.Trip(&QuotaError{Resource: ResRunInstruction, Limit: fmt.Sprint(b.lim.RunInstructions)})
	}
	return b.Quota()
}

// Instructions returns the instructions charged to the run so far (in
// steps of HookEvery per VM).
func (b *Budget) Instructions() int64 { return b.instr.Load() }

// EnterArm counts one fanout arm; past the cap it trips the budget.
func (b *Budget) EnterArm() *QuotaError {
	if b.arms.Add(1) > b.lim.FanoutArms {
		b.Trip(&QuotaError{Resource: ResFanoutArm, Limit: fmt.Sprint(b.lim.FanoutArms)})
	}
	return b.Quota()
}

// Stop ends the watchdog and the deadline. When the run ended on a quota,
// the memory it held goes back to the operating system: a runaway must not
// leave the host (an editor's language server) large.
func (b *Budget) Stop() {
	b.once.Do(func() {
		if b.heap != nil {
			b.heap.Stop()
		}
		b.mu.Lock()
		if b.timer != nil {
			b.timer.Stop()
		}
		b.mu.Unlock()
		close(b.stop)
		if b.Quota() != nil {
			// The run's VMs are closed by now; what they referenced is
			// garbage. Return it in the background so the caller gets its
			// result at once.
			go debug.FreeOSMemory()
		}
	})
}

// enterThread locks the calling goroutine (a VM about to run) to its OS
// thread and starts counting that thread's CPU time for the run. Each
// call is paired with leaveThread on the same goroutine.
func (b *Budget) enterThread() int {
	if !cpuClockSupported {
		return 0
	}
	runtime.LockOSThread()
	tid := currentThread()
	b.cpuMu.Lock()
	defer b.cpuMu.Unlock()
	if th := b.threads[tid]; th != nil {
		th.refs++
		return tid
	}
	base, _ := threadCPU(tid)
	b.threads[tid] = &runThread{base: base, refs: 1}
	b.cpuWatch.Do(func() { go b.watchCPU() })
	return tid
}

// leaveThread ends what enterThread started.
func (b *Budget) leaveThread(tid int) {
	if !cpuClockSupported {
		return
	}
	b.cpuMu.Lock()
	if th := b.threads[tid]; th != nil {
		th.refs--
		if th.refs == 0 {
			if now, ok := threadCPU(tid); ok {
				b.cpuDone += now - th.base
			}
			delete(b.threads, tid)
		}
	}
	b.cpuMu.Unlock()
	runtime.UnlockOSThread()
}

// CPU returns the CPU time the run's VMs have used so far (zero where
// threads have no CPU clocks).
func (b *Budget) CPU() time.Duration {
	b.cpuMu.Lock()
	defer b.cpuMu.Unlock()
	used := b.cpuDone
	for tid, th := range b.threads {
		if now, ok := threadCPU(tid); ok {
			used += now - th.base
		}
	}
	return used
}

// cpuPeriod is how often the CPU budget is checked.
const cpuPeriod = 5 * time.Millisecond

func (b *Budget) watchCPU() {
	t := time.NewTicker(cpuPeriod)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			if b.Quota() != nil {
				return
			}
			if b.CPU() > b.lim.CPU {
				b.Trip(&QuotaError{Resource: ResCPU, Limit: b.lim.CPU.String()})
				return
			}
		}
	}
}
