package checker_test

import (
	"runtime"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestEditsRetainNoAnalysis: an editor analyses a new version of a prompt
// at each keystroke, and the parse cache keeps the chunks of earlier
// versions (with what was memoised on them). Nothing memoised on a
// chunk may point at one analysis, or every edit keeps that whole
// analysis alive: the live heap after 40 more edits must stay about
// where it was (a model pointing at its build's Program held 2.7 GB in
// BenchmarkTyping's 6,000 edits).
func TestEditsRetainNoAnalysis(t *testing.T) {
	edited := realisticEdits(t, 2000)
	edit := func(i int) {
		checker.Check(parse.Parse("big.md", edited(i)), nil)
	}
	live := func() float64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	for i := range 10 {
		edit(i)
	}
	before := live()
	for i := 10; i < 50; i++ {
		edit(i)
	}
	after := live()
	t.Logf("live heap %.1f MB after 10 edits, %.1f MB after 50", before, after)
	if after-before > 4 {
		t.Fatalf("40 edits kept %.1f MB: something memoised on a chunk holds an analysis", after-before)
	}
}
