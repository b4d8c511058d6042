package lsp

import (
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// TestSlowFeatureBlocksNoOtherDocument: while one document's hover is
// stuck in its computation (a test hook holds the handler), the server
// takes in edits and answers every kind of request on another document,
// and other requests and edits on the stuck document itself, each within
// 2 s. Before, a document request's handler ran under the server lock,
// so hover's value evaluation (or any slow feature) held up every other
// message.
func TestSlowFeatureBlocksNoOtherDocument(t *testing.T) {
	a, b := "file:///slowfeature/a.md", "file:///slowfeature/b.md"
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	testHookHandler = func(method string, uri protocol.DocumentURI) {
		if method == protocol.MethodTextDocumentHover && string(uri) == a {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
		}
	}
	t.Cleanup(func() { unblock(); testHookHandler = nil })

	c := startServer(t, options{Debounce: -1})
	c.initialize(nil)
	c.open(a, tinyPrompt)
	c.open(b, tinyPrompt)

	at := func(uri string, line, char int) map[string]any {
		return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": line, "character": char}}
	}
	stuck := make(chan error, 1)
	var stuckHover *protocol.Hover
	go func() { stuck <- c.call(protocol.MethodTextDocumentHover, at(a, 8, 4), &stuckHover) }()
	within(t, 30*time.Second, "the hover on A to reach its handler", func() { <-entered })

	c.change(b, 2, tinyPrompt+"\n## Added\n\nMore.\n")
	within(t, 2*time.Second, "requests on B while A's hover is stuck", func() {
		var h *protocol.Hover
		c.mustCall(protocol.MethodTextDocumentHover, at(b, 12, 4), &h)
		if h == nil || !strings.Contains(h.Contents.Value, "Added") {
			t.Errorf("hover on B's new section: %s", mustJSON(h))
		}
		var syms []protocol.DocumentSymbol
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": b}}, &syms)
		if !strings.Contains(mustJSON(syms), "Added") {
			t.Errorf("B's symbols do not reflect the edit: %s", mustJSON(syms))
		}
		var locs []protocol.Location
		c.mustCall(protocol.MethodTextDocumentDefinition, at(b, 8, 4), &locs)
		var items any
		c.mustCall(protocol.MethodTextDocumentCompletion, at(b, 0, 0), &items)
		var ws []protocol.SymbolInformation
		c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": "Added"}, &ws)
		if len(ws) != 1 {
			t.Errorf("workspace symbols for Added: %s", mustJSON(ws))
		}
	})
	c.change(a, 2, tinyPrompt+"\n## Later\n\nText.\n")
	within(t, 2*time.Second, "another request on A while its hover is stuck", func() {
		var syms []protocol.DocumentSymbol
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": a}}, &syms)
		if !strings.Contains(mustJSON(syms), "Later") {
			t.Errorf("A's symbols do not reflect the edit: %s", mustJSON(syms))
		}
	})
	select {
	case err := <-stuck:
		t.Fatalf("A's hover answered while its handler was held: %v", err)
	default:
	}

	unblock()
	within(t, 30*time.Second, "A's hover once released", func() {
		if err := <-stuck; err != nil {
			t.Errorf("hover on A: %v", err)
		}
	})
	// The stuck hover answers for the version it was asked about.
	if stuckHover == nil || !strings.Contains(stuckHover.Contents.Value, "Main") {
		t.Errorf("A's hover: %s", mustJSON(stuckHover))
	}
	c.shutdown()
}
