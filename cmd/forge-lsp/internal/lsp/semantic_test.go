package lsp

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// TestSemanticTokensCRLF: a CRLF file gets the same tokens, at the same
// lines and UTF-16 columns, as its LF spelling (the line breaks' CRs are
// never inside a token, long comments included).
func TestSemanticTokensCRLF(t *testing.T) {
	lf := "---\nname: crlf\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nmodels.default(\"w\", \"a careful writer\")\n--[[ a\nlong comment ]]\nlocal x = \"😀\" -- tail\nlog(x)\n```\n\n## S\n\nSay {{ args }}.\n"
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	enc := func(text string) []uint32 {
		snap := newSnapshot("file:///t.md", 1, []byte(text), defaultMaxAnalyzedSize)
		if snap.prompt == nil {
			t.Fatal("not parsed")
		}
		return encodeSemantic(snap.file, features.SemanticTokens(snap.feat, source.Span{Start: 0, End: len(text)}))
	}
	a, b := enc(lf), enc(crlf)
	if len(a) == 0 || mustJSON(a) != mustJSON(b) {
		t.Fatalf("LF tokens %v\nCRLF tokens %v", a, b)
	}
}
