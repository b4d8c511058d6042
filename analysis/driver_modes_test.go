package analysis_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// BenchmarkRunModes runs the checker's analyzers on realistic prompts of
// growing size, one after another on a single goroutine and with a
// goroutine per analyzer, in the same loop, and reports each mode's time
// and concurrent/serial: below 1 the cores pay for the goroutines. Run's
// concurrentFrom threshold sits where the ratio crosses 1 on two cores.
func BenchmarkRunModes(b *testing.B) {
	for _, lines := range []int{20, 100, 200, 400, 1000, 10000} {
		src := parsetest.Realistic(lines)
		p := parse.Parse("p.md", src)
		b.Run(fmt.Sprintf("%dKiB", len(src)>>10), func(b *testing.B) {
			var serial, concurrent time.Duration
			for i := 0; i < b.N; i++ {
				serial += timeRun(b, p, math.MaxInt)
				concurrent += timeRun(b, p, 0)
			}
			b.ReportMetric(float64(serial.Microseconds())/float64(b.N), "serial-µs")
			b.ReportMetric(float64(concurrent.Microseconds())/float64(b.N), "concurrent-µs")
			b.ReportMetric(float64(concurrent)/float64(serial), "concurrent/serial")
		})
	}
}

// TestRunModesAgree: the serial and the concurrent driver report the same
// diagnostics, in the same order, on prompts with and without findings.
func TestRunModesAgree(t *testing.T) {
	broken := strings.NewReplacer("models.use(\"analyst\")", "models.use(\"analist\")", "tools.add({\"fetch\"})", "tools.add({\"fetc\"})",
		"total = total + k", "totl = total + k", "{{ var.step_", "{{ var.stp_").Replace(string(parsetest.Realistic(300)))
	for name, src := range map[string]string{"clean": string(parsetest.Realistic(300)), "broken": broken} {
		p := parse.Parse("p.md", []byte(src))
		run := func(concurrentFrom int) []analysis.Diagnostic {
			defer analysis.SetConcurrentFrom(concurrentFrom)()
			ds, err := analysis.Run(context.Background(), p, checker.Analyzers, nil)
			if err != nil {
				t.Fatal(err)
			}
			return ds
		}
		serial, concurrent := run(math.MaxInt), run(0)
		if !reflect.DeepEqual(serial, concurrent) {
			t.Errorf("%s: serial and concurrent differ:\n%v\n%v", name, serial, concurrent)
		}
		if name == "broken" && len(serial) < 4 {
			t.Errorf("broken prompt: %d diagnostics, want at least 4: %v", len(serial), serial)
		}
	}
}

func timeRun(b *testing.B, p *parse.Prompt, concurrentFrom int) time.Duration {
	restore := analysis.SetConcurrentFrom(concurrentFrom)
	defer restore()
	t0 := time.Now()
	if _, err := analysis.Run(context.Background(), p, checker.Analyzers, nil); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}
