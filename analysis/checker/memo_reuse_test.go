package checker_test

import (
	"github.com/forge-lsp/forge-lsp/analysis"
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

// TestOnceStoresNoMemo: a one-shot check (analysis.Config.Once, as
// `forge-lsp check` runs) judges every part and stores no findings memo,
// so the next analysis of an edited version judges as many parts as a
// cold one; an analysis without Once stores them again for the edit
// after.
func TestOnceStoresNoMemo(t *testing.T) {
	edited := realisticEdits(t, 2000)
	judged := func(i int, cfg *analysis.Config) int64 {
		before := chunkmemo.Judged()
		checker.Check(parse.Parse("big.md", edited(i)), cfg)
		return chunkmemo.Judged() - before
	}
	once := judged(0, &analysis.Config{Once: true})
	if once < 200 {
		t.Fatalf("a one-shot analysis judged only %d parts", once)
	}
	if n := judged(1, nil); n < once-16 {
		t.Errorf("after a one-shot analysis an edit judged %d parts (cold %d): the one-shot analysis stored memos", n, once)
	}
	if n := judged(2, nil); n > 16 {
		t.Errorf("the edit after an analysis without Once judged %d parts (cold %d)", n, once)
	}
}
