package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

const greetPrompt = `---
name: greet
description: Greet someone and note it
promptforge: 1
---

# Greet

` + "```lua" + `
models.default("writer", "a general assistant model")
` + "```" + `

## Shape

` + "```lua" + `
return '{"name": "' .. args .. '", "count": 2}'
` + "```" + `

## Boom

` + "```lua" + `
error("the fanout went wrong")
` + "```" + `

## Hello

` + "```lua" + `
tools.add_local("remember", "Save a note about a person in the store", {
  key = {"string", "Short key"},
  text = {"string", "The note"},
}, function(a)
  store.write("notes/" .. a.key .. ".md", a.text)
  return "saved " .. a.key
end)
` + "```" + `

Say hello to {{ args }}. Save a note with remember first.
`

const greetTests = `cases:
  - name: greets by name
    input: "Ada"
    section: "## Hello"
    store: {notes/old.md: "seed"}
    expect:
      output: {contains: "Ada", not_contains: "Bob", regex: "^Hello, [A-Z][a-z]+!$"}
      store:
        notes/ada.md: {equals: "Met Ada"}
        notes/old.md: "seed"
        notes/bob.md: {absent: true}
      tools_called: [remember]
      sections: ["## Hello"]
  - name: greets Bob
    input: "Bob"
    section: "## Hello"
    expect:
      output: "Hello, Bob!"
  - name: json shape
    input: "Ada"
    section: "## Shape"
    expect:
      output:
        json_schema:
          type: object
          required: [name, count]
          properties:
            name: {type: string}
            count: {type: integer, minimum: 1}
  - name: boom fails
    section: "## Boom"
    expect:
      error: {contains: "fanout"}
  - name: later
    skip: "not written yet"
`

// greetServer answers "Say hello to X" with a remember call, then
// "Hello, X!" once the tool result is back. flip, when set, makes every
// other greeting wrong (for --repeat).
func greetServer(t *testing.T, flip bool) *gatewaytest.Server {
	srv := gatewaytest.New(t, "test-key")
	var n atomic.Int64
	re := regexp.MustCompile(`Say hello to (\w+)`)
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		name := "nobody"
		for _, m := range req.Messages {
			if mm := re.FindStringSubmatch(m.Content); mm != nil {
				name = mm[1]
			}
		}
		if gatewaytest.HasToolResult(req) {
			if flip && n.Add(1)%2 == 0 {
				return gatewaytest.Text("Goodbye, " + name + "!")
			}
			return gatewaytest.Text("Hello, " + name + "!")
		}
		return gatewaytest.Calls("remember", fmt.Sprintf(`{"key":%q,"text":"Met %s"}`, strings.ToLower(name), name))
	}
	return srv
}

func envOf(srv *gatewaytest.Server) gateway.LookupFunc {
	m := map[string]string{}
	if srv != nil {
		m[gateway.EnvURL], m[gateway.EnvKey] = srv.BaseURL(), srv.Key
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func testCLI(t *testing.T, env gateway.LookupFunc, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runTests(context.Background(), args, env, &out, &errb)
	return code, out.String(), errb.String()
}

func writeSuite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "greet.md"), []byte(greetPrompt), 0o644)
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(greetTests), 0o644)
	return dir
}

