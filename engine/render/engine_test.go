package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/session"
)

// testCatalog is the catalog both the engine's run and the render see.
var testCatalog = []gateway.Model{{ID: "m1", Description: "A model suited for careful analysis, coding, writing, general assistance and web search; a careful general-purpose writing model",
	Context: 100000, Thinking: "never", ToolDialect: "openai", PriceInput: 3, PriceOutput: 15}}

// shippedPrompts are the prompts of examples/ and testdata/upstream/.
func shippedPrompts(t *testing.T) []string {
	var out []string
	for _, g := range []string{"../../examples/*.md", "../../testdata/upstream/prompts/*.md", "../../testdata/upstream/core-tests/*/*.md"} {
		fs, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fs...)
	}
	return out
}

// bodyPattern matches the bodies a rendered body stands for: each slot
// matches any text.
func bodyPattern(rendered string) *regexp.Regexp {
	parts := slotRe().Split(rendered, -1)
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile(`(?s)\A` + strings.Join(parts, `.*?`) + `\z`)
}

// TestRenderedRequestsAreTheEngines runs every shipped prompt against a
// scripted gateway (gatewaytest) and renders it: each request the engine
// sent equals, byte for byte, one rendered round's body, slots aside, and
// every rendered round is sent.
func TestRenderedRequestsAreTheEngines(t *testing.T) {
	files := shippedPrompts(t)
	compared, prompts := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !parse.DeclaresPromptforge(src) || len(parse.Parse(f, src).Errors) > 0 {
			continue
		}
		srv := gatewaytest.New(t, "k")
		srv.Catalog = testCatalog
		var n atomic.Int64
		srv.Script = func(*gateway.Request) gatewaytest.Reply {
			return gatewaytest.Text(fmt.Sprintf("engine reply %d", n.Add(1)))
		}
		s, err := session.Open(session.Options{Path: f, Source: src, Input: "what is a prompt?", ToolsDir: filepath.Dir(f),
			Nonce: renderNonce, Execution: "exec-1",
			Env: func(k string) (string, bool) {
				return map[string]string{gateway.EnvURL: srv.BaseURL(), gateway.EnvKey: "k"}[k], k == gateway.EnvURL || k == gateway.EnvKey
			}})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		_, runErr := s.Run(context.Background())
		s.Close()
		res, err := Render(context.Background(), Options{Path: f, Source: src, Catalog: testCatalog, ToolsDir: filepath.Dir(f)})
		if err != nil {
			t.Fatalf("%s: render: %v", f, err)
		}
		var sent []string
		for _, e := range srv.Received() {
			if e.Chat != nil {
				sent = append(sent, string(e.Body))
			}
		}
		if runErr != nil {
			t.Logf("%s: the engine's run failed (%v); comparing the %d requests it sent", f, runErr, len(sent))
		}
		used := make([]bool, len(res.Rounds))
	next:
		for _, body := range sent {
			for i, rd := range res.Rounds {
				if !used[i] && bodyPattern(rd.Body).MatchString(body) {
					used[i] = true
					compared++
					continue next
				}
			}
			t.Errorf("%s: the engine sent a request no rendered round shows:\n%s\nrendered:\n%s", f, body, bodies(res))
		}
		if runErr == nil && len(sent) != len(res.Rounds) {
			t.Errorf("%s: the engine sent %d requests, render shows %d rounds:\n%s", f, len(sent), len(res.Rounds), bodies(res))
		}
		prompts++
	}
	if prompts < 10 || compared < 10 {
		t.Fatalf("only %d prompts and %d requests compared", prompts, compared)
	}
	t.Logf("%d prompts, %d requests equal to their rendered rounds", prompts, compared)
}

func bodies(res *Result) string {
	var sb strings.Builder
	for _, rd := range res.Rounds {
		fmt.Fprintf(&sb, "  %d %s: %s\n", rd.N, rd.Section, rd.Body)
	}
	if res.Stopped != "" {
		fmt.Fprintf(&sb, "  stopped: %s\n", res.Stopped)
	}
	return sb.String()
}
