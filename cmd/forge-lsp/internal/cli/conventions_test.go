package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCLIConventions(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "warn.md"), warnPrompt)

	// Flags after the path; the summary goes to stderr, never into json.
	out, errs, code := runCheck(t, f, "--format", "json")
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
		t.Fatalf("json: %d %q %q", code, out, errs)
	}
	if errs != "1 file checked, 0 errors, 1 warning\n" {
		t.Errorf("summary %q", errs)
	}
	// --fail-on warning turns the warning into exit 1.
	if _, _, code := runCheck(t, "--fail-on", "warning", f); code != 1 {
		t.Errorf("--fail-on warning: %d", code)
	}
	if _, errs, code := runCheck(t, f, "--fail-on", "info"); code != 2 || !strings.Contains(errs, "want error or warning") {
		t.Errorf("--fail-on info: %d %q", code, errs)
	}
	// -h and --help print usage on stdout and exit 0.
	for _, h := range []string{"-h", "--help"} {
		out, errs, code := runCheck(t, h)
		if code != 0 || !strings.HasPrefix(out, "usage: forge-lsp check") || !strings.Contains(out, "-fail-on") || errs != "" {
			t.Errorf("%s: %d %q %q", h, code, out, errs)
		}
	}
	// A folder without prompts is an error naming it.
	empty := t.TempDir()
	writeFile(t, filepath.Join(empty, "readme.md"), "# not a prompt\n")
	if _, errs, code := runCheck(t, empty); code != 2 || !strings.Contains(errs, empty+" holds no PromptForge prompt") {
		t.Errorf("empty folder: %d %q", code, errs)
	}
}

func TestCheckFixAppliesSafeFixes(t *testing.T) {
	dir := t.TempDir()
	src := "---\nname: fx\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\nmodels.default(\"m\", \"general assistant model\")\ntools.need(\"search\", \"web search capability\")\n```\n\n## S\n\n```lua\nprint(\"hi\")\nreturn tools.calls.serch\n```\n"
	f := writeFile(t, filepath.Join(dir, "fx.md"), src)
	out, errs, _ := runCheck(t, f, "--fix")
	b, _ := os.ReadFile(f)
	got := string(b)
	if !strings.Contains(got, "tools.bind(\"search\"") || !strings.Contains(got, "log(\"hi\")") {
		t.Fatalf("safe fixes not applied:\n%s\nstderr %s", got, errs)
	}
	// The did-you-mean guess is not safe: left for the author.
	if !strings.Contains(got, "tools.calls.serch") {
		t.Errorf("an unsafe fix was applied:\n%s", got)
	}
	if !strings.Contains(errs, "fx.md:11:1: fixed: Rename to tools.bind") || !strings.Contains(errs, "fx.md:17:1: fixed: Use log") {
		t.Errorf("changes not printed: %q", errs)
	}
	if strings.Contains(out, "upstream spelling") {
		t.Errorf("fixed finding still reported:\n%s", out)
	}
	// Running again changes nothing.
	_, errs, _ = runCheck(t, f, "--fix")
	if strings.Contains(errs, "fixed:") {
		t.Errorf("second --fix changed more: %q", errs)
	}
}

func TestCheckValidatesTestFiles(t *testing.T) {
	dir := writeSuite(t)
	writeFile(t, filepath.Join(dir, "greet.test.yaml"), "cases:\n  - name: a\n    section: \"## Nope\"\n    expect: {tools_called: [remember, search], output: {regex: \"[\"}}\n")
	out, errs, code := runCheck(t, dir)
	if code != 1 {
		t.Fatalf("code %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"greet.test.yaml:3:14: error: section: section heading `## Nope` not found",
		"greet.test.yaml:4:39: error: tools_called: the prompt declares no tool alias \"search\" (its aliases: remember)",
		"greet.test.yaml:4:64: error: `regex` does not compile",
		"greet.test.yaml:2:11: warning: no cassette at",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasPrefix(errs, "2 files checked, 3 errors, 1 warning") {
		t.Errorf("summary %q", errs)
	}
	// Another tool's .test.yaml (no NAME.md beside it, no prompt: key) is
	// not a prompt test file; walks leave it alone.
	writeFile(t, filepath.Join(dir, "api.test.yaml"), "suite: http\nsteps: [1, 2]\n")
	if _, errs, _ := runCheck(t, dir); !strings.HasPrefix(errs, "2 files checked") {
		t.Errorf("foreign test file checked: %q", errs)
	}
	// (greet.test.yaml has errors here, so the exit status is 2.)
	if code, out, errs := testCLI(t, envOf(nil), "--list", dir); code != 2 || strings.Contains(out+errs, "api.test.yaml") || !strings.Contains(errs, "greet.test.yaml:3:14") {
		t.Errorf("foreign test file listed: %d %q %q", code, out, errs)
	}
}

func TestRunHelpAndFlagsAnywhere(t *testing.T) {
	for _, h := range []string{"-h", "--help"} {
		code, out, errs := runCLI(t, h)
		if code != 0 || !strings.HasPrefix(out, "usage: forge-lsp run") || !strings.Contains(out, "-store-dump") || errs != "" {
			t.Errorf("%s: %d %q %q", h, code, out, errs)
		}
	}
	p := writePrompt(t, "## A\n\n```lua\nreturn \"a:\" .. args\n```\n")
	if code, out, _ := runCLI(t, p, "x", "--section", "## A"); code != 0 || out != "a:x\n" {
		t.Errorf("flags after positionals: %d %q", code, out)
	}
	if code, _, errs := runCLI(t, p, "--nope"); code != 2 || !strings.Contains(errs, "flag provided but not defined: -nope") {
		t.Errorf("bad flag: %d %q", code, errs)
	}
}
