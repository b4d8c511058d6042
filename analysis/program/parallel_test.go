package program

import (
	"runtime"
	"sync/atomic"
	"testing"
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
