package program

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis/cores"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// forEach calls work once per item, each worker with its own number,
// and raises a worker's panic again on the caller (the analysis driver
// recovers panics on its own goroutine only).
func TestForEach(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, parallelFrom - 1, parallelFrom, 1000} {
		seen := make([]atomic.Int32, n)
		k := workers(n)
		if n >= parallelFrom && k < 2 {
			t.Errorf("%d items: %d workers with GOMAXPROCS 4", n, k)
		}
		forEach(n, func(w, i int) {
			if w < 0 || w >= k {
				t.Errorf("worker %d of %d", w, k)
			}
			seen[i].Add(1)
		})
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("%d items: item %d done %d times", n, i, c)
			}
		}
	}
	for _, at := range []int{0, 500, 999} {
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("panic at item %d: recovered %v, want boom", at, r)
				}
			}()
			forEach(1000, func(_, i int) {
				if i == at {
					panic("boom")
				}
			})
			t.Errorf("panic at item %d: forEach returned", at)
		}()
	}
}

// A panic of the evaluation StartFacts runs on its own goroutine is
// raised again in every caller of Facts, those waiting for it included,
// none is left waiting, and the cores taken for helpers are given back
// (before, a panic ahead of their start left them counted busy, and the
// process never had a helper again).
func TestStartFactsPanic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	busy := cores.Busy()
	parse.ResetCache()
	p := Build(parse.Parse("p.md", parsetest.Realistic(3000)))
	if workers(len(p.Chunks)) < 2 {
		t.Fatalf("%d chunks: one worker", len(p.Chunks))
	}
	p.Sections = append(p.Sections, nil) // the evaluation panics on it
	p.StartFacts()
	var wg sync.WaitGroup
	var raised atomic.Int32
	for range 8 {
		wg.Go(func() {
			defer func() {
				if recover() != nil {
					raised.Add(1)
				}
			}()
			p.Facts(p.Chunks[0])
		})
	}
	wg.Wait()
	if n := raised.Load(); n != 8 {
		t.Errorf("%d of 8 callers of Facts saw the panic", n)
	}
	// Started helpers give their cores back as they stop, after the
	// panic reached the callers.
	deadline := time.Now().Add(10 * time.Second) // failure bound only
	for cores.Busy() != busy {
		if time.Now().After(deadline) {
			t.Fatalf("%d cores counted busy after the evaluation panicked, %d before", cores.Busy(), busy)
		}
		runtime.Gosched()
	}
}
