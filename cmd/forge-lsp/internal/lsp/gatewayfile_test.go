package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"go.lsp.dev/protocol"
)

// TestRunWithGatewayConfig: the gatewayConfig setting makes editor runs
// reach a plain OpenAI-compatible backend (no descriptions in its
// /v1/models) through the file's catalog, in-process.
func TestRunWithGatewayConfig(t *testing.T) {
	backend := gatewaytest.New(t, "sk-plain")
	backend.Plain = true
	backend.Enqueue(gatewaytest.Text("done by the backend"))
	file := filepath.Join(t.TempDir(), "gw.toml")
	os.WriteFile(file, []byte(`[[endpoint]]
id = "plain"
protocol = "openai"
base_url = "`+backend.BaseURL()+`"
api_key = "${PLAIN_KEY}"

[[model]]
name = "analyst"
description = "A model suited for careful analysis, coding, and general assistance"
context = 8192
upstream = "test-model"
endpoints = ["plain"]
`), 0o600)
	c := startServer(t, options{Getenv: func(k string) string {
		if k == "PLAIN_KEY" {
			return "sk-plain"
		}
		return ""
	}})
	c.initialize(map[string]any{"gatewayConfig": file})
	uri := "file:///gwfile.md"
	c.open(uri, modelPrompt)
	var res runResult
	if err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRunPrompt, "arguments": []any{map[string]any{"uri": uri}}}, &res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Result, "done by the backend") {
		t.Fatalf("result %q", res.Result)
	}
	if got := backend.ChatRequests(); len(got) != 1 || got[0].Model != "test-model" {
		t.Fatalf("backend saw %+v", got)
	}
	c.shutdown()
}
