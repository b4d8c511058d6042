package sandbox

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// HeapGuard is a run-wide heap watchdog. gopher-lua has no allocator hook,
// so the runtime bounds memory from outside: every VM of a run samples the
// process heap from its instruction counter, host functions check before
// large allocations, and once the heap has grown past the limit since the
// run started, every VM of the run stops with a memory Quota.
//
// The sample period shrinks as the heap nears the limit, because a single
// Lua instruction (a string concatenation) can double a large string.
type HeapGuard struct {
	base, limit int64
	tripped     atomic.Pointer[QuotaError]
	// near is 1 once growth passed a quarter of the limit, 2 past half.
	near     atomic.Int32
	mu       sync.Mutex
	nextGC   atomic.Int64
	stop     chan struct{}
	stopOnce sync.Once
}

const heapMetric = "/memory/classes/heap/objects:bytes"

// HeapBytes returns the bytes held by heap objects (live and not yet swept).
func HeapBytes() int64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// NewHeapGuard returns a guard that allows limit bytes of heap growth
// over the current heap. Start must be called to run its watchdog.
func NewHeapGuard(limit int64) *HeapGuard {
	return &HeapGuard{base: HeapBytes(), limit: limit, stop: make(chan struct{})}
}

// watchPeriod is the watchdog's sampling period. A single Lua
// instruction can allocate a lot (s = s .. s), but copying a large string
// takes far longer than this, so the watchdog sees the allocation while
// it is being filled and the VM stops at its next instruction.
const watchPeriod = time.Millisecond

// Start runs the watchdog goroutine until Stop.
func (g *HeapGuard) Start() {
	go func() {
		t := time.NewTicker(watchPeriod)
		defer t.Stop()
		for {
			select {
			case <-g.stop:
				return
			case <-t.C:
				if g.Check(0) != nil {
					return
				}
			}
		}
	}()
}

// Stop ends the watchdog; it is safe to call more than once.
func (g *HeapGuard) Stop() {
	g.stopOnce.Do(func() { close(g.stop) })
}

// every is the instruction sampling period.
func (g *HeapGuard) every() int64 {
	switch g.near.Load() {
	case 0:
		return 4096
	case 1:
		return 256
	}
	// Past half the limit every instruction samples: one concatenation
	// can double a string, and this is the only point before the next one.
	return 1
}

// Tripped returns the guard's quota once the limit was hit.
func (g *HeapGuard) Tripped() *QuotaError { return g.tripped.Load() }

// Check reports a quota when the heap plus extra bytes about to be
// allocated exceeds the limit. Before failing it collects garbage once,
// so that dead objects do not count.
func (g *HeapGuard) Check(extra int64) *QuotaError {
	if q := g.tripped.Load(); q != nil {
		return q
	}
	heap := HeapBytes()
	grown := heap - g.base + extra
	g.setNear(grown)
	if grown <= g.limit || heap < g.nextGC.Load() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if q := g.tripped.Load(); q != nil {
		return q
	}
	// Dead objects count in the sample; collect once before judging, and
	// not again until the heap grew by another quarter of the limit.
	runtime.GC()
	heap = HeapBytes()
	grown = heap - g.base + extra
	if grown <= g.limit {
		g.setNear(grown)
		g.nextGC.Store(heap + g.limit/4)
		return nil
	}
	q := &QuotaError{Resource: ResMemory, Detail: fmt.Sprintf("the run's heap would grow by %d MiB (limit %d MiB)", grown>>20, g.limit>>20)}
	g.tripped.Store(q)
	return q
}

func (g *HeapGuard) setNear(grown int64) {
	switch {
	case grown > g.limit/2:
		g.near.Store(2)
	case grown > g.limit/4:
		g.near.Store(1)
	default:
		g.near.Store(0)
	}
}
