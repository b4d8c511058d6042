package loop_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/loop"
	"github.com/forge-lsp/forge-lsp/engine/tools"
)

// BenchmarkRoundOverhead measures what the engine adds to one model round
// (request building, JSON encoding, reply validation, tool dispatch,
// envelope, history) on top of the bare HTTP exchange with the same
// zero-latency local server. The baseline posts the identical request
// bytes with net/http and reads the reply, in the same run. Metrics:
// overhead-us/round (target < 1000) and x-baseline (engine / bare HTTP).
func BenchmarkRoundOverhead(b *testing.B) {
	srv := gatewaytest.New(b, key)
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		if gatewaytest.HasToolResult(req) {
			return gatewaytest.Text("final answer")
		}
		return gatewaytest.Calls("web", `{"q":"x"}`)
	}
	env, _ := tools.NewEnvelope()
	p := &loop.Params{Client: gateway.New(srv.Config()), Model: loop.Model{ID: "test-model"}, Envelope: env, Loop: true, MaxIterations: 24,
		Count: func(string) {}}
	for _, n := range []string{"web", "read", "write"} {
		p.Scope = append(p.Scope, bind(&echoTool{name: n, untrusted: n == "web"}))
	}
	// Baseline: the same two requests, raw.
	var bodies [][]byte
	{
		var h []gateway.Message
		if _, err := loop.Run(context.Background(), p, &h, "prompt text"); err != nil {
			b.Fatal(err)
		}
		for _, ex := range srv.Received() {
			bodies = append(bodies, ex.Body)
		}
	}
	hc := &http.Client{}
	post := func(body []byte) {
		req, _ := http.NewRequest("POST", srv.BaseURL()+"/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		for _, body := range bodies {
			post(body)
		}
	}
	base := time.Since(t0)
	t1 := time.Now()
	for i := 0; i < b.N; i++ {
		var h []gateway.Message
		if _, err := loop.Run(context.Background(), p, &h, "prompt text"); err != nil {
			b.Fatal(err)
		}
	}
	eng := time.Since(t1)
	rounds := float64(2 * b.N)
	b.ReportMetric(float64((eng-base).Microseconds())/rounds, "overhead-us/round")
	b.ReportMetric(float64(eng)/float64(base), "x-baseline")
	b.ReportMetric(float64(eng.Microseconds())/rounds, "engine-us/round")
}
