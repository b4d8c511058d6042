package mcp

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRunPromptWithGatewayFile: with a gateway file (--gateway-config,
// PROMPTFORGE_GATEWAY_CONFIG) prompts run in-process against a plain
// OpenAI-compatible backend whose catalog has no descriptions; the file
// wins over prompts.toml's [gateway].
func TestRunPromptWithGatewayFile(t *testing.T) {
	f := newFixture(t, map[string]string{"ask.md": askPrompt}, "")
	cs := serveWithGatewayFile(t, f)
	f.gw.Enqueue(gatewaytest.Text("from the described model"))
	var r RunResult
	call(t, cs, "run_prompt", map[string]any{"prompt": "ask", "args": "q"}, &r)
	if r.Status != StatusCompleted || r.Value == nil || *r.Value != "from the described model" {
		t.Fatalf("%+v", r)
	}
	if got := f.gw.ChatRequests(); len(got) != 1 || got[0].Model != "test-model" {
		t.Fatalf("backend saw %+v", got)
	}
}

// TestGatewayFileKeysRedacted: an endpoint key from the user's gateway
// file is kept out of results like the gateway key is, whatever puts it
// there (an endpoint's echo is redacted by the gateway already; here a
// prompt returns it).
func TestGatewayFileKeysRedacted(t *testing.T) {
	const parrot = "---\nname: parrot\ndescription: Return the input as it is\npromptforge: 1\n---\n\n# Parrot\n\n## Say\n\n```lua\nreturn args\n```\n"
	f := newFixture(t, map[string]string{"ask.md": askPrompt, "parrot.md": parrot}, "")
	cs := serveWithGatewayFile(t, f)
	f.gw.Enqueue(gatewaytest.Text("my key is " + gatewayKey))
	var r RunResult
	_, text := call(t, cs, "run_prompt", map[string]any{"prompt": "ask", "args": "q"}, &r)
	if r.Status != StatusCompleted || r.Value == nil || strings.Contains(*r.Value, gatewayKey) || strings.Contains(text, gatewayKey) {
		t.Fatalf("an endpoint's echo: %+v %q", r, text)
	}
	_, text = call(t, cs, "run_prompt", map[string]any{"prompt": "parrot", "args": "the key is " + gatewayKey}, &r)
	if r.Status != StatusCompleted || r.Value == nil || *r.Value != "the key is [redacted]" || strings.Contains(text, gatewayKey) {
		t.Fatalf("a prompt that returns the key: %+v %q", r, text)
	}
}

// serveWithGatewayFile serves f's prompts with a gateway file
// (PROMPTFORGE_GATEWAY_CONFIG) whose one endpoint is f's gateway as a
// plain backend without descriptions, and connects a client.
func serveWithGatewayFile(t *testing.T, f *fixture) *sdk.ClientSession {
	f.gw.Plain = true
	file := filepath.Join(f.dir, "gw.toml")
	writeFile(t, file, `[[endpoint]]
id = "plain"
protocol = "openai"
base_url = "`+f.gw.BaseURL()+`"
api_key = "`+gatewayKey+`"

[[model]]
name = "general"
description = "a general assistant model"
context = 8192
upstream = "test-model"
endpoints = ["plain"]
`)
	cfg, err := LoadConfig(filepath.Join(f.dir, "prompts.toml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(cfg, Options{Env: func(k string) (string, bool) { return file, k == gateway.EnvConfig }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	f.srv = srv
	return f.connect(nil)
}
