package lsp

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// TestGCPercentFor: the pacer leaves gcHeadroom above a live heap
// smaller than that, but at most four times the live heap, and Go's
// default (100 %) above a large one.
func TestGCPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{gcHeadroom, 100},
		{4 * gcHeadroom, 100},
		{gcHeadroom / 2, 200},
		{gcHeadroom / 4, 400},
		{gcHeadroom / 8, 400},
		{1 << 20, 400},
		{20 << 20, 320},
		{35 << 20, 183},
		{48 << 20, 134},
	} {
		if got := gcPercentFor(tc.live); got != tc.want {
			t.Errorf("gcPercentFor(%d MB) = %d, want %d", tc.live>>20, got, tc.want)
		}
		if p := gcPercentFor(tc.live); tc.live > 0 && tc.live*uint64(p)/100+1 < max(tc.live, min(4*tc.live, gcHeadroom)) {
			t.Errorf("live %d: headroom %d below the aim", tc.live, tc.live*uint64(p)/100)
		}
	}
}

// TestGCPacer: while a server runs, each collection sets the GC percent
// for the live heap it found; when the last server stops, the previous
// setting is back.
func TestGCPacer(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the pacer stays off")
	}
	gogc := func() int {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return int(s[0].Value.Uint64())
	}
	gcPacer.mu.Lock()
	running := gcPacer.users
	gcPacer.mu.Unlock()
	if running != 0 {
		t.Fatalf("%d servers still run the pacer before the test", running)
	}
	before := gogc()
	stop := startGCPacer()
	stop2 := startGCPacer() // a second server shares the pacer
	// Each collection sets the percent for the live heap it found: a
	// larger live heap gets a smaller percent, never under 100.
	// paced waits until the pacer has set the percent for the live heap
	// the last collection found: it does so in a cleanup, which the
	// runtime runs on its own goroutine after the collection (late under
	// the race detector). It returns the percent and the one wanted.
	paced := func() (got, want int) {
		deadline := time.Now().Add(10 * time.Second) // failure bound only
		for {
			got, want = gogc(), gcPercentFor(liveHeap())
			if got == want || time.Now().After(deadline) {
				return got, want
			}
			runtime.Gosched()
		}
	}
	keep := make([]byte, 36<<20)
	for i := 0; i < 3; i++ {
		runtime.GC() // the sentinel of the cycle before is collected here
	}
	first, want := paced()
	if first != want || first <= 100 || first >= 200 {
		t.Errorf("GC percent %d with a live heap of %d MB, want %d (between 100 and 200)", first, liveHeap()>>20, want)
	}
	more := make([]byte, 12<<20)
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	if got, want := paced(); got != want || got >= first || got < 100 {
		t.Errorf("GC percent %d with a live heap of %d MB, want %d (below %d, at least 100)", got, liveHeap()>>20, want, first)
	}
	runtime.KeepAlive(keep)
	runtime.KeepAlive(more)
	stop()
	if gogc() == before && before != gcPercentFor(liveHeap()) {
		t.Errorf("the pacer stopped while a server still runs")
	}
	stop2()
	stop2() // stopping twice is harmless
	if got := gogc(); got != before {
		t.Errorf("GC percent %d after the last server stopped, want %d as before", got, before)
	}
}
