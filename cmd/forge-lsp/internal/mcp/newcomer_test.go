package mcp

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogDefaultsToEveryPrompt: a prompts.toml without [catalog]
// serves every prompt of the prompts folder (docs/mcp.md#configuration).
func TestCatalogDefaultsToEveryPrompt(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "prompts", "echo.md"), echoPrompt)
	writeFile(t, filepath.Join(dir, "prompts", "sub", "ask.md"), askPrompt)
	writeFile(t, filepath.Join(dir, "prompts.toml"), "[paths]\nprompts = \""+filepath.ToSlash(filepath.Join(dir, "prompts"))+"\"\n")
	cfg, err := LoadConfig(filepath.Join(dir, "prompts.toml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := Resolve(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range cat.Entries {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "ask,echo" {
		t.Fatalf("served %v, want every prompt of the folder", names)
	}
}

// TestBrokenAtStartUp: a prompt broken when the server starts is listed
// with its problem, as one broken while it runs, and check_prompt works
// on it, with the path as the prompts folder or the workspace root sees
// it; a path outside the workspace is still refused.
func TestBrokenAtStartUp(t *testing.T) {
	broken := strings.Replace(echoPrompt, "```lua\nreturn", "```lua\nreturn )(", 1)
	broken = strings.Replace(broken, "name: echo", "name: shout", 1)
	f := newFixture(t, map[string]string{"echo.md": echoPrompt, "shout.md": broken}, "")
	cs := f.connect(nil)
	var page listOut
	call(t, cs, "list_prompts", nil, &page)
	byName := map[string]*string{}
	for _, p := range page.Prompts {
		byName[p.Name] = p.Problem
	}
	if p, ok := byName["shout"]; !ok || p == nil || !strings.Contains(*p, "parse error") {
		t.Fatalf("the broken prompt is not listed with its problem: %s", mustJSON(t, page))
	}
	if p, ok := byName["echo"]; !ok || p != nil {
		t.Fatalf("the healthy prompt: %s", mustJSON(t, page))
	}
	if !strings.Contains(f.logs.String(), "shout") {
		t.Errorf("the broken prompt was not logged: %s", f.logs.String())
	}
	type out struct {
		Path   string `json:"path"`
		Errors int    `json:"errors"`
	}
	for _, path := range []string{"shout.md", "prompts/shout.md", filepath.Join(f.dir, "prompts", "shout.md")} {
		var got out
		res, text := call(t, cs, "check_prompt", map[string]any{"path": path}, &got)
		if res.IsError || got.Errors == 0 || got.Path != filepath.Join(f.dir, "prompts", "shout.md") {
			t.Errorf("check_prompt %s: %s", path, text)
		}
	}
	res, text := call(t, cs, "run_tests", map[string]any{"path": "prompts"}, nil)
	if strings.Contains(text, "outside") || strings.Contains(text, "no such file") {
		t.Errorf("run_tests of the workspace's prompts folder: %v %s", res.IsError, text)
	}
	res, text = call(t, cs, "check_prompt", map[string]any{"path": "../../etc/passwd"}, nil)
	if !res.IsError || !strings.Contains(text, "workspace") {
		t.Errorf("a path outside the workspace: %s", text)
	}
}
