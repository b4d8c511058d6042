package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
)

func runCheck(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var o, e bytes.Buffer
	code := Check(args, &o, &e)
	return o.String(), e.String(), code
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const warnPrompt = "---\nname: warn\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## S\n\n```lua\nlocal unused = 1\nlocal kept = 2 -- forge:ignore unused-local\nreturn \"ok\"\n```\n"

func TestListCodes(t *testing.T) {
	out, _, code := runCheck(t, "--list-codes")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, c := range checker.Codes() {
		if !strings.Contains(out, c.Name) {
			t.Errorf("--list-codes lacks %s", c.Name)
		}
	}
	for _, c := range []string{"alias-syntax", "near-duplicate-tools", "add-local-in-h1", "jump-in-handler"} {
		if !strings.Contains(out, c+" ") {
			t.Errorf("--list-codes lacks required code %s", c)
		}
	}
	out, _, code = runCheck(t, "--list-codes", "--format", "json")
	var rows []map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != len(checker.Codes()) {
		t.Fatalf("json list: exit %d, %d rows\n%s", code, len(rows), out)
	}
}

func TestSuppressionAndConfig(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "sub", "warn.md"), warnPrompt)
	out, _, code := runCheck(t, f)
	if code != 0 || strings.Count(out, "[unused-local]") != 1 || !strings.Contains(out, ":12:7: warning: unused local \"unused\"") {
		t.Fatalf("default: exit %d\n%s", code, out)
	}
	// A workspace config two levels up turns the warning into an error.
	writeFile(t, filepath.Join(dir, ".forge-lsp.json"), `{"severity": {"unused-local": "error", "no-such-code": "off"}}`)
	out, errOut, code := runCheck(t, f)
	if code != 1 || !strings.Contains(out, "error: unused local") {
		t.Fatalf("config error: exit %d\n%s", code, out)
	}
	if !strings.Contains(errOut, `unknown code "no-such-code"`) {
		t.Errorf("no warning about the unknown code: %q", errOut)
	}
	// An explicit --config wins over the workspace file.
	off := writeFile(t, filepath.Join(t.TempDir(), "off.json"), `{"severity": {"unused-local": "off"}}`)
	if out, _, code := runCheck(t, "--config", off, f); code != 0 || out != "" {
		t.Fatalf("--config off: exit %d\n%s", code, out)
	}
	bad := writeFile(t, filepath.Join(t.TempDir(), "bad.json"), `{"severity": {"unused-local": "loud"}}`)
	if _, errOut, code := runCheck(t, "--config", bad, f); code != 2 || !strings.Contains(errOut, "unknown severity") {
		t.Fatalf("bad config: exit %d %q", code, errOut)
	}
}

func TestSARIF(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "p.md"), "---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\ntools.need(\"é search\", \"x\")\n```\n")
	out, _, code := runCheck(t, "--format", "sarif", f)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						Region struct {
							StartLine, StartColumn, EndLine, EndColumn int
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Fixes []json.RawMessage `json:"fixes"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatalf("sarif does not decode: %v\n%s", err, out)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("bad sarif header: %+v", log)
	}
	run := log.Runs[0]
	levels := map[string]string{}
	for _, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("ruleIndex %d does not point at %s", r.RuleIndex, r.RuleID)
		}
		levels[r.RuleID] = r.Level
		if r.RuleID == "alias-syntax" {
			reg := r.Locations[0].PhysicalLocation.Region
			// `tools.need("é search"` : the literal starts at UTF-16
			// column 12 and is 10 UTF-16 units long (é is one unit, two
			// bytes).
			if reg.StartLine != 10 || reg.StartColumn != 12 || reg.EndColumn != 22 {
				t.Errorf("alias-syntax region %+v", reg)
			}
		}
		if r.RuleID == "upstream-spelling" && len(r.Fixes) != 1 {
			t.Errorf("upstream-spelling has %d fixes", len(r.Fixes))
		}
	}
	if levels["alias-syntax"] != "error" || levels["upstream-spelling"] != "note" {
		t.Errorf("levels %v", levels)
	}
}

func TestJSONCarriesFixes(t *testing.T) {
	f := writeFile(t, filepath.Join(t.TempDir(), "p.md"), "---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\ntools.need(\"s\", \"web search\")\n```\n")
	out, _, _ := runCheck(t, "--format", "json", f)
	var diags []Diagnostic
	if err := json.Unmarshal([]byte(out), &diags); err != nil {
		t.Fatal(err)
	}
	if len(diags) != 1 || diags[0].Code != "upstream-spelling" || len(diags[0].Fixes) != 1 {
		t.Fatalf("%+v", diags)
	}
	e := diags[0].Fixes[0].Edits[0]
	if e.Line != 10 || e.Column != 7 || e.EndColumn != 11 || e.NewText != "bind" {
		t.Errorf("edit %+v", e)
	}
}

// TestCROnlyPrompt: a lone CR ends a line, so a file saved with CR line
// ends is a prompt like any other.
func TestCROnlyPrompt(t *testing.T) {
	p := writeFile(t, filepath.Join(t.TempDir(), "cr.md"), strings.ReplaceAll("---\nname: cr\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## S\n\n```lua\nreturn \"ok \" .. args\n```\n", "\n", "\r"))
	if out, errs, code := runCheck(t, p); code != 0 || !strings.Contains(errs, "1 file checked") {
		t.Fatalf("check: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, p, "x"); code != 0 || out != "ok x\n" {
		t.Fatalf("run: exit %d, %q, %s", code, out, errs)
	}
}

// check resolves tool capabilities against the workspace tools file a run
// of the prompt would load (forge-tools.json next to it).
func TestCheckResolvesWorkspaceTools(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "p.md"), "---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\ntools.bind(\"wc\", \"count the words of a text\")\n```\n")
	out, _, _ := runCheck(t, "--format", "json", f)
	if !strings.Contains(out, `"tool-binding"`) {
		t.Fatalf("without forge-tools.json: want a tool-binding finding, got %s", out)
	}
	writeFile(t, filepath.Join(dir, "forge-tools.json"), `{"tools": [{"name": "word_count", "description": "Count the words in a text.",
  "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}, "trust": "trusted", "command": ["false"]}]}`)
	out, _, _ = runCheck(t, "--format", "json", f)
	if strings.Contains(out, `"tool-binding"`) {
		t.Fatalf("with forge-tools.json next to the prompt: got %s", out)
	}
}
