package flow_test

import (
	"os"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"

	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestSectionAt: a section found once with At answers In as the views'
// Has does, and BlockRuns as the rule says (the Known view enters the
// section and no earlier Lua block surely or possibly ends it), over
// every analyzer test prompt, every section, view and block; a section
// of another parse, which the walk never numbered, is in no view and
// runs no block.
func TestSectionAt(t *testing.T) {
	files := analysistest.Corpus(t)
	in, runs := 0, 0
	var other *parse.Section
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := parse.Parse(f, src)
		r := flow.Analyze(program.Build(p))
		for _, u := range r.Prog.Sections {
			s := u.Section
			at := r.At(s)
			for _, set := range []flow.SectionSet{r.Known.Entered, r.Known.Arm, r.Known.Walked, r.May.Entered, r.May.Arm, r.May.Walked} {
				if at.In(set) != set.Has(s) {
					t.Errorf("%s: section %q: At.In %v, Has %v", f, s.Name, at.In(set), set.Has(s))
				}
				if set.Has(s) {
					in++
				}
			}
			// A block runs when the Known view enters the section and no
			// earlier Lua block surely or possibly ends it.
			for i := range s.Blocks {
				want := r.Known.Entered.Has(s)
				for _, b := range s.Blocks[:i] {
					if b.Kind == parse.LuaBlock && b.Chunk != nil && r.EndOf(b.Chunk) != flow.Continues {
						want = false
					}
				}
				if got := at.BlockRuns(i); got != want || r.BlockRuns(s, i) != want {
					t.Errorf("%s: section %q block %d: At.BlockRuns %v, BlockRuns %v, want %v", f, s.Name, i, got, r.BlockRuns(s, i), want)
				}
				if want {
					runs++
				}
			}
		}
		if other != nil {
			at := r.At(other)
			if at.In(r.May.Entered) || at.BlockRuns(0) {
				t.Errorf("%s: a section of another parse is entered or runs", f)
			}
		}
		if len(p.Sections) > 0 {
			other = p.Sections[0]
		}
	}
	if in == 0 || runs == 0 {
		t.Fatalf("no section in a view (%d) or no block runs (%d)", in, runs)
	}
}
