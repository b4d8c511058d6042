package lsp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

const tinyPrompt = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# Title\n\n## Main\n\nHello.\n"

func TestLifecycle(t *testing.T) {
	c := startServer(t, options{Debounce: -1})
	// Requests before initialize are refused, notifications ignored.
	err := c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": "file:///a.md"}, "position": map[string]any{"line": 0, "character": 0}}, nil)
	if rpcCode(err) != jsonrpc2.ServerNotInitialized {
		t.Fatalf("hover before initialize: got %v, want ServerNotInitialized", err)
	}
	c.open("file:///early.md", tinyPrompt)
	c.initialize(nil)
	if err := c.call(protocol.MethodInitialize, map[string]any{"capabilities": map[string]any{}}, nil); rpcCode(err) != jsonrpc2.InvalidRequest {
		t.Fatalf("second initialize: got %v, want InvalidRequest", err)
	}
	// The document opened before initialize was ignored: hover on it
	// answers null, not an error.
	var h *protocol.Hover
	c.mustCall(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": "file:///early.md"}, "position": map[string]any{"line": 0, "character": 0}}, &h)
	if h != nil {
		t.Fatalf("hover on a never-opened document: %+v", h)
	}
	c.mustCall(protocol.MethodShutdown, nil, nil)
	if err := c.call(protocol.MethodTextDocumentHover, map[string]any{}, nil); rpcCode(err) != jsonrpc2.InvalidRequest {
		t.Fatalf("request after shutdown: got %v, want InvalidRequest", err)
	}
	c.notify(protocol.MethodExit, nil)
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		c.done <- nil
	case <-time.After(30 * time.Second):
		t.Fatal("no exit")
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	c := startServer(t, options{})
	c.initialize(nil)
	c.notify(protocol.MethodExit, nil)
	select {
	case err := <-c.done:
		if err == nil {
			t.Fatal("exit without shutdown: Serve returned nil, want an error (exit code 1)")
		}
		c.done <- nil
	case <-time.After(30 * time.Second):
		t.Fatal("no exit")
	}
}

// TestGarbage sends malformed frames, unknown methods and oversized input,
// then checks that a valid request still gets a correct answer.
func TestGarbage(t *testing.T) {
	c := startServer(t, options{Debounce: -1, Log: testLog{t}})
	c.initialize(nil)

	write := func(s string) {
		t.Helper()
		if _, err := c.raw.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	write(frame(`{"jsonrpc":"2.0","id":77,"method":`))         // truncated JSON
	write(frame(`not json at all`))                            // not JSON
	write(frame(`{"jsonrpc":"1.0","id":78,"method":"x"}`))     // wrong version
	write("X-Garbage: yes\r\nno colon line\r\n" + frame(`[]`)) // junk headers, batch
	write(frame(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///nowhere.md","version":3},"contentChanges":[{"text":"x"}]}}`))
	write(frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":"wrong shape"}`))
	write(frame("{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{\"textDocument\":{\"uri\":\"file:///bad.md\",\"version\":1,\"text\":\"---\\npromptforge: 1\\n---\\n# \xff\xfe bad utf8\\n\"}}}"))

	if err := c.call("forge/noSuchMethod", map[string]any{}, nil); rpcCode(err) != jsonrpc2.MethodNotFound {
		t.Fatalf("unknown method: got %v, want MethodNotFound", err)
	}
	c.notify("forge/noSuchNotification", map[string]any{"x": 1})
	if err := c.call(protocol.MethodTextDocumentHover, "not an object", nil); rpcCode(err) != jsonrpc2.InvalidParams {
		t.Fatalf("hover with bad params: got %v, want InvalidParams", err)
	}

	// A 5 MB prompt: accepted, not analysed, one informational diagnostic.
	big := "---\nname: big\ndescription: d\npromptforge: 1\n---\n\n# Big\n\n## Main\n\n" + strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing.\n", 5<<20/52)
	c.open("file:///big.md", big)
	p, _ := c.diagnosticsFor("file:///big.md", 1, 0)
	if len(p.Diagnostics) != 1 || !strings.Contains(p.Diagnostics[0].Message, "analyses files up to") {
		t.Fatalf("5 MB prompt diagnostics: %+v", p.Diagnostics)
	}

	// The invalid UTF-8 document was opened and analysed.
	c.diagnosticsFor("file:///bad.md", 1, 0)

	// And the server still answers correctly.
	c.open("file:///ok.md", tinyPrompt)
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": "file:///ok.md"}}, &syms)
	if len(syms) == 0 {
		t.Fatalf("documentSymbol after garbage: no symbols")
	}
	c.shutdown()
}

type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestNoGoroutineLeak checks that a finished session leaves no goroutines
// behind (diagnostics workers, the writer, configuration requests).
func TestNoGoroutineLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	func() {
		c := startServer(t, options{Debounce: 30 * time.Millisecond})
		c.initialize(nil)
		c.open("file:///leak.md", brokenPrompt)
		c.change("file:///leak.md", 2, tinyPrompt) // leaves a pending debounce
		c.shutdown()
		c.cancel()
		c.conn.Close()
		<-c.conn.Done()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > base+1 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left (was %d):\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOversizedFrame uses a small frame limit to exercise the skip path: the
// oversized body is discarded unread, answered with an error, and the next
// request is served.
func TestOversizedFrame(t *testing.T) {
	srvEnd, cliEnd := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(context.Background(), newStreamLimit(srvEnd, 1024), options{}) }()
	defer func() {
		cliEnd.Close()
		<-done
	}()
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", 4096) + `"}}`
	go func() {
		cliEnd.Write([]byte(frame(big)))
		cliEnd.Write([]byte(frame(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{}}}`)))
	}()
	replies := readFrames(t, bufio.NewReader(cliEnd), 2)
	if !strings.Contains(replies[0], "exceeds the 1024 byte limit") || !strings.Contains(replies[0], `"id":null`) {
		t.Errorf("oversized frame reply: %s", replies[0])
	}
	if !strings.Contains(replies[1], `"id":2`) || !strings.Contains(replies[1], `"capabilities"`) {
		t.Errorf("initialize after the oversized frame: %s", replies[1])
	}
}

