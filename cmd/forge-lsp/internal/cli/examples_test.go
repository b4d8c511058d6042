package cli

import (
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

var recordExamples = flag.Bool("record-examples", false, "re-record the cassettes of examples/*.test.yaml against the scripted gateway")

// examplesGateway is the scripted gateway the shipped examples' cassettes
// were recorded against: it answers like a model would, deterministically.
func examplesGateway(t *testing.T) *gatewaytest.Server {
	srv := gatewaytest.New(t, "examples-key")
	srv.Catalog = []gateway.Model{
		{ID: "analyst-1", Description: "A model suited for careful analysis, coding, and general assistance", Context: 32768, Thinking: "never", ToolDialect: "openai"},
		{ID: "writer-1", Description: "A careful general-purpose writing model for prose", Context: 32768, Thinking: "never", ToolDialect: "openai"},
	}
	srv.Search = func(body map[string]any) (int, string) {
		return 200, `{"results":[{"title":"Why is the sky blue?","url":"https://example.org/sky","description":"Rayleigh scattering: air molecules scatter shorter wavelengths (blue) far more than longer ones."}]}`
	}
	topic := regexp.MustCompile(`sentences about (.+) for a product newsletter`)
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		last := gatewaytest.LastUserContent(req)
		if m := topic.FindStringSubmatch(last); m != nil {
			return gatewaytest.Text(fmt.Sprintf("Our %s work moved forward this month. More on %s in the next issue.", m[1], m[1]))
		}
		tools := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				tools++
			}
		}
		switch tools {
		case 0:
			return gatewaytest.Calls("search", `{"query":"why is the sky blue"}`)
		case 1:
			return gatewaytest.Calls("remember", `{"key":"rayleigh","text":"Air scatters shorter wavelengths of sunlight more than longer ones."}`)
		}
		return gatewaytest.Text("The sky looks blue because of Rayleigh scattering. Air molecules scatter short blue wavelengths much more than red ones. So blue light reaches our eyes from every direction.")
	}
	return srv
}

// TestExampleSuites runs the shipped examples' tests offline from their
// committed cassettes (as CI does with `forge-lsp test examples`). With
// -record-examples it first records them again against the scripted
// gateway.
func TestExampleSuites(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "examples")
	if *recordExamples {
		srv := examplesGateway(t)
		if code, out, errs := testCLI(t, envOf(srv), "--record", dir); code != 0 {
			t.Fatalf("record: %d\n%s%s", code, out, errs)
		}
	}
	code, out, errs := testCLI(t, envOf(nil), dir)
	if code != 0 || !strings.HasSuffix(out, "5 passed, 0 failed\n") {
		t.Fatalf("examples: %d\n%s%s", code, out, errs)
	}
}
