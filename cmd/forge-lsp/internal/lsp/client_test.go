package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// testClient is a black-box LSP client over net.Pipe: it records every
// notification the server sends and answers the server's own requests.
type testClient struct {
	t      testing.TB
	conn   jsonrpc2.Conn
	raw    net.Conn // the client end, for writing garbage
	done   chan error
	cancel context.CancelFunc

	mu     sync.Mutex
	notes  []note
	signal chan struct{} // closed and replaced on every notification
	// settings answers workspace/configuration; nil answers null.
	settings any
	// requests records server->client requests (method, params).
	requests []note
	// calls counts our own requests: the library numbers them 1, 2, ...,
	// which lets a test predict the id it must cancel.
	calls int32
	// hook sees every notification; discard stops recording them.
	hook    func(note)
	discard bool
	// root is the workspace folder initialize sends (default: an empty
	// temporary directory); textDocumentCaps are extra client
	// capabilities under textDocument.
	root             string
	textDocumentCaps map[string]any
	// positionEncodings, when set, is the client's
	// general.positionEncodings offer (LSP 3.17).
	positionEncodings []string
}

type note struct {
	method string
	params json.RawMessage
	at     time.Time
}

// startServer runs Serve on one end of a pipe and connects a client.
func startServer(t testing.TB, opts options) *testClient {
	t.Helper()
	return startServerStream(t, opts, func(s jsonrpc2.Stream) jsonrpc2.Stream { return s })
}

// startServerStream is startServer with the server's stream wrapped.
func startServerStream(t testing.TB, opts options, wrap func(jsonrpc2.Stream) jsonrpc2.Stream) *testClient {
	t.Helper()
	srvEnd, cliEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &testClient{t: t, raw: cliEnd, done: make(chan error, 1), cancel: cancel, signal: make(chan struct{})}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	go func() { c.done <- serve(ctx, wrap(newStream(srvEnd)), opts) }()
	// The client uses the tolerant framing too: the server answers garbage
	// with id-null errors, which the library's stream would choke on.
	c.conn = jsonrpc2.NewConn(newStream(cliEnd))
	c.conn.Go(ctx, c.handle)
	t.Cleanup(func() {
		cancel()
		c.conn.Close()
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			t.Errorf("server did not stop")
		}
	})
	return c
}

func (c *testClient) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	n := note{method: req.Method(), params: append(json.RawMessage(nil), req.Params()...), at: time.Now()}
	if _, isCall := req.(*jsonrpc2.Call); isCall {
		c.mu.Lock()
		c.requests = append(c.requests, n)
		settings := c.settings
		c.mu.Unlock()
		// Reply errors are ignored: returning one makes the library fail the
		// connection, and a second failure of another type (the read error
		// at close) panics inside jsonrpc2's atomic.Value.
		switch req.Method() {
		case protocol.MethodWorkspaceConfiguration:
			_ = reply(ctx, []any{settings}, nil)
		default:
			_ = reply(ctx, nil, nil)
		}
		return nil
	}
	c.mu.Lock()
	hook := c.hook
	if !c.discard {
		c.notes = append(c.notes, n)
		close(c.signal)
		c.signal = make(chan struct{})
	}
	c.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return nil
}

// call sends a request and decodes the result.
func (c *testClient) call(method string, params, result any) error {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	atomic.AddInt32(&c.calls, 1)
	_, err := c.conn.Call(ctx, method, params, result)
	return err
}

func (c *testClient) mustCall(method string, params, result any) {
	c.t.Helper()
	if err := c.call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *testClient) notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("notify %s: %v", method, err)
	}
}

// initialize performs the handshake with the given initializationOptions.
func (c *testClient) initialize(initOptions any) {
	c.t.Helper()
	root := c.root
	if root == "" {
		root = c.t.TempDir() // an empty workspace
	}
	caps := map[string]any{"window": map[string]any{"workDoneProgress": true}, "workspace": map[string]any{"configuration": true, "diagnostics": map[string]any{"refreshSupport": true}}}
	for k, v := range c.textDocumentCaps {
		td, _ := caps["textDocument"].(map[string]any)
		if td == nil {
			td = map[string]any{}
			caps["textDocument"] = td
		}
		td[k] = v
	}
	if c.positionEncodings != nil {
		caps["general"] = map[string]any{"positionEncodings": c.positionEncodings}
	}
	params := map[string]any{
		"processId":    nil,
		"rootUri":      "file://" + filepath.ToSlash(root),
		"capabilities": caps,
	}
	if initOptions != nil {
		params["initializationOptions"] = initOptions
	}
	var res protocol.InitializeResult
	c.mustCall(protocol.MethodInitialize, params, &res)
	c.notify(protocol.MethodInitialized, map[string]any{})
}

func (c *testClient) open(uri, text string) {
	c.t.Helper()
	c.notify(protocol.MethodTextDocumentDidOpen, map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "markdown", "version": 1, "text": text},
	})
}

func (c *testClient) change(uri string, version int32, text string) {
	c.t.Helper()
	c.notify(protocol.MethodTextDocumentDidChange, map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []any{map[string]any{"text": text}},
	})
}

// notes returns a copy of the notifications received so far.
func (c *testClient) snapshot() ([]note, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]note(nil), c.notes...), c.signal
}

// waitFor waits until pred holds for some notification received at or
// after index from, and returns it with its index.
func (c *testClient) waitFor(from int, timeout time.Duration, pred func(note) bool) (note, int, bool) {
	deadline := time.After(timeout)
	for {
		ns, sig := c.snapshot()
		for i := from; i < len(ns); i++ {
			if pred(ns[i]) {
				return ns[i], i, true
			}
		}
		select {
		case <-sig:
		case <-deadline:
			return note{}, -1, false
		}
	}
}

// diagnosticsFor waits for a publishDiagnostics for uri at version (any
// version when version < 0).
func (c *testClient) diagnosticsFor(uri string, version int32, from int) (publishParams, int) {
	c.t.Helper()
	var got publishParams
	_, i, ok := c.waitFor(from, 30*time.Second, func(n note) bool {
		if n.method != protocol.MethodTextDocumentPublishDiagnostics {
			return false
		}
		var p publishParams
		if json.Unmarshal(n.params, &p) != nil || string(p.URI) != uri {
			return false
		}
		if version >= 0 && p.Version != version {
			return false
		}
		got = p
		return true
	})
	if !ok {
		c.t.Fatalf("no publishDiagnostics for %s version %d", uri, version)
	}
	return got, i
}

// shutdown performs an orderly shutdown and exit and checks Serve's result.
func (c *testClient) shutdown() {
	c.t.Helper()
	c.mustCall(protocol.MethodShutdown, nil, nil)
	c.notify(protocol.MethodExit, nil)
	select {
	case err := <-c.done:
		if err != nil {
			c.t.Fatalf("Serve after shutdown+exit: %v", err)
		}
		c.done <- nil // for Cleanup
	case <-time.After(30 * time.Second):
		c.t.Fatalf("server did not exit")
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func rpcCode(err error) jsonrpc2.Code {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