func TestRenameRefusals(t *testing.T) {
	c := startServer(t, options{Debounce: -1})
	c.initialize(nil)
	uri := "file:///r.md"
	c.open(uri, "---\nname: r\ndescription: d\npromptforge: 1\n---\n\n# R\n\n## A\n\nx\n\n## B\n\ny\n")
	at := func(line, ch int) map[string]any {
		return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": line, "character": ch}, "newName": "B"}
	}
	if err := c.call(protocol.MethodTextDocumentRename, at(8, 4), nil); rpcCode(err) != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "sibling") {
		t.Errorf("rename onto a sibling's name: %v", err)
	}
	if err := c.call(protocol.MethodTextDocumentRename, at(10, 0), nil); rpcCode(err) != jsonrpc2.InvalidRequest {
		t.Errorf("rename of prose: %v", err)
	}
	c.shutdown()
}

// TestBadParams: params of the wrong shape are an InvalidParams reply
// from the params decoder, and the server goes on answering.
func TestBadParams(t *testing.T) {
	c := startServer(t, options{Debounce: -1})
	c.initialize(nil)
	for _, params := range []any{
		[]any{1, 2},
		map[string]any{"textDocument": 7, "position": "x"},
		map[string]any{"textDocument": map[string]any{"uri": []any{"a"}}, "position": map[string]any{"line": "zero"}},
	} {
		if err := c.call(protocol.MethodTextDocumentHover, params, nil); rpcCode(err) != jsonrpc2.InvalidParams {
			t.Errorf("hover with %v: %v, want InvalidParams", params, err)
		}
	}
	c.open("file:///ok.md", tinyPrompt)
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": "file:///ok.md"}}, &syms)
	if len(syms) == 0 {
		t.Fatal("no symbols after bad params")
	}
}

// TestFramingRecovery: a request with an empty method is answered with
// InvalidRequest, and a frame with no Content-Length or a too-small one
// does not take the next message down with it.
func TestFramingRecovery(t *testing.T) {
	srvEnd, cliEnd := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(context.Background(), newStreamLimit(srvEnd, 1<<20), options{}) }()
	defer func() {
		cliEnd.Close()
		<-done
	}()
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	init := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"capabilities":{}}}`, id)
	}
	go func() {
		cliEnd.Write([]byte(frame(`{"jsonrpc":"2.0","id":7,"method":""}`)))
		// The same with the key spelled with an escape.
		cliEnd.Write([]byte(frame(`{"jsonrpc":"2.0","id":6,"\u006dethod":""}`)))
		// No Content-Length at all, then a good frame.
		cliEnd.Write([]byte("Content-Type: application/json\r\n\r\n" + init(8)))
		cliEnd.Write([]byte(frame(init(9))))
		// A Content-Length too small, then a good frame.
		cliEnd.Write([]byte(fmt.Sprintf("Content-Length: 5\r\n\r\n%s", init(10))))
		cliEnd.Write([]byte(frame(init(11))))
	}()
	// Before the fix the replies never came: fail instead of hanging.
	cliEnd.SetReadDeadline(time.Now().Add(20 * time.Second))
	replies := readFrames(t, bufio.NewReader(cliEnd), 5)
	all := strings.Join(replies, "\n")
	if !strings.Contains(replies[0], `"id":7`) || !strings.Contains(replies[0], "method must be a non-empty string") {
		t.Errorf("empty method: %s", replies[0])
	}
	if !strings.Contains(replies[1], `"id":6`) || !strings.Contains(replies[1], "method must be a non-empty string") {
		t.Errorf("empty method with an escaped key: %s", replies[1])
	}
	if !strings.Contains(all, `"id":9`) || !strings.Contains(all, `"id":11`) {
		t.Errorf("a good frame after a broken one was lost:\n%s", all)
	}
}

// readFrames reads n framed messages from r and returns their bodies.
func readFrames(t *testing.T, r *bufio.Reader, n int) []string {
	t.Helper()
	var bodies []string
	for len(bodies) < n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if size, ok := strings.CutPrefix(strings.TrimSpace(line), "Content-Length: "); ok {
			size, _ := strconv.Atoi(size)
			r.ReadString('\n')
			body := make([]byte, size)
			if _, err := io.ReadFull(r, body); err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, string(body))
		}
	}
	return bodies
}
