package lsp

import (
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// pulled is a client that pulls diagnostics (LSP 3.17).
func pulled(t *testing.T) *testClient {
	c := startServer(t, options{Debounce: -1})
	c.textDocumentCaps = map[string]any{"diagnostic": map[string]any{}}
	c.initialize(nil)
	return c
}

// within fails the test unless f returns within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s took longer than %v", what, d)
	}
}

func pullDiagnostics(c *testClient, uri string) documentDiagnosticReport {
	var rep documentDiagnosticReport
	c.mustCall(methodDocumentDiagnostic, map[string]any{"textDocument": map[string]any{"uri": uri}}, &rep)
	return rep
}

// TestSlowAnalysisDoesNotDelayOtherDocuments: while one document's
// analysis is stuck (its pulled diagnostics and code actions wait for
// it), requests on another document are answered, edits to it are
// applied, and the stuck requests finish once the analysis does.
func TestSlowAnalysisDoesNotDelayOtherDocuments(t *testing.T) {
	slow, fast := "file:///slow/a.md", "file:///fast/b.md"
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	testHookAnalysis = func(u protocol.DocumentURI) {
		if string(u) == slow {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
		}
	}
	t.Cleanup(func() { unblock(); testHookAnalysis = nil })

	c := pulled(t)
	c.open(slow, tinyPrompt+"\n```lua\nlocal unused = 1\n```\n")
	c.open(fast, brokenPrompt)
	stuck := make(chan documentDiagnosticReport, 1)
	go func() { stuck <- pullDiagnostics(c, slow) }()
	actions := make(chan error, 1)
	go func() {
		actions <- c.call(protocol.MethodTextDocumentCodeAction, map[string]any{
			"textDocument": map[string]any{"uri": slow},
			"range":        map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 20, "character": 0}},
			"context":      map[string]any{"diagnostics": []any{}},
		}, nil)
	}()
	within(t, 30*time.Second, "the slow document's analysis to start", func() { <-entered })

	// The slow analysis holds until released, so the bound only turns a
	// hang into a failure.
	within(t, 30*time.Second, "requests on another document", func() {
		if rep := pullDiagnostics(c, fast); !strings.Contains(mustJSON(rep.Items), "unknown-section") {
			t.Errorf("diagnostics of the other document: %s", mustJSON(rep.Items))
		}
		var syms []protocol.DocumentSymbol
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": fast}}, &syms)
		c.change(fast, 2, tinyPrompt)
		if rep := pullDiagnostics(c, fast); strings.Contains(mustJSON(rep.Items), "unknown-section") {
			t.Errorf("diagnostics after the edit: %s", mustJSON(rep.Items))
		}
		// A request on the stuck document that needs no analysis is
		// answered too.
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": slow}}, &syms)
		if len(syms) == 0 {
			t.Errorf("no symbols for the stuck document")
		}
	})
	select {
	case <-stuck:
		t.Fatal("the stuck document's diagnostics came back before its analysis finished")
	default:
	}
	unblock()
	within(t, 30*time.Second, "the stuck requests after the analysis finished", func() {
		if rep := <-stuck; !strings.Contains(mustJSON(rep.Items), "unused") {
			t.Errorf("stuck document's diagnostics: %s", mustJSON(rep.Items))
		}
		if err := <-actions; err != nil {
			t.Errorf("code actions: %v", err)
		}
	})
	c.shutdown()
}
