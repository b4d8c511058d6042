package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/store"
)

// oldPrompts copies testdata/oldprompts (prompts written for upstream
// v0.1.0, docs/migration.md) into a temporary folder.
func oldPrompts(t *testing.T) []string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "..", "testdata", "oldprompts")
	files, _ := filepath.Glob(filepath.Join(src, "*.md"))
	guide, _ := filepath.Glob(filepath.Join(src, "guide", "*.md"))
	files = append(files, guide...)
	dir := t.TempDir()
	var out []string
	for _, f := range files {
		if filepath.Base(f) == "README.md" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, strings.TrimPrefix(filepath.ToSlash(f[len(src)+1:]), "guide/"))
		if strings.Contains(filepath.ToSlash(f), "/guide/") {
			p = filepath.Join(dir, "guide-"+filepath.Base(f))
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if len(out) < 20 {
		t.Fatalf("only %d old prompts in %s", len(out), src)
	}
	return out
}

func checkJSON(t *testing.T, path string) []Diagnostic {
	t.Helper()
	out, errs, code := runCheck(t, "--format", "json", path)
	if code == 2 {
		t.Fatalf("check %s: %s", path, errs)
	}
	var ds []Diagnostic
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("check %s: %v\n%s", path, err, out)
	}
	return ds
}

// TestOldPrompts: each old form is reported once, as old-form, with no
// follow-on finding; --diff shows the rewrite and writes nothing; --fix
// leaves no error, is idempotent, and the result runs against a scripted
// gateway.
func TestOldPrompts(t *testing.T) {
	srv := oldPromptsGateway(t)
	for _, p := range oldPrompts(t) {
		name := filepath.Base(p)
		orig, _ := os.ReadFile(p)
		old := 0
		for _, d := range checkJSON(t, p) {
			switch {
			case d.Code == "old-form":
				old++
			case d.Severity == "error":
				t.Errorf("%s:%d: follow-on %s %s: %s", name, d.Line, d.Severity, d.Code, d.Message)
			}
		}
		if old == 0 {
			t.Errorf("%s: no old-form finding", name)
		}

		out, _, code := runCheck(t, "--diff", p)
		if now, _ := os.ReadFile(p); code != 1 || string(now) != string(orig) ||
			!strings.Contains(out, "--- "+p+".orig\n+++ "+p+"\n") || !strings.Contains(out, "\n-") || !strings.Contains(out, "\n+") {
			t.Errorf("%s: check --diff exit %d, file changed %v, diff:\n%s", name, code, string(now) != string(orig), out)
		}

		if _, errs, code := runCheck(t, "--fix", p); code != 0 && !judgement[name] {
			t.Errorf("%s: check --fix exit %d\n%s", name, code, errs)
		}
		fixed, _ := os.ReadFile(p)
		judged := 0
		for _, d := range checkJSON(t, p) {
			switch {
			case d.Code == "old-form" && judgement[name] && len(d.Fixes) > 0 && !d.Fixes[0].Safe:
				judged++ // a rewrite that needs the author: the editor offers it
			case d.Severity == "error" || d.Code == "old-form":
				t.Errorf("%s:%d: after --fix: %s %s: %s", name, d.Line, d.Severity, d.Code, d.Message)
			}
		}
		if judgement[name] != (judged > 0) {
			t.Errorf("%s: %d old forms left for the author after --fix", name, judged)
		}
		// Idempotent: a second --fix changes nothing, and --diff agrees.
		runCheck(t, "--fix", p)
		if again, _ := os.ReadFile(p); string(again) != string(fixed) {
			t.Errorf("%s: a second --fix changed the file:\n%s", name, again)
		}
		if out, _, code := runCheck(t, "--diff", p); code != 0 || out != "" {
			t.Errorf("%s: --diff after --fix: exit %d\n%s", name, code, out)
		}

		if judged > 0 {
			// Take the editor's quick fix, as the author would.
			fixed = applyFirstFixes(t, p, fixed)
			caught := false
			for _, d := range checkJSON(t, p) {
				switch {
				case d.Severity == "error" && d.Code == checkCatches[name]:
					caught = true // the run's failure, found before the run
				case d.Severity == "error":
					t.Errorf("%s:%d: after the editor's fixes: %s: %s", name, d.Line, d.Code, d.Message)
				}
			}
			if want := checkCatches[name]; want != "" && !caught {
				t.Errorf("%s: check does not report the %s the run fails with", name, want)
			}
		}
		pr := parse.Parse(name, fixed)
		cfg := run.Config{Input: "Boost C++ Libraries", Store: store.New(), Execution: "old-" + name}
		cfg.Models.Client = gateway.New(srv.Config())
		cfg.Models.Catalog = srv.Catalog
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := run.Run(ctx, pr, cfg)
		cancel()
		if want, ok := runFails[name]; ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: run = %q, %v; want the error %q", name, res, err, want)
			}
		} else if err != nil {
			t.Errorf("%s: fixed prompt fails to run: %v", name, err)
		} else if res == "" {
			t.Errorf("%s: fixed prompt returned nothing", name)
		}
	}
	if n := len(srv.ChatRequests()); n < 5 {
		t.Errorf("the fixed prompts made %d model calls", n)
	}
}

