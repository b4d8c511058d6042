package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
)

// The run policy every host gets from Open: the wall-clock default, the
// "none" a user writes as 0, the limits a host sets kept.
func TestTimeoutPolicy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		set, want run.Limits
	}{
		{"default", run.Limits{}, run.Limits{Timeout: DefaultTimeout}},
		{"none", run.Limits{Timeout: UserTimeout(0)}, run.Limits{}},
		{"NoTimeout", run.Limits{Timeout: NoTimeout}, run.Limits{}},
		{"chosen", run.Limits{Timeout: UserTimeout(90e9)}, run.Limits{Timeout: 90e9}},
		{"other limits kept", run.Limits{FanoutConcurrency: 1}, run.Limits{FanoutConcurrency: 1, Timeout: DefaultTimeout}},
	} {
		s := open(t, Options{Path: "p.md", Source: []byte(luaOnly), Limits: tc.set})
		if s.cfg.Limits != tc.want {
			t.Errorf("%s: limits %+v, want %+v", tc.name, s.cfg.Limits, tc.want)
		}
	}
}

// TraceFile: Open creates the file, the run's trace is in it (flushed and
// closed) when Run returns; a refused run's file holds the refusal; a
// file that cannot be created refuses the run (OptTrace) before anything
// else.
func TestTraceFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	os.WriteFile(path, []byte("an older trace\n"), 0o644)
	s := open(t, Options{Path: "p.md", Source: []byte(luaOnly), Input: "in", TraceFile: path})
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if s.TraceErr() != nil || strings.Contains(string(b), "older") || !strings.Contains(string(b), `"a:in"`) || !strings.HasSuffix(string(b), "}\n") {
		t.Fatalf("trace file after Run (err %v):\n%s", s.TraceErr(), b)
	}

	refused := filepath.Join(dir, "refused.jsonl")
	if _, err := Open(Options{Path: "np.md", Source: []byte("# md\n"), Env: noEnv, TraceFile: refused}); err == nil {
		t.Fatal("Open of a non-prompt succeeded")
	}
	if b, _ := os.ReadFile(refused); !strings.Contains(string(b), "not a promptforge prompt") {
		t.Fatalf("trace file of a refused run:\n%s", b)
	}

	_, err := Open(Options{Path: "p.md", Source: []byte(luaOnly), Env: noEnv, TraceFile: filepath.Join(dir, "missing", "t.jsonl")})
	var se *SetupError
	if !errors.As(err, &se) || se.Option != OptTrace {
		t.Fatalf("uncreatable trace file: %T %v", err, err)
	}

	// Close closes a trace file a host never ran.
	unrun := filepath.Join(dir, "unrun.jsonl")
	s, err = Open(Options{Path: "p.md", Source: []byte(luaOnly), Env: noEnv, TraceFile: unrun})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if b, _ := os.ReadFile(unrun); !strings.Contains(string(b), "run.start") {
		t.Fatalf("trace file of a session closed unrun:\n%s", b)
	}
}

// StoreDir seeds the run's store; a folder that cannot is OptStore.
func TestStoreDir(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	os.WriteFile(filepath.Join(dir, "in", "a.txt"), []byte("seeded"), 0o644)
	src := header + "# T\n\n## A\n\n```lua\nreturn store.read('in/a.txt')\n```\n"
	s := open(t, Options{Path: "p.md", Source: []byte(src), StoreDir: dir})
	if got, err := s.Run(context.Background()); err != nil || got != "seeded" {
		t.Fatalf("seeded run: %q, %v", got, err)
	}
	_, err := Open(Options{Path: "p.md", Source: []byte(src), Env: noEnv, StoreDir: filepath.Join(dir, "in", "a.txt")})
	var se *SetupError
	if !errors.As(err, &se) || se.Option != OptStore {
		t.Fatalf("a file as the store folder: %T %v", err, err)
	}
	// The folder is read before the prompt is, as the hosts read it.
	_, err = Open(Options{Path: "p.md", Source: []byte("# not a prompt\n"), Env: noEnv, StoreDir: filepath.Join(dir, "missing")})
	if !errors.As(err, &se) || se.Option != OptStore {
		t.Fatalf("a missing store folder and a broken prompt: %T %v", err, err)
	}
}

