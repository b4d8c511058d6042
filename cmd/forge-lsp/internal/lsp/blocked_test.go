package lsp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// gatedStream is a server stream whose writes block while the gate is
// closed: a client that has stopped reading.
type gatedStream struct {
	jsonrpc2.Stream
	mu      sync.Mutex
	gate    chan struct{} // nil while open
	waiting chan struct{} // receives when a write starts waiting
}

func (g *gatedStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		select {
		case g.waiting <- struct{}{}:
		default:
		}
		<-gate
	}
	return g.Stream.Write(ctx, msg)
}

func (g *gatedStream) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = make(chan struct{})
}

func (g *gatedStream) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
}

// TestBlockedClientStream: while the client reads nothing (every write to
// it blocks, with one document's diagnostics waiting to go out), the
// server still takes in edits of another document and answers requests
// on it (the answer is queued for the client within 2 s); once the client
// reads again the answer arrives and reflects the edit. Before, the
// diagnostics were written under the server lock, and the blocked write
// stopped every other message.
func TestBlockedClientStream(t *testing.T) {
	g := &gatedStream{waiting: make(chan struct{}, 1)}
	answered := make(chan string, 16)
	testHookAnswered = func(method string) {
		select {
		case answered <- method:
		default:
		}
	}
	t.Cleanup(func() { g.open(); testHookAnswered = nil })
	c := startServerStream(t, options{Debounce: -1}, func(s jsonrpc2.Stream) jsonrpc2.Stream {
		g.Stream = s
		return g
	})
	c.initialize(nil)
	a, b := "file:///blocked/a.md", "file:///blocked/b.md"
	c.open(a, tinyPrompt)
	c.open(b, tinyPrompt)
	_, from := c.diagnosticsFor(a, 1, 0)
	c.diagnosticsFor(b, 1, 0)
	for len(answered) > 0 {
		<-answered // initialize
	}

	g.close()
	// A's new diagnostics are due: their write is the one that blocks.
	c.change(a, 2, brokenPrompt)
	within(t, 30*time.Second, "the diagnostics write to start waiting", func() { <-g.waiting })

	c.change(b, 2, tinyPrompt+"\n## Added\n\nMore.\n")
	var syms []protocol.DocumentSymbol
	reply := make(chan error, 1)
	go func() {
		reply <- c.call(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": b}}, &syms)
	}()
	// The bound only turns a server stuck on the write into a failure.
	within(t, 2*time.Second, "the answer on another document while the client reads nothing", func() {
		for m := range answered {
			if m == protocol.MethodTextDocumentDocumentSymbol {
				return
			}
		}
	})

	g.open()
	within(t, 30*time.Second, "the answer after the client reads again", func() {
		if err := <-reply; err != nil {
			t.Errorf("documentSymbol: %v", err)
		}
	})
	if !strings.Contains(mustJSON(syms), "Added") {
		t.Errorf("the answer does not reflect the edit made while blocked: %s", mustJSON(syms))
	}
	if p, _ := c.diagnosticsFor(a, 2, from+1); !strings.Contains(mustJSON(p.Diagnostics), "unknown-section") {
		t.Errorf("A's diagnostics after the client reads again: %s", mustJSON(p.Diagnostics))
	}
	c.shutdown()
}