// judgement lists the old prompts whose old forms include one that
// check --fix leaves to the author (docs/migration.md): a tasks handle
// stored in a local. (A write to a Tool's description is fixed when the
// chunk adds the tool anyway, as tool_inspect does.)
var judgement = map[string]bool{"guide-pipeline.md": true}

// runFails lists the old prompts that still fail after the rewrites
// because upstream changed what the same spelling does
// (docs/migration.md#changes-in-meaning-without-a-new-spelling): the
// pipeline's execute("## Research") now runs a contained chain that falls
// through to its own Main section, which calls execute again.
var runFails = map[string]string{"guide-pipeline.md": "execute recursion exceeded cap of 8"}

// checkCatches is the finding with which check reports, before the run,
// the failure runFails expects.
var checkCatches = map[string]string{"guide-pipeline.md": "nested-recursion"}

// applyFirstFixes applies the first quick fix of every finding, as an
// editor user taking each one would, writes the file and returns it.
func applyFirstFixes(t *testing.T, path string, content []byte) []byte {
	t.Helper()
	var all []analysis.TextEdit
	for _, d := range checkFile(path, content, nil) {
		if len(d.FixSpans) > 0 {
			all = append(all, d.FixSpans[0]...)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Span.Start > all[j].Span.Start })
	out := append([]byte(nil), content...)
	for _, e := range all {
		out = append(out[:e.Span.Start], append([]byte(e.NewText), out[e.Span.End:]...)...)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// oldPromptsGateway answers like a model: a section that has tools calls
// search once, then writes; every other round writes text.
func oldPromptsGateway(t *testing.T) *gatewaytest.Server {
	srv := gatewaytest.New(t, "old-key")
	srv.Catalog = []gateway.Model{
		{ID: "analyst-1", Description: "A careful analysis model suited to structured reasoning, coding, long-context review and general assistance", Context: 65536, Thinking: "switchable", ToolDialect: "openai"},
	}
	srv.Search = func(map[string]any) (int, string) {
		return 200, `{"results":[{"title":"Boost","url":"https://www.boost.org/","description":"Boost provides free peer-reviewed portable C++ source libraries."}]}`
	}
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		for _, tool := range req.Tools {
			if tool.Function.Name == "search" && !gatewaytest.HasToolResult(req) {
				return gatewaytest.Calls("search", `{"query":"Boost C++ Libraries"}`)
			}
		}
		return gatewaytest.Text("## Section\n\nBoost provides peer-reviewed C++ libraries (https://www.boost.org/).")
	}
	return srv
}

// TestCheckDiff: --diff on a file with nothing to fix prints nothing and
// exits 0; on several files it prints one diff per changed file, writes
// none and exits 1; with --fix it is a usage error.
func TestCheckDiff(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.md")
	old := filepath.Join(dir, "old.md")
	os.WriteFile(clean, []byte("---\nname: clean\ndescription: d\npromptforge: 1\n---\n\n# Clean\n\n## A\n\n```lua\nreturn \"ok\"\n```\n"), 0o644)
	oldText := "---\nname: old\ndescription: d\npromptforge: 1\n---\n\n# Old\n\n## A\n\n```lua\nstore.write(\"a.md\", \"x\")\nreturn store.read_lines(\"a.md\") .. store.inject(\"a.md\")\n```\n"
	os.WriteFile(old, []byte(oldText), 0o644)
	if out, errs, code := runCheck(t, "--diff", clean); code != 0 || out != "" || !strings.Contains(errs, "1 file checked, 0 would change") {
		t.Errorf("clean: exit %d out %q err %q", code, out, errs)
	}
	out, errs, code := runCheck(t, "--diff", clean, old)
	want := "--- " + old + ".orig\n+++ " + old + "\n@@ -10,5 +10,5 @@\n \n ```lua\n store.write(\"a.md\", \"x\")\n" +
		"-return store.read_lines(\"a.md\") .. store.inject(\"a.md\")\n+return store.read_numbered(\"a.md\") .. untrusted(store.read(\"a.md\"))\n ```\n"
	if code != 1 || out != want || !strings.Contains(errs, "2 files checked, 1 would change") {
		t.Errorf("old: exit %d err %q\n%s\nwant\n%s", code, errs, out, want)
	}
	if b, _ := os.ReadFile(old); string(b) != oldText {
		t.Errorf("--diff wrote the file:\n%s", b)
	}
	if _, errs, code := runCheck(t, "--diff", "--fix", old); code != 2 || !strings.Contains(errs, "exclude each other") {
		t.Errorf("--diff --fix: exit %d %q", code, errs)
	}
}
