package lsp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"go.lsp.dev/protocol"
	"golang.org/x/tools/txtar"
)

// FuzzFeatures feeds arbitrary text to every offset-based feature: none may
// panic, and every range they return must lie inside the document.
func FuzzFeatures(f *testing.F) {
	seeds, _ := filepath.Glob("../../../../testdata/lsp/*.txtar")
	for _, p := range seeds {
		if ar, err := txtar.ParseFile(p); err == nil {
			for _, file := range ar.Files {
				f.Add(string(file.Data))
			}
		}
	}
	if ex, _ := filepath.Glob("../../../../examples/*.md"); len(ex) > 0 {
		for _, p := range ex {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Add("---\npromptforge: 1\n---\n# T\n## A\n```lua\njump(\"## \ntools.add({\"x\", y\ntools.calls[\"\n--[[\n```\n")
	f.Fuzz(func(t *testing.T, text string) {
		snap := newSnapshot("file:///fuzz.md", 1, sanitize(text), defaultMaxAnalyzedSize)
		if !snap.isPrompt || snap.prompt == nil {
			return
		}
		n := len(snap.file.Content)
		step := 1
		if n > 2000 {
			step = n / 2000
		}
		inFile := func(r protocol.Range) {
			end := lspPos(snap.file, n)
			if r.Start.Line > end.Line || r.End.Line > end.Line {
				t.Fatalf("range %+v beyond the end %+v", r, end)
			}
		}
		for off := 0; off <= n; off += step {
			if h, ok := features.HoverAt(snap.feat, off); ok {
				inFile(lspRange(snap.file, h.Span))
			}
			for _, it := range completionItems(snap.file, features.CompleteAt(snap.feat, off)) {
				if it.TextEdit != nil {
					inFile(it.TextEdit.Range)
				}
			}
			if h := toSignatureHelp(features.SignatureAt(snap.feat, off)); h != nil {
				for _, sig := range h.Signatures {
					for _, prm := range sig.Parameters {
						if prm.Label[0] > prm.Label[1] || int(prm.Label[1]) > len(sig.Label) {
							t.Fatalf("parameter label %v outside %q", prm.Label, sig.Label)
						}
					}
				}
			}
			for _, sp := range features.References(snap.feat, off, true) {
				inFile(lspRange(snap.file, sp))
			}
		}
	})
}
