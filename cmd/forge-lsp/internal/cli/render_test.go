package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/render"
	"github.com/forge-lsp/forge-lsp/engine/tokens"
)

// reviewGateway is the fixture's gateway file: two models with prices.
// Its endpoint is never contacted (render sends nothing).
const reviewGateway = `[[endpoint]]
id = "local"
protocol = "openai"
base_url = "http://127.0.0.1:9/v1"

[[model]]
name = "writer-model"
description = "a careful writing model"
context = 8000
upstream = "w"
endpoints = ["local"]
price_input = 3
price_output = 15

[[model]]
name = "fast-model"
description = "a small fast model for drafts"
context = 4000
upstream = "f"
endpoints = ["local"]
price_input = 0.5
price_output = 1.5
`

const reviewH1 = "---\nname: review\ndescription: d\npromptforge: 1\n---\n\n# Review\n\n```lua\nmodels.default(\"writer\", \"a careful writing model\")\nmodels.bind(\"fast\", \"a small fast model for drafts\")\n```\n\n"

// reviewDraft and reviewPolish build the fixture's two sections.
func reviewDraft(wording, extra string) string {
	s := "## Draft\n\n"
	if extra != "" {
		s += "```lua\n" + extra + "\n```\n\n"
	}
	return s + wording + " {{ args }}.\n\n"
}

func reviewPolish(desc string) string {
	return "## Polish\n\n```lua\ntools.add_local(\"lookup\", \"" + desc + "\", { term = { \"string\", \"The term\" } }, function(a)\n\treturn a.term\nend)\n```\n\nPolish this text: {{ args }}\n\n"
}

