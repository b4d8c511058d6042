package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPrompt(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt}, "")
	cs := f.connect(nil)
	type out struct {
		Path     string `json:"path"`
		Errors   int    `json:"errors"`
		Findings []struct {
			Line     int    `json:"line"`
			Severity string `json:"severity"`
			Code     string `json:"code"`
			Message  string `json:"message"`
		} `json:"findings"`
	}
	var clean out
	call(t, cs, "check_prompt", map[string]any{"path": "echo.md"}, &clean)
	if clean.Errors != 0 || !strings.HasSuffix(clean.Path, filepath.Join("prompts", "echo.md")) {
		t.Fatalf("a clean prompt: %+v", clean)
	}
	var bad out
	draft := strings.Replace(echoPrompt, "name: echo", "name: Echo-Bad", 1)
	draft = strings.Replace(draft, "return string.upper(args)", "return string.upper(args", 1)
	call(t, cs, "check_prompt", map[string]any{"path": "echo.md", "text": draft}, &bad)
	codes := map[string]bool{}
	for _, d := range bad.Findings {
		codes[d.Code] = true
	}
	if bad.Errors == 0 || !codes["frontmatter-name"] || !codes["lua-syntax"] {
		t.Fatalf("an unsaved draft: %+v", bad)
	}
	res, text := call(t, cs, "check_prompt", map[string]any{"path": "missing.md"}, nil)
	if !res.IsError || !strings.Contains(text, "does not exist") {
		t.Fatalf("a missing file: %q", text)
	}
	// The prompt files are untouched.
	if b, _ := os.ReadFile(filepath.Join(f.dir, "prompts", "echo.md")); string(b) != echoPrompt {
		t.Fatal("check_prompt changed the file")
	}
}

func TestLookupDocs(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt}, "")
	cs := f.connect(nil)
	for _, tc := range []struct{ name, kind, want string }{
		{"tools.bind", "api", "tools.bind(alias"},
		{"tools.need", "api", "tools.bind(alias"},
		{"frontmatter-name", "code", "Bad:"},
		{"max_tool_iterations", "frontmatter", "1..1000"},
		{"max_tool_iterations", "frontmatter", "(docs/language.md#tool-loop)"},
	} {
		var d DocEntry
		call(t, cs, "lookup_docs", map[string]any{"name": tc.name}, &d)
		if d.Kind != tc.kind || !strings.Contains(d.Signature+d.Doc, tc.want) {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
	res, text := call(t, cs, "lookup_docs", map[string]any{"name": "tools.bnd"}, nil)
	if !res.IsError || !strings.Contains(text, "Nearest: tools.bind") {
		t.Fatalf("an unknown name: %q", text)
	}
}

func TestRunTestsOffline(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt, "ask.md": askPrompt}, "")
	writeFile(t, filepath.Join(f.dir, "prompts", "echo.test.yaml"), "cases:\n  - name: shouts\n    input: hi\n    expect:\n      output: HI\n  - name: wrong\n    input: hi\n    expect:\n      output: nope\n")
	writeFile(t, filepath.Join(f.dir, "prompts", "ask.test.yaml"), "cases:\n  - name: needs a model\n    input: q\n    expect:\n      output: x\n")
	cs := f.connect(nil)
	var rep struct {
		Results []struct {
			Name, Status string
			Messages     []string
		} `json:"results"`
		Passed, Failed int
	}
	res, _ := call(t, cs, "run_tests", nil, &rep)
	if !res.IsError || rep.Passed != 1 || rep.Failed != 2 {
		t.Fatalf("report: %+v", rep)
	}
	call(t, cs, "run_tests", map[string]any{"path": "echo.test.yaml", "run": "^shouts$"}, &rep)
	if rep.Passed != 1 || rep.Failed != 0 || len(rep.Results) != 1 {
		t.Fatalf("filtered: %+v", rep)
	}
	if n := len(f.gw.ChatRequests()); n != 0 {
		t.Fatalf("run_tests reached the gateway %d times", n)
	}
}
