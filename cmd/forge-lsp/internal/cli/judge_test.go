package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// judgeServer is greetServer with a second catalog model, a grader, that
// answers judge prompts: pass when the graded output greets someone with
// "Hello", fail otherwise, with a reason either way.
func judgeServer(t *testing.T) *gatewaytest.Server {
	srv := greetServer(t, false)
	srv.Catalog = append(srv.Catalog, gateway.Model{ID: "grader-1", Description: "A strict grading model that evaluates answers against a rubric", Context: 8192, Thinking: "never", ToolDialect: "openai"})
	greet := srv.Script
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		last := gatewaytest.LastUserContent(req)
		if !strings.Contains(last, "<output>") {
			return greet(req)
		}
		if req.Model != "grader-1" {
			t.Errorf("the judge asked %s, not grader-1", req.Model)
		}
		out := last[strings.Index(last, "<output>"):]
		if strings.Contains(out, "Hello") {
			return gatewaytest.Text("```json\n{\"reason\": \"It greets the person by name.\", \"verdict\": \"pass\"}\n```")
		}
		return gatewaytest.Text(`{"reason": "The output greets nobody.", "verdict": "fail"}`)
	}
	return srv
}

const judgeTests = `cases:
  - name: greets by name
    input: "Ada"
    section: "## Hello"
    expect:
      judge:
        rubric: "Greets the person by name."
        model: "a strict grading model"
  - name: json shape
    input: "Ada"
    section: "## Shape"
    expect:
      judge: {rubric: "Greets the person by name.", model: grader-1}
`

// TestJudge records a judge's verdicts into the cases' cassettes, then
// re-grades offline (a gateway that fails the test if called is
// configured): the passing verdict holds, the failing one fails the case
// with the judge's reason, a pass matcher is applied to the verdict, a
// changed rubric makes the judge call stale, and the JSON report carries
// each verdict and reason.
func TestJudge(t *testing.T) {
	dir := writeSuite(t)
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(judgeTests), 0o644)
	srv := judgeServer(t)
	code, out, errs := testCLI(t, envOf(srv), "--record", dir)
	want := `FAIL "json shape": judge: verdict: want "pass", got "fail"; the judge (grader-1) gave the reason: "The output greets nobody."`
	if code != 1 || !strings.Contains(out, want) || !strings.HasSuffix(out, "1 passed, 1 failed\n") {
		t.Fatalf("record: %d\n%s\n%s", code, out, errs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "cassettes", "greet", "greets-by-name.jsonl"))
	if !strings.Contains(string(b), `"model":"grader-1"`) || !strings.Contains(string(b), "Greets the person by name.") {
		t.Errorf("the judge call is not in the cassette:\n%s", b)
	}
	refuse := refusingGateway(t)
	code, out, _ = testCLI(t, envOf(refuse), dir)
	if code != 1 || !strings.Contains(out, want) || !strings.HasSuffix(out, "1 passed, 1 failed\n") {
		t.Errorf("replay: %d\n%s", code, out)
	}
	code, out, _ = testCLI(t, envOf(refuse), "--format", "json", dir)
	var rep testrun.JSONReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Results) != 2 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if j := rep.Results[0].Judge; j == nil || j.Model != "grader-1" || j.Verdict != "pass" || j.Reason != "It greets the person by name." {
		t.Errorf("passing case's verdict: %+v", j)
	}
	if j := rep.Results[1].Judge; j == nil || j.Verdict != "fail" || j.Reason != "The output greets nobody." {
		t.Errorf("failing case's verdict: %+v", j)
	}

	// The pass matcher applies to the verdict; the request is unchanged,
	// so it replays.
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(strings.Replace(judgeTests, `model: grader-1}`, `model: grader-1, pass: {regex: "^(pass|fail)$"}}`, 1)), 0o644)
	if code, out, _ := testCLI(t, envOf(refuse), dir); code != 0 || out != "2 passed, 0 failed\n" {
		t.Errorf("pass matcher: %d\n%s", code, out)
	}

	// A changed rubric sends the judge another request: stale, with the
	// diff of the judge's prompt.
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(strings.Replace(judgeTests, `rubric: "Greets the person by name."`, `rubric: "Greets the person warmly."`, 1)), 0o644)
	code, out, _ = testCLI(t, envOf(refuse), "--run", "greets by name", dir)
	for _, w := range []string{
		`STALE "greets by name": stale: the judge sent a request the cassette does not hold (the rubric, the judge prompt, judge.model or the run's output changed since recording)`,
		"-    Greets the person by name.",
		"+    Greets the person warmly.",
	} {
		if code != 1 || !strings.Contains(out, w) {
			t.Errorf("changed rubric: %d, output lacks %q:\n%s", code, w, out)
		}
	}
	// So does a changed output (the prompt's Lua now returns other JSON):
	// the run itself needs no model, only the judge's call changed.
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(judgeTests), 0o644)
	os.WriteFile(filepath.Join(dir, "greet.md"), []byte(strings.Replace(greetPrompt, `"count": 2}'`, `"count": 3}'`, 1)), 0o644)
	code, out, _ = testCLI(t, envOf(refuse), "--run", "json", dir)
	if code != 1 || !strings.Contains(out, `STALE "json shape": stale: the judge sent a request`) {
		t.Errorf("changed output: %d\n%s", code, out)
	}
	if n := len(refuse.Received()); n != 0 {
		t.Errorf("the replays reached the gateway %d times", n)
	}
}

