package lsp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// BenchmarkRangeFormatting measures textDocument/rangeFormatting over one
// Lua fence of a 10,000-line prompt, through the real server, as an
// editor sends it on Format Selection. It reports p50 and p99 and, as the
// baseline measured in the same run, the p99 of a hover at the same
// place. The target is a p99 of at most 5 ms.
func BenchmarkRangeFormatting(b *testing.B) {
	text := benchPrompt(10000, 1)
	uri := "file:///bench/big.md"
	at := strings.Index(text, "## Step 100\n")
	from := at + strings.Index(text[at:], "local total")
	to := from + strings.Index(text[from:], "end)")
	line := func(off int) uint32 { return uint32(strings.Count(text[:off], "\n")) }
	rng := protocol.Range{Start: protocol.Position{Line: line(from)}, End: protocol.Position{Line: line(to), Character: 4}}
	params := map[string]any{"textDocument": map[string]any{"uri": uri}, "range": rng, "options": map[string]any{"tabSize": 4}}
	hover := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": rng.Start}
	c := startServer(b, options{Debounce: -1})
	c.initialize(nil)
	c.open(uri, text)
	measure := func(method string, p any, check func(json.RawMessage)) []time.Duration {
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			var res json.RawMessage
			c.mustCall(method, p, &res)
			lat = append(lat, time.Since(t0))
			check(res)
		}
		return lat
	}
	base := measure(protocol.MethodTextDocumentHover, hover, func(json.RawMessage) {})
	b.ResetTimer()
	lat := measure(protocol.MethodTextDocumentRangeFormatting, params, func(res json.RawMessage) {
		var edits []protocol.TextEdit
		if err := json.Unmarshal(res, &edits); err != nil || len(edits) != 1 || !strings.Contains(edits[0].NewText, "\ttotal = total + k") {
			b.Fatalf("unexpected edits %s", res)
		}
	})
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(ms(percentile(base, 99)), "hover-p99-ms")
	b.ReportMetric(float64(p99)/float64(percentile(base, 99)), "p99/hover-p99")
}
