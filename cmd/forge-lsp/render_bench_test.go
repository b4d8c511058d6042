package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRenderVsCheck execs `forge-lsp render` and `forge-lsp check`
// on the same generated 10,000-line prompt (generatedPrompt: the shape of
// bench/genprompt.py), interleaved, and reports their median CPU times,
// user plus system, and the ratio render/check (budget 3). render runs
// the prompt through the engine with the symbolic gateway, counts every
// round's tokens and prints the rounds; check parses and analyses it.
func BenchmarkRenderVsCheck(b *testing.B) {
	dir := b.TempDir()
	binary := productBinary(b, dir)
	prompt, _ := generatedPrompt(10000)
	pf := filepath.Join(dir, "gen.md")
	if err := os.WriteFile(pf, []byte(prompt), 0o644); err != nil {
		b.Fatal(err)
	}
	const runs = 5
	for i := 0; i < b.N; i++ {
		var rc, cc, rw, cw []time.Duration
		for k := 0; k < runs; k++ {
			cpu, wall := cpuExec(b, 0, binary, "render", pf)
			rc, rw = append(rc, cpu), append(rw, wall)
			cpu, wall = cpuExec(b, 0, binary, "check", pf)
			cc, cw = append(cc, cpu), append(cw, wall)
		}
		mr, mc := median(rc), median(cc)
		b.ReportMetric(float64(mr)/1e6, "render-cpu-ms")
		b.ReportMetric(float64(mc)/1e6, "check-cpu-ms")
		b.ReportMetric(float64(median(rw))/1e6, "render-ms")
		b.ReportMetric(float64(median(cw))/1e6, "check-ms")
		b.ReportMetric(float64(mr)/float64(mc), "render/check")
	}
}
