package lsp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/forge-lsp/forge-lsp/engine/session"
)

// runawayPrompt spins in library calls (pattern backtracking) and jumps
// between two sections: each entry stays within its own budget, so only the
// run-wide budget, a cancel or the deadline stops it.
const runawayPrompt = "---\nname: spin\ndescription: d\npromptforge: 1\n---\n\n# Spin\n\n## Main\n\n```lua\n" +
	"local s = string.rep(\"a\", 3000)\ns:find(\".-b\")\njump(\"## Other\")\n```\n\n" +
	"## Other\n\n```lua\nlocal s = string.rep(\"a\", 3000)\ns:find(\".-b\")\njump(\"## Main\")\n```\n"

// TestRunawayCancelAndExit: a run spinning inside library calls answers
// $/cancelRequest with RequestCancelled, and the server exits promptly
// after shutdown and exit while such a run is going.
func TestRunawayCancelAndExit(t *testing.T) {
	c := startServer(t, options{})
	c.initialize(nil)
	uri := "file:///spin.md"
	c.open(uri, runawayPrompt)

	id, _, done := startRun(t, c, uri)
	time.Sleep(50 * time.Millisecond)
	sent := time.Now()
	c.notify(protocol.MethodCancelRequest, map[string]any{"id": id})
	expectCancelled(t, done)
	t.Logf("cancelled run answered %v after $/cancelRequest", time.Since(sent))

	startRun(t, c, uri)
	time.Sleep(50 * time.Millisecond)
	sent = time.Now()
	c.shutdown()
	t.Logf("server exited %v after shutdown with a run going", time.Since(sent))
}

// TestRunTimeoutSetting: the runTimeout setting bounds editor runs (here
// one waiting on a gateway that never answers); the run fails with a
// Quota error naming the deadline.
func TestRunTimeoutSetting(t *testing.T) {
	srv := slowGateway(t)
	c := startServer(t, options{Getenv: func(k string) string {
		if k == "MY_GATEWAY_KEY" {
			return "secret-key"
		}
		return ""
	}})
	c.initialize(map[string]any{"gatewayUrl": srv.BaseURL(), "apiKeyEnv": "MY_GATEWAY_KEY", "runTimeout": "300ms"})
	uri := "file:///slow.md"
	c.open(uri, modelPrompt)
	_, _, done := startRun(t, c, uri)
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end at its deadline")
	}
	if err == nil || !strings.Contains(err.Error(), "wall-clock time quota exceeded (limit 300ms)") {
		t.Fatalf("run ended with %v, want the deadline's quota", err)
	}
	c.shutdown()
}

func TestRunTimeoutConfig(t *testing.T) {
	for raw, want := range map[string]time.Duration{`{}`: session.DefaultTimeout, `{"runTimeout": "90s"}`: 90 * time.Second, `{"runTimeout": "0"}`: 0, `{"runTimeout": "soon"}`: session.DefaultTimeout} {
		if got := configFromJSON(json.RawMessage(raw)).runTimeout(); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
}
