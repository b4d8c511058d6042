package mcp

import (
	"context"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// BenchmarkConcurrentRuns sends 20 run_prompt calls at once to a server
// with max_concurrent_runs = 4, against a gateway that answers each
// completion after 50 ms. Ideally the 20 one-round runs take 5 rounds of
// 50 ms; x-ideal is the measured wall time over those 250 ms (1.00 is
// perfect; the admission and run set-up overhead is the rest), averaged
// over the iterations; x-ideal-best is the fastest iteration, which is
// what the server can do when the machine is not busy with other work;
// x-baseline divides by a baseline measured in the same iteration: the
// same 20 completions sent straight to the gateway with engine/gateway's
// client, 4 at a time, so that what the machine adds to every HTTP
// round trip is in both.
func BenchmarkConcurrentRuns(b *testing.B) {
	const calls, slots, latency = 20, 4, 50 * time.Millisecond
	f := newFixture(b, map[string]string{"ask.md": askPrompt}, "max_concurrent_runs = 4\n")
	f.gw.Latency = latency
	f.gw.Script = func(*gateway.Request) gatewaytest.Reply { return gatewaytest.Text("ok") }
	cs := f.connect(nil)
	ideal := time.Duration(calls/slots) * latency
	var total, baseline time.Duration
	best := time.Duration(1 << 62)
	direct := gateway.New(f.gw.Config())
	req := &gateway.Request{Model: "test-model", Messages: []gateway.Message{{Role: "user", Content: "q"}}}
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan string, calls)
		for range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_prompt", Arguments: map[string]any{"prompt": "ask", "args": "q"}})
				if err != nil || res.IsError {
					errs <- "a run failed"
				}
			}()
		}
		wg.Wait()
		took := time.Since(start)
		total += took
		best = min(best, took)
		close(errs)
		for e := range errs {
			b.Fatal(e)
		}
		errs = make(chan string, calls)

		start = time.Now()
		for range calls / slots {
			var round sync.WaitGroup
			for range slots {
				round.Add(1)
				go func() {
					defer round.Done()
					if _, err := direct.Complete(context.Background(), req); err != nil {
						errs <- err.Error()
					}
				}()
			}
			round.Wait()
		}
		baseline += time.Since(start)
		close(errs)
		for e := range errs {
			b.Fatal(e)
		}
	}
	b.ReportMetric(float64(total)/float64(b.N)/float64(ideal), "x-ideal")
	b.ReportMetric(float64(best)/float64(ideal), "x-ideal-best")
	b.ReportMetric(float64(total)/float64(baseline), "x-baseline")
}
