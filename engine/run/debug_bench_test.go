package run

import (
	"context"
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
	// The fastest of the alternating walks is compared: on a shared
	// machine, slower samples measure the neighbours.
	with, without := time.Duration(1<<62), time.Duration(1<<62)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		without = min(without, walk(nopObserver{}))
		with = min(with, walk(idleHook{}))
	}
	b.StopTimer()
	b.ReportMetric(float64(with.Microseconds()), "µs/walk-hook")
	b.ReportMetric(float64(without.Microseconds()), "µs/walk")
	b.ReportMetric(float64(with)/float64(without), "x-nohook")
}