const (
	oldWording = "Write a short draft about"
	newWording = "Write a concise, friendly draft about"
	citeTool   = "tools.add_local(\"cite\", \"Cite a source by its URL\", { url = { \"string\", \"The URL\" } }, function(a)\n\treturn a.url\nend)"
	oldLookup  = "Look up a term in the glossary"
	newLookup  = "Look up a term in the team glossary and return its definition"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// diffJSON runs render --diff rev in the current directory.
func diffJSON(t *testing.T, rev string, extra ...string) []map[string]any {
	t.Helper()
	var o, e bytes.Buffer
	args := append([]string{"--diff", rev, "--format", "json", "--gateway-config", "gateway.toml"}, extra...)
	if code := Render(args, &o, &e); code != 0 {
		t.Fatalf("render %v: exit %d: %s", args, code, e.String())
	}
	var out []map[string]any
	if err := json.Unmarshal(o.Bytes(), &out); err != nil {
		t.Fatalf("%v\n%s", err, o.String())
	}
	return out
}

// roundOf finds a round of a file diff by key.
func roundOf(t *testing.T, fd map[string]any, key string) map[string]any {
	t.Helper()
	for _, r := range fd["rounds"].([]any) {
		if rd := r.(map[string]any); rd["key"] == key {
			return rd
		}
	}
	t.Fatalf("no round %q in %v", key, fd["rounds"])
	return nil
}

func delta(c any) int {
	m := c.(map[string]any)
	return int(m["new_tokens"].(float64) - m["old_tokens"].(float64))
}

// TestRenderDiffFiveCommits builds a repository with five commits (a
// wording change, a new tool, a changed description, a section moved, a
// model switch) and checks that render --diff reports each in the right
// round with the token change the budgets count.
func TestRenderDiffFiveCommits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: ", err)
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "gateway.toml"), reviewGateway)
	writeFile(t, filepath.Join(dir, "notes.md"), "# not a prompt\n")
	versions := []string{
		reviewH1 + reviewDraft(oldWording, "") + reviewPolish(oldLookup),
		reviewH1 + reviewDraft(newWording, "") + reviewPolish(oldLookup),
		reviewH1 + reviewDraft(newWording, citeTool) + reviewPolish(oldLookup),
		reviewH1 + reviewDraft(newWording, citeTool) + reviewPolish(newLookup),
		reviewH1 + reviewPolish(newLookup) + reviewDraft(newWording, citeTool),
		reviewH1 + reviewPolish(newLookup) + reviewDraft(newWording, citeTool+"\nmodels.use(\"fast\")"),
	}
	var commits []string
	for i, v := range versions {
		writeFile(t, filepath.Join(dir, "review.md"), v)
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", "v"+string(rune('0'+i)))
		commits = append(commits, git(t, dir, "rev-parse", "HEAD"))
	}
	t.Chdir(dir)
	step := func(k int) map[string]any {
		git(t, dir, "checkout", "-q", commits[k])
		got := diffJSON(t, commits[k-1])
		if len(got) != 1 || got[0]["path"] != "review.md" || got[0]["status"] != "modified" {
			t.Fatalf("step %d: want review.md modified, got %v", k, got)
		}
		return got[0]
	}
	known := func(s string) int { return tokens.Count(s) }

	// 1. The wording: the Draft round's words, and its tokens as counted.
	fd := step(1)
	d := roundOf(t, fd, "## Draft")
	if d["status"] != "modified" || !strings.Contains(d["words"].(string), "[-short-]{+concise, friendly+}") {
		t.Errorf("wording: %v", d)
	}
	want := known(newWording+" .") - known(oldWording+" .")
	if got := delta(d["tokens"]); got != want {
		t.Errorf("wording: Draft token change %d, the budget counts %d", got, want)
	}
	if p := roundOf(t, fd, "## Polish"); p["status"] != nil || delta(p["tokens"]) != 0 {
		t.Errorf("wording: Polish changed: %v", p)
	}
	if delta(fd["run"]) != want {
		t.Errorf("wording: run change %v, want %d", fd["run"], want)
	}

	// 2. A new tool in Draft: offered there, its spec's tokens added.
	fd = step(2)
	d = roundOf(t, fd, "## Draft")
	cite := tokens.ToolTokens(tokens.Tool{Name: "cite", Description: "Cite a source by its URL",
		Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"The URL"}},"required":["url"]}`)})
	if tl, _ := d["tools"].([]any); len(tl) != 1 || !strings.HasPrefix(tl[0].(string), "tool cite added") {
		t.Errorf("new tool: %v", d)
	}
	if got := delta(d["tokens"]); got != cite {
		t.Errorf("new tool: Draft token change %d, the tool spec counts %d", got, cite)
	}
	if p := roundOf(t, fd, "## Polish"); p["status"] != nil {
		t.Errorf("new tool: Polish changed: %v", p)
	}

	// 3. A changed description in Polish.
	fd = step(3)
	p := roundOf(t, fd, "## Polish")
	params := json.RawMessage(`{"type":"object","properties":{"term":{"type":"string","description":"The term"}},"required":["term"]}`)
	want = tokens.ToolTokens(tokens.Tool{Name: "lookup", Description: newLookup, Parameters: params}) -
		tokens.ToolTokens(tokens.Tool{Name: "lookup", Description: oldLookup, Parameters: params})
	if tl, _ := p["tools"].([]any); len(tl) != 1 || !strings.Contains(tl[0].(string), "tool lookup description: ") || !strings.Contains(tl[0].(string), "{+team+}") {
		t.Errorf("description: %v", p)
	}
	if got := delta(p["tokens"]); got != want || want == 0 {
		t.Errorf("description: Polish token change %d, want %d", got, want)
	}
	if d := roundOf(t, fd, "## Draft"); d["status"] != nil {
		t.Errorf("description: Draft changed: %v", d)
	}

	// 4. Polish moved before Draft: both rounds moved, nothing else.
	fd = step(4)
	for key, move := range map[string]string{"## Polish": "round 2 → round 1", "## Draft": "round 1 → round 2"} {
		r := roundOf(t, fd, key)
		if r["moved"] != move || r["status"] != nil || delta(r["tokens"]) != 0 {
			t.Errorf("moved: %s: %v", key, r)
		}
	}

	// 5. Draft switches to the fast model: the model and the cost change,
	// not the tokens.
	fd = step(5)
	d = roundOf(t, fd, "## Draft")
	if d["model"] != "writer-model → fast-model" || delta(d["tokens"]) != 0 {
		t.Errorf("model switch: %v", d)
	}
	tk := d["tokens"].(map[string]any)
	n := tk["new_tokens"].(float64)
	if oc, nc := tk["old_cost"].(float64), tk["new_cost"].(float64); oc != n*3/1e6 || nc != n*0.5/1e6 {
		t.Errorf("model switch: cost %v → %v for %v tokens", oc, nc, n)
	}
	if p := roundOf(t, fd, "## Polish"); p["status"] != nil {
		t.Errorf("model switch: Polish changed: %v", p)
	}

	// Renamed, added and removed prompts against the first commit.
	git(t, dir, "checkout", "-q", "main")
	if err := os.Rename(filepath.Join(dir, "review.md"), filepath.Join(dir, "renamed.md")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	writeFile(t, filepath.Join(dir, "fresh.md"), reviewH1+reviewDraft(oldWording, ""))
	got := diffJSON(t, commits[5])
	status := map[string]string{}
	for _, fd := range got {
		status[fd["path"].(string)] = fd["status"].(string)
	}
	if status["renamed.md"] != render.Renamed || status["fresh.md"] != render.Added || len(got) != 2 {
		t.Errorf("rename and add: %v", status)
	}
	git(t, dir, "rm", "-q", "--cached", "renamed.md")
	if err := os.Remove(filepath.Join(dir, "renamed.md")); err != nil {
		t.Fatal(err)
	}
	got = diffJSON(t, commits[5], "review.md")
	if len(got) != 1 || got[0]["status"] != render.Removed {
		t.Errorf("remove: %v", got)
	}
}
