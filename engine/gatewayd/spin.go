package gatewayd

import (
	"cmp"
	"sync/atomic"
	"time"
)

// spinGap is the longest a poll may take: longer, and another thread ran
// on the core meanwhile (sched_yield gave it away), so the machine has
// no idle core and the wait parks.
const spinGap = 20 * time.Microsecond

// spinBackoff is how many waits a connection parks at once after a poll
// that ran out before its bytes came or found the core wanted by another
// thread: a caller that pauses between requests, an endpoint that takes
// longer than the budget to answer (a model does) or a busy machine
// costs one poll in spinBackoff+1 waits.
const spinBackoff = 64

// spinning is whether a goroutine of the process is polling a socket: at
// most one does, so the polls of the process never take more than one
// core.
var spinning atomic.Bool

// spinWait is one wait for a socket's bytes that may poll it for up to
// budget before the goroutine parks (docs/gateway.md#performance). A
// parked goroutine whose process has nothing else to run leaves its core
// to the kernel's idle loop, and on a virtual machine the next bytes then
// cost a wake-up of that core (an inter-processor interrupt and the
// host's scheduling of the core): at one connection, four of them per
// request through a proxy, against two when the endpoint is called
// directly. A goroutine that polls keeps its core awake, and the process
// it waits for, woken there, runs at once. It polls only while its
// request is the process's only work (active at most most), never when
// another goroutine polls, and gives its core to any other runnable
// thread at each poll (sched_yield), and parks as soon as one took it
// (spinGap): it uses a core that would otherwise idle.
type spinWait struct {
	budget time.Duration
	active *atomic.Int64
	most   int64
	// gap is the longest a poll may take (spinGap when zero).
	gap time.Duration

	until, last time.Time
	held        bool
	// missed: the budget ran out before the bytes came, or another
	// thread wanted the core.
	missed bool
}

// again is called when a poll found nothing: it reports whether to poll
// again (after yielding the core) or to park.
func (w *spinWait) again() bool {
	if w.budget <= 0 || !canSpin {
		return false
	}
	if w.active.Load() > w.most {
		w.stop()
		return false
	}
	now := time.Now()
	if !w.held {
		if !spinning.CompareAndSwap(false, true) {
			w.budget = 0
			return false
		}
		w.held, w.until = true, now.Add(w.budget)
	} else if !now.Before(w.until) || now.Sub(w.last) > cmp.Or(w.gap, spinGap) {
		w.missed = true
		w.stop()
		return false
	}
	w.last = now
	osYield()
	return true
}

// stop ends the wait's polling: it parks from now on.
func (w *spinWait) stop() {
	if w.held {
		spinning.Store(false)
		w.held = false
	}
	w.budget = 0
}

// spinFor is the wait's budget for a connection that skips polls for
// skip more waits after a miss (it counts them down).
func spinFor(budget time.Duration, skip *int) time.Duration {
	if budget <= 0 || !canSpin {
		return 0
	}
	if *skip > 0 {
		*skip--
		return 0
	}
	return budget
}
