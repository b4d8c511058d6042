package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
)

// TestBaseline writes a results file, compares an identical run with it
// (no changes, exit 0), then a run where a case regressed (exit 1), one
// whose tokens grew by half (reported, exit 0) and one whose pass rate
// fell below the baseline's interval while the case still meets its
// pass_rate (exit 1); the Markdown summary lists the changes.
func TestBaseline(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "trip.md"), []byte(tripPrompt), 0o644)
	os.WriteFile(filepath.Join(dir, "trip.test.yaml"), []byte(tripPass), 0o644)
	if code, out, errs := testCLI(t, envOf(tripServer(t)), "--record", dir); code != 0 {
		t.Fatalf("record: %d\n%s\n%s", code, out, errs)
	}
	base := filepath.Join(t.TempDir(), "base.json")
	if code, out, errs := testCLI(t, envOf(nil), "--results", base, dir); code != 0 {
		t.Fatalf("results: %d\n%s\n%s", code, out, errs)
	}
	data, _ := os.ReadFile(base)
	rf, err := testrun.ReadResults(data)
	if err != nil || len(rf.Cases) != 3 {
		t.Fatalf("results file: %v\n%s", err, data)
	}
	if c := rf.Cases[0]; c.Name != "plans" || c.Status != testrun.Pass || c.Runs != 1 || c.Rounds != 3 || c.InputTokens != 300 || c.OutputTokens != 30 || !c.Usage || len(c.Attempts) != 1 || !c.Attempts[0].Pass {
		t.Errorf("case record: %+v", c)
	}

	// An identical run: nothing to report.
	code, out, _ := testCLI(t, envOf(nil), "--baseline", base, dir)
	if code != 0 || !strings.Contains(out, "no changes (3 cases compared)") || strings.Contains(out, "REGRESSION") || strings.Contains(out, "tokens ") {
		t.Errorf("identical: %d\n%s", code, out)
	}

	// A regression.
	broken := strings.Replace(tripPass, "output: {contains: Rome}", "output: {contains: Milan}", 1)
	os.WriteFile(filepath.Join(dir, "trip.test.yaml"), []byte(broken), 0o644)
	summary := filepath.Join(t.TempDir(), "summary.md")
	code, out, _ = testCLI(t, envOf(nil), "--baseline", base, "--summary", summary, dir)
	if code != 1 || !strings.Contains(out, "1 regression") || !strings.Contains(out, `REGRESSION trip.test.yaml:2: "plans": passed before, fails now: output: does not contain "Milan"`) {
		t.Errorf("regression: %d\n%s", code, out)
	}
	md, _ := os.ReadFile(summary)
	if !strings.Contains(string(md), "| ❌ regression |") || !strings.Contains(string(md), "#### Against the baseline") {
		t.Errorf("summary:\n%s", md)
	}
	os.WriteFile(filepath.Join(dir, "trip.test.yaml"), []byte(tripPass), 0o644)

	// Tokens: the same run recorded against a gateway reporting half as
	// many input tokens again (the case's own limit allows it).
	os.WriteFile(filepath.Join(dir, "trip.test.yaml"), []byte(strings.Replace(tripPass, "input: {max: 300}", "input: {max: 500}", 1)), 0o644)
	if code, out, errs := testCLI(t, envOf(tripServerUsing(t, 150)), "--record", "--run", "plans", dir); code != 0 {
		t.Fatalf("re-record: %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = testCLI(t, envOf(nil), "--baseline", base, dir)
	if code != 0 || !strings.Contains(out, "1 token change") || !strings.Contains(out, `"plans": +45% per run, 300 in + 30 out before, 450 in + 30 out now`) {
		t.Errorf("tokens: %d\n%s", code, out)
	}

	// A rate drop: 4 of 4 runs passed; now 2 of 4 do, which still meets
	// the case's pass_rate of 0.5 but is below the baseline's interval
	// (51%–100%).
	gdir := writeSuite(t)
	tests, _ := os.ReadFile(filepath.Join(gdir, "greet.test.yaml"))
	os.WriteFile(filepath.Join(gdir, "greet.test.yaml"), []byte(strings.Replace(string(tests), "  - name: greets Bob\n", "  - name: greets Bob\n    pass_rate: 0.5\n", 1)), 0o644)
	if code, out, errs := testCLI(t, envOf(greetServer(t, false)), "--record", "--repeat", "4", "--run", "Bob", "-j", "1", gdir); code != 0 {
		t.Fatalf("record 4: %d\n%s\n%s", code, out, errs)
	}
	gbase := filepath.Join(t.TempDir(), "gbase.json")
	if code, out, _ := testCLI(t, envOf(nil), "--repeat", "4", "--run", "Bob", "--results", gbase, gdir); code != 0 {
		t.Fatalf("base 4: %d\n%s", code, out)
	}
	if code, out, errs := testCLI(t, envOf(greetServer(t, true)), "--record", "--repeat", "4", "--run", "Bob", "-j", "1", gdir); code != 0 {
		t.Fatalf("record flaky: %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = testCLI(t, envOf(nil), "--repeat", "4", "--run", "Bob", "--baseline", gbase, gdir)
	if code != 1 || !strings.Contains(out, `RATE DROP `) || !strings.Contains(out, `100% (4/4, 95% interval 51%–100%) before, 50% (2/4, 95% interval 15%–85%) now`) || !strings.HasSuffix(out, "1 passed, 0 failed\n") {
		t.Errorf("rate drop: %d\n%s", code, out)
	}
}

// TestBaselineFileErrors: a baseline that is missing or not a results
// file is a usage error before anything runs.
func TestBaselineFileErrors(t *testing.T) {
	dir := writeSuite(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"results": []}`), 0o644)
	for _, f := range []string{filepath.Join(dir, "missing.json"), bad} {
		code, out, errs := testCLI(t, envOf(nil), "--baseline", f, dir)
		if code != 2 || out != "" || !strings.Contains(errs, "--baseline "+f) {
			t.Errorf("%s: %d %q %s", f, code, out, errs)
		}
	}
	b, _ := json.Marshal(testrun.ResultsFile{Version: 99, Tool: "forge-lsp test"})
	os.WriteFile(bad, b, 0o644)
	if code, _, errs := testCLI(t, envOf(nil), "--baseline", bad, dir); code != 2 || !strings.Contains(errs, "got version 99") {
		t.Errorf("version: %d %s", code, errs)
	}
}
