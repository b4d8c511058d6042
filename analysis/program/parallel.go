package program

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/analysis/cores"
)

// parallelFrom is the number of chunks from which a build spreads its
// per-chunk work (lexing and walking each chunk, evaluating each
// section) over the cores: on a large prompt that work is most of a
// cold analysis, and every analyzer waits for it. A smaller prompt is
// built on one goroutine, where starting others costs more than they
// save.
const parallelFrom = 64

// parallelBatch is how many items a worker takes at a time: items are
// handed out in order in batches, so a worker that drew cheap items
// takes more.
const parallelBatch = 8

// workers returns how many goroutines forEach uses for n items at most:
// the caller and, while cores are idle (analysis/cores), helpers.
func workers(n int) int {
	if n < parallelFrom {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), 4, n/parallelBatch))
}

// forEach calls work(w, i) for every i < n, where w < workers(n)
// numbers the goroutine running it (for its scratch state). The caller
// is one worker; the others are helpers on cores no analysis is using
// (cores.Help), so when other analyses keep every core busy the calls
// run in order on the calling goroutine. Otherwise they run in no fixed
// order, and forEach returns when all are done. work must not depend on
// the order. A panic in work is raised again on the calling goroutine
// (where the analysis driver recovers it), never left to crash the
// process.
func forEach(n int, work func(w, i int)) {
	k := 1
	if w := workers(n); w > 1 {
		k += cores.Help(w - 1)
	}
	if k == 1 {
		for i := range n {
			work(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[any]
	run := func(w int) {
		for {
			lo := int(next.Add(parallelBatch)) - parallelBatch
			if lo >= n {
				return
			}
			for i := lo; i < min(lo+parallelBatch, n); i++ {
				work(w, i)
			}
		}
	}
	wg.Add(k - 1)
	for w := 1; w < k; w++ {
		go func() {
			defer wg.Done()
			defer cores.Release(1)
			defer func() {
				if r := recover(); r != nil {
					failed.CompareAndSwap(nil, &r)
					next.Store(int64(n)) // the others stop at their next batch
				}
			}()
			run(w)
		}()
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				next.Store(int64(n))
				wg.Wait()
				panic(r)
			}
		}()
		run(0)
	}()
	wg.Wait()
	if r := failed.Load(); r != nil {
		panic(*r)
	}
}
