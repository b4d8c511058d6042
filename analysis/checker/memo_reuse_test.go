package checker_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestEditJudgesFewParts: after an edit inside one chunk of a long
// prompt, the passes that memoise their findings per chunk or section
// (analysis/internal/chunkmemo) judge again only the parts around the
// edit, not the prompt's hundreds of chunks: their fingerprints (the
// chunks' facts, the shared library, what the H1 declares) must stay
// the same across an edit that changes none of them.
func TestEditJudgesFewParts(t *testing.T) {
	edited := realisticEdits(t, 2000)
	edit := func(i int) int64 {
		before := chunkmemo.Judged()
		checker.Check(parse.Parse("big.md", edited(i)), nil)
		return chunkmemo.Judged() - before
	}
	cold := edit(0)
	for i := 1; i < 4; i++ {
		n := edit(i)
		t.Logf("edit %d: %d parts judged (cold %d)", i, n, cold)
		if n > 16 {
			t.Errorf("edit %d judged %d parts again (a cold analysis judges %d); an edit in one chunk should judge a few", i, n, cold)
		}
	}
	if cold < 200 {
		t.Fatalf("a cold analysis judged only %d parts", cold)
	}
}
