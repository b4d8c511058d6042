package tools

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/toolcat"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// The checker resolves capabilities over toolrule's catalog data; a run
// over the live tools. Both must index the same entries, or check and run
// could bind differently.
func TestCatalogMatchesCheckerCatalog(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, toolrule.WorkspaceFile), `{"tools":[
	 {"name":"word_count","description":"Count the words in a text.","parameters":{"type":"object","properties":{"text":{"type":"string"},"lang":{"type":"string"}}},"trust":"trusted","command":["wc"]},
	 {"name":"notes","description":"Search my notes.","parameters":{"type":"object"},"trust":"untrusted","command":["grep"]}
	]}`, 0o644)
	path := filepath.Join(root, toolrule.WorkspaceFile)
	ws, err := LoadWorkspaceTools(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(append([]Tool{NewWebSearch(nil), NewWebFetch(nil)}, ws...)...)
	if err != nil {
		t.Fatal(err)
	}
	cat := toolcat.For(path)
	if cat.Err != nil {
		t.Fatal(cat.Err)
	}
	var want []toolrule.Entry
	for _, ct := range cat.Tools {
		want = append(want, ct.Entry)
	}
	if got := reg.Catalog(); !reflect.DeepEqual(got, want) {
		t.Fatalf("run catalog:\n%+v\nchecker catalog:\n%+v", got, want)
	}
	// What the editor shows of each tool is what the live tool reports.
	live := append([]Tool{NewWebSearch(nil), NewWebFetch(nil)}, ws...)
	for i, tl := range live {
		ct := cat.Tools[i]
		untrusted := true
		if c, ok := tl.(*CommandTool); ok {
			untrusted = c.Untrusted()
		}
		if ct.Wire != tl.WireName() || string(ct.Schema) != string(tl.Parameters()) || ct.Untrusted != untrusted {
			t.Errorf("catalog tool %s: wire %q schema %s untrusted %v; live tool: %q %s %v", ct.ID, ct.Wire, ct.Schema, ct.Untrusted, tl.WireName(), tl.Parameters(), untrusted)
		}
	}
}
