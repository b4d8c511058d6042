package gatewayd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

const minimal = `[server]
bind = "127.0.0.1:8080"
api_key = "${GW_KEY}"

[[endpoint]]
id = "e"
protocol = "openai"
base_url = "https://api.example.com/v1"
api_key = "${BACKEND_KEY}"

[[model]]
name = "m"
description = "a model"
context = 1000
upstream = "u"
endpoints = ["e"]
`

// TestInterpolation: ${VAR} from the environment, then the name-matched
// .env; $$ is a dollar; an unset variable or an unclosed ${ fails the load
// naming the variable and never a value.
func TestInterpolation(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "gw.toml", strings.Replace(minimal, `description = "a model"`, `description = "costs $$5 at ${TIER}"`, 1))
	write(t, dir, "gw.env", "# comment\nexport BACKEND_KEY='from-dotenv'\nGW_KEY=\"dot \\\"env\\\"\"\nTIER=gold # trailing comment\n")
	c, err := Load(p, envOf("GW_KEY", "from-env"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.APIKey.Expose() != "from-env" || c.Endpoints[0].APIKey.Expose() != "from-dotenv" || c.Models[0].Description != "costs $5 at gold" {
		t.Fatalf("server %q endpoint %q description %q", c.Server.APIKey.Expose(), c.Endpoints[0].APIKey.Expose(), c.Models[0].Description)
	}
	// Without the .env: the first unset variable fails the load.
	p2 := write(t, t.TempDir(), "other.toml", minimal)
	_, err = Load(p2, envOf("GW_KEY", "sekrit-value"))
	if err == nil || !strings.Contains(err.Error(), "unresolved environment variable BACKEND_KEY") || strings.Contains(err.Error(), "sekrit") {
		t.Fatalf("unset: %v", err)
	}
	_, err = Load(write(t, t.TempDir(), "u.toml", strings.Replace(minimal, "${GW_KEY}", "${GW_KEY", 1)), envOf("BACKEND_KEY", "b"))
	if err == nil || !strings.Contains(err.Error(), "unclosed ${...}") {
		t.Fatalf("unclosed: %v", err)
	}
	if s, _ := interpolate("a$b $$ $", noEnv); s != "a$b $ $" {
		t.Fatalf("lone dollars: %q", s)
	}
	_, err = Load(write(t, dir, "bad.toml", minimal), noEnv)
	write(t, dir, "bad.env", "NOT A PAIR\n")
	if _, err = Load(filepath.Join(dir, "bad.toml"), noEnv); err == nil || !strings.Contains(err.Error(), "bad.env:1: expected KEY=VALUE") {
		t.Fatalf("bad .env: %v", err)
	}
}

// TestUnknownKeys: a misspelled key anywhere fails the load at its line.
func TestUnknownKeys(t *testing.T) {
	env := envOf("GW_KEY", "k", "BACKEND_KEY", "b")
	for _, c := range []struct{ text, want string }{
		{strings.Replace(minimal, "bind =", "bnd =", 1), "gw.toml:2:1: unknown key server.bnd"},
		{minimal + "\n[queue]\nmax_dept = 3\n", "unknown key queue.max_dept"},
		{minimal + "\n[tools.web_search]\nprovider = \"brave\"\napi_key = \"x\"\ncount = 3\n", "unknown key tools.web_search.count"},
		{strings.Replace(minimal, "upstream = \"u\"", "upstream = \"u\"\naliases = [\"x\"]", 1), "unknown key model.aliases"},
		{"colour = 1\n" + minimal, "unknown key colour"},
		{strings.Replace(minimal, "context = 1000", "context = \"big\"", 1), "gw.toml:14:11: toml: cannot decode TOML string"},
	} {
		_, err := Load(write(t, t.TempDir(), "gw.toml", c.text), env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}

// TestValidation: upstream's checks, and [[local_model]] refused with a
// way out.
func TestValidation(t *testing.T) {
	env := envOf("GW_KEY", "k", "BACKEND_KEY", "b")
	rows := []struct{ old, new, want string }{
		{`bind = "127.0.0.1:8080"`, `bind = "localhost:8080"`, "server.bind \"localhost:8080\" must be an IP address and port"},
		{`api_key = "${GW_KEY}"`, `api_key = ""`, "server.api_key must not be empty"},
		{`protocol = "openai"`, `protocol = "anthropic"`, `protocol must be "openai"`},
		{`base_url = "https://api.example.com/v1"`, `base_url = "ftp://x/v1"`, "must use http or https"},
		{`base_url = "https://api.example.com/v1"`, `base_url = "https://user:pw@x/v1"`, "must not embed credentials"},
		{`context = 1000`, `context = 0`, "context must be in 1..4294967295"},
		{`description = "a model"`, `description = " "`, "description must not be empty"},
		{`endpoints = ["e"]`, `endpoints = ["x"]`, "names undefined endpoint x"},
		{`endpoints = ["e"]`, `endpoints = []`, "has no endpoints"},
		{`endpoints = ["e"]`, `endpoints = ["e", "e"]`, "duplicate endpoint e"},
		{`upstream = "u"`, "upstream = \"u\"\nthinking = \"sometimes\"", "thinking must be never, always or switchable"},
		{`upstream = "u"`, "upstream = \"\"", "upstream must not be empty"},
		{`id = "e"`, "id = \"e\"\nconcurrency = 0", "concurrency must be at least 1"},
		{"", "[queue]\nmax_depth = 0\n", "queue.max_depth must be at least 1"},
		{"", "[[model]]\nname = \"m\"\ndescription = \"d\"\ncontext = 1\nupstream = \"u\"\nendpoints = [\"e\"]\n", "duplicate model name m"},
		{"", "[tools.web_search]\nprovider = \"google\"\napi_key = \"x\"\n", `provider must be "brave"`},
		{"", "[tools.web_search]\nprovider = \"brave\"\napi_key = \"x\"\ndefault_count = 30\n", "default_count must not exceed max_count"},
		{"", "[tools.web_search]\nprovider = \"brave\"\napi_key = \"x\"\ndefault_freshness = \"week\"\n", "default_freshness"},
		{"", "[[local_model]]\nname = \"q\"\ndescription = \"d\"\nsource = \"https://x/q.gguf\"\ncontext = 10\n", "[[local_model]] and [local] are not supported"},
		{"", "[local]\ncache_dir = \"/tmp\"\n", "Start the model server yourself"},
	}
	for _, r := range rows {
		text := minimal
		if r.old == "" {
			text += "\n" + r.new
		} else {
			text = strings.Replace(text, r.old, r.new, 1)
		}
		_, err := Load(write(t, t.TempDir(), "gw.toml", text), env)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: err = %v, want %q", r.new, err, r.want)
		}
	}
	// Without [server] the file is usable in-process.
	c, err := Load(write(t, t.TempDir(), "gw.toml", minimal[strings.Index(minimal, "[[endpoint]]"):]), env)
	if err != nil || c.Server != nil || c.Models[0].Thinking != "never" {
		t.Fatalf("%+v %v", c, err)
	}
}

// TestProfiles: includes resolve depth-first relative to the including
// file; [[endpoint]] and [[model]] merge by id and name, scalars are
// later-wins; cycles and depth 17 are refused; each file's .env is read.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "base.toml", minimal+"\n[queue]\nmax_depth = 5\nfair_scheduling = false\n[[model]]\nname = \"shared\"\ndescription = \"base text\"\ncontext = 10\nupstream = \"u0\"\nendpoints = [\"e\"]\n")
	write(t, dir, "base.env", "GW_KEY=base-key\nBACKEND_KEY=base-backend\n")
	write(t, dir, "dev.env", "GW_KEY=dev-key\n")
	write(t, dir, "dev.toml", `include = ["base.toml"]
[queue]
max_depth = 9

[[endpoint]]
id = "local"
protocol = "openai"
base_url = "http://127.0.0.1:11434/v1"
api_key = ""

[[model]]
name = "shared"
description = "dev text"
context = 20
upstream = "u1"
endpoints = ["local"]
`)
	c, err := LoadProfile(dir, "dev", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Queue.depth() != 9 || c.Queue.fair() || len(c.Endpoints) != 2 || len(c.Models) != 2 {
		t.Fatalf("merged: depth %d fair %v %d endpoints %d models", c.Queue.depth(), c.Queue.fair(), len(c.Endpoints), len(c.Models))
	}
	if m := c.Models[1]; m.Name != "shared" || m.Description != "dev text" || m.Upstream != "u1" {
		t.Fatalf("model replaced by name: %+v", m)
	}
	if c.Server.APIKey.Expose() != "dev-key" || c.Endpoints[0].APIKey.Expose() != "base-backend" {
		t.Fatal("the root's .env must win, the include's fill in")
	}
	names, _ := ListProfiles(dir)
	if strings.Join(names, ",") != "base,dev" {
		t.Fatalf("profiles %v", names)
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "../x", "x\x00y"} {
		if _, err := LoadProfile(dir, bad, noEnv); err == nil {
			t.Errorf("profile name %q accepted", bad)
		}
	}
	if _, err := LoadProfile(dir, "prod", noEnv); err == nil || !strings.Contains(err.Error(), "profiles: base, dev") {
		t.Errorf("missing profile: %v", err)
	}
	// A cycle.
	write(t, dir, "a.toml", `include = ["b.toml"]`)
	write(t, dir, "b.toml", `include = ["a.toml"]`)
	if _, err := LoadProfile(dir, "a", noEnv); err == nil || !strings.Contains(err.Error(), "include cycle") {
		t.Errorf("cycle: %v", err)
	}
	// Depth: c0 includes c1 ... includes c17.
	deep := t.TempDir()
	for i := 0; i <= MaxIncludeDepth+1; i++ {
		write(t, deep, fmt.Sprintf("c%d.toml", i), fmt.Sprintf("include = [\"c%d.toml\"]\n", i+1))
	}
	write(t, deep, fmt.Sprintf("c%d.toml", MaxIncludeDepth+2), "")
	if _, err := LoadProfile(deep, "c0", noEnv); err == nil || !strings.Contains(err.Error(), "include depth exceeds 16") {
		t.Errorf("depth: %v", err)
	}
	// Depth 16 itself loads (then fails later for want of content).
	if _, err := LoadProfile(deep, "c2", noEnv); err != nil && strings.Contains(err.Error(), "depth") {
		t.Errorf("depth 16 refused: %v", err)
	}
	if _, err := Load(write(t, dir, "inc.toml", `include = ["nowhere.toml"]`), noEnv); err == nil || !strings.Contains(err.Error(), `include "nowhere.toml" not found`) {
		t.Errorf("missing include: %v", err)
	}
}

// TestSecretNeverPrinted: every way of printing, logging or serialising a
// credential gives [REDACTED].
func TestSecretNeverPrinted(t *testing.T) {
	c, err := Load(write(t, t.TempDir(), "gw.toml", minimal), envOf("GW_KEY", "gw-SECRET", "BACKEND_KEY", "be-SECRET"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		fmt.Fprintf(&out, verb+"\n", c)
		fmt.Fprintf(&out, verb+"\n", *c.Server)
		fmt.Fprintf(&out, verb+"\n", c.Endpoints[0].APIKey)
	}
	j, _ := json.Marshal(c)
	out.Write(j)
	tm, _ := toml.Marshal(c)
	out.Write(tm)
	slog.New(slog.NewTextHandler(&out, nil)).Info("cfg", "key", c.Server.APIKey, "endpoint", c.Endpoints[0])
	if strings.Contains(out.String(), "SECRET") {
		t.Fatalf("credential printed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), redacted) {
		t.Fatal("nothing redacted: the test printed no secret")
	}
}
