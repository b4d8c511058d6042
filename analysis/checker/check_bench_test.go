package checker_test

import (
	"slices"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// BenchmarkValues10k measures a cold analysis (parse cache reset, so
// every per-chunk memo is empty) of a 10,000-line prompt: the median of
// checker.Check, the median of the abstract interpretation of its chunks
// alone (analysis/value, part of the check), the check's ratio to the
// parse of the same text and the interpretation's share of the check,
// all measured in the same run.
func BenchmarkValues10k(b *testing.B) {
	src := parsetest.Realistic(10000)
	var checks, parses, values []time.Duration
	for i := 0; i < b.N; i++ {
		parse.ResetCache()
		t0 := time.Now()
		p := parse.Parse("big.md", src)
		parses = append(parses, time.Since(t0))
		t1 := time.Now()
		checker.Check(p, nil)
		checks = append(checks, time.Since(t1))
		t2 := time.Now()
		for _, b := range p.H1Blocks {
			if b.Chunk != nil && len(b.Chunk.AST) > 0 {
				value.Interpret(b.Chunk.AST)
			}
		}
		var visit func([]*parse.Section)
		visit = func(ss []*parse.Section) {
			for _, s := range ss {
				for _, b := range s.Blocks {
					if b.Chunk != nil && len(b.Chunk.AST) > 0 {
						value.Interpret(b.Chunk.AST)
					}
				}
				visit(s.Children)
			}
		}
		visit(p.Sections)
		values = append(values, time.Since(t2))
	}
	med := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	mc, mp, mv := med(checks), med(parses), med(values)
	b.ReportMetric(float64(mc.Microseconds())/1000, "check-ms")
	b.ReportMetric(float64(mv.Microseconds())/1000, "values-ms")
	b.ReportMetric(float64(mc)/float64(mp), "check/parse")
	b.ReportMetric(float64(mv)/float64(mc), "values/check")
}
