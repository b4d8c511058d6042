package lsp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// symbolsDoc is a prompt of n sections, each declaring a model and a
// local tool and jumping to the next section.
func symbolsDoc(n int) string {
	var b strings.Builder
	b.WriteString("---\nname: s\ndescription: d\npromptforge: 1\n---\n# S\n\n```lua\nmodels.default(\"w\", \"a writer\")\n```\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nmodels.add(\"m%d\", \"a writer\")\njump(\"## S%d\")\n```\n\nSay hello.\n\n", i, i, i+1)
	}
	return b.String()
}

// BenchmarkDocumentSymbolScale reports documentSymbol's cost per byte of
// the document at n and 4n sections (or declarations on one line), and
// their ratio: about 1 when the request is linear in the document.
func BenchmarkDocumentSymbolScale(b *testing.B) {
	for _, tc := range []struct {
		name string
		gen  func(int) string
		n    int
	}{
		{"sections", symbolsDoc, 1000}, // 4n: about 200 KB
	} {
		b.Run(tc.name, func(b *testing.B) {
			// No background analysis: each request parses and indexes the
			// edited document itself, as the first request after an edit
			// does.
			c := startServer(b, options{Debounce: time.Hour})
			c.initialize(nil)
			docs := []string{tc.gen(tc.n), tc.gen(4 * tc.n)}
			var per [2]float64
			for k, text := range docs {
				uri := fmt.Sprintf("file:///bench/sym%d.md", k)
				c.open(uri, text)
				params := map[string]any{"textDocument": map[string]any{"uri": uri}}
				var syms []protocol.DocumentSymbol
				var total time.Duration
				for i := 0; i < b.N; i++ {
					c.change(uri, int32(i+2), fmt.Sprintf("%s\n<!-- edit %d -->\n", text, i))
					t0 := time.Now()
					c.mustCall(protocol.MethodTextDocumentDocumentSymbol, params, &syms)
					total += time.Since(t0)
				}
				if want := 2 + (1+3*k)*tc.n; len(syms) != want { // frontmatter, H1, sections
					b.Fatalf("%d top-level symbols, want %d", len(syms), want)
				}
				per[k] = float64(total.Nanoseconds()) / float64(b.N) / float64(len(text))
			}
			b.ReportMetric(per[0], "ns/byte@n")
			b.ReportMetric(per[1], "ns/byte@4n")
			b.ReportMetric(per[1]/per[0], "growth")
		})
	}
}
