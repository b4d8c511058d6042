package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/format"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"golang.org/x/tools/txtar"
)

const unformatted = "---\nname: f\ndescription: d\npromptforge: 1\n---\n# T\n## S\n```lua\nif args == '' then\n  return 'none'\nend\nreturn args\n```\n"
const formatted = "---\nname: f\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## S\n\n```lua\nif args == \"\" then\n\treturn \"none\"\nend\nreturn args\n```\n"
const broken = "---\nname: b\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nlocal = 1\n```\n"

func runFmt(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var o, e bytes.Buffer
	code := Fmt(args, strings.NewReader(stdin), &o, &e)
	return o.String(), e.String(), code
}

func TestFmtStdout(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "a.md"), unformatted)
	out, errs, code := runFmt(t, "", p)
	if code != 0 || out != formatted || errs != "" {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	if b, _ := os.ReadFile(p); string(b) != unformatted {
		t.Errorf("the file changed without -w")
	}
	// - and no path read standard input.
	for _, args := range [][]string{{"-"}, nil} {
		out, _, code = runFmt(t, unformatted, args...)
		if code != 0 || out != formatted {
			t.Errorf("%v: exit %d:\n%s", args, code, out)
		}
	}
}

func TestFmtWrite(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "sub", "a.md"), unformatted)
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	ok := writeFile(t, filepath.Join(dir, "ok.md"), formatted)
	before, _ := os.Stat(ok)
	out, errs, code := runFmt(t, "", "-w", dir)
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(b) != formatted || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, content:\n%s", fi.Mode(), b)
	}
	if after, _ := os.Stat(ok); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a formatted file was rewritten")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "sub", "*")); len(left) != 1 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestFmtCheckAndDiff(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "a.md"), unformatted)
	writeFile(t, filepath.Join(dir, "ok.md"), formatted)
	out, _, code := runFmt(t, "", "--check", dir)
	if code != 1 || out != p+"\n" {
		t.Errorf("--check: exit %d, stdout %q", code, out)
	}
	out, _, code = runFmt(t, "", "--diff", dir)
	if code != 0 || !strings.Contains(out, "--- "+p+".orig\n+++ "+p+"\n") || !strings.Contains(out, "-  return 'none'\n") || !strings.Contains(out, "+\treturn \"none\"\n") {
		t.Errorf("--diff: exit %d:\n%s", code, out)
	}
	if _, _, code := runFmt(t, "", "--check", filepath.Join(dir, "ok.md")); code != 0 {
		t.Errorf("--check of a formatted file: exit %d", code)
	}
	if _, errs, code := runFmt(t, "", "-w", "--check", dir); code != 2 || !strings.Contains(errs, "exclude") {
		t.Errorf("-w --check: exit %d, %q", code, errs)
	}
}

// TestFmtParseError: a file that does not parse is reported with its
// location and left untouched; the folder run formats the others.
func TestFmtParseError(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, filepath.Join(dir, "bad.md"), broken)
	good := writeFile(t, filepath.Join(dir, "good.md"), unformatted)
	_, errs, code := runFmt(t, "", "-w", dir)
	if code != 2 || !strings.Contains(errs, bad+":10:") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if b, _ := os.ReadFile(bad); string(b) != broken {
		t.Errorf("the broken file changed")
	}
	if b, _ := os.ReadFile(good); string(b) != formatted {
		t.Errorf("the good file was not formatted")
	}
	if _, errs, code := runFmt(t, "", filepath.Join(dir, "nope.md")); code != 2 || errs == "" {
		t.Errorf("missing file: exit %d", code)
	}
}

// TestFmtStyluaToml: the nearest stylua.toml above a file sets the Lua
// style; a bad one is an error naming it.
func TestFmtStyluaToml(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".stylua.toml"), "indent_type = \"Spaces\"\nindent_width = 2\nquote_style = \"AutoPreferSingle\"\n")
	p := writeFile(t, filepath.Join(dir, "deep", "a.md"), unformatted)
	out, errs, code := runFmt(t, "", p)
	if code != 0 || !strings.Contains(out, "if args == '' then\n  return 'none'\nend\n") {
		t.Errorf("exit %d, %s:\n%s", code, errs, out)
	}
	writeFile(t, filepath.Join(dir, "deep", "stylua.toml"), "indent_type = 4\n")
	_, errs, code = runFmt(t, "", p)
	if code != 2 || !strings.Contains(errs, filepath.Join(dir, "deep", "stylua.toml")) || !strings.Contains(errs, "Tabs, Spaces") {
		t.Errorf("bad config: exit %d, %q", code, errs)
	}
}

// TestFmtKeepsFindings: over every prompt of examples/ and testdata/ (and
// the prompts in testdata's archives) that formats, the checker's
// findings on the formatted prompt are the findings on the original,
// positions aside.
func TestFmtKeepsFindings(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	n := 0
	err := filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if name := fi.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.Contains(path, "testdata") && !strings.Contains(path, "examples") {
			return nil
		}
		var srcs [][]byte
		switch {
		case strings.HasSuffix(path, ".md"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			srcs = append(srcs, b)
		case strings.HasSuffix(path, ".txtar"):
			a, err := txtar.ParseFile(path)
			if err != nil {
				return err
			}
			for _, f := range a.Files {
				if strings.HasSuffix(f.Name, ".md") {
					srcs = append(srcs, f.Data)
				}
			}
		}
		for _, src := range srcs {
			if !parse.DeclaresPromptforge(src) {
				continue
			}
			out, err := format.Source(path, src, format.Default())
			if err != nil {
				continue // parse errors; TestCorpus in engine/format checks the rest
			}
			n++
			if !bytes.Equal(findingsOf(path, src), findingsOf(path, out)) {
				t.Errorf("%s: the findings changed:\n%s\n---\n%s", path, findingsOf(path, src), findingsOf(path, out))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("only %d prompts compared", n)
	}
	t.Logf("%d prompts: findings unchanged", n)
}

// lineRef is a line number in a message (a position).
var lineRef = regexp.MustCompile(`line \d+`)

// findingsOf lists a prompt's findings without positions, sorted.
func findingsOf(path string, src []byte) []byte {
	var l []string
	for _, d := range checkFile(path, src, nil) {
		l = append(l, d.Severity+" "+d.Code+" "+lineRef.ReplaceAllString(d.Message, "line N"))
	}
	sort.Strings(l)
	return []byte(strings.Join(l, "\n"))
}
