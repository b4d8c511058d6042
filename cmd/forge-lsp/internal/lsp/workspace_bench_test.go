package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// BenchmarkWorkspace500 puts 500 distinct 300-line prompts in a
// workspace folder, none of them open, and pulls workspace/diagnostic
// until every one is reported. It reports the time to check them all,
// the process's resident memory afterwards, and its growth over the
// resident memory before the server started (same run).
func BenchmarkWorkspace500(b *testing.B) {
	const n = 500
	dir := b.TempDir()
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%03d.md", i)), []byte(benchPrompt(300, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for it := 0; it < b.N; it++ {
		runtime.GC()
		baseRSS, _ := rssMB()
		t0 := time.Now()
		c := startServer(b, options{Debounce: -1})
		c.root = dir
		c.textDocumentCaps = map[string]any{"diagnostic": map[string]any{}}
		c.initialize(nil)
		var res struct {
			Items []workspaceDocumentReport `json:"items"`
		}
		c.mustCall(methodWorkspaceDiagnostic, map[string]any{"previousResultIds": []any{}}, &res)
		if len(res.Items) != n {
			b.Fatalf("%d reports, want %d", len(res.Items), n)
		}
		elapsed := time.Since(t0)
		runtime.GC()
		rss, _ := rssMB()
		var mem runtime.MemStats
		runtime.ReadMemStats(&mem)
		c.shutdown()
		b.ReportMetric(ms(elapsed), "check-all-ms")
		b.ReportMetric(rss, "rss-MB")
		b.ReportMetric(rss-baseRSS, "rss-growth-MB")
		b.ReportMetric(float64(mem.HeapAlloc)/(1<<20), "heap-MB")
	}
}
