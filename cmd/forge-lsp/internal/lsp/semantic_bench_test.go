package lsp

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"go.lsp.dev/protocol"
)

// BenchmarkSemanticTokens measures textDocument/semanticTokens/full on a
// 10,000-line prompt over the pipe: "warm" asks again for an unchanged
// version (the parse is kept), "after-edit" right after a didChange, so
// the request also parses the new text. Each reports p50/p99 and the
// ratio to a bare parse of the same kind of edit, measured in the same
// run.
func BenchmarkSemanticTokens(b *testing.B) {
	const n = 10000
	variant := 1
	next := func() string { variant++; return benchPrompt(n, variant) }
	base := baseline(next, func(text []byte) { parse.Parse("/bench/big.md", text) })
	uri := "file:///bench/big.md"
	doc := map[string]any{"textDocument": map[string]any{"uri": uri}}
	for _, edit := range []bool{false, true} {
		name := "warm"
		if edit {
			name = "after-edit"
		}
		b.Run(name, func(b *testing.B) {
			c := startServer(b, options{Debounce: time.Hour})
			c.initialize(nil)
			c.open(uri, next())
			// The editor decodes the reply; the benchmark only frames it.
			var res json.RawMessage
			c.mustCall(protocol.MethodSemanticTokensFull, doc, &res)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if edit {
					b.StopTimer()
					quoted, _ := json.Marshal(next())
					frame := didChangeFrame(uri, int32(i+2), quoted)
					if _, err := c.raw.Write(frame); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				t0 := time.Now()
				c.mustCall(protocol.MethodSemanticTokensFull, doc, &res)
				lat = append(lat, time.Since(t0))
				if len(res) < 5*n {
					b.Fatalf("only %d bytes of tokens", len(res))
				}
			}
			p50, p99 := percentile(lat, 50), percentile(lat, 99)
			b.ReportMetric(ms(p50), "p50-ms")
			b.ReportMetric(ms(p99), "p99-ms")
			b.ReportMetric(ms(base), "bare-parse-ms")
			b.ReportMetric(float64(p50)/float64(base), "p50/bare-parse")
		})
	}
}
