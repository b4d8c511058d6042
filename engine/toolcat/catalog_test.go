package toolcat

import (
	"github.com/forge-lsp/forge-lsp/engine/toolrule"

	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCatalogTrust: the catalog marks a workspace tool untrusted exactly
// when its forge-tools.json entry says so, as the engine wraps its output;
// the built-ins are untrusted and come first.
func TestCatalogTrust(t *testing.T) {
	tf := filepath.Join(t.TempDir(), toolrule.WorkspaceFile)
	if err := os.WriteFile(tf, []byte(`{"tools": [
  {"name": "word_count", "description": "Count the words in a text.", "parameters": {"type": "object", "properties": {}}, "trust": "trusted", "command": ["false"]},
  {"name": "page_text", "description": "Fetch the text of a page.", "parameters": {"type": "object", "properties": {}}, "trust": "untrusted", "command": ["false"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := For(tf)
	if c.Err != nil {
		t.Fatal(c.Err)
	}
	var ids []string
	got := map[string]bool{}
	for _, ct := range c.Tools {
		ids = append(ids, ct.ID.String())
		got[ct.ID.String()] = ct.Untrusted
	}
	if strings.Join(ids, " ") != "promptforge/web_search promptforge/web_fetch workspace/word_count workspace/page_text" {
		t.Errorf("catalog order: %v", ids)
	}
	want := map[string]bool{"workspace/word_count": false, "workspace/page_text": true, "promptforge/web_search": true, "promptforge/web_fetch": true}
	for id, u := range want {
		if g, ok := got[id]; !ok || g != u {
			t.Errorf("%s: untrusted = %v (present %v), want %v", id, g, ok, u)
		}
	}
	if ct := c.Tool(toolrule.ID{Server: "workspace", Name: "word_count"}); ct == nil || ct.Wire != "word_count" || !strings.Contains(string(ct.Schema), "object") {
		t.Errorf("Tool(word_count) = %+v", ct)
	}
}

// TestCatalogCachedPerVersion: the same file version gives the same
// catalog; an edit gives a new one.
func TestCatalogCachedPerVersion(t *testing.T) {
	tf := filepath.Join(t.TempDir(), toolrule.WorkspaceFile)
	write := func(desc string, at time.Time) {
		if err := os.WriteFile(tf, []byte(`{"tools": [{"name": "w", "description": "`+desc+`", "parameters": {"type": "object"}, "trust": "trusted", "command": ["false"]}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(tf, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write("Count the words.", time.Unix(1000, 0))
	a := For(tf)
	if b := For(tf); b != a {
		t.Error("the same version was built twice")
	}
	write("Count the lines.", time.Unix(2000, 0))
	if c := For(tf); c == a || c.Tools[2].Description != "Count the lines." {
		t.Errorf("after an edit: %+v", c.Tools[2])
	}
	if c := For(""); len(c.Tools) != 2 || c.Err != nil {
		t.Errorf("built-ins only: %+v", c)
	}
}
