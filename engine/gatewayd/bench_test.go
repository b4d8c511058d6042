package gatewayd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// BenchmarkServedLatency measures what the served gateway adds to one
// chat completion: the engine's client calls a scripted backend on
// loopback directly, and through `gateway serve`'s handler on loopback,
// alternately in the same run. It reports both p50s and the difference
// (added-p50-µs; docs/gateway.md#serving promises under 1 ms).
func BenchmarkServedLatency(b *testing.B) {
	body := []byte(`{"id":"c","object":"chat.completion","model":"gpt-mini","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"a short reply of a few words"}}],"usage":{"prompt_tokens":30,"completion_tokens":8,"total_tokens":38}}`)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer backend.Close()
	c, err := Load(write(b, b.TempDir(), "gw.toml", fileFor(backend.URL, "")), noEnv)
	if err != nil {
		b.Fatal(err)
	}
	g, err := New(c, Options{})
	if err != nil {
		b.Fatal(err)
	}
	served := httptest.NewServer(g)
	defer served.Close()
	direct := gateway.New(gateway.Config{BaseURL: backend.URL + "/v1", APIKey: backendKey})
	via := gateway.New(gateway.Config{BaseURL: served.URL + "/v1", APIKey: serverKey})
	msgs := []gateway.Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Say something short about the weather today."}}
	reqDirect := &gateway.Request{Model: "gpt-mini", Messages: msgs}
	reqVia := &gateway.Request{Model: "fast", Messages: msgs}
	ctx := context.Background()
	once := func(cl *gateway.Client, r *gateway.Request) time.Duration {
		t0 := time.Now()
		if _, err := cl.Complete(ctx, r); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	for range 50 { // warm the connection pools
		once(direct, reqDirect)
		once(via, reqVia)
	}
	var d, v []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d = append(d, once(direct, reqDirect))
		v = append(v, once(via, reqVia))
	}
	b.StopTimer()
	p50 := func(x []time.Duration) float64 {
		slices.Sort(x)
		return float64(x[len(x)/2].Nanoseconds()) / 1e3
	}
	pd, pv := p50(d), p50(v)
	b.ReportMetric(pd, "direct-p50-µs")
	b.ReportMetric(pv, "served-p50-µs")
	b.ReportMetric(pv-pd, "added-p50-µs")
	b.ReportMetric(pv/pd, "served/direct")
	b.ReportMetric(0, "ns/op")
}
