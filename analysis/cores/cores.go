// Package cores shares the process's cores between the analyses it runs.
//
// An analysis of a large prompt can spread work it would otherwise do
// later, or not at all, over idle cores (analysis/program evaluates
// sections ahead of need). When several analyses run at once, as in a
// language server with many documents open, no core is idle and that
// work only takes CPU from the others. So every running analysis counts
// as one busy core (Hold), and work ahead takes a core only while the
// count is below GOMAXPROCS (Help), giving it back when done (Release).
// Nothing ever waits for a core: the holder of an analysis does the work
// itself when no helper is free.
package cores

import (
	"runtime"
	"sync/atomic"
)

// busy counts the cores in use: one per running analysis, one per helper.
var busy atomic.Int64

// helped counts the cores Help has handed out.
var helped atomic.Int64

// Hold counts the caller's work (an analysis, a parse) as one busy core
// until release is called; release may be called more than once.
func Hold() (release func()) {
	busy.Add(1)
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			busy.Add(-1)
		}
	}
}

// Help takes up to n idle cores for helpers and returns how many it took
// (0 when every core is busy). Each taken core is given back by
// Release.
func Help(n int) int {
	limit := int64(runtime.GOMAXPROCS(0))
	got := 0
	for got < n {
		b := busy.Load()
		if b >= limit {
			break
		}
		if busy.CompareAndSwap(b, b+1) {
			got++
		}
	}
	helped.Add(int64(got))
	return got
}

// Release gives back n cores taken by Help.
func Release(n int) {
	busy.Add(-int64(n))
}

// Busy returns the number of cores counted busy now.
func Busy() int { return int(busy.Load()) }

// Helped returns how many cores Help has handed out since the process
// started (tests and benchmarks read it).
func Helped() int64 { return helped.Load() }
