package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/run"
)

// copyFixture copies testdata/replayruns into a fresh folder, so that a
// command that does run writes its marker there.
func copyFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{"p.md", "forge-tools.json", "hostile.jsonl", "recorded.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", "replayruns", n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	return dir
}

func replay(t *testing.T, dir, cassette string, live bool) (string, error) {
	t.Helper()
	src, _ := os.ReadFile(filepath.Join(dir, "p.md"))
	s := open(t, Options{Path: filepath.Join(dir, "p.md"), Source: src, ToolsDir: dir, Execution: "fixed",
		Gateway: Gateway{Replay: filepath.Join(dir, cassette)}, LiveTools: live, LiveToolsHint: "pass --live-tools"})
	return s.Run(context.Background())
}

// A committed cassette whose model turn calls a workspace tool does not
// make a replay run the tool's command (before: `sh -c` ran as the user).
// The failure names the tool and how to allow it.
func TestReplayRunsNoWorkspaceCommand(t *testing.T) {
	dir := copyFixture(t)
	_, err := replay(t, dir, "hostile.jsonl", false)
	if _, serr := os.Stat(filepath.Join(dir, "pwned.txt")); serr == nil {
		t.Fatal("the replay ran the workspace command")
	}
	if err == nil {
		t.Fatal("the replay succeeded without the tool's result")
	}
	msg := run.AsRunError(err).Msg
	for _, want := range []string{`"wc" (workspace/word_count)`, "tool word_count", "forge-tools.json", "a replay runs no tools", "--live-tools"} {
		if !strings.Contains(msg, want) && !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A recording keeps each tool call's result; its replay answers the call
// from the cassette and runs nothing.
func TestReplayAnswersToolsFromCassette(t *testing.T) {
	dir := copyFixture(t)
	got, err := replay(t, dir, "recorded.jsonl", false)
	if err != nil || got != "three words" {
		t.Fatalf("replay = %q, %v", got, err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "pwned.txt")); serr == nil {
		t.Fatal("the replay ran the workspace command")
	}
}

// With live tools allowed, a replay runs a tool the cassette has no
// result for.
func TestReplayLiveToolsOptIn(t *testing.T) {
	dir := copyFixture(t)
	got, err := replay(t, dir, "hostile.jsonl", true)
	if err != nil || got != "three words" {
		t.Fatalf("replay with live tools = %q, %v", got, err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "pwned.txt")); serr != nil {
		t.Fatal("the command did not run with live tools allowed")
	}
}

// The default per-round cap (run.DefaultMaxToolCallsPerRound) stops a
// live reply that asks for 5,000 workspace commands before one runs.
func TestToolCallsPerRoundDefault(t *testing.T) {
	dir := copyFixture(t)
	srv := gatewaytest.New(t, "k")
	srv.Catalog = []gateway.Model{{ID: "m1", Description: "A model suited for careful analysis, coding, and general assistance", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	var calls []string
	for range 5000 {
		calls = append(calls, "wc", `{"text":"a"}`)
	}
	srv.Enqueue(gatewaytest.Calls(calls...))
	src, _ := os.ReadFile(filepath.Join(dir, "p.md"))
	s := open(t, Options{Path: filepath.Join(dir, "p.md"), Source: src, ToolsDir: dir,
		Env: env(gateway.EnvURL, srv.BaseURL(), gateway.EnvKey, "k")})
	_, err := s.Run(context.Background())
	re := run.AsRunError(err)
	if err == nil || re.Kind != run.KindQuota || !strings.Contains(re.Msg, "5000 tool calls in one reply, more than the limit of 32") {
		t.Fatalf("err %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "pwned.txt")); serr == nil {
		t.Fatal("a call ran")
	}
}
