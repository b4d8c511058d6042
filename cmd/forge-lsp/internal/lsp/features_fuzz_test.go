package lsp

import (
	"path/filepath"
	"testing"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"golang.org/x/tools/txtar"
)

// FuzzSemanticAndOutline feeds arbitrary prompts to semantic tokens,
// selection ranges, budgets and document links: none may panic; tokens
// must be sorted, disjoint, single-line and inside their line; a range
// request must return exactly the full result's tokens inside the range;
// selection ranges must nest.
func FuzzSemanticAndOutline(f *testing.F) {
	seeds, _ := filepath.Glob("../../../../testdata/lsp/markers/*.txtar")
	for _, p := range seeds {
		if ar, err := txtar.ParseFile(p); err == nil {
			for _, file := range ar.Files {
				f.Add(string(file.Data))
			}
		}
	}
	f.Add("---\npromptforge: 1\n---\n# T\n## A\n```lua\n--[==[\n😀 ]==] local x = [[\n]] jump(\"## \n```\n{{ var.😀 }}\n")
	// An H1 with nothing but the shared library: its tokens once.
	f.Add("---\npromptforge: 1\n---\n# T\n\n```lua shared\nfunction h(n)\n  return n\nend\n```\n\n## A\n\n```lua\nlog(h(1))\n```\n")
	f.Fuzz(func(t *testing.T, text string) {
		snap := newSnapshot("file:///fuzz.md", 1, sanitize(text), defaultMaxAnalyzedSize)
		if !snap.isPrompt || snap.prompt == nil {
			return
		}
		file := snap.file
		n := len(file.Content)
		toks := features.SemanticTokens(snap.feat, source.Span{Start: 0, End: n})
		last := -1
		for _, tk := range toks {
			start, end := int(tk.Start), int(tk.End)
			if start < last || end <= start || end > n {
				t.Fatalf("token %+v after %d (len %d)", tk, last, n)
			}
			if l := file.Line(start); end > file.LineEnd(l) {
				t.Fatalf("token %+v crosses the end of line %d", tk, l)
			}
			last = end
		}
		data := encodeSemantic(file, toks)
		if len(data)%5 != 0 {
			t.Fatalf("%d integers", len(data))
		}
		mid := n / 2
		part := features.SemanticTokens(snap.feat, source.Span{Start: mid, End: n})
		want := 0
		for _, tk := range toks {
			if int(tk.End) > mid {
				want++
			}
		}
		if len(part) != want {
			t.Fatalf("range from %d: %d tokens, the full result has %d there", mid, len(part), want)
		}
		step := max(1, n/300)
		for off := 0; off <= n; off += step {
			spans := features.SelectionSpans(snap.feat, off)
			for i := 1; i < len(spans); i++ {
				if spans[i].Start > spans[i-1].Start || spans[i].End < spans[i-1].End {
					t.Fatalf("selection %v does not contain %v", spans[i], spans[i-1])
				}
			}
		}
		for _, b := range snap.proseBudgets() {
			if b.Round.Total() < b.Own {
				t.Fatalf("round %d below its own block %d", b.Round.Total(), b.Own)
			}
		}
	})
}
