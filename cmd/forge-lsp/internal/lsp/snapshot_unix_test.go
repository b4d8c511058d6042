//go:build unix

package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

const bindPrompt = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nmodels.default(\"w\", \"a model suited for careful analysis\")\ntools.bind(\"search\", \"web search capability\")\n```\n\n## Main\n\n```lua\ntools.add(\"search\")\n```\n\nFind it.\n"

// fifoWorkspace makes a folder holding a named pipe called name and a
// prompt, and returns the prompt's URI.
func fifoWorkspace(t *testing.T, name string) string {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	p := filepath.Join(dir, "p.md")
	if err := os.WriteFile(p, []byte(bindPrompt), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + filepath.ToSlash(p)
}

// TestNamedPipeToolsFileHover: a named pipe where forge-tools.json should
// be is never opened: hover on tools.bind answers, later requests and the
// diagnostics are not held up, and shutdown completes.
func TestNamedPipeToolsFileHover(t *testing.T) {
	uri := fifoWorkspace(t, "forge-tools.json")
	c := startServer(t, options{Debounce: -1})
	c.initialize(nil)
	c.open(uri, bindPrompt)
	within(t, 10*time.Second, "hover, symbols and diagnostics beside a named-pipe tools file", func() {
		var h protocol.Hover
		c.mustCall(protocol.MethodTextDocumentHover, map[string]any{
			"textDocument": map[string]any{"uri": uri},
			"position":     map[string]any{"line": 10, "character": 13},
		}, &h)
		if !strings.Contains(h.Contents.Value, "promptforge/web_search") {
			t.Errorf("hover: %s", h.Contents.Value)
		}
		var syms []protocol.DocumentSymbol
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &syms)
		p, _ := c.diagnosticsFor(uri, 1, 0)
		if !strings.Contains(mustJSON(p.Diagnostics), "not a regular file") {
			t.Errorf("diagnostics do not say the tools file is refused: %s", mustJSON(p.Diagnostics))
		}
	})
	within(t, 10*time.Second, "shutdown", c.shutdown)
}

// TestNamedPipeConfigPulledDiagnostics: a named pipe where .forge-lsp.json
// should be does not block pulled diagnostics, nor shutdown.
func TestNamedPipeConfigPulledDiagnostics(t *testing.T) {
	uri := fifoWorkspace(t, ".forge-lsp.json")
	c := pulled(t)
	c.open(uri, bindPrompt)
	within(t, 10*time.Second, "pulled diagnostics beside a named-pipe configuration", func() {
		rep := pullDiagnostics(c, uri)
		if rep.Kind != "full" {
			t.Errorf("report: %+v", rep)
		}
		var syms []protocol.DocumentSymbol
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &syms)
	})
	within(t, 10*time.Second, "shutdown", c.shutdown)
}
