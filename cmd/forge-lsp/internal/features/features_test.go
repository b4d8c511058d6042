package features_test

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

const prompt = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n" +
	"```lua\nlocal web = tools.bind(\"search\", \"web search\")\n```\n\n" +
	"## Main\n\n```lua\njump(\"## Next\")\nstore.\n```\n\n## Next\n\nSay {{ var.x }}.\n"

// snap parses text into a snapshot with the built-in tools only.
func snap(t *testing.T, text string) *features.Snapshot {
	t.Helper()
	pr := parse.Parse("t.md", []byte(text))
	return features.NewSnapshot(pr.File, pr, nil, nil)
}

// TestWithoutProtocol: the features answer over a snapshot and byte
// offsets alone, as another face than the language server calls them.
func TestWithoutProtocol(t *testing.T) {
	s := snap(t, prompt)
	at := func(sub string, delta int) int {
		i := strings.Index(prompt, sub)
		if i < 0 {
			t.Fatalf("%q not in the prompt", sub)
		}
		return i + delta
	}
	next := at("## Next\n\nSay", 3)
	ref := at(`"## Next"`, 4)

	if h, ok := features.HoverAt(s, next); !ok || !strings.Contains(h.Markdown, "**section** `## Next`") || !strings.Contains(h.Markdown, "1 references") {
		t.Errorf("hover on ## Next: %+v", h)
	}
	def := features.Definition(s, ref)
	if len(def) != 1 || prompt[def[0].Start:def[0].End] != "Next" {
		t.Errorf("definition of the jump target: %v", def)
	}
	if refs := features.References(s, next, true); len(refs) != 2 {
		t.Errorf("references of ## Next with its declaration: %v", refs)
	}
	edits, err := features.Rename(s, ref, "Later")
	if err != nil || len(edits) != 2 || edits[0].NewText != "Later" || edits[1].NewText != "## Later" {
		t.Errorf("rename: %+v, %v", edits, err)
	}
	if _, err := features.Rename(s, at("Say", 0), "X"); err != features.ErrNotRenamable {
		t.Errorf("rename in prose: %v, want ErrNotRenamable", err)
	}
	items := features.CompleteAt(s, at("store.\n", len("store.")))
	found := false
	for _, it := range items {
		found = found || it.Label == "read" && it.Kind == features.KindFunction
	}
	if !found {
		t.Errorf("completion after store.: no read among %d items", len(items))
	}
	sig := features.SignatureAt(s, ref)
	if sig == nil || !strings.HasPrefix(sig.Label, "jump(") || sig.Active != 0 || len(sig.Params) == 0 {
		t.Errorf("signature inside jump(: %+v", sig)
	}
	if bs := s.Budgets(); len(bs) != 1 || bs[0].Own == 0 || bs[0].Placeholders != 1 {
		t.Errorf("budgets: %+v", bs)
	}
	syms := features.DocumentSymbols(s)
	if len(syms) != 4 || syms[1].Name != "# T" || len(syms[1].Children) != 1 || syms[3].Name != "## Next" {
		t.Errorf("outline: %+v", syms)
	}
	lenses := features.RunLenses(s)
	if len(lenses) != 3 || lenses[0].Section != nil || lenses[2].Section == nil || lenses[2].Title != "▶ Run section" {
		t.Errorf("run lenses: %+v", lenses)
	}
	hints := features.InlayHints(s, source.Span{Start: 0, End: len(prompt)})
	if len(hints) != 2 || !hints[0].Type || !strings.HasPrefix(hints[0].Label, "→ ") || !strings.HasPrefix(hints[1].Label, "≈ ") {
		t.Errorf("inlay hints: %+v", hints)
	}
}
