package cli

import (
	"encoding/json"
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
	answer := func(req *gateway.Request) gatewaytest.Reply {
		last := gatewaytest.LastUserContent(req)
		if strings.Contains(last, "<output>") {
			// A judge prompt (docs/testing.md#rubric-grading-the-judge):
			// the scripted judge passes a non-empty output.
			out := last[strings.Index(last, "<output>")+len("<output>") : strings.Index(last, "</output>")]
			if strings.TrimSpace(out) == "" {
				return gatewaytest.Text(`{"reason": "The output is empty.", "verdict": "fail"}`)
			}
			return gatewaytest.Text(fmt.Sprintf(`{"reason": "The output (%d words) does what the rubric asks.", "verdict": "pass"}`, len(strings.Fields(out))))
		}
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
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		r := answer(req)
		// Usage as a gateway reports it: about four characters a token.
		in, _ := json.Marshal(req.Messages)
		out := 0
		if r.Content != nil {
			out = len(*r.Content)
		}
		for _, c := range r.ToolCalls {
			out += len(c.Function.Name) + len(c.Function.Arguments)
		}
		r.Usage = &gateway.Usage{PromptTokens: int64(len(in)/4 + 1), CompletionTokens: int64(out/4 + 1), TotalTokens: int64(len(in)/4 + out/4 + 2)}
		return r
	}
	return srv
}

// TestExampleSuites runs the shipped examples' tests offline from their
// committed cassettes (as CI does with `forge-lsp test examples`). With
// -record-examples it first records them again against the scripted
// gateway.
func TestExampleSuites(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "examples")
	baseline := filepath.Join(dir, "baseline.json")
	if *recordExamples {
		srv := examplesGateway(t)
		if code, out, errs := testCLI(t, envOf(srv), "--record", "-j", "1", dir); code != 0 {
			t.Fatalf("record: %d\n%s%s", code, out, errs)
		}
		if code, out, errs := testCLI(t, envOf(srv), "--record", "--repeat", "3", "-j", "1", dir); code != 0 {
			t.Fatalf("record --repeat 3: %d\n%s%s", code, out, errs)
		}
		if code, out, errs := testCLI(t, envOf(nil), "--repeat", "3", "--results", baseline, dir); code != 0 {
			t.Fatalf("baseline: %d\n%s%s", code, out, errs)
		}
	}
	// Offline: a gateway that fails the test if called is configured.
	refuse := refusingGateway(t)
	code, out, errs := testCLI(t, envOf(refuse), dir)
	if code != 0 || !strings.HasSuffix(out, "13 passed, 0 failed\n") {
		t.Fatalf("examples: %d\n%s%s", code, out, errs)
	}
	// The three recorded runs of every case, compared with the committed
	// baseline, as CI does.
	code, out, errs = testCLI(t, envOf(refuse), "--repeat", "3", "--baseline", baseline, dir)
	if code != 0 || !strings.Contains(out, "baseline "+filepath.ToSlash(baseline)+": no changes (13 cases compared)") || !strings.Contains(out, "pass^3: 13 of 13 cases passed all 3 runs (100%)") || !strings.HasSuffix(out, "13 passed, 0 failed\n") {
		t.Fatalf("examples --repeat 3 --baseline: %d\n%s%s", code, out, errs)
	}
	if n := len(refuse.Received()); n != 0 {
		t.Errorf("the examples reached the gateway %d times", n)
	}
}
