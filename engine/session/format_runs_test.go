package session

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/format"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestFormattedExamplesRunAlike runs every example prompt against a
// scripted gateway (gatewaytest) as written and as `forge-lsp fmt`
// formats it (engine/format): the model receives the same requests, byte
// for byte, and the run gives the same result.
func TestFormattedExamplesRunAlike(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.md")
	compared, requests := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !parse.DeclaresPromptforge(src) {
			continue
		}
		// A layout fmt changes back: two-space Lua, no blank line
		// before headings.
		unformatted := strings.ReplaceAll(strings.ReplaceAll(string(src), "\t", "  "), "\n\n#", "\n#")
		out, err := format.Source(f, []byte(unformatted), format.Default())
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if string(out) == unformatted {
			t.Fatalf("%s: formatting changed nothing; the test compares nothing", f)
		}
		a, b := runAgainstGateway(t, f, []byte(unformatted)), runAgainstGateway(t, f, out)
		if !strings.Contains(a, "error <nil>") {
			t.Errorf("%s: the run failed: %s", f, a)
		}
		requests += strings.Count(a, "\nrequest ")
		if a != b {
			t.Errorf("%s: the formatted prompt runs differently:\n%s\n---\n%s", f, a, b)
		}
		compared++
	}
	if compared < 3 || requests == 0 {
		t.Fatalf("%d example prompts and %d model requests compared", compared, requests)
	}
	t.Logf("%d example prompts, %d model requests: the same formatted", compared, requests)
}

// runAgainstGateway runs a prompt against a gateway whose replies depend
// on what it receives, and describes the requests and the result.
func runAgainstGateway(t *testing.T, path string, src []byte) string {
	srv := gatewaytest.New(t, "secret-key")
	srv.Catalog = []gateway.Model{{ID: "m1", Description: "A model suited for careful analysis, coding, and general assistance; web search capability", Context: 100000, Thinking: "never", ToolDialect: "openai"}}
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		h := fnv.New64a()
		for _, m := range req.Messages {
			h.Write([]byte(m.Role + "\x00" + m.Content + "\x00"))
		}
		return gatewaytest.Text(fmt.Sprintf("reply %x", h.Sum64()))
	}
	s := open(t, Options{Path: path, Source: src, Input: "formatting", Env: env(gateway.EnvURL, srv.BaseURL(), gateway.EnvKey, "secret-key")})
	got, err := s.Run(context.Background())
	lines := []string{fmt.Sprintf("result %q error %v", got, err)}
	var reqs []string
	for _, req := range srv.ChatRequests() {
		msgs, _ := json.Marshal(req.Messages)
		reqs = append(reqs, fmt.Sprintf("request %s", msgs))
	}
	sort.Strings(reqs) // fanout arms ask concurrently
	return strings.Join(append(lines, reqs...), "\n")
}
