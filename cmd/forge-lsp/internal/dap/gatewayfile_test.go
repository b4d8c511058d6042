package dap

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// TestLaunchGatewayConfig: PROMPTFORGE_GATEWAY_CONFIG in the adapter's
// environment serves a gateway file in-process in front of a plain
// OpenAI-compatible backend. launch.json cannot name one.
func TestLaunchGatewayConfig(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.md")
	writeFile(t, prog, program)
	backend := gatewaytest.New(t, "sk-plain")
	backend.Plain = true
	backend.Enqueue(gatewaytest.Calls("echo", `{"text":"x"}`), gatewaytest.Text("done"))
	file := filepath.Join(dir, "gw.toml")
	writeFile(t, file, `[[endpoint]]
id = "plain"
protocol = "openai"
base_url = "`+backend.BaseURL()+`"
api_key = "${PLAIN_KEY}"

[[model]]
name = "any"
description = "A model suited for careful analysis, coding, and general assistance"
context = 8192
upstream = "test-model"
endpoints = ["plain"]
`)
	os.WriteFile(filepath.Join(dir, "gw.env"), []byte("PLAIN_KEY=sk-plain\n"), 0o600)
	c := start(t, Options{Env: func(k string) (string, bool) { return file, k == gateway.EnvConfig }})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", NoDebug: true, Execution: execution}, nil, nil)
	out, code := c.finish()
	if code != 0 || !strings.Contains(out, "last done") {
		t.Fatalf("exit %d, output %q", code, out)
	}
	if got := backend.ChatRequests(); len(got) != 2 || got[0].Model != "test-model" {
		t.Fatalf("backend saw %d requests", len(got))
	}
}

// TestLaunchRefusesGatewayConfig: a gatewayConfig key in launch.json is
// not an argument the adapter reads.
func TestLaunchRefusesGatewayConfig(t *testing.T) {
	var a LaunchArgs
	if err := json.Unmarshal([]byte(`{"program":"p.md","gatewayConfig":"evil.toml"}`), &a); err != nil || a.Program != "p.md" {
		t.Fatal(a, err)
	}
	if b, _ := json.Marshal(a); strings.Contains(string(b), "evil") {
		t.Fatalf("launch arguments keep the gateway file: %s", b)
	}
}
