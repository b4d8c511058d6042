package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestArgumentCaps: a string argument over its documented cap is refused
// with -32602 before any tool does work on it (a 200,000-character
// lookup_docs name took 47 s of CPU), and work that is under way stops
// with the call's context.
func TestArgumentCaps(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt}, "")
	cs := f.connect(nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"lookup_docs", map[string]any{"name": strings.Repeat("x", 200000)}, `argument "name" is 200000 bytes, over its 256-byte limit`},
		{"run_prompt", map[string]any{"prompt": strings.Repeat("e", 300)}, `"prompt" is 300 bytes`},
		{"run_prompt", map[string]any{"prompt": "echo", "input_text": strings.Repeat("t", 9<<20)}, "over its 8 MiB limit; pass a large input as input_file"},
		{"check_prompt", map[string]any{"text": strings.Repeat("#", 5<<20)}, "over its 4 MiB limit"},
		{"run_tests", map[string]any{"run": strings.Repeat("a", 2000)}, "over its 1 KiB limit"},
		{"check_run", map[string]any{"run_id": strings.Repeat("0", 1000)}, `"run_id"`},
	} {
		began := time.Now()
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, tc.want) {
			t.Errorf("%s: %v; want -32602 with %q", tc.tool, err, tc.want)
		}
		t.Logf("%s refused in %v", tc.tool, time.Since(began))
	}
	// Under the caps the tools answer.
	var d DocEntry
	call(t, cs, "lookup_docs", map[string]any{"name": "store.read"}, &d)
	if d.Name != "store.read" {
		t.Fatalf("lookup_docs: %+v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := nearestDocNames(ctx, "stor.red", 5); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled lookup went on: %v", err)
	}
	if near, err := nearestDocNames(context.Background(), "stor.red", 5); err != nil || near[0] != "store.read" {
		t.Fatalf("nearest: %v %v", near, err)
	}
}

// TestAuthoringToolsStayInWorkspace: run_tests, check_prompt and
// outline_prompt take paths inside the workspace or the prompts folder
// only; "/" is refused at once instead of walking the machine.
func TestAuthoringToolsStayInWorkspace(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt}, "")
	cs := f.connect(nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"run_tests", map[string]any{"path": "/"}},
		{"run_tests", map[string]any{"path": "../../.."}},
		{"check_prompt", map[string]any{"path": "/etc/passwd"}},
		{"outline_prompt", map[string]any{"path": "/etc/passwd"}},
	} {
		began := time.Now()
		res, text := call(t, cs, tc.tool, tc.args, nil)
		if !res.IsError || !strings.Contains(text, "outside") || !strings.Contains(text, "this workspace only") {
			t.Errorf("%s %v: %s", tc.tool, tc.args, text)
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("%s %v took %v", tc.tool, tc.args, d)
		}
	}
	res, text := call(t, cs, "check_prompt", map[string]any{"path": "echo.md"}, nil)
	if res.IsError {
		t.Fatalf("check_prompt of a workspace prompt: %s", text)
	}
}
