package features

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestFrontmatterKeysDocumented: hover and completion describe every key
// the parser reads, from docs/language.md's table.
func TestFrontmatterKeysDocumented(t *testing.T) {
	for _, k := range parse.FrontmatterKeys {
		h := keyHover(k)
		if strings.Contains(h, "Unknown key") || !strings.Contains(h, "Required:") {
			t.Errorf("%s: %q", k, h)
		}
	}
	if h := keyHover("max_tool_iterations"); !strings.Contains(h, "1..1000") || !strings.Contains(h, "default 24") || strings.Contains(h, "](") {
		t.Errorf("max_tool_iterations: %q", h)
	}
}
