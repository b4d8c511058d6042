package gatewayd_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/gatewayd"
)

// TestInProcess: PROMPTFORGE_GATEWAY_CONFIG makes the engine's client
// reach a plain OpenAI-compatible backend (no descriptions in its
// catalog) through the gateway file's catalog and routing, with no
// socket of its own; the file wins over PROMPTFORGE_GATEWAY_URL.
func TestInProcess(t *testing.T) {
	backend := gatewaytest.New(t, "sk-plain")
	backend.Plain = true
	backend.Enqueue(gatewaytest.Text("hi from the backend"))
	dir := t.TempDir()
	path := filepath.Join(dir, "gw.toml")
	os.WriteFile(path, []byte(`[[endpoint]]
id = "plain"
protocol = "openai"
base_url = "`+backend.BaseURL()+`"
api_key = "${PLAIN_KEY}"

[[model]]
name = "drafts"
description = "fast model for drafts"
context = 8192
upstream = "test-model"
endpoints = ["plain"]
`), 0o600)
	os.WriteFile(filepath.Join(dir, "gw.env"), []byte("PLAIN_KEY=sk-plain\n"), 0o600)
	// Directly, the plain catalog is refused with a way out.
	_, err := gateway.New(backend.Config()).Models(context.Background())
	if !gateway.IsConfig(err) || !strings.Contains(err.Error(), "--gateway-config") {
		t.Fatalf("plain catalog: %v", err)
	}
	env := map[string]string{gateway.EnvConfig: path, gateway.EnvURL: "http://127.0.0.1:1/v1"}
	cfg, err := gateway.FromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, gatewayd.OpenFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cfg.String(), "sk-plain") || cfg.Transport == nil {
		t.Fatalf("config %s", cfg)
	}
	c := gateway.New(cfg)
	ms, err := c.Models(context.Background())
	if err != nil || len(ms) != 1 || ms[0].ID != "drafts" || ms[0].Description != "fast model for drafts" || ms[0].Thinking != "never" {
		t.Fatalf("catalog %+v %v", ms, err)
	}
	resp, err := c.Complete(context.Background(), &gateway.Request{Model: "drafts", Messages: []gateway.Message{{Role: "user", Content: "hello"}}})
	if err != nil || resp.Content != "hi from the backend" {
		t.Fatalf("%+v %v", resp, err)
	}
	got := backend.ChatRequests()
	if len(got) != 1 || got[0].Model != "test-model" {
		t.Fatalf("backend saw %+v", got)
	}
	// Gateway errors reach the client as backend errors with the
	// envelope's message.
	_, err = c.Complete(context.Background(), &gateway.Request{Model: "nope", Messages: []gateway.Message{{Role: "user", Content: "x"}}})
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Kind != gateway.KindBackend || ge.Status != 404 || !strings.Contains(err.Error(), "unknown model nope") {
		t.Fatalf("unknown model: %v", err)
	}
	// A broken file fails with its location.
	os.WriteFile(path, []byte("[[model]]\nnam = 1\n"), 0o600)
	_, err = gateway.FromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, gatewayd.OpenFile)
	if !gateway.IsConfig(err) || !strings.Contains(err.Error(), "gw.toml:2:1: unknown key model.nam") {
		t.Fatalf("broken file: %v", err)
	}
}
