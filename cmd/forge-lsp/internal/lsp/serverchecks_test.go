package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"go.lsp.dev/protocol"
)

// findingsOf returns the code -> severity names of one publish.
func findingsOf(p publishParams) map[string][]string {
	m := map[string][]string{}
	for _, d := range p.Diagnostics {
		if code, ok := d.Code.(string); ok {
			m[code] = append(m[code], severityName(d.Severity))
		}
	}
	return m
}

// TestTooLargeConfigured: the too-large finding is an analyzer's
// (checker.TooLarge): the workspace configuration sets its severity or
// turns it off.
func TestTooLargeConfigured(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"", "information"},
		{`{"severity": {"too-large": "warning"}}`, "warning"},
		{`{"severity": {"too-large": "off"}}`, ""},
	} {
		dir := t.TempDir()
		if tc.config != "" {
			if err := os.WriteFile(filepath.Join(dir, ".forge-lsp.json"), []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c := startServer(t, options{Debounce: -1, MaxAnalyzedSize: 40})
		c.initialize(nil)
		uri := "file://" + filepath.ToSlash(filepath.Join(dir, "big.md"))
		c.open(uri, tinyPrompt)
		p, _ := c.diagnosticsFor(uri, 1, 0)
		got := strings.Join(findingsOf(p)["too-large"], ",")
		if got != tc.want || len(p.Diagnostics) > 1 {
			t.Errorf("config %q: too-large %q, want %q (all: %s)", tc.config, got, tc.want, mustJSON(p.Diagnostics))
		}
		c.shutdown()
	}
}

// TestContextBudgetConfigured: the context-budget findings are an
// analyzer's (checker.ContextBudget): forge:ignore silences one round's,
// and the workspace configuration sets their severity.
func TestContextBudgetConfigured(t *testing.T) {
	backend := gatewaytest.New(t, "sk-plain")
	backend.Plain = true
	dir := t.TempDir()
	gw := filepath.Join(dir, "gw.toml")
	if err := os.WriteFile(gw, []byte(`[[endpoint]]
id = "plain"
protocol = "openai"
base_url = "`+backend.BaseURL()+`"
api_key = "sk-plain"

[[model]]
name = "analyst"
description = "A model suited for careful analysis, coding, and general assistance"
context = 5
upstream = "test-model"
endpoints = ["plain"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".forge-lsp.json"), []byte(`{"severity": {"context-budget": "error"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(modelPrompt, "## Main\n\nSay something.\n",
		"## Main\n\n<!-- forge:ignore context-budget -->\nSay something.\n\n## Other\n\nSay more.\n", 1)
	c := startServer(t, options{Debounce: -1})
	c.initialize(map[string]any{"gatewayConfig": gw})
	uri := "file://" + filepath.ToSlash(filepath.Join(dir, "p.md"))
	c.open(uri, text)
	// The model catalog arrives after the first publish; wait for the
	// one made with it.
	var got publishParams
	if _, _, ok := c.waitFor(0, 30*time.Second, func(n note) bool {
		var p publishParams
		if n.method != protocol.MethodTextDocumentPublishDiagnostics || json.Unmarshal(n.params, &p) != nil || string(p.URI) != uri {
			return false
		}
		got = p
		return len(findingsOf(p)["context-budget"]) > 0
	}); !ok {
		t.Fatalf("no context-budget finding with a 5-token context: %s", mustJSON(got.Diagnostics))
	}
	var lines []int
	for _, d := range got.Diagnostics {
		if d.Code == "context-budget" {
			lines = append(lines, int(d.Range.Start.Line))
		}
	}
	other := strings.Count(text[:strings.Index(text, "Say more.")], "\n")
	if len(lines) != 1 || lines[0] != other {
		t.Errorf("context-budget on lines %v, want only the unsilenced round's (line %d): %s", lines, other, mustJSON(got.Diagnostics))
	}
	if sev := findingsOf(got)["context-budget"]; len(sev) != 1 || sev[0] != "error" {
		t.Errorf("context-budget severity %v, want error from .forge-lsp.json", sev)
	}
	c.shutdown()
}
