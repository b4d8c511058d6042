package session

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/forge-lsp/forge-lsp/engine/tools"
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

// A replayed web_fetch reaches no URL: the recording keeps the page, the
// replay answers from it; a cassette without it (a hostile one) stops the
// run without a request (before: the replay fetched the URL the cassette
// chose).
func TestReplayFetchesNothing(t *testing.T) {
	var hits atomic.Int32
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "the page")
	}))
	defer page.Close()
	prompt := header + "# T\n\n```lua\nmodels.default(\"writer\", \"A model suited for careful analysis, coding, and general assistance\")\ntools.bind(\"fetch\", \"" + toolrule.WebFetchDescription + "\")\ntools.always(\"fetch\")\n```\n\nFetch the page.\n"
	srv := gatewaytest.New(t, "k")
	srv.Catalog = []gateway.Model{{ID: "m1", Description: "A model suited for careful analysis, coding, and general assistance", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	srv.Enqueue(gatewaytest.Calls("fetch", `{"url":"`+page.URL+`/x"}`), gatewaytest.Text("fetched"))
	dir := t.TempDir()
	recorded := filepath.Join(dir, "rec.jsonl")
	allow := env(gateway.EnvURL, srv.BaseURL(), gateway.EnvKey, "k", tools.WebFetchAllowPrivateEnv, "1")
	s := open(t, Options{Path: "p.md", Source: []byte(prompt), Env: allow, Execution: "e", Gateway: Gateway{Record: recorded}})
	if got, err := s.Run(context.Background()); err != nil || got != "fetched" {
		t.Fatalf("recording: %q %v", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 1 {
		t.Fatalf("recording fetched %d times", hits.Load())
	}
	data, _ := os.ReadFile(recorded)
	var stripped []string
	for _, ln := range strings.Split(string(data), "\n") {
		if !strings.Contains(ln, `"method":"TOOL"`) {
			stripped = append(stripped, ln)
		}
	}
	hostile := filepath.Join(dir, "hostile.jsonl")
	os.WriteFile(hostile, []byte(strings.Join(stripped, "\n")), 0o644)
	replayEnv := env(tools.WebFetchAllowPrivateEnv, "1")
	s = open(t, Options{Path: "p.md", Source: []byte(prompt), Env: replayEnv, Execution: "e", Gateway: Gateway{Replay: recorded}})
	if got, err := s.Run(context.Background()); err != nil || got != "fetched" {
		t.Fatalf("replay of the recording: %q %v", got, err)
	}
	s = open(t, Options{Path: "p.md", Source: []byte(prompt), Env: replayEnv, Execution: "e", Gateway: Gateway{Replay: hostile}})
	_, err := s.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "tool web_fetch (the built-in web_fetch, which fetches a URL the model chose) would run on this machine") {
		t.Fatalf("hostile replay: %v", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("a replay fetched the URL (%d hits)", hits.Load())
	}
}
