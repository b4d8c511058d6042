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

// TestEditorFormatOnSave: the real-VS Code test (editors/vscode/e2e)
// types `    local   loud=#args` on a new line after the `end` of
// unformatted.md, saves, and expects the file on disk to be
// unformatted.want.md: that is what the formatter makes of it.
func TestEditorFormatOnSave(t *testing.T) {
	dir := filepath.Join("..", "..", "editors", "vscode", "e2e")
	src, err := os.ReadFile(filepath.Join(dir, "unformatted.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "unformatted.want.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	if len(lines) < 11 || lines[10] != "end\n" {
		t.Fatalf("line 11 of unformatted.md is %q, the e2e test types after `end` there", lines[min(10, len(lines)-1)])
	}
	typed := strings.Join(lines[:11], "") + "    local   loud=#args\n" + strings.Join(lines[11:], "")
	got, err := Source("unformatted.md", []byte(typed), Default())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("formatting the typed prompt gives\n%s\nunformatted.want.md holds\n%s", got, want)
	}
}
