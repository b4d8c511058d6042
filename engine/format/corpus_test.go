package format

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"golang.org/x/tools/txtar"
)

// prompt is one prompt of the repository's corpus.
type prompt struct {
	name string
	src  []byte
}

// corpus returns every prompt in examples/ and in the repository's
// testdata folders, including the .md files inside txtar archives.
func corpus(t testing.TB) []prompt {
	t.Helper()
	root := filepath.Join("..", "..")
	var ps []prompt
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		inData := strings.HasPrefix(rel, "examples"+string(filepath.Separator)) || strings.Contains(rel, "testdata")
		if !inData {
			return nil
		}
		switch {
		case strings.HasSuffix(path, ".md"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if parse.DeclaresPromptforge(b) {
				ps = append(ps, prompt{rel, b})
			}
		case strings.HasSuffix(path, ".txtar"):
			a, err := txtar.ParseFile(path)
			if err != nil {
				return err
			}
			for _, f := range a.Files {
				if strings.HasSuffix(f.Name, ".md") && parse.DeclaresPromptforge(f.Data) {
					ps = append(ps, prompt{rel + ":" + f.Name, f.Data})
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestCorpus formats every prompt of the corpus: each one that parses is
// formatted (the safety proof holds) and formatting it again changes
// nothing.
func TestCorpus(t *testing.T) {
	ps := corpus(t)
	formatted, changed, parseErrs := 0, 0, 0
	for _, p := range ps {
		out, err := Source(p.name, p.src, Default())
		if err != nil {
			if _, ok := err.(*ParseError); ok {
				parseErrs++
				continue
			}
			t.Errorf("%v", err)
			continue
		}
		formatted++
		if !bytes.Equal(out, p.src) {
			changed++
		}
		again, err := Source(p.name, out, Default())
		if err != nil {
			t.Errorf("%s: formatting the output: %v", p.name, err)
			continue
		}
		if !bytes.Equal(again, out) {
			t.Errorf("%s: not idempotent:\n--- first\n%s\n--- second\n%s", p.name, out, again)
		}
	}
	if formatted < 100 {
		t.Errorf("only %d prompts of the corpus formatted", formatted)
	}
	t.Logf("%d prompts: %d formatted (%d changed), %d with parse errors", len(ps), formatted, changed, parseErrs)
}
