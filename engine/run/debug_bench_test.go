package run

import (
	"context"
	"sort"
	"testing"
	"time"
)

// idleHook is a debugger with no breakpoints: it is asked at every pause
// point and never stops.
type idleHook struct{ nopObserver }

func (idleHook) Pause(*PausePoint) error { return nil }
func (idleHook) StoreWrite(StoreEvent)   {}

// BenchmarkWalk1000Hook runs the 1,000-section walk of BenchmarkWalk1000
// with an idle Hook installed and reports its cost as a ratio to the same
// walk without one, the two measured alternately in the same run:
//
//	go test -run '^$' -bench Walk1000Hook -benchtime 10x -count 3 ./engine/run/
func BenchmarkWalk1000Hook(b *testing.B) {
	const n = 1000
	p := mustParse(b, walkPrompt(n))
	walk := func(obs Observer) time.Duration {
		start := time.Now()
		res, err := Run(context.Background(), p, Config{Observer: obs, Limits: Limits{MaxSectionEntries: n + 1}})
		if err != nil || res != "1000" {
			b.Fatalf("%q %v", res, err)
		}
		return time.Since(start)
	}
	walk(nil)
	// Each iteration walks without and with the hook back to back, so
	// both see the same load; the median of the pairs' ratios is
	// reported, which a burst of load on a shared machine does not move.
	ratios := make([]float64, 0, b.N)
	var with, without time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wo, w time.Duration
		// Alternate the order so that neither side is always second.
		if i%2 == 0 {
			wo, w = walk(nopObserver{}), walk(idleHook{})
		} else {
			w, wo = walk(idleHook{}), walk(nopObserver{})
		}
		without += wo
		with += w
		ratios = append(ratios, float64(w)/float64(wo))
	}
	b.StopTimer()
	sort.Float64s(ratios)
	b.ReportMetric(float64(with.Microseconds())/float64(b.N), "µs/walk-hook")
	b.ReportMetric(float64(without.Microseconds())/float64(b.N), "µs/walk")
	b.ReportMetric(ratios[len(ratios)/2], "x-nohook")
}
