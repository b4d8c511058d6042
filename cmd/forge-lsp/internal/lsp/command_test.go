package lsp

import (
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

const modelPrompt = `---
name: slow
description: Waits for the model
promptforge: 1
---

# Slow

` + "```lua" + `
models.default("writer", "A model suited for careful analysis, coding, and general assistance")
` + "```" + `

## Main

Say something.
`

// slowGateway is a live gateway whose chat completions block until the
// test ends, so a run can only finish by being cancelled.
func slowGateway(t *testing.T) *gatewaytest.Server {
	srv := gatewaytest.New(t, "secret-key")
	srv.Catalog = []gateway.Model{{ID: "m1", Description: "A model suited for careful analysis, coding, and general assistance", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv.Script = func(*gateway.Request) gatewaytest.Reply {
		<-release
		return gatewaytest.Text("too late")
	}
	return srv
}

// startRun starts forge.runPrompt in the background and waits for its
// progress begin; it returns the request id, the token and the result.
func startRun(t *testing.T, c *testClient, uri string) (int32, json.RawMessage, chan error) {
	from, _ := c.snapshot()
	id := atomic.LoadInt32(&c.calls) + 1
	done := make(chan error, 1)
	go func() {
		done <- c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunPrompt, "arguments": []any{map[string]any{"uri": uri}}}, nil)
	}()
	n, _, ok := c.waitFor(len(from), 30*time.Second, func(n note) bool {
		return n.method == protocol.MethodProgress && strings.Contains(string(n.params), `"section ## Main"`)
	})
	if !ok {
		t.Fatal("run did not reach ## Main")
	}
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	_ = json.Unmarshal(n.params, &p)
	return id, p.Token, done
}

func expectCancelled(t *testing.T, done chan error) {
	t.Helper()
	select {
	case err := <-done:
		if rpcCode(err) != requestCancelled {
			t.Fatalf("cancelled run replied %v, want RequestCancelled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run was not cancelled")
	}
}

func TestRunCancellation(t *testing.T) {
	srv := slowGateway(t)
	c := startServer(t, options{Getenv: func(k string) string {
		if k == "MY_GATEWAY_KEY" {
			return "secret-key"
		}
		return ""
	}})
	c.initialize(map[string]any{"gatewayUrl": srv.BaseURL(), "apiKeyEnv": "MY_GATEWAY_KEY"})
	uri := "file:///slow.md"
	c.open(uri, modelPrompt)

	// $/cancelRequest with a numeric id (the library's own handler would
	// never match it).
	id, _, done := startRun(t, c, uri)
	c.notify(protocol.MethodCancelRequest, map[string]any{"id": id})
	expectCancelled(t, done)

	// Cancelling the progress stops the run too.
	_, tok, done := startRun(t, c, uri)
	c.notify(protocol.MethodWorkDoneProgressCancel, map[string]any{"token": tok})
	expectCancelled(t, done)

	// The key travelled only in the header: never in a notification.
	ns, _ := c.snapshot()
	for _, n := range ns {
		if strings.Contains(string(n.params), "secret-key") {
			t.Fatalf("key leaked in %s: %s", n.method, n.params)
		}
	}
	c.shutdown()
}

func TestRunWithoutModel(t *testing.T) {
	c := startServer(t, options{})
	c.initialize(nil)
	uri := "file:///nomodel.md"
	c.open(uri, modelPrompt)
	err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunSection, "arguments": []any{map[string]any{"uri": uri, "section": "## Main"}}}, nil)
	if rpcCode(err) != requestFailed {
		t.Fatalf("run without a model: %v, want RequestFailed", err)
	}
	// The message names the engine's variables and this server's settings;
	// editor-specific advice is the editors' (they key it on the reason).
	for _, want := range []string{"PROMPTFORGE_GATEWAY_URL", "gatewayUrl", "apiKeyEnv", "cassette"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	for _, editor := range []string{"VS Code", "Neovim", "Set Gateway Key", "gateway_url"} {
		if strings.Contains(err.Error(), editor) {
			t.Errorf("error %q carries editor advice (%s)", err, editor)
		}
	}
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Data == nil || !strings.Contains(string(*rpcErr.Data), `"reason":"`+reasonGatewayConfig+`"`) {
		t.Errorf("error %v carries no reason %q in its data", err, reasonGatewayConfig)
	}
	// A client-supplied workDoneToken (a number here) is used as is, and
	// the server then creates no token of its own.
	from, _ := c.snapshot()
	_ = c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunPrompt, "workDoneToken": 77, "arguments": []any{map[string]any{"uri": uri}}}, nil)
	ns, _ := c.snapshot()
	var kinds []string
	for _, n := range ns[len(from):] {
		if n.method == protocol.MethodProgress {
			if !strings.Contains(string(n.params), `"token":77`) {
				t.Errorf("progress with another token: %s", n.params)
			}
			var p struct{ Value struct{ Kind string } }
			_ = json.Unmarshal(n.params, &p)
			kinds = append(kinds, p.Value.Kind)
		}
	}
	if len(kinds) < 2 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" {
		t.Errorf("progress kinds with a client token: %v", kinds)
	}
	c.mu.Lock()
	creates := 0
	for _, r := range c.requests {
		if r.method == protocol.MethodWorkDoneProgressCreate {
			creates++
		}
	}
	c.mu.Unlock()
	if creates != 1 { // only the first run (no client token) created one
		t.Errorf("%d window/workDoneProgress/create requests, want 1", creates)
	}

	// Bad arguments are InvalidParams, not a crash.
	for _, args := range []any{[]any{}, []any{map[string]any{"uri": uri}}, []any{"x"}} {
		err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunSection, "arguments": args}, nil)
		if rpcCode(err) != jsonrpc2.InvalidParams {
			t.Errorf("arguments %v: %v, want InvalidParams", args, err)
		}
	}
	if err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunSection, "arguments": []any{map[string]any{"uri": uri, "section": "## Missing"}}}, nil); rpcCode(err) != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "Missing") {
		t.Errorf("unknown section: %v", err)
	}
	if err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": "forge.nope", "arguments": []any{}}, nil); rpcCode(err) != jsonrpc2.InvalidParams {
		t.Errorf("unknown command: %v", err)
	}
	c.shutdown()
}

// TestRunErrorLocated: a failed run's reply reads as `forge-lsp run`
// prints it, the file and line once.
func TestRunErrorLocated(t *testing.T) {
	c := startServer(t, options{})
	c.initialize(nil)
	uri := "file:///prompts/bad.md"
	c.open(uri, "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nerror(\"boom\")\n```\n")
	err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunPrompt, "arguments": []any{map[string]any{"uri": uri}}}, nil)
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Message != "bad.md:12: boom (Lua error in section `A` prologue)" {
		t.Errorf("run error %v", err)
	}
	c.shutdown()
}
