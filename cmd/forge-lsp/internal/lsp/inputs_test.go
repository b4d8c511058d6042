package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/source"

	"go.lsp.dev/protocol"
)

// TestWatchedInputsRepublish: editing the workspace configuration
// (.forge-lsp.json) or the tools file (forge-tools.json) beside an open
// prompt republishes its findings, analysed with the files as they are
// now, without any edit of the prompt itself.
func TestWatchedInputsRepublish(t *testing.T) {
	dir := t.TempDir()
	prompt := filepath.Join(dir, "p.md")
	text := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# Title\n\n```lua\ntools.bind(\"wc\", \"count the words of a text\")\nlocal unused = 1\n```\n"
	if err := os.WriteFile(prompt, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + filepath.ToSlash(prompt)
	c := startServer(t, options{})
	c.root = dir
	c.initialize(nil)
	c.open(uri, text)
	codes := func(p publishParams) map[string]string {
		m := map[string]string{}
		for _, d := range p.Diagnostics {
			if code, ok := d.Code.(string); ok {
				m[code] = severityName(d.Severity)
			}
		}
		return m
	}
	p, from := c.diagnosticsFor(uri, 1, 0)
	if _, ok := codes(p)["tool-binding"]; !ok {
		t.Fatalf("without a tools file: no tool-binding finding in %+v", p.Diagnostics)
	}
	changed := func(name string) {
		c.notify(protocol.MethodWorkspaceDidChangeWatchedFiles, map[string]any{"changes": []any{
			map[string]any{"uri": "file://" + filepath.ToSlash(filepath.Join(dir, name)), "type": 1}}})
	}

	// The tools file appears: the capability now resolves.
	if err := os.WriteFile(filepath.Join(dir, "forge-tools.json"), []byte(`{"tools": [{"name": "word_count", "description": "Count the words in a text.",
  "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}, "trust": "trusted", "command": ["false"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	changed("forge-tools.json")
	p, from = c.diagnosticsFor(uri, 1, from+1)
	if _, ok := codes(p)["tool-binding"]; ok {
		t.Fatalf("after forge-tools.json was written: tool-binding still reported: %+v", p.Diagnostics)
	}

	// The configuration turns a warning into an error.
	const code = "unused-local"
	if sev := codes(p)[code]; sev == "" || sev == "error" {
		t.Fatalf("%s before .forge-lsp.json: severity %q, want a reported non-error", code, sev)
	}
	if err := os.WriteFile(filepath.Join(dir, ".forge-lsp.json"), []byte(`{"severity": {"`+code+`": "error"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	changed(".forge-lsp.json")
	p, _ = c.diagnosticsFor(uri, 1, from+1)
	if codes(p)[code] != "error" {
		t.Fatalf("after .forge-lsp.json raised %s to error: %v", code, codes(p))
	}
}

func severityName(s protocol.DiagnosticSeverity) string {
	switch s {
	case protocol.DiagnosticSeverityError:
		return "error"
	case protocol.DiagnosticSeverityWarning:
		return "warning"
	case protocol.DiagnosticSeverityInformation:
		return "information"
	}
	return "hint"
}

// TestWatchedGatewayFileRepublish: the gateway file is an input of every
// snapshot (its models' contexts are the model catalog): rewriting it
// and reporting the change republishes the open documents' findings
// analysed with the new catalog.
func TestWatchedGatewayFileRepublish(t *testing.T) {
	backend := gatewaytest.New(t, "sk-plain")
	backend.Plain = true
	file := filepath.Join(t.TempDir(), "gw.toml")
	write := func(context int) {
		if err := os.WriteFile(file, []byte(`[[endpoint]]
id = "plain"
protocol = "openai"
base_url = "`+backend.BaseURL()+`"
api_key = "sk-plain"

[[model]]
name = "analyst"
description = "A model suited for careful analysis, coding, and general assistance"
context = `+strconv.Itoa(context)+`
upstream = "test-model"
endpoints = ["plain"]
`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(5)
	c := startServer(t, options{Debounce: -1})
	c.initialize(map[string]any{"gatewayConfig": file})
	uri := "file:///gwwatch.md"
	c.open(uri, modelPrompt)
	budget := func(n note) bool {
		var p publishParams
		return n.method == protocol.MethodTextDocumentPublishDiagnostics && json.Unmarshal(n.params, &p) == nil &&
			string(p.URI) == uri && strings.Contains(mustJSON(p.Diagnostics), "context-budget")
	}
	// The catalog arrives after the first publish; the one made with it
	// warns: the round does not fit a 5-token context.
	_, at, ok := c.waitFor(0, 30*time.Second, budget)
	if !ok {
		t.Fatal("no context-budget finding with a 5-token context")
	}
	write(100000)
	c.notify(protocol.MethodWorkspaceDidChangeWatchedFiles, map[string]any{"changes": []any{
		map[string]any{"uri": "file://" + filepath.ToSlash(file), "type": 2}}})
	if _, _, ok := c.waitFor(at+1, 30*time.Second, func(n note) bool {
		var p publishParams
		return n.method == protocol.MethodTextDocumentPublishDiagnostics && json.Unmarshal(n.params, &p) == nil &&
			string(p.URI) == uri && !strings.Contains(mustJSON(p.Diagnostics), "context-budget")
	}); !ok {
		t.Fatal("the budget finding stayed after the gateway file gave the model a 100000-token context")
	}
	c.shutdown()
}

// TestStaleInputsSnapshotNotKept: a snapshot parsed for a version pinned
// before an input changed (a diagnostics job that was already parsing
// when the model catalog arrived) is not kept on the document, so the
// next request gets one made with the new inputs. Before, it replaced
// the cleared snapshot and the new catalog was never seen.
func TestStaleInputsSnapshotNotKept(t *testing.T) {
	s := newServer(options{Debounce: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	s.ctx = ctx
	t.Cleanup(func() { cancel(); s.stop() })
	uri := protocol.DocumentURI("file:///stale/p.md")
	s.mu.Lock()
	d := &document{uri: uri, version: 1, text: []byte(tinyPrompt), lines: source.NewLines([]byte(tinyPrompt))}
	s.docs[uriKey(uri)] = d
	old := s.pinDoc(d)
	// The input changes while the pinned version is being parsed.
	s.modelCatalog = []gateway.Model{{ID: "m", Context: 5}}
	s.didModify(nil, time.Hour)
	s.mu.Unlock()

	if snap := s.ready(old); snap.models != nil {
		t.Fatalf("the old pin's snapshot has the new catalog")
	}
	s.mu.Lock()
	kept := d.snap
	fresh := s.pinDoc(d)
	s.mu.Unlock()
	// The diagnostics job didModify started may have parsed the version
	// again with the new inputs (its analysis does not wait for the
	// delay): only that snapshot may be kept.
	if kept != nil && (kept.mod != d.mod || len(kept.models) != 1) {
		t.Fatal("a snapshot of the replaced inputs was kept on the document")
	}
	if snap := s.ready(fresh); len(snap.models) != 1 {
		t.Fatalf("after the change: snapshot models %v, want the new catalog", snap.models)
	}
}

// TestFolderInputsSeeChanges: the configuration a folder's documents are
// analysed with is kept between snapshots, and a change on disk is still
// seen without any file watcher: the configuration file rewritten,
// removed, one created in a nearer folder, a tools file created.
func TestFolderInputsSeeChanges(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sub")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Stamps are trusted however recent (the test sets every time it
	// writes), so the kept answer is what get returns unless a stat
	// shows the change.
	f := &folderInputs{racy: time.Nanosecond}
	old := time.Now().Add(-time.Hour)
	tick := 0
	settle := func(paths ...string) {
		tick++
		for _, p := range paths {
			if err := os.Chtimes(p, old, old.Add(time.Duration(tick)*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	severity := func(want string) {
		t.Helper()
		cfg, _ := f.get(dir, "")
		got := ""
		if cfg != nil {
			got = cfg.Path + ":" + cfg.Severity["unused-local"].String()
		}
		if got != want {
			t.Fatalf("configuration %q, want %q", got, want)
		}
		f.mu.Lock()
		kept := len(f.m)
		f.mu.Unlock()
		if kept != 1 {
			t.Fatalf("%d answers kept, want 1", kept)
		}
		// A folder above the test's (the system's temporary folder) may
		// change at any time; five gets in a row resolving again would
		// not be that.
		for try := 0; ; try++ {
			again, _ := f.get(dir, "")
			if again == cfg {
				break
			}
			if try == 5 {
				t.Fatalf("a second get with nothing changed resolved again")
			}
			cfg = again
		}
	}
	rootCfg := filepath.Join(root, analysis.ConfigFileName)
	subCfg := filepath.Join(dir, analysis.ConfigFileName)
	settle(root, dir)
	severity("")

	write(rootCfg, `{"severity": {"unused-local": "error"}}`)
	settle(rootCfg, root)
	severity(rootCfg + ":error")

	write(rootCfg, `{"severity": {"unused-local": "hint"}}`) // same size
	settle(rootCfg)
	severity(rootCfg + ":hint")

	write(subCfg, `{"severity": {"unused-local": "info"}}`)
	settle(subCfg, dir)
	severity(subCfg + ":info")

	if err := os.Remove(subCfg); err != nil {
		t.Fatal(err)
	}
	settle(dir)
	severity(rootCfg + ":hint")

	// A configuration that does not decode is none, and is read again:
	// fixed in place, with its size and time as they were, it is seen.
	write(rootCfg, `{"severity": {"unused-local": "hintt"}}`)
	settle(rootCfg)
	if cfg, _ := f.get(dir, ""); cfg != nil {
		t.Fatalf("a configuration that does not decode: %+v", cfg)
	}
	write(rootCfg, `{"severity": {"unused-local": "info"}} `)
	if err := os.Chtimes(rootCfg, old, old.Add(time.Duration(tick)*time.Second)); err != nil {
		t.Fatal(err)
	}
	severity(rootCfg + ":info")

	if _, tools := f.get(dir, ""); tools != "" {
		t.Fatalf("tools file %q before there is one", tools)
	}
	toolsFile := filepath.Join(root, "forge-tools.json")
	write(toolsFile, `{"tools": []}`)
	settle(toolsFile, root)
	if _, tools := f.get(dir, ""); tools != toolsFile {
		t.Fatalf("tools file %q, want %q", tools, toolsFile)
	}
	if _, tools := f.get(dir, "/configured/tools.json"); tools != "/configured/tools.json" {
		t.Fatalf("with the setting: tools file %q", tools)
	}

	// A change the watcher reports drops what was kept.
	f.clear()
	f.mu.Lock()
	kept := len(f.m)
	f.mu.Unlock()
	if kept != 0 {
		t.Fatalf("%d answers kept after clear", kept)
	}
}
