package testrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A case that runs a section alone is warned when the section reads a
// var key only the sections before it on the walk set.
func TestSectionAloneVar(t *testing.T) {
	const p = "---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# P\n\n```lua\nvar.seed = \"h1\"\n```\n\n" +
		"## A\n\n```lua\nvar.topic = \"x\"\nreturn nil\n```\n\n" +
		"## B\n\n```lua\nlog(\"topic: \" .. var.topic .. var.seed)\nreturn \"b\"\n```\n\n" +
		"## C\n\n```lua\nlog(\"seed: \" .. var.seed)\nreturn \"c\"\n```\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.md"), []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "p.test.yaml")
	f := Parse(path, []byte("cases:\n  - name: b\n    section: \"## B\"\n  - name: c\n    section: \"## C\"\n"))
	Validate(f, nil)
	var got []string
	for _, d := range f.Diags {
		got = append(got, strings.TrimPrefix(d.String(path), path+":"))
	}
	if len(got) != 1 || !strings.Contains(got[0], "3:14: warning: section: ## B reads var.topic, which only sections before it on the walk set") {
		t.Fatalf("diags %q, want one warning on case b naming var.topic", got)
	}
}
