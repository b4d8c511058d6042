package oldforms_test

import (
	"context"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/analysis/passes/oldforms"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// BenchmarkOldForms10k measures what the oldforms pass adds to a full
// analysis of a 10,000-line prompt: every analyzer against every analyzer
// but oldforms, alternating in one run (the program is built once and
// shared, as in the editor).
func BenchmarkOldForms10k(b *testing.B) {
	p := parse.Parse("big.md", parsetest.Realistic(10000))
	var without []*analysis.Analyzer
	for _, a := range checker.Analyzers {
		if a != oldforms.Analyzer {
			without = append(without, a)
		}
	}
	ctx := context.Background()
	if _, err := analysis.Run(ctx, p, checker.Analyzers, nil); err != nil { // build the program once
		b.Fatal(err)
	}
	var with, base time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		analysis.Run(ctx, p, without, nil)
		t1 := time.Now()
		analysis.Run(ctx, p, checker.Analyzers, nil)
		base += t1.Sub(t0)
		with += time.Since(t1)
	}
	b.ReportMetric(float64(with.Microseconds())/float64(b.N)/1000, "all-ms/op")
	b.ReportMetric(float64(base.Microseconds())/float64(b.N)/1000, "without-oldforms-ms/op")
	b.ReportMetric(float64(with)/float64(base), "all/without")
}
