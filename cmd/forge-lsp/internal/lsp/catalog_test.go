package lsp

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCatalogTrust: the catalog marks a workspace tool untrusted exactly
// when its forge-tools.json entry says so, as the engine wraps its output;
// the built-ins are untrusted.
func TestCatalogTrust(t *testing.T) {
	tf := filepath.Join(t.TempDir(), "forge-tools.json")
	if err := os.WriteFile(tf, []byte(`{"tools": [
  {"name": "word_count", "description": "Count the words in a text.", "parameters": {"type": "object", "properties": {}}, "trust": "trusted", "command": ["false"]},
  {"name": "page_text", "description": "Fetch the text of a page.", "parameters": {"type": "object", "properties": {}}, "trust": "untrusted", "command": ["false"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := buildCatalog(tf)
	if c.err != "" {
		t.Fatal(c.err)
	}
	want := map[string]bool{"workspace/word_count": false, "workspace/page_text": true, "promptforge/web_search": true, "promptforge/web_fetch": true}
	got := map[string]bool{}
	for _, ct := range c.tools {
		got[ct.id] = ct.untrusted
	}
	for id, u := range want {
		if g, ok := got[id]; !ok || g != u {
			t.Errorf("%s: untrusted = %v (present %v), want %v; catalog %v", id, g, ok, u, got)
		}
	}
}
