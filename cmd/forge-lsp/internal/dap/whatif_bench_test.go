package dap

import (
	"github.com/forge-lsp/forge-lsp/cmd/internal/proctime"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

// BenchmarkStepBack steps forward through the 200 stops of a loop, then
// back through them one by one, and reports how much longer a step back
// takes than a step forward (back/forward; docs/debugging.md#what-if).
// Every stop is read as an editor reads it (stack trace and locals).
// cpu-back/forward is the same ratio in the process's CPU time: the runs
// ahead of a step back (ahead.go) hide their re-runs behind the client's
// reading of the stop while a core is free, so on a busy machine the
// wall-time ratio drifts towards the CPU one.
func BenchmarkStepBack(b *testing.B) {
	const n = 200
	src := strings.Replace(loop, "for i = 1, 5 do", "for i = 1, 200 do", 1)
	prog := filepath.Join(b.TempDir(), "l.md")
	if err := os.WriteFile(prog, []byte(src), 0o600); err != nil {
		b.Fatal(err)
	}
	// Saved before the session, as a prompt being debugged usually is: a
	// file modified just now is read again at every re-run (readPrompt).
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(prog, old, old); err != nil {
		b.Fatal(err)
	}
	var fwd, back, cpuFwd, cpuBack time.Duration
	for it := 0; it < b.N; it++ {
		c := start(b, Options{})
		c.launch(LaunchArgs{Program: prog}, []int{12}, nil)
		look := func() {
			ev := c.stopped()
			fs := c.frames(ev.Body.ThreadId)
			c.scope(fs[0].Id, "Locals")
		}
		look()
		t0, c0 := time.Now(), proctime.CPU()
		for k := 1; k < n; k++ {
			c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
			look()
		}
		t1, c1 := time.Now(), proctime.CPU()
		for k := 1; k < n; k++ {
			c.call("stepBack", godap.StepBackArguments{ThreadId: mainThread})
			look()
		}
		t2, c2 := time.Now(), proctime.CPU()
		fwd += t1.Sub(t0)
		back += t2.Sub(t1)
		cpuFwd += c1 - c0
		cpuBack += c2 - c1
		c.call("disconnect", godap.DisconnectArguments{})
	}
	b.ReportMetric(float64(fwd.Microseconds())/float64(b.N*(n-1)), "µs/forward")
	b.ReportMetric(float64(back.Microseconds())/float64(b.N*(n-1)), "µs/back")
	b.ReportMetric(float64(back)/float64(fwd), "back/forward")
	if cpuFwd > 0 {
		b.ReportMetric(float64(cpuBack)/float64(cpuFwd), "cpu-back/forward")
	}
}