// With no ToolsDir, a prompt on disk finds the forge-tools.json beside it
// (as the checker does); a prompt only in memory searches nothing.
func TestToolsDirIsThePromptsFolder(t *testing.T) {
	dir := copyFixture(t)
	path := filepath.Join(dir, "p.md")
	src, _ := os.ReadFile(path)
	tools := func(o Options) []string {
		s := open(t, o)
		var ids []string
		for _, tl := range s.cfg.Tools.Extra {
			ids = append(ids, tl.ID().String())
		}
		return ids
	}
	if got := tools(Options{Path: path, Source: src}); len(got) < 2 {
		t.Errorf("prompt on disk: tools %v, want web_fetch and the workspace's", got)
	}
	if got := tools(Options{Path: "untitled:Untitled-1", Source: src}); len(got) != 1 {
		t.Errorf("prompt in memory: tools %v, want web_fetch only", got)
	}
}

// Gateway.Models is the catalog fetch of every host without a run: from
// the environment's gateway, a configured one, or a cassette.
func TestGatewayModels(t *testing.T) {
	srv := gatewaytest.New(t, "secret-key")
	srv.Catalog = []gateway.Model{{ID: "m1", Description: "d", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	ctx := context.Background()
	ms, err := Gateway{}.Models(ctx, env(gateway.EnvURL, srv.BaseURL(), gateway.EnvKey, "secret-key"))
	if err != nil || len(ms) != 1 || ms[0].ID != "m1" {
		t.Fatalf("from the environment: %v, %v", ms, err)
	}
	ms, err = Gateway{URL: srv.BaseURL(), KeyEnv: "K"}.Models(ctx, env("K", "secret-key"))
	if err != nil || len(ms) != 1 {
		t.Fatalf("configured: %v, %v", ms, err)
	}
	if _, err := (Gateway{}).Models(ctx, noEnv); !IsGatewayConfig(err) {
		t.Fatalf("no gateway: %v", err)
	}
	cassette := filepath.Join(t.TempDir(), "c.jsonl")
	if _, err := (Gateway{Record: cassette}).Models(ctx, env(gateway.EnvURL, srv.BaseURL(), gateway.EnvKey, "secret-key")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cassette); err == nil {
		t.Error("a catalog fetch wrote a cassette")
	}
}

// countValidations counts run.Validate calls on prompts named name.
func countValidations(t *testing.T, name string) func() int {
	t.Helper()
	var mu sync.Mutex
	n := 0
	restore := run.SetValidateHook(func(p *parse.Prompt) {
		if p != nil && p.File != nil && p.File.Name == name {
			mu.Lock()
			n++
			mu.Unlock()
		}
	})
	t.Cleanup(restore)
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// From Open to the run's first model request the prompt is validated
// once (before: the session checked its parse errors, then the run
// checked them and the version again); a version this build does not run
// still fails the run, not Open.
func TestValidatedOnce(t *testing.T) {
	srv := gatewaytest.New(t, "secret-key")
	srv.Catalog = []gateway.Model{{ID: "m1", Description: "A model suited for careful analysis, coding, and general assistance", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	srv.Enqueue(gatewaytest.Text("hello"))
	name := filepath.Join(t.TempDir(), "once.md")
	count := countValidations(t, name)
	s := open(t, Options{Path: name, Source: []byte(withModel), Section: "## Main",
		Env: env(gateway.EnvURL, srv.BaseURL(), gateway.EnvKey, "secret-key")})
	if got, err := s.Run(context.Background()); err != nil || got != "hello" {
		t.Fatalf("run: %q, %v", got, err)
	}
	if n := count(); n != 1 {
		t.Fatalf("validated %d times on the way to the first request, want 1", n)
	}

	v2 := strings.Replace(luaOnly, "promptforge: 1", "promptforge: 2", 1)
	s = open(t, Options{Path: name, Source: []byte(v2)})
	_, err := s.Run(context.Background())
	var re *run.RunError
	if !errors.As(err, &re) || re.Kind != run.KindVersion {
		t.Fatalf("version 2: %T %v", err, err)
	}
	if n := count(); n != 2 {
		t.Fatalf("validated %d times in all, want 2 (once per run)", n)
	}
}

// A host's parse (the editor's snapshot) stands in for the parse, never
// for the not-a-prompt refusal: a text the probe refuses is refused
// whoever parsed it.
func TestParsedStillProbed(t *testing.T) {
	quoted := strings.Replace(luaOnly, "promptforge: 1", "promptforge: '1'", 1)
	p := parse.Parse("p.md", []byte(quoted))
	_, err := Open(Options{Path: "p.md", Source: []byte(quoted), Parsed: p, Env: noEnv})
	var np *NotAPromptError
	if !errors.As(err, &np) {
		t.Fatalf("a parsed text the probe refuses: %T %v", err, err)
	}
	good := parse.Parse("p.md", []byte(luaOnly))
	if s := open(t, Options{Path: "p.md", Source: []byte(luaOnly), Parsed: good}); s.Prompt() != good {
		t.Fatal("a clean parse was not used")
	}
}