// TestJudgeChecks: check reports a judge.model no model of the recorded
// catalog matches, a judge prompt file without {{output}}, and a judge
// next to expect.error; a judge prompt file replaces the built-in prompt.
func TestJudgeChecks(t *testing.T) {
	dir := writeSuite(t)
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(judgeTests), 0o644)
	os.WriteFile(filepath.Join(dir, "judge.md"), []byte("Grade strictly.\nRUBRIC: {{rubric}}\n<output>{{output}}</output>\nReply with JSON {\"reason\", \"verdict\"}.\n"), 0o644)
	custom := strings.Replace(judgeTests, `model: grader-1}`, `model: grader-1, prompt: judge.md}`, 1)
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(custom), 0o644)
	if code, out, errs := testCLI(t, envOf(judgeServer(t)), "--record", dir); code != 1 || !strings.Contains(out, "The output greets nobody.") {
		t.Fatalf("record: %d\n%s\n%s", code, out, errs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "cassettes", "greet", "json-shape.jsonl"))
	if !strings.Contains(string(b), "Grade strictly.\\nRUBRIC: Greets the person by name.") {
		t.Errorf("the judge prompt file was not used:\n%s", b)
	}
	bad := strings.Replace(judgeTests, `model: "a strict grading model"`, `model: "a quantum teleportation oracle"`, 1)
	bad = strings.Replace(bad, `model: grader-1}`, `model: grader-1, prompt: nothing.md}`, 1)
	bad += "  - name: both\n    expect:\n      error: {contains: x}\n      judge: {rubric: r, model: grader-1}\n"
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(bad), 0o644)
	os.WriteFile(filepath.Join(dir, "nothing.md"), []byte("Grade {{rubric}}.\n"), 0o644)
	code, _, errs := testCLI(t, envOf(nil), dir)
	for _, w := range []string{
		`greet.test.yaml:8:16: error: judge.model: no model of the catalog recorded in ` + filepath.ToSlash(filepath.Join(dir, "cassettes", "greet", "greets-by-name.jsonl")) + ` matches "a quantum teleportation oracle"`,
		"(its models: test-model, grader-1)",
		"greet.test.yaml:13:78: error: judge.prompt: the judge prompt " + filepath.ToSlash(filepath.Join(dir, "nothing.md")) + " has no {{output}} placeholder",
		"greet.test.yaml:17:14: error: `expect.judge` and `expect.error` exclude each other",
	} {
		if code != 2 || !strings.Contains(errs, w) {
			t.Errorf("check: %d, stderr lacks %q:\n%s", code, w, errs)
		}
	}
}
