package checker_test

import (
	"os"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// FuzzCheck feeds arbitrary files to the whole checker. The driver turns
// analyzer panics into `internal` diagnostics, so any such diagnostic is a
// failure, as is a span outside the file.
func FuzzCheck(f *testing.F) {
	for _, s := range analysistest.Corpus(f) {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("---\nname: x\n---\n# T\n```lua\ntools.add_local(\n```\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := parse.Parse("f.md", b)
		for _, d := range checker.Check(p, nil) {
			if d.Code == analysis.CodeInternal {
				t.Fatalf("internal error: %s", d.Message)
			}
			if d.Span.Start < 0 || d.Span.End > len(b) || d.Span.End < d.Span.Start {
				t.Fatalf("span %v outside a %d-byte file: %s", d.Span, len(b), d.Message)
			}
			for _, fx := range d.SuggestedFixes {
				for _, e := range fx.Edits {
					if e.Span.Start < 0 || e.Span.End > len(b) || e.Span.End < e.Span.Start {
						t.Fatalf("fix edit %v outside the file: %s", e.Span, d.Message)
					}
				}
			}
		}
	})
}
