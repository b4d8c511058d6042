package lsp

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The server's garbage collection is paced for editing: every analysis of
// a version allocates afresh (about 2 MB for a 10,000-line prompt) while
// the live heap stays small (the open documents' snapshots and the parse
// caches, 15-20 MB for one such prompt, 35-40 MB for 20), and the
// collector's cost per edit is the allocation divided by the headroom it
// leaves above the live heap; an edit during which a collection runs
// takes about 1.5 times as long, so the collections' frequency is the
// tail of didChange to diagnostics. With Go's default (GOGC=100: the
// headroom is the live heap) a server with a small live heap collects
// every few edits and spent about 10 % of its CPU on it in
// BenchmarkTyping. The pacer leaves at least gcHeadroom of headroom, but
// never more than four times the live heap (GOGC=400, which bounds the
// overshoot when the live heap jumps between two collections, as when a
// session opens 200 documents at once), and Go's default above a live
// heap of gcHeadroom, so a big workspace's memory does not grow:
//
//	heap goal = live + max(live, min(4 x live, gcHeadroom))
//
// The GOGC environment variable turns the pacer off; GOMEMLIMIT bounds
// the goal as always. See docs/lsp.md (performance) for the measurements.

// gcHeadroom is the headroom the pacer aims to leave above the live heap.
const gcHeadroom = 64 << 20

// gcMaxPercent bounds the GC percent the pacer sets (the headroom is at
// most gcMaxPercent/100 times the live heap).
const gcMaxPercent = 400

// gcPercentFor is the GOGC value the pacer sets for a live heap of live
// bytes: between Go's default 100 and gcMaxPercent.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return 100
	}
	return int(min(gcMaxPercent, max(100, (gcHeadroom*100+live-1)/live)))
}

// gcPacer runs while at least one server runs (servers share the
// process's collector): users counts them.
var gcPacer struct {
	mu    sync.Mutex
	users int
	// gen identifies the current run of the pacer: a sentinel of an
	// earlier run finds a different gen and stops re-arming.
	gen  uint64
	prev int // the GC percent before the pacer started
}

// startGCPacer starts pacing the collector unless GOGC is set, and
// returns the function that stops it (restoring the previous setting
// when the last server stops).
func startGCPacer() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	gcPacer.mu.Lock()
	defer gcPacer.mu.Unlock()
	gcPacer.users++
	if gcPacer.users == 1 {
		gcPacer.gen++
		gcPacer.prev = debug.SetGCPercent(gcPercentFor(liveHeap()))
		armGCPacer(gcPacer.gen)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			gcPacer.mu.Lock()
			defer gcPacer.mu.Unlock()
			gcPacer.users--
			if gcPacer.users == 0 {
				gcPacer.gen++ // the armed sentinel retires
				debug.SetGCPercent(gcPacer.prev)
			}
		})
	}
}

// gcSentinel is garbage made to learn when a collection has finished:
// its cleanup runs after the cycle that found it unreachable.
type gcSentinel struct{ _ [16]byte }

// armGCPacer allocates a sentinel whose cleanup, after the next
// collection, sets the GC percent for the live heap that collection
// found and arms the next sentinel, for as long as run gen is current.
func armGCPacer(gen uint64) {
	s := new(gcSentinel)
	runtime.AddCleanup(s, func(gen uint64) {
		gcPacer.mu.Lock()
		defer gcPacer.mu.Unlock()
		if gcPacer.gen != gen || gcPacer.users == 0 {
			return
		}
		debug.SetGCPercent(gcPercentFor(liveHeap()))
		armGCPacer(gen)
	}, gen)
}

// liveHeap is the heap the last collection found live (0 before any).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
