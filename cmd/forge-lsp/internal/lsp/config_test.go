package lsp

import (
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

func TestConfigPrecedence(t *testing.T) {
	env := map[string]string{envGatewayURL: "http://env/v1", envCassette: "env.cassette"}
	c := configFromEnv(func(k string) string { return env[k] })
	if c.GatewayURL != "http://env/v1" || c.APIKeyEnv != envAPIKey || c.Cassette != "env.cassette" {
		t.Fatalf("from env: %+v", c)
	}
	c = c.merge(configFromJSON([]byte(`{"forge": {"cassette": "init.cassette", "apiKeyEnv": "MY_KEY"}}`)))
	if c.Cassette != "init.cassette" || c.APIKeyEnv != "MY_KEY" || c.GatewayURL != "http://env/v1" {
		t.Fatalf("after initializationOptions: %+v", c)
	}
	c = c.merge(configFromJSON([]byte(`{"toolsFile": "tools.json", "cassette": ""}`)))
	if c.ToolsFile != "tools.json" || c.Cassette != "init.cassette" {
		t.Fatalf("after workspace/configuration (flat, empty keeps): %+v", c)
	}
	if got := configFromJSON([]byte(`[1,2]`)); got != (config{}) {
		t.Fatalf("garbage settings: %+v", got)
	}
}

// TestWorkspaceConfiguration checks that the server asks for the "forge"
// section after initialized and that the answer overrides
// initializationOptions (observable through the cassette a run opens).
func TestWorkspaceConfiguration(t *testing.T) {
	c := startServer(t, options{})
	c.mu.Lock()
	c.settings = map[string]any{"cassette": "/nonexistent/from-workspace.cassette"}
	c.mu.Unlock()
	c.initialize(map[string]any{"cassette": "/nonexistent/from-init.cassette"})
	uri := "file:///cfg.md"
	c.open(uri, modelPrompt)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunPrompt, "arguments": []any{map[string]any{"uri": uri}}}, nil)
		if err != nil && strings.Contains(err.Error(), "from-workspace.cassette") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run error %v never named the workspace/configuration cassette", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.mu.Lock()
	asked := false
	for _, r := range c.requests {
		if r.method == protocol.MethodWorkspaceConfiguration && strings.Contains(string(r.params), `"section":"forge"`) {
			asked = true
		}
	}
	c.mu.Unlock()
	if !asked {
		t.Fatal("server never asked workspace/configuration for the forge section")
	}
	// A pushed didChangeConfiguration applies too.
	c.mu.Lock()
	c.settings = nil
	c.mu.Unlock()
	c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"forge": map[string]any{"cassette": "/nonexistent/pushed.cassette"}}})
	deadline = time.Now().Add(30 * time.Second)
	for {
		err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunPrompt, "arguments": []any{map[string]any{"uri": uri}}}, nil)
		if err != nil && strings.Contains(err.Error(), "pushed.cassette") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run error %v never named the pushed cassette", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.shutdown()
}
