package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

const shoutPrompt = "---\nname: shout\ndescription: Upper-case the input\npromptforge: 1\n---\n\n# Shout\n\n## Loud\n\n```lua\nreturn string.upper(args)\n```\n"

const shoutTests = "cases:\n  - name: shouts\n    input: hi\n    expect:\n      output: {equals: HI}\n  - name: whispers\n    input: hi\n    expect:\n      output: {equals: hi}\n"

func TestTestFileLensesDiagnosticsAndHover(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "shout.md"), []byte(shoutPrompt), 0o644)
	testPath := filepath.Join(dir, "shout.test.yaml")
	os.WriteFile(testPath, []byte(shoutTests), 0o644)
	uri := "file://" + filepath.ToSlash(testPath)

	c := startServer(t, options{Debounce: -1})
	c.initialize(nil)

	// An unknown key is reported with its position.
	c.open(uri, "cases:\n  - name: shouts\n    inptu: hi\n")
	d, from := c.diagnosticsFor(uri, 1, 0)
	if len(d.Diagnostics) == 0 || !strings.Contains(d.Diagnostics[0].Message, "unknown key `inptu` in case (did you mean `input`?)") || d.Diagnostics[0].Range.Start.Line != 2 {
		t.Fatalf("diagnostics %s", mustJSON(d))
	}
	c.change(uri, 2, shoutTests)
	d, from = c.diagnosticsFor(uri, 2, from+1)
	for _, dg := range d.Diagnostics {
		if dg.Severity == protocol.DiagnosticSeverityError {
			t.Fatalf("valid file has errors: %s", mustJSON(d))
		}
	}

	var lenses []protocol.CodeLens
	c.mustCall(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": uri}}, &lenses)
	var titles []string
	for _, l := range lenses {
		titles = append(titles, l.Command.Title)
	}
	if strings.Join(titles, "|") != "▶ Run all|▶ Run test|▶ Record|▶ Run test|▶ Record" || lenses[3].Range.Start.Line != 5 {
		t.Fatalf("lenses %s", mustJSON(lenses))
	}

	var res testRunResult
	c.mustCall(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunTest, "arguments": lenses[0].Command.Arguments}, &res)
	if res.Summary != "1 passed, 1 failed" || len(res.Results) != 2 || res.Results[1].Status != "fail" {
		t.Fatalf("run all: %s", mustJSON(res))
	}
	// The failing case gets a diagnostic on its name.
	_, _, ok := c.waitFor(from+1, 30e9, func(n note) bool {
		var p publishParams
		if n.method != protocol.MethodTextDocumentPublishDiagnostics || json.Unmarshal(n.params, &p) != nil || string(p.URI) != uri {
			return false
		}
		for _, dg := range p.Diagnostics {
			if dg.Code == "test-failed" && dg.Range.Start.Line == 5 && strings.Contains(dg.Message, `output: want "hi", got "HI"`) {
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatal("no test-failed diagnostic on the failing case")
	}
	var h protocol.Hover
	c.mustCall(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 7, "character": 4}}, &h)
	if !strings.Contains(h.Contents.Value, "**whispers**: failed (0 of 1 runs passed)") {
		t.Fatalf("hover %q", h.Contents.Value)
	}
	c.mustCall(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 2, "character": 4}}, &h)
	if !strings.Contains(h.Contents.Value, "**shouts**: passed") {
		t.Fatalf("hover %q", h.Contents.Value)
	}
	// One case by name; an unknown name is refused.
	c.mustCall(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunTest, "arguments": lenses[1].Command.Arguments}, &res)
	if res.Summary != "1 passed, 0 failed" {
		t.Fatalf("one case: %s", mustJSON(res))
	}
	err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunTest, "arguments": []any{map[string]any{"uri": uri, "name": "nope"}}}, &res)
	if err == nil || !strings.Contains(err.Error(), `no case named "nope"`) {
		t.Fatalf("unknown case: %v", err)
	}
	// Recording needs a gateway.
	err = c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunTest, "arguments": lenses[2].Command.Arguments}, &res)
	if err == nil || !strings.Contains(err.Error(), "recording needs a gateway") {
		t.Fatalf("record without gateway: %v", err)
	}
	c.shutdown()
}
