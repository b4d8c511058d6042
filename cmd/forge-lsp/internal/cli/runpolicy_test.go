package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
)

// `forge-lsp run` hands its flags to engine/session, which validates the
// prompt once on the way to the first model request (before: three
// times), seeds the store, writes the trace file and finds the tools
// file beside the prompt.
func TestRunValidatesOnce(t *testing.T) {
	srv := gatewaytest.New(t, "once-key")
	srv.Catalog = []gateway.Model{{ID: "m1", Description: "general assistant model", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	srv.Enqueue(gatewaytest.Text("hello"))
	t.Setenv(gateway.EnvURL, srv.BaseURL())
	t.Setenv(gateway.EnvKey, srv.Key)
	p := writePrompt(t, "```lua\nmodels.default(\"m\", \"general assistant model\")\n```\n\n## A\n\n```lua\nassert(store.read('seed.txt') == 'x')\n```\n\nSay hi.\n")
	seed := t.TempDir()
	os.WriteFile(filepath.Join(seed, "seed.txt"), []byte("x"), 0o644)
	tf := filepath.Join(t.TempDir(), "t.jsonl")

	var mu sync.Mutex
	n := 0
	defer run.SetValidateHook(func(pr *parse.Prompt) {
		if pr != nil && pr.File != nil && pr.File.Name == p {
			mu.Lock()
			n++
			mu.Unlock()
		}
	})()
	code, out, errs := runCLI(t, "--store", seed, "--trace", tf, p)
	if code != 0 || out != "hello\n" {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 1 || len(srv.ChatRequests()) != 1 {
		t.Fatalf("validated %d times for %d requests, want once", n, len(srv.ChatRequests()))
	}
	if b, _ := os.ReadFile(tf); !strings.Contains(string(b), `"hello"`) {
		t.Fatalf("trace file:\n%s", b)
	}
}

// A trace file that cannot be created is a usage error naming --trace, as
// before session created it.
func TestRunTraceFileUncreatable(t *testing.T) {
	p := writePrompt(t, "## A\n\n```lua\nreturn 'x'\n```\n")
	code, out, errs := runCLI(t, "--trace", filepath.Join(t.TempDir(), "no", "t.jsonl"), p)
	if code != 2 || out != "" || !strings.HasPrefix(errs, "forge-lsp run: --trace: ") {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
}
