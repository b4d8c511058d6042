package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/store"
)

// BenchmarkFanout64x50ms runs a prompt whose section fans out over 64
// items; each arm's prose makes one model call that the gateway answers
// after 50 ms. With 8 arms at a time the ideal schedule is 8 waves of
// 50 ms = 400 ms. Metrics:
//   - x-ideal: wall time / 400 ms (acceptance: <= 1.15);
//   - x-baseline: wall time / the same 64 calls made by 8 bare HTTP
//     workers against the same server, measured in this run.
func BenchmarkFanout64x50ms(b *testing.B) {
	const arms, width, latency = 64, 8, 50 * time.Millisecond
	srv := gatewaytest.New(b, testKey)
	srv.Latency = latency
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		return gatewaytest.Text("done " + gatewaytest.LastUserContent(req))
	}
	items := make([]string, arms)
	for i := range items {
		items[i] = fmt.Sprint(i + 1)
	}
	src := prompt("", defModel, "## S\n\n```lua\nlocal items = {}\nfor i = 1, 64 do items[i] = i end\nlocal r = fanout(\"### W\", items)\nreturn tostring(#r) .. \" \" .. tostring(r[64])\n```\n\n### W\n\n---\n\nItem {{ item }}\n")
	p := parse.Parse("bench.md", []byte(src))
	client := gateway.New(srv.Config())
	cfg := Config{Store: store.New(), Models: ModelConfig{Client: client, Catalog: srv.Catalog}}
	if got, err := Run(context.Background(), p, cfg); err != nil || got != "64 done Item 64" {
		b.Fatalf("%q %v", got, err)
	}
	body := []byte(`{"model":"test-model","messages":[{"role":"user","content":"Item 1"}]}`)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: width}}
	baseline := func() time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for w := 0; w < width; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < arms/width; i++ {
					req, _ := http.NewRequest("POST", srv.BaseURL()+"/chat/completions", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+testKey)
					resp, err := hc.Do(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	var eng, base time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base += baseline()
		start := time.Now()
		got, err := Run(context.Background(), p, cfg)
		eng += time.Since(start)
		if err != nil || !strings.HasPrefix(got, "64 ") {
			b.Fatalf("%q %v", got, err)
		}
	}
	ideal := time.Duration(arms/width) * latency
	b.ReportMetric(float64(eng)/float64(b.N)/float64(ideal), "x-ideal")
	b.ReportMetric(float64(eng)/float64(base), "x-baseline")
	b.ReportMetric(float64(eng.Milliseconds())/float64(b.N), "ms/run")
}