// TestRecordReplayStale records a suite against the test gateway, replays
// it with no gateway at all, then edits the prompt and sees the case fail
// as stale with a diff of the request.
func TestRecordReplayStale(t *testing.T) {
	dir := writeSuite(t)
	srv := greetServer(t, false)
	code, out, errs := testCLI(t, envOf(srv), "--record", dir)
	if code != 0 || !strings.HasSuffix(out, "4 passed, 0 failed, 1 skipped\n") {
		t.Fatalf("record: code %d\n%s\n%s", code, out, errs)
	}
	for _, c := range []string{"greets-by-name", "greets-bob", "json-shape", "boom-fails"} {
		if _, err := os.Stat(filepath.Join(dir, "cassettes", "greet", c+".jsonl")); err != nil {
			t.Errorf("cassette %s: %v", c, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cassettes", "greet", "later.jsonl")); err == nil {
		t.Errorf("a skipped case was recorded")
	}
	calls := len(srv.Received())
	srv.Close()

	code, out, errs = testCLI(t, envOf(nil), dir, "-j", "3")
	if code != 0 || out != "4 passed, 0 failed, 1 skipped\n" {
		t.Fatalf("replay: code %d\n%s\n%s", code, out, errs)
	}
	if len(srv.Received()) != calls {
		t.Fatalf("replay reached the gateway")
	}

	// Edit the prose: the first model round now sends another request.
	edited := strings.Replace(greetPrompt, "Save a note with remember first.", "Save a short note with remember first.", 1)
	os.WriteFile(filepath.Join(dir, "greet.md"), []byte(edited), 0o644)
	code, out, _ = testCLI(t, envOf(nil), dir, "--run", "greets")
	if code != 1 || !strings.HasSuffix(out, "0 passed, 2 failed\n") {
		t.Fatalf("stale: code %d\n%s", code, out)
	}
	for _, want := range []string{
		"greet.test.yaml:2: STALE \"greets by name\": stale: model round 1 of `Hello` sent a request the cassette does not hold",
		"--- recorded ",
		"+++ sent now",
		`-messages[0].content: "Say hello to Ada. Save a note with remember first."`,
		`+messages[0].content: "Say hello to Ada. Save a short note with remember first."`,
		` model: "test-model"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stale output lacks %q:\n%s", want, out)
		}
	}
	// A cassette that ends early, or holds more than the run asks for, is
	// stale too.
	os.WriteFile(filepath.Join(dir, "greet.md"), []byte(greetPrompt), 0o644)
	cas := filepath.Join(dir, "cassettes", "greet", "greets-bob.jsonl")
	b, _ := os.ReadFile(cas)
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	os.WriteFile(cas, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644)
	code, out, _ = testCLI(t, envOf(nil), dir, "--run", "Bob")
	if code != 1 || !strings.Contains(out, "STALE \"greets Bob\": stale: model round 2 of `Hello` goes beyond the recording") {
		t.Errorf("short cassette:\n%s", out)
	}
	os.WriteFile(cas, []byte(string(b)+lines[len(lines)-1]+"\n"), 0o644)
	code, out, _ = testCLI(t, envOf(nil), dir, "--run", "Bob")
	if code != 1 || !strings.Contains(out, "recorded exchange(s) of") || !strings.Contains(out, "never requested") {
		t.Errorf("long cassette:\n%s", out)
	}
	// The Lua-only cases did not change and still pass.
	// The JSON report carries the transcript of a passing case too (the
	// editor's Test Results show it).
	if code, out, _ := testCLI(t, envOf(nil), "--format", "json", "--run", "json", dir); code != 0 || !strings.Contains(out, `"status": "pass"`) || !strings.Contains(out, `"transcript": "`) {
		t.Errorf("--format json of a passing case lacks its transcript: %d %s", code, out)
	}
	if code, out, _ := testCLI(t, envOf(nil), dir, "--run", "json|boom"); code != 0 || out != "2 passed, 0 failed\n" {
		t.Errorf("unchanged cases: %d %s", code, out)
	}
}

func TestMatchersFail(t *testing.T) {
	dir := writeSuite(t)
	srv := greetServer(t, false)
	if code, out, errs := testCLI(t, envOf(srv), "--record", dir); code != 0 {
		t.Fatalf("record: %d %s %s", code, out, errs)
	}
	wrong := `cases:
  - name: greets by name
    input: "Ada"
    section: "## Hello"
    store: {notes/old.md: "seed"}
    expect:
      output: {contains: "Zed", not_contains: "Ada", regex: "^Bye"}
      store:
        notes/ada.md: {equals: "Met Bob"}
        notes/old.md: {absent: true}
        notes/bob.md: {contains: "x"}
      tools_called: [remember]
      sections: ["## Shape"]
  - name: greets Bob
    input: "Bob"
    section: "## Hello"
    expect:
      error: {contains: "x"}
  - name: json shape
    input: "Ada"
    section: "## Shape"
    expect:
      output: {json_schema: {type: object, required: [missing]}}
  - name: boom fails
    section: "## Boom"
    expect:
      error: {contains: "nothing like it"}
      tools_called: [remember]
`
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(wrong), 0o644)
	traces := filepath.Join(t.TempDir(), "traces")
	code, out, errs := testCLI(t, envOf(nil), dir, "--trace-dir", traces)
	if code != 1 || !strings.HasSuffix(out, "0 passed, 4 failed\n") {
		t.Fatalf("code %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{
		`output: does not contain "Zed"`,
		`output: contains "Ada", which it must not`,
		`output: does not match regex "^Bye"`,
		`store notes/ada.md: want "Met Bob", got "Met Ada"`,
		`store notes/old.md: exists (4 bytes) but the case expects it absent`,
		`store notes/bob.md: does not exist`,
		`sections: ## Shape was not entered after the start (entered, in order: ## Hello)`,
		`error: the run succeeded, but the case expects it to fail`,
		`output: does not match json_schema: at the schema's top: required: missing properties: ["missing"]`,
		`error: does not contain "nothing like it"`,
		`tools_called: remember was never called (called: none)`,
		"greet.test.yaml:7: \t",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
	b, err := os.ReadFile(filepath.Join(traces, "greet", "greets-by-name.log"))
	if err != nil || !strings.Contains(string(b), "tool remember(") || !strings.Contains(string(b), "enter ## Hello") {
		t.Errorf("trace: %v\n%s", err, b)
	}
	// The JSON-lines trace of the failing run sits beside the transcript.
	b, err = os.ReadFile(filepath.Join(traces, "greet", "greets-by-name.trace.jsonl"))
	if err != nil || !strings.HasPrefix(string(b), `{"ev":"run.start"`) || !strings.Contains(string(b), `"ev":"tool.call"`) || !strings.Contains(string(b), `"ev":"run.end"`) {
		t.Errorf("trace events: %v\n%s", err, b)
	}
}

func TestRepeatReportsFlaky(t *testing.T) {
	dir := writeSuite(t)
	srv := greetServer(t, true)
	code, out, errs := testCLI(t, envOf(srv), dir, "--repeat", "4", "--run", "^greets Bob$|json", "-j", "1")
	if code != 1 {
		t.Fatalf("code %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{
		`FAIL "greets Bob": passed 2 of 4 runs`,
		`output: want "Hello, Bob!", got "Goodbye, Bob!"`,
		"pass^4: 1 of 2 cases passed all 4 runs (50%)",
		"flaky: 1 case(s)",
		`"greets Bob" passed 2 of 4 runs`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasSuffix(out, "1 passed, 1 failed\n") {
		t.Errorf("closing line:\n%s", out)
	}
	// No cassette is written by --repeat.
	if _, err := os.Stat(filepath.Join(dir, "cassettes")); err == nil {
		t.Errorf("--repeat wrote cassettes")
	}
	// Without a gateway and without recorded repeats, a case that needs a
	// model fails and says how to record its runs.
	if code, out, errs := testCLI(t, envOf(nil), dir, "--repeat", "2", "--run", "^greets Bob$"); code != 1 || !strings.Contains(out, "record one with `forge-lsp test --record --repeat 2` (one cassette per run)") {
		t.Errorf("--repeat without gateway: %d %s %s", code, out, errs)
	}
}

func TestFormats(t *testing.T) {
	dir := writeSuite(t)
	srv := greetServer(t, false)
	if code, _, _ := testCLI(t, envOf(srv), "--record", dir, "--run", "json|boom|Bob"); code != 0 {
		t.Fatal("record failed")
	}
	// "greets by name" has no cassette: it fails naming --record.
	code, out, errs := testCLI(t, envOf(nil), "--format", "junit", dir)
	if code != 1 || errs != "3 passed, 1 failed, 1 skipped\n" {
		t.Fatalf("junit: %d %q", code, errs)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Line    int    `xml:"line,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("junit does not parse: %v\n%s", err, out)
	}
	if doc.Tests != 5 || doc.Failures != 1 || doc.Skipped != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 5 {
		t.Fatalf("junit counts %+v", doc)
	}
	c0 := doc.Suites[0].Cases[0]
	if c0.Name != "greets by name" || c0.Line != 2 || c0.Failure == nil || !strings.Contains(c0.Failure.Message, "--record") {
		t.Errorf("failing case %+v", c0)
	}
	if doc.Suites[0].Cases[4].Skipped == nil {
		t.Errorf("skipped case not marked")
	}

	code, out, _ = testCLI(t, envOf(nil), dir, "--format", "json")
	var rep struct {
		Results []struct {
			Name, Status string
			Messages     []string
		}
		Passed, Failed, Skipped int
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.Passed != 3 || rep.Failed != 1 || rep.Skipped != 1 || rep.Results[0].Status != "fail" {
		t.Fatalf("json: %v %d %+v", err, code, rep)
	}

	code, out, _ = testCLI(t, envOf(nil), dir, "--format", "github")
	if code != 1 || !strings.HasPrefix(out, "::error file="+filepath.ToSlash(filepath.Join(dir, "greet.test.yaml"))+",line=2,title=forge-lsp test%3A greets by name::no cassette at ") || !strings.HasSuffix(out, "`forge-lsp test --record`\n3 passed, 1 failed, 1 skipped\n") {
		t.Errorf("github: %q", out)
	}
}

func TestTestExitCodes(t *testing.T) {
	dir := writeSuite(t)
	env := envOf(nil)
	if code, out, errs := testCLI(t, env, "-h"); code != 0 || !strings.HasPrefix(out, "usage: forge-lsp test") || errs != "" {
		t.Errorf("-h: %d %q %q", code, out, errs)
	}
	if code, out, _ := testCLI(t, env, dir, "--help"); code != 0 || !strings.Contains(out, "-trace-dir") {
		t.Errorf("--help: %d", code)
	}
	if code, _, _ := testCLI(t, env, "--nope", dir); code != 2 {
		t.Errorf("bad flag: %d", code)
	}
	if code, _, _ := testCLI(t, env, "--format", "xml", dir); code != 2 {
		t.Errorf("bad format: %d", code)
	}
	if code, _, _ := testCLI(t, env, "--run", "(", dir); code != 2 {
		t.Errorf("bad regex: %d", code)
	}
	// A path that does not exist: exit 2 with the error, and no summary
	// line claiming a run.
	if code, out, errs := testCLI(t, env, filepath.Join(dir, "nonexistent-path")); code != 2 || out != "" || !strings.Contains(errs, "nonexistent-path") || strings.Contains(errs, "passed") {
		t.Errorf("missing path: %d %q %q", code, out, errs)
	}
	empty := t.TempDir()
	if code, _, errs := testCLI(t, env, empty); code != 2 || !strings.Contains(errs, "holds no test file") {
		t.Errorf("empty dir: %d %q", code, errs)
	}
	if code, _, errs := testCLI(t, env, filepath.Join(dir, "greet.md")); code != 2 || !strings.Contains(errs, "is not a test file") {
		t.Errorf("prompt as test: %d %q", code, errs)
	}
	if code, out, _ := testCLI(t, env, dir, "--list", "--run", "greets"); code != 0 || !strings.HasSuffix(out, "greet.test.yaml:2: greets by name\n"+filepath.Join(dir, "greet.test.yaml")+":14: greets Bob\n") {
		t.Errorf("--list: %d %q", code, out)
	}
	// --shard splits what --list (and a run) selects; the parts together
	// are the whole list, each case once.
	_, whole, _ := testCLI(t, env, dir, "--list")
	var parts string
	for _, sh := range []string{"1/3", "2/3", "3/3"} {
		code, out, errs := testCLI(t, env, dir, "--list", "--shard", sh)
		if code != 0 || out == "" {
			t.Errorf("--list --shard %s: %d %q %q", sh, code, out, errs)
		}
		parts += out
	}
	if sortedLines(parts) != sortedLines(whole) || whole == "" {
		t.Errorf("--shard parts %q do not make up the whole list %q", parts, whole)
	}
	if code, _, errs := testCLI(t, env, dir, "--shard", "4/3"); code != 2 || !strings.Contains(errs, "1 <= I <= N") {
		t.Errorf("bad shard: %d %q", code, errs)
	}
	if code, out, _ := testCLI(t, env, "--format", "json", "--list", dir); code != 0 || !strings.Contains(out, `"name": "later",`+"\n"+`      "skip": "not written yet"`) {
		t.Errorf("--list json: %d %q", code, out)
	}
	bad := filepath.Join(dir, "bad.test.yaml")
	os.WriteFile(bad, []byte("prompt: greet.md\ncases:\n  - name: a\n    expct: {}\n"), 0o644)
	code, _, errs := testCLI(t, env, bad)
	if code != 2 || !strings.Contains(errs, "bad.test.yaml:4:5: error: unknown key `expct` in case (did you mean `expect`?)") {
		t.Errorf("bad file: %d %q", code, errs)
	}
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
