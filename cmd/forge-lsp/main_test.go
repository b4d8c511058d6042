package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// binary is the command under test: this test binary, which runs main()
// instead of the tests when mainEnv is set (so the tests drive forge-lsp
// as users do without building it first).
var binary string

// mainEnv makes the test binary act as forge-lsp.
const mainEnv = "FORGE_LSP_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
		return
	}
	binary = os.Args[0]
	// Every child started from here is forge-lsp, whoever starts it (a
	// child without the variable would run the tests again).
	os.Setenv(mainEnv, "1")
	os.Exit(m.Run())
}

func runBin(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodPrompt = "---\nname: good\ndescription: d\npromptforge: 1\n---\n# T\n\n## S\n\n```lua\nreturn \"ok\"\n```\n"
const badPrompt = "---\nname: bad\ndescription: d\npromptforge: 1\n---\n# T\n\n## S\n\n```lua\nreturn (\n```\n\n## S\n"

func TestVersion(t *testing.T) {
	out, _, code := runBin(t, "", "version")
	want := currentBuild()
	if code != 0 || !strings.HasPrefix(out, "forge-lsp "+want.Version+"\n") {
		t.Fatalf("version: %q %d", out, code)
	}
	if _, errOut, code := runBin(t, "", "version", "extra"); code != 2 || !strings.Contains(errOut, "--json") {
		t.Fatalf("version with an argument: exit %d, stderr %q", code, errOut)
	}
}

// TestVersionReleaseFlags builds the binary as the release does and checks
// that both outputs carry the flags' values.
// TestVersionReleaseFlags: the variables release builds set with -ldflags
// -X reach `version` and `version --json`. The variables are set here as
// the linker would; .ci/dist.sh builds with the real flags and checks the
// binary's output, and the test checks that -X can set them (package
// main string variables initialised to constants).
func TestVersionReleaseFlags(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "version.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	settable := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					lit, isLit := ast.Expr(nil), false
					if i < len(vs.Values) {
						lit = vs.Values[i]
						_, isLit = lit.(*ast.BasicLit)
					}
					settable[n.Name] = vs.Type == nil && (lit == nil || isLit)
				}
			}
		}
	}
	for _, v := range []string{"version", "commit", "date"} {
		if !settable[v] {
			t.Errorf("main.%s is not a variable initialised to a constant string, so -ldflags -X cannot set it", v)
		}
	}
	version, commit, date = "9.8.7", "0123abcd", "2026-01-02T03:04:05Z"
	defer func() { version, commit, date = "", "", "" }()
	var out, errb bytes.Buffer
	if code := versionCmd(nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "forge-lsp 9.8.7\ncommit 0123abcd\nbuilt 2026-01-02T03:04:05Z\n") {
		t.Fatalf("text output (exit %d):\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := versionCmd([]string{"--json"}, &out, &errb); code != 0 {
		t.Fatalf("--json exit %d: %s", code, errb.String())
	}
	var got buildInfo
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("--json output does not decode: %v\n%s", err, out.String())
	}
	if got.Version != "9.8.7" || got.Commit != "0123abcd" || got.Date != "2026-01-02T03:04:05Z" || got.OS == "" || got.Arch == "" || got.Go == "" {
		t.Fatalf("--json: %+v", got)
	}
}

func TestResolveBuildFallsBackToBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "feedbeef"}, {Key: "vcs.time", Value: "2026-03-04T05:06:07Z"}, {Key: "vcs.modified", Value: "true"}}
	cases := []struct {
		name    string
		v, c, d string
		info    *debug.BuildInfo
		wantV   string
		wantC   string
		wantD   string
	}{
		{"flags win", "1.2.3", "abc", "today", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}, Settings: vcs}, "1.2.3", "abc", "today"},
		{"go install of a tag", "", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, "0.2.0", "unknown", "unknown"},
		{"checkout with VCS stamping", "", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260304050607-feedbeef1234+dirty"}, Settings: vcs}, baseVersion, "feedbeef-dirty", "2026-03-04T05:06:07Z"},
		{"devel without VCS", "", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, baseVersion, "unknown", "unknown"},
		{"no build info", "", "", "", nil, baseVersion, "unknown", "unknown"},
	}
	for _, c := range cases {
		got := resolveBuild(c.v, c.c, c.d, c.info)
		if got.Version != c.wantV || got.Commit != c.wantC || got.Date != c.wantD {
			t.Errorf("%s: got %+v, want %s %s %s", c.name, got, c.wantV, c.wantC, c.wantD)
		}
	}
}

func TestCheckExitCodesAndFormats(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "good.md", goodPrompt)
	bad := write(t, dir, "sub/bad.md", badPrompt)
	write(t, dir, "notes.md", "# Just notes\n")

	if out, errOut, code := runBin(t, "", "check", good); code != 0 || strings.Contains(out, "error") {
		t.Fatalf("good: code %d out %q err %q", code, out, errOut)
	}
	out, _, code := runBin(t, "", "check", dir)
	if code != 1 {
		t.Fatalf("folder with a bad prompt: exit %d, want 1\n%s", code, out)
	}
	if !strings.Contains(out, bad+":11:") || !strings.Contains(out, "[lua-syntax]") || !strings.Contains(out, bad+":14:1: error: duplicate sibling section name") {
		t.Fatalf("text output:\n%s", out)
	}
	if strings.Contains(out, "notes.md") {
		t.Fatalf("non-prompt Markdown in a folder must be skipped:\n%s", out)
	}
	out, _, code = runBin(t, "", "check", "--format", "json", bad)
	if code != 1 {
		t.Fatalf("json exit %d", code)
	}
	var diags []map[string]any
	if err := json.Unmarshal([]byte(out), &diags); err != nil {
		t.Fatalf("json output does not decode: %v\n%s", err, out)
	}
	found := false
	for _, d := range diags {
		for _, k := range []string{"path", "line", "column", "end_line", "end_column", "severity", "code", "message"} {
			if _, ok := d[k]; !ok {
				t.Fatalf("json diagnostic lacks %q: %v", k, d)
			}
		}
		if d["code"] == "structure" && d["line"] == float64(14) && d["severity"] == "error" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no structure error at line 14 in %s", out)
	}
	// A non-prompt named explicitly is refused with exit 2 and a reason.
	_, errOut, code := runBin(t, "", "check", filepath.Join(dir, "notes.md"))
	if code != 2 || !strings.Contains(errOut, "not a PromptForge prompt") {
		t.Fatalf("non-prompt: %d %q", code, errOut)
	}
	// Missing paths and bad flags are usage/I/O errors.
	if _, _, code := runBin(t, "", "check", filepath.Join(dir, "missing.md")); code != 2 {
		t.Fatalf("missing file: exit %d", code)
	}
	if _, _, code := runBin(t, "", "check", "--format", "xml", good); code != 2 {
		t.Fatalf("bad format: exit %d", code)
	}
	if _, _, code := runBin(t, "", "frobnicate"); code != 2 {
		t.Fatalf("unknown command: exit %d", code)
	}
}

func TestCheckShippedExamplesAreClean(t *testing.T) {
	out, errOut, code := runBin(t, "", "check", "../../examples")
	if code != 0 {
		t.Fatalf("shipped examples: exit %d\n%s%s", code, out, errOut)
	}
}
