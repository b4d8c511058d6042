package parse

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/source"
	"golang.org/x/tools/txtar"
)

// TestLinearBodyMatchesJoined checks the fast path of buildBody (a file
// without CRs uses its own tail as the body) against the line-by-line
// join it replaces: same body, same line table, same file offsets.
func TestLinearBodyMatchesJoined(t *testing.T) {
	var inputs [][]byte
	files, _ := filepath.Glob("../../testdata/parse/*.txtar")
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, fl := range a.Files {
			inputs = append(inputs, fl.Data)
		}
	}
	examples, _ := filepath.Glob("../../examples/*.md")
	for _, f := range examples {
		b, _ := os.ReadFile(f)
		inputs = append(inputs, b)
	}
	inputs = append(inputs, []byte(""), []byte("---\npromptforge: 1\n---"), []byte("---\npromptforge: 1\n---\n"), []byte("# T\n\nno newline at end"), []byte("\n\n\n"))
	if len(inputs) < 60 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	checked := 0
	for _, in := range inputs {
		fast := &parser{file: source.NewFile("t.md", in), prompt: &Prompt{}}
		fast.prompt.File = fast.file
		fast.splitFrontmatter()
		fast.buildBody()
		if !fast.linear {
			continue // has CRs: only the joined body applies
		}
		slow := &parser{file: fast.file, prompt: &Prompt{File: fast.file}, fmLines: fast.fmLines}
		slow.prompt.BodyStart = fast.prompt.BodyStart
		slow.joinBody()
		if string(fast.body) != string(slow.body) || fast.bodyStr != slow.bodyStr {
			t.Errorf("%q: body %q, joined %q", in, fast.body, slow.body)
			continue
		}
		if !slices.Equal(fast.bodyLines, slow.bodyLines) {
			t.Errorf("%q: lines %v, joined %v", in, fast.bodyLines, slow.bodyLines)
			continue
		}
		for b := -1; b <= len(fast.body)+1; b++ {
			if fast.off(b) != slow.off(b) {
				t.Errorf("%q: off(%d) = %d, joined %d", in, b, fast.off(b), slow.off(b))
				break
			}
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d inputs took the fast path", checked)
	}
}
