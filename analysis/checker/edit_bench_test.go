package checker_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// BenchmarkEdit10k measures the analysis of a 10,000-line prompt right
// after an edit inside one ```lua chunk, as an editor runs it after a
// keystroke: the parse and the per-chunk memos are warm and one chunk
// changed. It reports the median and the median relative to a cold
// analysis (parse cache reset) of the same prompt measured in the same
// run (the cold one the best of three).
func BenchmarkEdit10k(b *testing.B) {
	src := parsetest.Realistic(10000)
	at := bytes.Index(src, []byte("total = total + k"))
	if at < 0 {
		b.Fatal("no edit point")
	}
	at += len("total = total + ")
	cold := time.Duration(1 << 62)
	for range 3 {
		parse.ResetCache()
		p := parse.Parse("big.md", src)
		t0 := time.Now()
		checker.Check(p, nil)
		cold = min(cold, time.Since(t0))
	}
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A new number each time, so the edited chunk is really new.
		v := fmt.Appendf(nil, "k + %d", i)
		edited := append(append(append([]byte{}, src[:at]...), v...), src[at+1:]...)
		p := parse.Parse("big.md", edited)
		t := time.Now()
		checker.Check(p, nil)
		ds = append(ds, time.Since(t))
	}
	slices.Sort(ds)
	med := ds[len(ds)/2]
	b.ReportMetric(float64(med.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(med)/float64(cold), "p50/cold")
}
