package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// copyFixture copies testdata/NAME into a fresh folder, so that a
// command that does run leaves its marker there.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// A repository whose committed cassette makes the model call a workspace
// command: opening the prompt (analysis), hovering tools.bind, asking for
// lenses and running the case from its lens run nothing; the failure
// names the tool and the liveTools setting, which runs it (before: the
// Run test lens ran the repository's shell command).
func TestServerRunsNoRepositoryCommand(t *testing.T) {
	dir := copyFixture(t, "replayruns")
	ran := func() bool { _, err := os.Stat(filepath.Join(dir, "pwned.txt")); return err == nil }
	prompt, _ := os.ReadFile(filepath.Join(dir, "p.md"))
	promptURI := "file://" + filepath.ToSlash(filepath.Join(dir, "p.md"))
	testPath := filepath.Join(dir, "p.test.yaml")
	testURI := "file://" + filepath.ToSlash(testPath)
	tests, _ := os.ReadFile(testPath)

	c := startServer(t, options{Debounce: -1})
	c.root = dir
	c.initialize(nil)
	c.open(promptURI, string(prompt))
	c.diagnosticsFor(promptURI, 1, 0)
	line := strings.Count(string(prompt[:strings.Index(string(prompt), "tools.bind")]), "\n")
	var hover protocol.Hover
	c.mustCall(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": promptURI}, "position": map[string]any{"line": line, "character": 12}}, &hover)
	if !strings.Contains(hover.Contents.Value, "word_count") {
		t.Errorf("hover on tools.bind: %q", hover.Contents.Value)
	}
	var lenses []protocol.CodeLens
	c.mustCall(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": promptURI}}, &lenses)
	c.open(testURI, string(tests))
	c.mustCall(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": testURI}}, &lenses)
	if ran() {
		t.Fatal("analysis, hover or lenses ran the workspace command")
	}
	if len(lenses) == 0 {
		t.Fatal("no test lenses")
	}
	var res testRunResult
	c.mustCall(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunTest, "arguments": lenses[0].Command.Arguments}, &res)
	if ran() {
		t.Fatal("the Run test lens ran the workspace command")
	}
	if res.Failed != 1 || len(res.Results) != 1 || !strings.Contains(mustJSON(res), "promptforge.tests.liveTools") {
		t.Fatalf("run: %s", mustJSON(res))
	}

	// The user's liveTools setting lets the replay run it.
	c2 := startServer(t, options{Debounce: -1})
	c2.root = dir
	c2.initialize(map[string]any{"liveTools": true})
	c2.open(testURI, string(tests))
	c2.mustCall(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunTest, "arguments": lenses[0].Command.Arguments}, &res)
	if !ran() || res.Passed != 1 {
		t.Fatalf("with liveTools: ran=%v %s", ran(), mustJSON(res))
	}
}
