package tools

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// The checker resolves capabilities over toolrule's catalog data; a run
// over the live tools. Both must index the same entries, or check and run
// could bind differently.
func TestCatalogMatchesCheckerCatalog(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, WorkspaceFile), `{"tools":[
	 {"name":"word_count","description":"Count the words in a text.","parameters":{"type":"object","properties":{"text":{"type":"string"},"lang":{"type":"string"}}},"trust":"trusted","command":["wc"]},
	 {"name":"notes","description":"Search my notes.","parameters":{"type":"object"},"trust":"untrusted","command":["grep"]}
	]}`, 0o644)
	path := filepath.Join(root, WorkspaceFile)
	ws, err := LoadWorkspaceTools(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(append([]Tool{NewWebSearch(nil), NewWebFetch(nil)}, ws...)...)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := toolrule.LoadWorkspaceCatalog(path)
	if err != nil {
		t.Fatal(err)
	}
	want := append(toolrule.BuiltinCatalog(), extra...)
	if got := reg.Catalog(); !reflect.DeepEqual(got, want) {
		t.Fatalf("run catalog:\n%+v\nchecker catalog:\n%+v", got, want)
	}
}
